"""The training loop: env hosts play, gradients flow to the parameter store, weights flow back.

Three modes, one loop shape (a host's work returns, the store updates, that host gets
new work at once, so fast hosts do more):

- ``central``: hosts return trajectories; the client computes the gradients (with
  ``epochs`` > 1 it reuses each batch for several clipped, PPO-style steps).
- ``sync``: every host computes gradients on its own rollout at the same version; the
  client averages them, applies one update and broadcasts.
- ``async``: each host's gradient is applied as it arrives; gradients more than
  ``max-staleness`` versions old are dropped, fresher stale ones are applied with the
  learning rate divided by (1 + staleness) (staleness-aware async SGD, Zhang et al. 2016).

``train()`` returns a ``Training`` handle at once; the loop runs in a thread.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import logging
import threading
import time

import numpy as np

from . import checkpoint
from .cluster import cluster_client
from .config import settings
from .env_host import EnvConfig, StaleWeights
from .errors import ConfigError
from .pool import EnvPool
from .telemetry import TrainingPublisher

log = logging.getLogger(__name__)
MODES = ("central", "sync", "async")


class ParameterStore:
    """Versioned weights and optimizer state, on the client (a ``Learner`` holds them)."""

    def __init__(self, learner):
        self.learner = learner
        self.version = 0
        self.rejected = 0
        self._base_lr = float(learner.optimizer.learning_rate.numpy())
        self._lock = threading.Lock()  # weights are read by sender threads

    def weights(self) -> list[np.ndarray]:
        return self.snapshot()[1]

    def snapshot(self) -> tuple[int, list[np.ndarray]]:
        """(version, weights), consistent with each other."""
        with self._lock:
            return self.version, self.learner.get_weights()

    def apply(self, grads, lr_scale: float = 1.0) -> bool:
        """One optimizer step; NaN/inf gradients are rejected (logged), returning False."""
        with self._lock:
            self.learner.optimizer.learning_rate.assign(self._base_lr * lr_scale)
            try:
                self.learner.apply_gradients(grads)
            except ValueError as exc:
                self.rejected += 1
                log.warning("gradient rejected: %s", exc)
                return False
            finally:
                self.learner.optimizer.learning_rate.assign(self._base_lr)
            self.version += 1
            return True


@dataclasses.dataclass
class Progress:
    """What a running training reports; ``history`` has one row per update."""

    agent_steps: int = 0
    updates: int = 0
    episodes: int = 0
    scores: collections.deque = dataclasses.field(
        default_factory=lambda: collections.deque(maxlen=100))
    history: list = dataclasses.field(default_factory=list)
    bytes_moved: int = 0
    dropped_stale: int = 0
    truncated: int = 0  # trajectories cut by a crashed game (bootstrapped, not ended)

    @property
    def mean_score_last_100(self) -> float:
        return float(np.mean(self.scores)) if self.scores else float("nan")


class Training:
    """A running (or finished) training: live ``progress``, ``stop()``, ``wait()``."""

    def __init__(self, run):
        self._run = run
        self.progress = run.progress
        self._thread = threading.Thread(target=run.loop, name="sc2dask-train", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        """Finish the update in flight, checkpoint, and stop."""
        self._run.stopping.set()

    def wait(self, timeout: float | None = None) -> dict:
        self._thread.join(timeout)
        if self._run.error is not None:
            raise self._run.error
        return self.summary()

    def summary(self) -> dict:
        p = self.progress
        return {"map": self._run.settings["map"], "mode": self._run.settings["mode"],
                "agent_steps": p.agent_steps, "updates": p.updates, "episodes": p.episodes,
                "wall_s": round(time.monotonic() - self._run.started, 2),
                "mean_score_last_100": p.mean_score_last_100,
                "restarts": self._run.restarts(),
                "rejected_gradients": self._run.store.rejected if self._run.store else 0,
                "dropped_stale_gradients": p.dropped_stale, "truncated": p.truncated,
                "version": self._run.store.version if self._run.store else 0}


def train(client=None, scheduler: str | None = None, resume: bool = False,
          on_update=None, agent_overrides: dict | None = None, **overrides) -> Training:
    """Start training; settings come from ``sc2dask.train`` config plus ``overrides``.

    ``on_update(progress)`` is called after every update (for live plots). With
    ``resume=True`` weights, optimizer state, counters and RNG continue from the latest
    checkpoint in ``checkpoint_dir``.
    """
    opts = settings("train", **overrides)
    agent = settings("agent", **(agent_overrides or {}))
    if opts["mode"] not in MODES:
        raise ConfigError(f"mode {opts['mode']!r} is not one of {', '.join(MODES)}")
    if agent["epochs"] > 1 and opts["mode"] != "central":
        raise ConfigError(f"epochs={agent['epochs']} reuses each batch on the client, so it "
                          f"needs mode='central' (in {opts['mode']!r} mode workers send one "
                          f"gradient per rollout); set epochs=1 or mode='central'.")
    if agent["epochs"] < 1 or agent["minibatches"] < 1:
        raise ConfigError("epochs and minibatches must be at least 1")
    if resume and not opts["checkpoint-dir"]:
        raise ConfigError("resume needs checkpoint_dir (the folder train wrote)")
    from .game import check_map
    check_map(opts["map"])
    return Training(_Run(opts, agent, client, scheduler, resume, on_update))


class _Run:
    """The state of one training run; ``loop`` is the whole algorithm."""

    def __init__(self, opts, agent, client, scheduler, resume, on_update):
        from .agents.a2c import A2CConfig
        self.settings, self.on_update = opts, on_update
        self.agent_config = A2CConfig(
            action_set=agent["action-set"], screen_size=agent["screen"],
            minimap_size=agent["minimap"], learning_rate=agent["learning-rate"],
            entropy_coef=agent["entropy-coef"], value_coef=agent["value-coef"],
            gamma=agent["gamma"], gae_lambda=agent["gae-lambda"],
            normalize_advantages=agent["normalize-advantages"], clip_ratio=agent["clip-ratio"],
            epochs=agent["epochs"], minibatches=agent["minibatches"],
            n_steps=opts["rollout-steps"], seed=opts["seed"])
        self.env_config = EnvConfig(opts["map"], screen=agent["screen"], minimap=agent["minimap"],
                                    step_mul=opts["step-mul"])
        self.client, self.scheduler, self.resume = client, scheduler, resume
        self.progress = Progress()
        self.stopping = threading.Event()
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self.pool = None
        self.store = None
        self._summaries = None
        self._telemetry = None  # rows for the dashboard's training page
        self._game_restarts = 0  # summed from the hosts when the run ends
        self._checkpointed_at = 0  # updates at the last checkpoint
        self._rng = None  # minibatch order

    def restarts(self) -> int:
        return 0 if self.pool is None else self.pool.host_restarts + self._game_restarts

    # --- the loop ----------------------------------------------------------------------------

    def loop(self):
        try:
            if self.client is None:
                with cluster_client(self.scheduler, self.settings["envs"]) as client:
                    self.client = client
                    self._train()
            else:
                self._train()
        except BaseException as exc:  # surfaced by Training.wait()
            self.error = exc
            log.exception("training failed")

    def _train(self):
        self._telemetry = TrainingPublisher(self.client, self.settings)
        saved = checkpoint.load(self.settings["checkpoint-dir"]) if self.resume else None
        seed = self.settings["seed"] + (saved[2]["updates"] if saved else 0)  # fresh streams
        self._rng = np.random.default_rng(seed)
        with EnvPool(self.client, self.env_config, n_envs=self.settings["envs"], seed=seed,
                     call_timeout=self.settings["call-timeout"]) as self.pool:
            self.store = ParameterStore(self._make_learner())
            if saved:
                self._restore(*saved)
            self._summaries = self._summary_writer()
            mode = self.settings["mode"]
            work = "rollout" if mode == "central" else "gradients"
            held = {}  # id(placement) -> the version its host holds
            threads = self.pool._threads  # noqa: SLF001 - the pool's own call threads

            def work_on(p, version, weights):
                """(result, version) of the host's work; ``weights`` None: it holds them."""
                args = (self.settings["rollout-steps"], self.agent_config)
                if weights is None:
                    try:
                        return self.pool.call(p, work, version, None, *args), version
                    except StaleWeights:  # a host recreated since has none: send them
                        version, weights = self.store.snapshot()
                self.progress.bytes_moved += sum(w.nbytes for w in weights)
                return self.pool.call(p, work, version, weights, *args), version

            def submit(p):
                version, weights = self.store.snapshot()
                if held.get(id(p)) == version:
                    weights = None
                held[id(p)] = version
                pending[threads.submit(work_on, p, version, weights)] = p

            pending = {}
            for p in self.pool.placements:
                submit(p)
            sync_batch = []
            k = self.settings["sync-gradients"] or len(self.pool.placements)
            while pending and not self._done():
                finished, _ = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in finished:
                    placement = pending.pop(future)
                    result, version = future.result()
                    if mode == "central":
                        self._central_update(result)
                    elif mode == "async":
                        self._async_update(result, version)
                    else:
                        sync_batch.append(result)
                        if len(sync_batch) < k:
                            continue  # this host waits for the broadcast
                        self._sync_update(sync_batch)
                        sync_batch = []
                        busy = {id(p) for p in pending.values()}
                        for p in self.pool.placements:
                            if id(p) not in busy and not self._done():
                                submit(p)
                        continue
                    if not self._done():
                        submit(placement)
            for future in pending:  # let work in flight finish before the hosts close
                future.result()
            self._game_restarts = self.pool.stats()["game_restarts"]
            self._checkpoint()
            self._telemetry.flush()

    def _done(self) -> bool:
        return self.stopping.is_set() or self.progress.agent_steps >= self.settings["max-steps"]

    # --- the three ways to update ------------------------------------------------------------

    def _central_update(self, trajectories):
        trajectories = [t for t in trajectories if t is not None]
        if not trajectories:
            return
        self.progress.bytes_moved += sum(t.nbytes for t in trajectories)
        staleness = self.store.version - min(t.version for t in trajectories)
        applied = 0
        for _ in range(self.agent_config.epochs):  # > 1: PPO-style reuse of the batch
            for batch in _minibatches(trajectories, self.agent_config.minibatches, self._rng):
                grads, metrics = self.store.learner.compute_gradients(batch)
                applied += self.store.apply(grads)
        metrics["steps"] = float(sum(len(t) for t in trajectories))  # each step once
        metrics["truncated"] = sum(t.truncated for t in trajectories)
        self._record(applied, metrics, [s for t in trajectories for s in t.episode_scores],
                     staleness)

    def _async_update(self, result, version):
        grads, metrics, scores = result
        if grads is None:
            return
        staleness = self.store.version - version
        self.progress.bytes_moved += sum(g.nbytes for g in grads)
        if staleness > self.settings["max-staleness"]:
            self.progress.dropped_stale += 1
            self._record(False, metrics, scores, staleness)
            return
        self._record(self.store.apply(grads, lr_scale=1.0 / (1 + staleness)), metrics, scores,
                     staleness)

    def _sync_update(self, results):
        results = [r for r in results if r[0] is not None]
        if not results:
            return
        weights = np.array([r[1]["steps"] for r in results], dtype=np.float64)
        weights /= weights.sum()  # average per step, so hosts with more envs count more
        grads = [sum(w * r[0][i] for w, r in zip(weights, results))
                 for i in range(len(results[0][0]))]
        self.progress.bytes_moved += sum(g.nbytes for r in results for g in r[0])
        metrics = {key: float(np.mean([r[1][key] for r in results])) for key in results[0][1]}
        metrics["steps"] = float(sum(r[1]["steps"] for r in results))
        metrics["truncated"] = sum(r[1].get("truncated", 0) for r in results)
        self._record(self.store.apply(grads), metrics, [s for r in results for s in r[2]], 0)

    def _record(self, applied: int, metrics, scores, staleness):
        """Count a batch's steps and scores, and ``applied`` optimizer steps made from it."""
        p = self.progress
        p.agent_steps += int(metrics.get("steps", 0))
        p.truncated += int(metrics.get("truncated", 0))
        p.episodes += len(scores)
        p.scores.extend(scores)
        p.updates += int(applied)
        p.history.append({**metrics,  # the learner's; the run's own counters win below
                          "update": p.updates, "agent_steps": p.agent_steps,
                          "version": self.store.version, "staleness": staleness,
                          "mean_score_last_100": p.mean_score_last_100,
                          "episodes": p.episodes, "bytes_moved": p.bytes_moved,
                          "wall_s": time.monotonic() - self.started})
        if self._telemetry is not None:
            self._telemetry.publish(p.history[-1], scores)
        every = self.settings["checkpoint-every"]
        if applied and every and p.updates - self._checkpointed_at >= every:
            self._checkpoint()
        if self._summaries is not None:
            with self._summaries.as_default(step=p.agent_steps):
                import tensorflow as tf
                for key, value in p.history[-1].items():
                    if isinstance(value, (int, float)) and np.isfinite(value):
                        tf.summary.scalar(key, value)
        if self.on_update is not None:
            self.on_update(p)

    # --- learner, checkpoints ------------------------------------------------------------------

    def _make_learner(self):
        from .agents.a2c import Learner
        spec = self.pool.call(self.pool.placements[0], "observation_spec")
        return Learner(self.agent_config, spec)

    def _summary_writer(self):
        """TensorBoard summaries next to the checkpoints, when there is a checkpoint dir."""
        if not self.settings["checkpoint-dir"]:
            return None
        import tensorflow as tf
        return tf.summary.create_file_writer(f"{self.settings['checkpoint-dir']}/tensorboard")

    def _checkpoint(self):
        directory = self.settings["checkpoint-dir"]
        if not directory or self.store is None:
            return
        p = self.progress
        self._checkpointed_at = p.updates
        checkpoint.save(directory, p.updates, self.store.weights(),
                        self.store.learner.get_optimizer_state(), {
                            "version": self.store.version, "agent_steps": p.agent_steps,
                            "updates": p.updates, "episodes": p.episodes,
                            "scores": list(p.scores), "settings": self.settings,
                            "agent_config": dataclasses.asdict(self.agent_config),
                            "obs_spec": self.store.learner.policy.obs_spec,
                            # env hosts draw actions from streams seeded with this
                            "rng_seed": self.settings["seed"] + p.updates})

    def _restore(self, weights, optimizer, state):
        try:
            self.store.learner.set_weights(weights)
            self.store.learner.set_optimizer_state(optimizer)
        except ValueError as exc:
            raise ConfigError(f"The checkpoint in {self.settings['checkpoint-dir']!r} was made "
                              f"with other agent settings ({exc}).") from None
        self.store.version = state["version"]
        p = self.progress
        p.agent_steps, p.updates, p.episodes = state["agent_steps"], state["updates"], state["episodes"]
        self._checkpointed_at = p.updates
        p.scores.extend(state["scores"])


def _minibatches(trajectories: list, n: int, rng: np.random.Generator) -> list[list]:
    """``trajectories`` shuffled into ``n`` groups (fewer when there are fewer)."""
    order = rng.permutation(len(trajectories))
    return [[trajectories[i] for i in group]
            for group in np.array_split(order, min(n, len(trajectories)))]
