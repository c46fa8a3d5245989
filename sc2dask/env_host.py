"""``EnvHost``: the Dask actor that owns a worker's pysc2 environments.

One host per worker owns several envs and steps them concurrently, one thread each
(dask runs all *sync* actor methods of a worker one at a time, so the public methods
are ``async`` and hand the blocking pysc2 calls to threads). A game that crashes is
restarted in place and counted; the host itself never dies of it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import importlib
import logging
import os
import threading

import numpy as np

from .telemetry import HostReporter

log = logging.getLogger(__name__)



def game_failures() -> tuple[type[BaseException], ...]:
    """What a crashed or vanished game looks like from pysc2's side."""
    from .pysc2 import protocol, remote_controller
    return (protocol.ConnectionError, protocol.ProtocolError, remote_controller.ConnectError,
            ConnectionError, OSError, TimeoutError, EOFError)


class StaleWeights(ValueError):
    """Work came without weights, but the host does not hold that version (a new host)."""


@dataclasses.dataclass(frozen=True)
class EnvConfig:
    """How to make one environment; it travels to workers, so it is plain data."""

    map_name: str = "MoveToBeacon"
    screen: int | tuple[int, int] = 32
    minimap: int | tuple[int, int] = 32
    step_mul: int = 8
    feature_units: bool = False
    raw: bool = False

    def make(self, seed: int | None = None):
        """A pysc2 ``SC2Env`` on the game this machine has (real or emulated)."""
        from .game import make_env
        from .pysc2 import features
        aif = features.AgentInterfaceFormat(
            feature_dimensions=features.Dimensions(screen=self.screen, minimap=self.minimap),
            use_feature_units=self.feature_units, use_raw_units=self.raw,
            use_raw_actions=self.raw)
        return make_env(self.map_name, agent_interface_format=aif, step_mul=self.step_mul,
                        random_seed=seed)


def load_agent_class(path: str):
    """``package.module.Class`` (or ``...Class:argument``) -> a callable making the agent.

    The optional ``:argument`` is passed to the class (a checkpoint folder for
    ``sc2dask.checkpoint.CheckpointAgent``). Errors name what is wrong.
    """
    from .errors import ConfigError
    path, _, argument = path.partition(":")
    module_name, _, class_name = path.rpartition(".")
    try:
        agent_class = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"Cannot load agent {path!r} ({exc}); give a dotted path such as "
                          "pysc2_evolved.agents.scripted_agent.MoveToBeacon") from None
    return functools.partial(agent_class, argument) if argument else agent_class


class _Slot:
    """One environment with its crash bookkeeping; used by one thread at a time."""

    def __init__(self, config: EnvConfig, seed: int):
        self.config, self.seed = config, seed
        self.env = None
        self.timestep = None  # the env's current TimeStep, for rollouts across calls
        self.episodes = 0
        self.restarts = 0
        self.score = 0.0
        self.rng = np.random.default_rng(seed)  # the policy's sampling for this env

    def ensure(self):
        if self.env is None:
            self.env = self.config.make(seed=self.seed)
            self.timestep = None
        return self.env

    def crashed(self, exc: BaseException) -> None:
        """Close what is left of a crashed game; the next ``ensure`` starts a new one."""
        log.warning("SC2 crashed in env %s (%s); restarting it", self.seed, exc)
        self.restarts += 1
        self.seed += 1000  # a new game gets a new seed, so it cannot repeat the crash
        env, self.env, self.timestep = self.env, None, None
        try:
            env.close()
        except Exception:  # noqa: BLE001 - the game is already gone
            pass

    def pid(self) -> int | None:
        try:
            return self.env._sc2_procs[0].pid  # noqa: SLF001 - pysc2 has no public accessor
        except (AttributeError, IndexError, TypeError):
            return None

    def reset(self):
        self.timestep = self.ensure().reset()[0]
        self.score = 0.0
        return self.timestep


