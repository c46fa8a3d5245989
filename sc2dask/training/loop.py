"""The training loop: env hosts play, their work becomes updates, new weights flow back.

One loop shape for every mode: when a host's work returns, the update rule
(``sc2dask/training/updates.py``) takes it and names the hosts to give new work, and they
get it at once (``sc2dask/training/dispatch.py``). Settings are checked before anything
starts (``sc2dask/training/run_settings.py``).

``train()`` returns a ``Training`` handle at once; the loop runs in a thread.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import logging
import threading
import time

import numpy as np

from ..agents.loading import build_agent, check_agent_parts
from ..agents.spaces import expected_obs_spec
from ..compression import DeltaSender
from ..core import Agent, prepare_ahead
from ..errors import ConfigError
from ..monitoring.telemetry import TrainingPublisher
from . import checkpoint
from .cluster import cluster_client
from .code_upload import upload_agent_code
from .dispatch import Dispatcher
from .pool import EnvPool
from .recorder import Progress, Recorder
from .run_settings import RunSettings, resolve_run
from .store import ParameterStore
from .tensorboard import ScalarWriter
from .updates import UpdateRule, make_update_rule

log = logging.getLogger(__name__)


class Training:
    """A running (or finished) training: live ``progress``, ``stop()``, ``wait()``."""

    def __init__(self, run: _Run):
        self._run = run
        self.progress = run.progress
        self.settings, self.agent_settings = run.settings, run.agent_settings
        self._thread = threading.Thread(target=run.loop, name="sc2dask-train", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def pool(self) -> EnvPool | None:
        """The run's env hosts (None before they start; closed once the run ends)."""
        return self._run.pool

    @property
    def store(self) -> ParameterStore | None:
        """The run's weights and optimizer state (None until the first host answers)."""
        return self._run.store

    def stop(self) -> None:
        """Finish the update in flight, checkpoint, and stop."""
        self._run.stopping.set()

    def retire_workers(self, workers, timeout: float = 60.0) -> None:
        """Retire ``workers`` gracefully while training goes on: their env hosts close
        first (dask will not retire a worker that holds an actor), their rollouts in
        flight are dropped uncounted, and the other hosts carry the run. Needs hosts left
        elsewhere; ``cluster.scale`` down and ``adapt`` also work, without this call."""
        workers = set(workers)
        pool = self._run.pool
        if pool is None or not {p.worker for p in pool.placements} - workers:
            raise ConfigError(
                "retiring these workers would leave the run no env host; "
                "stop it instead (or add workers first)."
            )
        pool.release(workers)
        client, deadline = self._run.client, time.monotonic() + timeout
        # Dask refuses while an actor lingers there: a call still finishing leaves its
        # proxy in a reference cycle until the collector runs, so collect and ask again.
        while workers & set(client.scheduler_info(n_workers=-1)["workers"]):
            gc.collect()
            client.retire_workers(list(workers), close_workers=True)
            if time.monotonic() > deadline:
                raise TimeoutError(f"dask did not retire {sorted(workers)} in {timeout:g} s")
            time.sleep(0.5)

    def wait(self, timeout: float | None = None) -> dict:
        """The summary once the run ends; raises what stopped it, if anything did."""
        self._thread.join(timeout)
        if self._run.error is not None:
            raise self._run.error
        return self.summary()

    def summary(self) -> dict:
        p, run = self.progress, self._run
        return {
            "map": run.settings.map,
            "mode": run.settings.mode,
            "agent_steps": p.agent_steps,
            "updates": p.updates,
            "episodes": p.episodes,
            "wall_s": round(time.monotonic() - run.started, 2),
            "mean_score_last_100": p.mean_score_last_100,
            # games for two
            **(
                {
                    "win_rate_last_100": p.win_rate_last_100,
                    "wins": p.wins,
                    "draws": p.draws,
                    "losses": p.losses,
                }
                if run.settings.opponent
                else {}
            ),
            "restarts": run.restarts(),
            "rejected_gradients": run.store.rejected if run.store else 0,
            "dropped_stale_gradients": p.dropped_stale,
            "rollouts_counted_twice": p.counted_twice,
            "truncated": p.truncated,
            "version": run.store.version if run.store else 0,
            "bytes_moved": p.bytes_moved,  # weights out, results back, as sent
            "bytes_to_hosts": p.bytes_to_hosts,
            "bytes_from_hosts": p.bytes_from_hosts,
            "learner_samples_per_s": round(p.learner_samples_per_s, 1),
        }


