"""``EnvHost``: the Dask actor that owns a worker's pysc2 environments.

One host per worker owns several envs. A rollout moves them in lockstep, one forward
pass for all of them per step (``sc2dask/runtime/rollout.py``), and steps them
concurrently, one thread each (dask runs all *sync* actor methods of a worker one at a
time, so the public methods are ``async`` and hand the blocking pysc2 calls to threads).
A game that crashes is restarted in place and counted; the host itself never dies of it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import functools
import inspect
import logging
import os
import pickle
import socket
import threading
import uuid

import numpy as np

from ..agents.loading import build_agent
from ..agents.protocol import check_learner
from ..compression import Compressor, Flat, WeightDelta, apply_delta, unflatten
from ..core import (
    AgentSpec,
    EpisodeResult,
    GradientResult,
    NonFiniteGradients,
    RolloutResult,
    Work,
    WorkOrder,
    prepare_ahead,
)
from ..errors import ConfigError, HostError, SC2DaskError
from ..game import GAME_FAILURES, EnvConfig, game_seed, load_agent_class
from ..game.recording import EpisodeRecorder, Recording, check_layer
from ..monitoring.telemetry import HostReporter
from .preload import worker_tf_threads
from .rollout import play_batch
from .slot import EnvSlot

log = logging.getLogger(__name__)


def _checked_agent(agent_class, agent_path: str):
    """``agent_class`` that, if it cannot be made on this worker (a checkpoint folder only
    the client sees, a missing dependency), raises one ConfigError naming the agent."""

    def make():
        try:
            return agent_class()
        except SC2DaskError:  # says what is wrong already (e.g. CheckpointError)
            raise
        except Exception as exc:
            raise ConfigError(
                f"The agent {agent_path!r} cannot be made on this worker "
                f"({type(exc).__name__}: {exc})."
            ) from None

    return make


def portable(exc: Exception) -> Exception:
    """``exc`` if its pickle loads again, else a HostError naming it.

    Dask sends an actor call's exception to the client pickled. One whose pickle does not
    load (pysc2's RequestError takes an argument that its pickle leaves out) fails on the
    client, and the call's future never ends: a run waits for ever on it.
    """
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return HostError(
            f"{type(exc).__module__}.{type(exc).__name__} on {socket.gethostname()} "
            f"(pid {os.getpid()}): {exc}"
        )


def _errors_cross_the_network(method):
    """Raise from ``method`` only exceptions the client can read (``portable``)."""
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def calling(*args, **kwargs):
            try:
                return await method(*args, **kwargs)
            except Exception as exc:
                carried = _carried(exc)
            raise carried  # outside the handler: no unpicklable __context__ rides along

        return calling

    @functools.wraps(method)
    def called(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except Exception as exc:
            carried = _carried(exc)
        raise carried

    return called


def _carried(exc: Exception) -> Exception:
    """What to raise for ``exc``: itself, or a HostError naming it, its traceback logged
    here (the client gets the message only)."""
    carried = portable(exc)
    if carried is not exc:
        log.error("%s", carried, exc_info=exc)
    return carried


class StaleWeights(ValueError):
    """Work came without weights, but the host does not hold that version (a new host)."""


class EnvHost:
    """Several envs on one worker: evaluation episodes and policy rollouts.

    Attributes are declared on the class because dask resolves actor attribute reads
    through the class.
    """

    n_envs: int = 0

    def __init__(
        self,
        config: EnvConfig,
        n_envs: int,
        seed: int = 0,
        tf_threads: int | None = None,  # None: the worker's (sc2dask.worker)
        endpoints: tuple[str, ...] = (),
    ):  # running games (HOST:PORT), one per env
        if endpoints and len(endpoints) != n_envs:
            raise ValueError(f"{n_envs} envs need {n_envs} endpoints, not {len(endpoints)}")
        self.config = config
        self.n_envs = n_envs
        self._slots = [
            EnvSlot(config, game_seed(seed, i), endpoints[i] if endpoints else None)
            for i in range(n_envs)
        ]
        self._tf_threads = tf_threads
        self._learner = None  # built on first use: TensorFlow is heavy to import
        self._version = -1
        self._learner_lock = threading.Lock()
        self._compressor = Compressor()
        self._reporter = HostReporter(n_envs)  # per-env stats for the training page
        self._rng = np.random.default_rng([seed, n_envs])  # the policy's action sampling
        self._name, self._rollouts = uuid.uuid4().hex[:12], 0  # names each rollout's result
        self._env_threads = concurrent.futures.ThreadPoolExecutor(
            max(1, n_envs), thread_name_prefix="sc2dask-env"
        )  # one per env: steps overlap

    # --- evaluation of any pysc2 agent ---------------------------------------------------

    @_errors_cross_the_network
    async def evaluate(self, agent_path: str, episodes: int) -> list[EpisodeResult]:
        """Play ``episodes`` whole episodes with a fresh ``agent_path`` agent per env."""
        agent_class = _checked_agent(load_agent_class(agent_path), agent_path)
        shares = [len(range(i, episodes, self.n_envs)) for i in range(self.n_envs)]
        results = await asyncio.gather(
            *(
                asyncio.to_thread(self._play_episodes, slot, agent_class, n)
                for slot, n in zip(self._slots, shares)
                if n
            )
        )
        return [episode for episodes in results for episode in episodes]

    @_errors_cross_the_network
    async def record(self, agent_path: str, layer: str) -> Recording:
        """One episode of an ``agent_path`` agent on the first env, drawn frame by frame
        (``game.recording``): ``layer`` of the screen and the minimap, and the score."""
        agent_class = _checked_agent(load_agent_class(agent_path), agent_path)
        check_layer(layer)
        recorders: list[EpisodeRecorder] = []

        def watch_next():
            recorders.append(EpisodeRecorder(layer))  # a crashed episode's frames are dropped
            return recorders[-1]

        await asyncio.to_thread(self._play_episodes, self._slots[0], agent_class, 1, watch_next)
        return recorders[-1].recording()

    def _play_episodes(
        self, slot: EnvSlot, agent_class, episodes: int, watch=None
    ) -> list[EpisodeResult]:
        """``watch``: a function making each episode's watcher (``EnvSlot.play_episode``)."""
        scores: list[EpisodeResult] = []
        while len(scores) < episodes:
            try:
                env = slot.ensure()
                agent = agent_class()
                if callable(getattr(agent, "seed", None)):  # its own choices, each episode
                    agent.seed(game_seed(slot.seed, slot.episodes))
                agent.setup(env.observation_spec()[0], env.action_spec()[0])
                scores.append(slot.play_episode(agent, watch and watch()))
            except GAME_FAILURES as exc:  # the episode is lost; replay it on a new game
                slot.crashed(exc)
        return scores

    # --- rollouts with the learner's policy ----------------------------------------------

    @_errors_cross_the_network
    async def work(self, order: WorkOrder, version: int, weights) -> RolloutResult | GradientResult:
        """n steps of every env with the policy at ``version``, then ``order.work``: the
        trajectories themselves, or the gradients of them computed here.

        ``weights`` may be None when this host already holds ``version``: weights
        travel only when they changed, whole or as a ``WeightDelta`` from the version
        this host holds (StaleWeights if it holds another).
        """
        # Building the learner starts a game and imports TensorFlow: never on the event loop.
        learner = await asyncio.to_thread(self._ensure_learner, version, weights, order.agent)
        trajectories = await asyncio.to_thread(
            play_batch,
            self._slots,
            learner.policy,
            version,
            order.n_steps,
            self._rng,
            self._env_threads,
            order.env_groups,
        )
        self._reporter.after_rollout(self, trajectories)
        self._rollouts += 1
        rollout = f"{self._name}-{self._rollouts}"  # the client counts each once (Recorder)
        if order.work is Work.ROLLOUT:
            return RolloutResult(trajectories, rollout)
        result = await self._gradients(order, [t for t in trajectories if t is not None])
        return dataclasses.replace(result, rollout=rollout)

    async def _gradients(self, order: WorkOrder, trajectories: list) -> GradientResult:
        """The gradients of ``trajectories``, packed by the order's compression; topk's
        residual stays here for this host's next gradient."""
        if not trajectories:
            return GradientResult(None, {}, [])
        if (self._compressor.method, self._compressor.fraction) != (
            order.compression,
            order.fraction,
        ):
            self._compressor = Compressor(order.compression, order.fraction)
        scores = [s for t in trajectories for s in t.episode_scores]
        outcomes = [o for t in trajectories for o in t.episode_outcomes]
        practice = [o for t in trajectories for o in t.practice_outcomes]
        counts = {
            "steps": float(sum(len(t) for t in trajectories)),
            "truncated": sum(t.truncated for t in trajectories),
        }
        try:
            grads, metrics = await asyncio.to_thread(self._learner.compute_gradients, trajectories)
        except NonFiniteGradients as exc:  # the client counts it; the steps still count
            log.warning("gradient rejected: %s", exc)
            return GradientResult(
                None, counts, scores, rejected=True, outcomes=outcomes, practice=practice
            )
        packed = self._compressor.pack(grads)
        return GradientResult(
            packed, {**metrics, **counts}, scores, outcomes=outcomes, practice=practice
        )

    @_errors_cross_the_network
    async def prepare(self, agent: AgentSpec, gradients: bool = False) -> dict:
        """Start every game, then build the policy in the background; returns
        ``observation_spec()`` once the games run.

        The client calls it on every host as a run starts and builds its own learner from
        the spec while the hosts build theirs. Otherwise each process waits for the one
        before it (the client's TensorFlow import, a game for the spec, the client's
        graphs, then the hosts' imports on their first rollout) and the machine sits half
        idle through start-up. A rollout waits for the policy being built;
        ``gradients``: this host will compute them (sync and async modes).
        """
        await asyncio.gather(*(asyncio.to_thread(self._start_game, slot) for slot in self._slots))
        spec = await asyncio.to_thread(self.observation_spec)
        threading.Thread(
            target=self._build_quietly,
            args=(agent, gradients),
            name="sc2dask-build",
            daemon=True,
        ).start()
        return spec

    @staticmethod
    def _start_game(slot: EnvSlot) -> None:
        try:
            slot.current()  # the game and its first episode, which the first rollout plays
        except GAME_FAILURES as exc:  # the first rollout starts it again
            slot.crashed(exc)

    def _build_quietly(self, agent: AgentSpec, gradients: bool) -> None:
        """``_build_learner`` (and the gradients' graph) ahead of the first rollout. A
        failure is left to the rollout's own call, which raises it to the client."""
        try:
            prepare_ahead(self._build_learner(agent), gradients=gradients, apply=False)
        except Exception:  # see the docstring
            log.debug("building the policy ahead of the first rollout failed", exc_info=True)

    def _build_learner(self, agent: AgentSpec):
        with self._learner_lock:
            if self._learner is None:
                # TensorFlow reads these as it starts, if the agent uses it; an agent of
                # another library never imports it.
                threads = str(self._tf_threads or worker_tf_threads())
                os.environ["TF_NUM_INTRAOP_THREADS"] = os.environ["TF_NUM_INTEROP_THREADS"] = (
                    threads
                )
                spec = self._slots[0].ensure().observation_spec()[0]
                learner = build_agent(agent).make_learner(spec)
                check_learner(learner, agent.class_path)  # one clear error, not a traceback
                self._learner = learner
            return self._learner

    def _ensure_learner(self, version, weights, agent: AgentSpec):
        self._build_learner(agent)
        with self._learner_lock:
            if version != self._version:
                if weights is None:
                    raise StaleWeights(f"this host holds weights v{self._version}, not v{version}")
                if isinstance(weights, WeightDelta):
                    if weights.base != self._version:
                        raise StaleWeights(
                            f"a delta from v{weights.base}, but this host holds v{self._version}"
                        )
                    weights = apply_delta(self._learner.get_weights(), weights)
                elif isinstance(weights, Flat):
                    weights = unflatten(weights)
                self._learner.set_weights(weights)
                self._version = version
            return self._learner

    # --- bookkeeping -----------------------------------------------------------------------

    @_errors_cross_the_network
    def observation_spec(self) -> dict:
        """pysc2's observation spec of these envs, as plain tuples (it builds the learner)."""
        spec = self._slots[0].ensure().observation_spec()[0]
        return {k: tuple(v) for k, v in spec.items()}

    @_errors_cross_the_network
    def stats(self) -> dict:
        """Per-env counters for the client's supervisor and the dashboard."""
        return {
            "pid": os.getpid(),
            "envs": [
                {
                    "map": self.config.map_name,
                    "sc2_pid": slot.pid(),
                    "endpoint": slot.endpoint,
                    "episodes": slot.episodes,
                    "restarts": slot.restarts,
                }
                for slot in self._slots
            ],
        }

    @_errors_cross_the_network
    def crash_game(self, index: int = 0) -> int | None:
        """Kill env ``index``'s game process (fault injection for tests and drills)."""
        pid = self._slots[index].pid()
        if pid is not None:
            os.kill(pid, 9)
        return pid

    @_errors_cross_the_network
    def close(self) -> None:
        """Stop every game for good, also under work still in flight (a slow host being
        replaced): that work ends with SlotClosed rather than starting new games."""
        self._reporter.closed()
        for slot in self._slots:
            slot.retire()
        self._env_threads.shutdown(wait=False)


async def close_hosts(worker) -> None:
    """Close ``worker``'s env hosts as it closes (a retirement, ``cluster.scale`` down,
    ``adapt``): their games stop with the worker instead of outliving it, and the client
    sees the hosts closed and redoes their work elsewhere (``sc2dask/training/pool.py``).
    The ``sc2dask.worker`` preload's ``dask_teardown``."""
    for actor in list(worker.state.actors.values()):
        if isinstance(actor, EnvHost):
            log.info("closing an env host of %d envs as the worker closes", actor.n_envs)
            await asyncio.to_thread(actor.close)