class EnvHost:
    """Several envs on one worker: evaluation episodes and policy rollouts.

    Attributes are declared on the class because dask resolves actor attribute reads
    through the class.
    """

    n_envs: int = 0

    def __init__(self, config: EnvConfig, n_envs: int, seed: int = 0,
                 tf_threads: int | None = None):  # None: the worker's (sc2dask.worker)
        self.config = config
        self.n_envs = n_envs
        self._slots = [_Slot(config, seed * 1009 + i) for i in range(n_envs)]
        self._tf_threads = tf_threads
        self._learner = None  # built on first use: TensorFlow is heavy to import
        self._version = -1
        self._learner_lock = threading.Lock()
        self._reporter = HostReporter(n_envs)  # per-env stats for the training page

    # --- evaluation of any pysc2 agent ---------------------------------------------------

    async def evaluate(self, agent_path: str, episodes: int) -> list[float]:
        """Play ``episodes`` whole episodes with a fresh ``agent_path`` agent per env."""
        agent_class = load_agent_class(agent_path)
        shares = [len(range(i, episodes, self.n_envs)) for i in range(self.n_envs)]
        results = await asyncio.gather(*(
            asyncio.to_thread(self._play_episodes, slot, agent_class, n)
            for slot, n in zip(self._slots, shares) if n))
        return [score for scores in results for score in scores]

    def _play_episodes(self, slot: _Slot, agent_class, episodes: int) -> list[float]:
        scores = []
        while len(scores) < episodes:
            try:
                env = slot.ensure()
                agent = agent_class()
                agent.setup(env.observation_spec()[0], env.action_spec()[0])
                agent.reset()
                timestep = slot.reset()
                score = 0.0
                while not timestep.last():
                    timestep = env.step([agent.step(timestep)])[0]
                    score += timestep.reward
                scores.append(float(score))
                slot.episodes += 1
            except game_failures() as exc:  # the episode is lost; replay it on a new game
                slot.crashed(exc)
        return scores

    # --- rollouts with the learner's policy ----------------------------------------------

    async def rollout(self, version: int, weights, n_steps: int, agent_config) -> list:
        """n steps of every env with the policy at ``version`` -> Trajectories (None: lost).

        ``weights`` may be None when this host already holds ``version``: weights
        travel only when they changed.
        """
        from .rollout import play_steps
        # Building the learner starts a game and imports TensorFlow: never on the event loop.
        learner = await asyncio.to_thread(self._ensure_learner, version, weights, agent_config)
        policy = learner.policy
        trajectories = list(await asyncio.gather(*(
            asyncio.to_thread(play_steps, slot, policy, version, n_steps)
            for slot in self._slots)))
        self._reporter.after_rollout(self, trajectories)
        return trajectories

    async def gradients(self, version: int, weights, n_steps: int, agent_config):
        """A rollout, then the A2C gradients of it computed here: (grads, metrics, scores)."""
        trajectories = [t for t in await self.rollout(version, weights, n_steps, agent_config)
                        if t is not None]
        if not trajectories:
            return None, {}, []
        grads, metrics = await asyncio.to_thread(self._learner.compute_gradients, trajectories)
        metrics["truncated"] = sum(t.truncated for t in trajectories)
        return grads, metrics, [s for t in trajectories for s in t.episode_scores]

    def _ensure_learner(self, version, weights, agent_config):
        with self._learner_lock:
            if self._learner is None:
                from .agents.a2c import Learner, set_tf_threads
                from .worker import worker_tf_threads
                set_tf_threads(self._tf_threads or worker_tf_threads())
                spec = self._slots[0].ensure().observation_spec()[0]
                self._learner = Learner(agent_config, spec)
            if version != self._version:
                if weights is None:
                    raise StaleWeights(f"this host holds weights v{self._version}, not v{version}")
                self._learner.set_weights(weights)
                self._version = version
            return self._learner

    # --- bookkeeping -----------------------------------------------------------------------

    def observation_spec(self) -> dict:
        """pysc2's observation spec of these envs, as plain tuples (it builds the learner)."""
        spec = self._slots[0].ensure().observation_spec()[0]
        return {k: tuple(v) for k, v in spec.items()}

    def stats(self) -> dict:
        """Per-env counters for the client's supervisor and the dashboard."""
        return {"pid": os.getpid(), "envs": [
            {"map": self.config.map_name, "sc2_pid": slot.pid(), "episodes": slot.episodes,
             "restarts": slot.restarts} for slot in self._slots]}

    def crash_game(self, index: int = 0) -> int | None:
        """Kill env ``index``'s game process (fault injection for tests and drills)."""
        pid = self._slots[index].pid()
        if pid is not None:
            os.kill(pid, 9)
        return pid

    def close(self) -> None:
        self._reporter.closed()
        for slot in self._slots:
            if slot.env is not None:
                try:
                    slot.env.close()
                except Exception:  # noqa: BLE001 - closing is best effort
                    pass
                slot.env = None