def train(
    client=None,
    scheduler: str | None = None,
    resume: bool = False,
    on_update=None,
    agent_overrides: dict | None = None,
    **overrides,
) -> Training:
    """Start training; settings come from ``sc2dask.train`` and ``sc2dask.agent`` config.

    Keyword arguments override any setting of either section (``mode="sync"``,
    ``learning_rate=1e-3``; None means "from config"); ``agent_overrides`` is the same
    for agent settings only. ``on_update(progress)`` is called after every update (for
    live plots). With ``resume=True`` weights, optimizer state, counters and RNG continue
    from the latest checkpoint in ``checkpoint_dir``.
    """
    run = resolve_run(overrides, agent_overrides, resume)
    # The agent's parts, built as the client will build them: a misfit is refused here.
    check_agent_parts(run.agent_spec, expected_obs_spec(run.agent), run.train.layered_sync)
    checkpoint_lock = contextlib.ExitStack()  # the checkpoint folder, until the run ends
    if run.train.checkpoint_dir:
        checkpoint_lock.enter_context(checkpoint.run_lock(run.train.checkpoint_dir))
    return Training(_Run(run, client, scheduler, resume, on_update, checkpoint_lock))


class _Run:
    """The state of one training run; ``loop`` runs it in the ``Training`` thread."""

    def __init__(
        self,
        run: RunSettings,
        client,
        scheduler,
        resume,
        on_update,
        checkpoint_lock: contextlib.ExitStack | None = None,
    ):
        self._checkpoint_lock = checkpoint_lock or contextlib.ExitStack()  # until the end
        opts, agent = run.train, run.agent
        self.settings, self.agent_settings, self.on_update = opts, agent, on_update
        self.agent = run.agent_spec
        self._client_agent: Agent | None = None  # made as the run starts (``loop``)
        self.env_config = run.env_config
        self.client, self.scheduler, self.resume = client, scheduler, resume
        self.progress = Progress()
        self.stopping = threading.Event()
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self.pool: EnvPool | None = None
        self.store: ParameterStore | None = None
        self.recorder: Recorder | None = None
        self._game_restarts = 0  # summed from the hosts when the run ends

    def restarts(self) -> int:
        return 0 if self.pool is None else self.pool.host_restarts + self._game_restarts

    def loop(self) -> None:
        try:
            # Made before the cluster starts: an agent may start slow imports here.
            self._client_agent = build_agent(self.agent)
            if self.client is None:
                with cluster_client(
                    self.scheduler, self.settings.envs or len(self.settings.sc2) or None
                ) as client:
                    self.client = client
                    self._train()
            else:
                self._train()
        except BaseException as exc:  # surfaced by Training.wait()
            self.error = exc
            log.exception("training failed")
        finally:
            self._checkpoint_lock.close()

    def _train(self) -> None:
        opts = self.settings
        saved = checkpoint.load(opts.checkpoint_dir) if self.resume else None
        seed = opts.seed + (saved[2]["updates"] if saved else 0)  # fresh streams on resume
        publisher = TrainingPublisher(self.client, dataclasses.asdict(opts))
        upload_agent_code(self.client, self.agent.class_path)  # before any host builds it
        with EnvPool(
            self.client,
            self.env_config,
            n_envs=opts.envs,
            seed=seed,
            call_timeout=opts.call_timeout,
            sc2=opts.sc2,
            elastic=opts.envs_max is not None,
        ) as self.pool:
            self.store = store = ParameterStore(self._make_learner())
            if saved:
                self._restore(*saved)
            summaries = self._summary_writer()
            self.recorder = Recorder(
                self.progress,
                self.started,
                lambda: store.version,
                self.checkpoint,
                opts.checkpoint_every,
                publisher,
                summaries,
                self.on_update,
            )
            rule = make_update_rule(
                opts,
                self.agent_settings,
                self.store,
                self.recorder,
                len(self.pool.placements),
                np.random.default_rng(seed),
            )
            try:
                self._dispatch(rule)
            finally:  # a run that fails keeps what it learned
                self.checkpoint()
                publisher.flush()
                if summaries is not None:
                    summaries.close()
            self._game_restarts = self.pool.stats()["game_restarts"]

    def _dispatch(self, rule: UpdateRule) -> None:
        assert self.pool is not None and self.store is not None and self.recorder is not None
        opts = self.settings
        policy = self.store.learner.policy
        heads = getattr(policy, "head_weights", None)  # optional below layered-sync 2
        sender = DeltaSender(
            opts.compression,
            opts.topk_fraction,
            opts.layered_sync,
            heads() if heads is not None else [True] * len(policy.get_weights()),
        )
        order = rule.order(opts.rollout_steps, self.agent, opts.env_groups)
        Dispatcher(
            self.pool, self.store, self.recorder, rule, order, sender, self._done, opts.envs_max
        ).run()

    def _done(self) -> bool:
        opts = self.settings
        out_of_time = (
            opts.max_minutes is not None
            and time.monotonic() - self.started >= 60 * opts.max_minutes
        )
        return self.stopping.is_set() or out_of_time or self.progress.agent_steps >= opts.max_steps

    # --- learner, checkpoints ------------------------------------------------------------

    def _make_learner(self):
        """The client's learner, built while the hosts build their policies, once every
        host's games run (``EnvHost.prepare``)."""
        central = self.settings.mode == "central"  # else the hosts compute gradients
        agent = self.agent
        prepared = self.pool.map(lambda _: lambda host: host.prepare(agent, not central))
        _, spec = next(prepared)  # the first host's games run
        assert self._client_agent is not None  # made as the run started (loop)
        # Its methods were checked as the run started (``train``: ``check_agent_parts``).
        learner = self._client_agent.make_learner(spec)
        prepare_ahead(learner, gradients=central, apply=True)
        for _ in prepared:
            pass
        return learner

    def _summary_writer(self) -> ScalarWriter | None:
        """TensorBoard summaries next to the checkpoints, when there is a checkpoint dir."""
        if not self.settings.checkpoint_dir:
            return None
        return ScalarWriter(f"{self.settings.checkpoint_dir}/tensorboard")

    def checkpoint(self) -> None:
        """Save weights, optimizer state, counters and settings (with a checkpoint dir)."""
        directory = self.settings.checkpoint_dir
        if not directory or self.store is None:
            return
        p = self.progress
        checkpoint.save(
            directory,
            p.updates,
            self.store.weights(),
            self.store.learner.get_optimizer_state(),
            {
                "version": self.store.version,
                "agent_steps": p.agent_steps,
                "updates": p.updates,
                "episodes": p.episodes,
                "scores": list(p.scores),
                "outcomes": list(p.outcomes),
                "results": [p.wins, p.draws, p.losses],
                "settings": dataclasses.asdict(self.settings),
                "env_config": dataclasses.asdict(self.env_config),
                "agent_class": self.agent.class_path,
                "agent_config": self.agent.config,
                "obs_spec": self.store.learner.policy.obs_spec,
                # env hosts draw actions from streams seeded with this
                "rng_seed": self.settings.seed + p.updates,
            },
        )

    def _restore(self, weights, optimizer, state) -> None:
        assert self.store is not None  # _train restores into the store it made
        try:
            self.store.restore(weights, optimizer, state["version"])
        except ValueError as exc:
            raise ConfigError(
                f"The checkpoint in {self.settings.checkpoint_dir!r} was made "
                f"with other agent settings ({exc})."
            ) from None
        p = self.progress
        p.agent_steps, p.updates, p.episodes = (
            state["agent_steps"],
            state["updates"],
            state["episodes"],
        )
        p.scores.extend(state["scores"])
        p.outcomes.extend(state.get("outcomes", []))  # checkpoints of games for two
        p.wins, p.draws, p.losses = state.get("results", [0, 0, 0])
