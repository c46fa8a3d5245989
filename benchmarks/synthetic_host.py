"""A stand-in for ``EnvHost`` that loads the control plane as a real host does, with no
game and no TensorFlow: ``bench_control_plane.py`` puts it where the client starts hosts.

Its ``work`` waits as long as a real host takes to play the rollout (``ENV_STEPS_PER_S``
per env), then answers with what a real host sends: gradients of the real network's
shapes (learnt from the weights it was sent), packed by the order's compression, or one
trajectory of the real observation sizes per env. Every value is small noise, so Adam on
the client does real work on real sizes. The metrics carry ``sent_at`` (wall clock), so
the client can time a result from send to applied.
"""

from __future__ import annotations

import asyncio
import os
import time

import numpy as np

from sc2dask.compression import Compressor, Flat
from sc2dask.core import GradientResult, Work
from sc2dask.game.pysc2lib import features

# A real env's agent steps per second: a miniature-cluster node (0.35 core, 2 games)
# plays MoveToBeacon at about 64 steps/s (docs/results/scaling.md).
ENV_STEPS_PER_S = float(os.environ.get("SC2DASK_SYNTHETIC_STEPS_PER_S", "32"))


class SyntheticHost:
    """``EnvHost``'s interface for the client: prepare, work, stats, close."""

    n_envs: int = 0

    def __init__(self, config, n_envs: int, seed: int = 0, tf_threads=None, endpoints=()):
        self.n_envs, self._config = n_envs, config
        self._shapes: list[tuple] | None = None
        self._rng = np.random.default_rng(seed)
        self._compressor = Compressor()

    async def prepare(self, agent, gradients: bool = False) -> dict:
        """The observation spec pysc2 gives these envs' interface, without a game."""
        aif = features.AgentInterfaceFormat(
            feature_dimensions=features.Dimensions(
                screen=self._config.screen, minimap=self._config.minimap
            )
        )
        return {k: tuple(v) for k, v in features.Features(aif).observation_spec().items()}

    async def work(self, order, version: int, weights):
        started = time.monotonic()
        if isinstance(weights, Flat):
            self._shapes = list(weights.shapes)
        if order.work is not Work.GRADIENTS:
            raise NotImplementedError("the control-plane benchmark runs sync and async only")
        if (self._compressor.method, self._compressor.fraction) != (
            order.compression,
            order.fraction,
        ):
            self._compressor = Compressor(order.compression, order.fraction)
        grads = [
            (1e-4 * self._rng.standard_normal(shape)).astype(np.float32)
            for shape in self._shapes or []
        ]
        packed = await asyncio.to_thread(self._compressor.pack, grads)
        steps = order.n_steps * self.n_envs  # the envs play side by side
        rest = order.n_steps / ENV_STEPS_PER_S - (time.monotonic() - started)
        await asyncio.sleep(max(0.0, rest))
        metrics = {"steps": float(steps), "truncated": 0, "sent_at": time.time()}
        return GradientResult(packed, metrics, [])

    def stats(self) -> dict:
        return {"pid": os.getpid(), "envs": [{"restarts": 0}] * self.n_envs}

    def close(self) -> None:
        pass
