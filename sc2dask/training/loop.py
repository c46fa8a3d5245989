"""The training loop: env hosts play, their work becomes updates, new weights flow back.

One loop shape for every mode: when a host's work returns, the update rule
(``sc2dask/training/updates.py``) takes it and names the hosts to give new work, and they
get it at once, so fast hosts do more. Weights travel only when a host lacks the version.

``train()`` returns a ``Training`` handle at once; the loop runs in a thread.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import difflib
import gc
import importlib
import logging
import threading
import time
from collections.abc import Mapping

import numpy as np

from ..compression import DeltaSender, payload_nbytes
from ..errors import ConfigError
from ..game import EnvConfig, check_map
from ..monitoring.telemetry import TrainingPublisher
from ..runtime.env_host import StaleWeights
from ..settings import DEFAULT_ORIGIN, AgentSettings, TrainSettings, is_default, load
from . import checkpoint
from .cluster import cluster_client
from .pool import EnvPool, HostDropped
from .recorder import Progress, Recorder
from .store import ParameterStore
from .updates import make_update_rule

log = logging.getLogger(__name__)


GROW_EVERY = 5.0  # seconds between an elastic run's looks for workers that joined


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
            raise ConfigError("retiring these workers would leave the run no env host; "
                              "stop it instead (or add workers first).")
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
        return {"map": run.settings.map, "mode": run.settings.mode,
                "agent_steps": p.agent_steps, "updates": p.updates, "episodes": p.episodes,
                "wall_s": round(time.monotonic() - run.started, 2),
                "mean_score_last_100": p.mean_score_last_100,
                "restarts": run.restarts(),
                "rejected_gradients": run.store.rejected if run.store else 0,
                "dropped_stale_gradients": p.dropped_stale, "truncated": p.truncated,
                "version": run.store.version if run.store else 0,
                "bytes_moved": p.bytes_moved,  # weights out, results back, as sent
                "bytes_to_hosts": p.bytes_to_hosts, "bytes_from_hosts": p.bytes_from_hosts,
                "learner_samples_per_s": round(p.learner_samples_per_s, 1)}


def train(client=None, scheduler: str | None = None, resume: bool = False,
          on_update=None, agent_overrides: dict | None = None, **overrides) -> Training:
    """Start training; settings come from ``sc2dask.train`` and ``sc2dask.agent`` config.

    Keyword arguments override any setting of either section (``mode="sync"``,
    ``learning_rate=1e-3``; None means "from config"); ``agent_overrides`` is the same
    for agent settings only. ``on_update(progress)`` is called after every update (for
    live plots). With ``resume=True`` weights, optimizer state, counters and RNG continue
    from the latest checkpoint in ``checkpoint_dir``.
    """
    agent_overrides = _split_overrides(overrides, dict(agent_overrides or {}))
    loaded = load(TrainSettings, overrides)
    opts = loaded.values
    agent = load(AgentSettings, agent_overrides, map_name=opts.map).values
    check_settings(opts, agent, loaded.origins)
    if resume and not opts.checkpoint_dir:
        raise ConfigError("resume needs checkpoint_dir (the folder train wrote)")
    check_map(opts.map, attached=bool(opts.sc2))
    held = contextlib.ExitStack()  # the checkpoint folder, until the run ends
    if opts.checkpoint_dir:
        held.enter_context(checkpoint.run_lock(opts.checkpoint_dir))
        if resume:
            try:
                # A missing or corrupt checkpoint, or one of another network, fails here.
                check_resumable(opts.checkpoint_dir, agent)
            except BaseException:
                held.close()
                raise
    return Training(_Run(opts, agent, client, scheduler, resume, on_update, held))


def check_resumable(directory, agent: AgentSettings) -> None:
    """ConfigError, before any cluster starts, when this run's network would not fit the
    checkpoint's weights; it names the settings that give the checkpoint's network."""
    _, _, state = checkpoint.load(directory)
    differences = checkpoint.network_differences(state, agent)
    if differences:
        def flag(name, value):
            if isinstance(value, tuple):
                value = ",".join(map(str, value)) or "''"  # no minimap layers: ''
            return f"--{name.replace('_', '-')} {value}"
        raise ConfigError(
            f"The checkpoint in {str(directory)!r} has another network than this run's "
            f"settings give ({', '.join(k.replace('_', '-') for k in differences)}); "
            f"resume with its settings: "
            f"{' '.join(flag(k, v) for k, v in differences.items())}.")


def _split_overrides(overrides: dict, agent_overrides: dict) -> dict:
    """Move agent settings from ``overrides`` to ``agent_overrides``; an unknown name, or one
    given twice, is a ConfigError (with the closest name of either section)."""
    train_fields = {f.name for f in dataclasses.fields(TrainSettings)}
    agent_fields = {f.name for f in dataclasses.fields(AgentSettings)}
    for key in list(overrides):
        name = key.replace("-", "_")
        if name in agent_fields:
            if name in {k.replace("-", "_") for k in agent_overrides}:
                raise ConfigError(f"{key!r} is given both as a keyword and in agent_overrides; "
                                  f"give it once.")
            agent_overrides[name] = overrides.pop(key)
        elif name not in train_fields:
            known = sorted(train_fields | agent_fields)
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"Unknown setting {key!r} (not in sc2dask.train or "
                              f"sc2dask.agent).{hint} See `sc2dask config show`.")
    return agent_overrides


def check_settings(opts: TrainSettings, agent: AgentSettings,
                   origins: Mapping[str, str] | None = None) -> None:
    """What one setting cannot check alone: settings that must agree.

    ``origins`` (``settings.load``'s) tells a value the user gave from a default, which
    another mode leaves unused: sync-lr-scaling's default applies to sync mode only.
    """
    from ..agents.spaces import ACTION_SETS  # no TensorFlow
    if agent.action_set not in ACTION_SETS:
        raise ConfigError(f"sc2dask.agent.action-set {agent.action_set!r} is not one of "
                          f"{', '.join(ACTION_SETS)} (sc2dask/agents/spaces.py).")
    if opts.envs_max is not None and opts.envs is not None and opts.envs_max < opts.envs:
        raise ConfigError(f"sc2dask.train.envs-max ({opts.envs_max}) is below envs "
                          f"({opts.envs}); it is how far an elastic run grows, so give at "
                          f"least envs, or leave it unset for a fixed number of envs.")
    given_scaling = not is_default((origins or {}).get("sync_lr_scaling", DEFAULT_ORIGIN))
    if given_scaling and opts.sync_lr_scaling != "none" and opts.mode != "sync":
        raise ConfigError(f"sync-lr-scaling={opts.sync_lr_scaling!r} scales the rate of "
                          f"updates that average several hosts' gradients, which only "
                          f"mode='sync' makes; set mode='sync', or leave sync-lr-scaling unset.")
    if agent.epochs > 1 and opts.mode != "central":
        raise ConfigError(f"epochs={agent.epochs} reuses each batch on the client, so it "
                          f"needs mode='central' (in {opts.mode!r} mode workers send one "
                          f"gradient per rollout); set epochs=1 or mode='central'.")


class _Run:
    """The state of one training run; ``loop`` runs it in the ``Training`` thread."""

    def __init__(self, opts: TrainSettings, agent: AgentSettings, client, scheduler, resume,
                 on_update, held: contextlib.ExitStack | None = None):
        from ..agents.config import A2CConfig  # no TensorFlow
        self._held = held or contextlib.ExitStack()  # released when the run ends
        self.settings, self.agent_settings, self.on_update = opts, agent, on_update
        self.agent_config = A2CConfig.from_settings(agent, seed=opts.seed)
        self.env_config = EnvConfig(opts.map, screen=agent.screen, minimap=agent.minimap,
                                    step_mul=opts.step_mul)
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
        # TensorFlow takes 3-4 s of CPU to import: import it while the cluster starts.
        threading.Thread(target=_import_quietly, args=("sc2dask.agents.a2c",),
                         name="sc2dask-import", daemon=True).start()
        try:
            if self.client is None:
                with cluster_client(self.scheduler, self.settings.envs
                                    or len(self.settings.sc2) or None) as client:
                    self.client = client
                    self._train()
            else:
                self._train()
        except BaseException as exc:  # surfaced by Training.wait()
            self.error = exc
            log.exception("training failed")
        finally:
            self._held.close()

    def _train(self) -> None:
        opts = self.settings
        saved = checkpoint.load(opts.checkpoint_dir) if self.resume else None
        seed = opts.seed + (saved[2]["updates"] if saved else 0)  # fresh streams on resume
        publisher = TrainingPublisher(self.client, dataclasses.asdict(opts))
        with EnvPool(self.client, self.env_config, n_envs=opts.envs, seed=seed,
                     call_timeout=opts.call_timeout, sc2=opts.sc2,
                     elastic=opts.envs_max is not None) as self.pool:
            self.store = ParameterStore(self._make_learner())
            if saved:
                self._restore(*saved)
            self.recorder = Recorder(self.progress, self.started, lambda: self.store.version,
                                     self.checkpoint,
                                     opts.checkpoint_every, publisher, self._summary_writer(),
                                     self.on_update)
            rule = make_update_rule(opts, self.agent_settings, self.store, self.recorder,
                                    len(self.pool.placements), np.random.default_rng(seed))
            try:
                self._dispatch(rule)
            finally:  # a run that fails keeps what it learned
                self.checkpoint()
                publisher.flush()
            self._game_restarts = self.pool.stats()["game_restarts"]

    def _dispatch(self, rule) -> None:
        """Give every host work, then pass each result to ``rule`` until the run is done."""
        held = {}  # id(placement) -> the version its host holds
        pending: dict[concurrent.futures.Future, object] = {}
        sender = DeltaSender(self.settings.compression, self.settings.topk_fraction,
                             self.settings.layered_sync,
                             self.store.learner.policy.head_weights())
        envs_max = self.settings.envs_max
        threads = concurrent.futures.ThreadPoolExecutor(
            max(len(self.pool.placements), envs_max or 0), thread_name_prefix="sc2dask-work")
        looked = time.monotonic()  # an elastic run's last look for workers that joined

        def work(placement, version, weights):
            """(result, version) of the host's work; ``weights`` None: it holds them."""
            args = (self.settings.rollout_steps, self.agent_config)
            options = {"env_groups": self.settings.env_groups, **rule.work_options}

            def call(version, payload):
                if payload is not None:
                    self.recorder.sent(payload_nbytes(payload))
                return (self.pool.call(placement, rule.work, version, payload, *args, **options),
                        version)

            try:
                return call(version, None if weights is None
                            else sender.encode(id(placement), version, weights))
            except StaleWeights:  # a host recreated since holds other weights, or none
                version, weights = self.store.snapshot()
            return call(version, sender.whole(id(placement), version, weights))

        def give_work(placement):
            if placement.released:  # its worker is retiring
                return
            version, weights = self.store.snapshot()
            if held.get(id(placement)) == version:
                weights = None  # the host has them: send only the version
            held[id(placement)] = version
            pending[threads.submit(work, placement, version, weights)] = placement

        try:
            for placement in self.pool.placements:
                give_work(placement)
            hosts = len(self.pool.placements)
            while pending and not self._done():
                finished, _ = concurrent.futures.wait(
                    pending, timeout=GROW_EVERY if envs_max else None,
                    return_when=concurrent.futures.FIRST_COMPLETED)
                if envs_max and time.monotonic() - looked >= GROW_EVERY:
                    looked = time.monotonic()
                    for placement in self.pool.grow(envs_max):
                        give_work(placement)
                for future in finished:
                    placement = pending.pop(future)
                    try:
                        result, version = future.result()
                    except HostDropped:  # its worker left or retires: the others carry on
                        continue
                    if rule.plays_ahead and not self._done():
                        give_work(placement)  # it plays while the client learns
                    for ready in rule.on_result(placement, result, version):
                        if not self._done() and not (rule.plays_ahead and ready is placement):
                            give_work(ready)
                if len(self.pool.placements) != hosts:  # grown, dropped or released
                    hosts = len(self.pool.placements)
                    for ready in rule.resize(hosts):
                        if not self._done():
                            give_work(ready)
            for future in pending:  # let work in flight finish before the hosts close
                future.result()
        finally:  # after an error, work in flight is not waited for: the pool closes it
            threads.shutdown(wait=False, cancel_futures=True)

    def _done(self) -> bool:
        return self.stopping.is_set() or self.progress.agent_steps >= self.settings.max_steps

    # --- learner, checkpoints ------------------------------------------------------------

    def _make_learner(self):
        """The client's learner, built while the hosts build their policies, once every
        host's games run (``EnvHost.prepare``)."""
        central = self.settings.mode == "central"  # else the hosts compute gradients
        prepared = self.pool.map("prepare", lambda placement: (self.agent_config, not central))
        _, spec = next(prepared)  # the first host's games run
        from ..agents.a2c import Learner
        learner = Learner(self.agent_config, spec)
        learner.trace(gradients=central)
        for _ in prepared:
            pass
        return learner

    def _summary_writer(self):
        """TensorBoard summaries next to the checkpoints, when there is a checkpoint dir."""
        if not self.settings.checkpoint_dir:
            return None
        import tensorflow as tf
        return tf.summary.create_file_writer(f"{self.settings.checkpoint_dir}/tensorboard")

    def checkpoint(self) -> None:
        """Save weights, optimizer state, counters and settings (with a checkpoint dir)."""
        directory = self.settings.checkpoint_dir
        if not directory or self.store is None:
            return
        p = self.progress
        checkpoint.save(directory, p.updates, self.store.weights(),
                        self.store.learner.get_optimizer_state(), {
                            "version": self.store.version, "agent_steps": p.agent_steps,
                            "updates": p.updates, "episodes": p.episodes,
                            "scores": list(p.scores),
                            "settings": dataclasses.asdict(self.settings),
                            "env_config": dataclasses.asdict(self.env_config),
                            "agent_config": dataclasses.asdict(self.agent_config),
                            "obs_spec": self.store.learner.policy.obs_spec,
                            # env hosts draw actions from streams seeded with this
                            "rng_seed": self.settings.seed + p.updates})

    def _restore(self, weights, optimizer, state) -> None:
        try:
            self.store.restore(weights, optimizer, state["version"])
        except ValueError as exc:
            raise ConfigError(f"The checkpoint in {self.settings.checkpoint_dir!r} was made "
                              f"with other agent settings ({exc}).") from None
        p = self.progress
        p.agent_steps, p.updates, p.episodes = state["agent_steps"], state["updates"], state["episodes"]
        p.scores.extend(state["scores"])


def _import_quietly(module: str) -> None:
    """Import ``module`` ahead of need; a failure is left for the import that needs it,
    which reports it where the user sees it."""
    try:
        importlib.import_module(module)
    except Exception:  # see the docstring
        pass
