"""The three update rules: how a host's finished work becomes a new version of the weights.

The training loop (``sc2dask/training/loop.py``) only dispatches: when a host's work comes
back it hands it to the rule, and gives new work to the hosts the rule returns.

- ``CentralUpdates``: hosts return trajectories; the client computes the gradients (with
  ``epochs`` > 1 it reuses each batch for several clipped, PPO-style steps). With
  ``overlap`` a host plays its next rollout while the client learns from its last one,
  on weights one update older (IMPALA's policy lag; the PPO clip bounds the step).
- ``SyncUpdates``: every host computes gradients on its own rollout; the client averages
  ``sync-gradients`` (K) of them (weighted by steps), applies one update and broadcasts.
  With K below the number of hosts N, an update waits only for the first K: the
  stragglers' gradients, computed on older weights, join a later average weighted by
  1 / (1 + staleness), or are dropped beyond ``max-staleness`` versions; either way a
  straggler's host gets new work at once, on the weights of the moment.
  ``sync-lr-scaling`` scales the learning rate of an update with the number of gradients
  it averages (sqrt or linear), since more hosts give larger batches, not more updates.
- ``AsyncUpdates``: each host's gradient is applied as it arrives, with the learning rate
  divided by (1 + the staleness beyond H - 1) for H hosts (``async-lr-damping: excess``,
  the default), or by (1 + staleness) (``staleness``: staleness-aware async SGD, Zhang et
  al. 2016); a gradient whose staleness so counted passes ``max-staleness`` is dropped.
  With H hosts every gradient is about H - 1 versions old, so dividing by H would cancel
  the updates the extra hosts add, and a fixed limit would drop them all past a few hosts.
  With ``async-combine`` (sqrt or linear) the K gradients that reached the client together,
  while it was busy with the last, make one step of their average at the learning rate
  times sqrt(K) or K, as a sync update of K would: a client that falls behind then spends
  one optimizer step, not K, on them (its cost per gradient, docs/results/scaling.md).
"""

from __future__ import annotations

import dataclasses
import time
import typing

import numpy as np

from .. import compression
from ..core import (
    AgentSpec,
    Ended,
    GradientResult,
    Metrics,
    NonFiniteGradients,
    RolloutResult,
    Work,
    WorkOrder,
)
from ..errors import ConfigError
from ..settings import AsyncDamping, TrainSettings
from .recorder import Recorder
from .store import ParameterStore


class UpdateRule:
    """Turns finished work into updates; ``on_result`` says which hosts get work next."""

    work = Work.GRADIENTS  # what this rule asks of the hosts
    plays_ahead = False  # True: a host gets new work before its result is learned from

    def __init__(
        self,
        store: ParameterStore,
        recorder: Recorder,
        compression: str = "none",
        fraction: float = 0.01,
    ):
        self.store, self.recorder = store, recorder
        self.compression, self.fraction = compression, fraction  # how gradients travel

    def order(self, n_steps: int, agent: AgentSpec, env_groups: int = 1) -> WorkOrder:
        """The work this rule asks of every host, for rollouts of ``n_steps``."""
        return WorkOrder(self.work, n_steps, agent, env_groups, self.compression, self.fraction)

    def on_result(self, placement, result, version: int) -> list:
        """Take ``result`` of ``placement``'s work at ``version``; return the placements
        that should get new work now (the same one, or none while it waits for others)."""
        raise NotImplementedError

    def on_results(self, finished: list[tuple]) -> list:
        """Take the (placement, result, version) that arrived together, in order; return
        the placements that should get new work now."""
        return [ready for item in finished for ready in self.on_result(*item)]

    def resize(self, n_hosts: int) -> list:
        """The run now has ``n_hosts`` hosts (an elastic run grew or lost one); returns
        placements that should get new work now."""
        return []


class CentralUpdates(UpdateRule):
    work = Work.ROLLOUT

    def __init__(
        self,
        store,
        recorder,
        epochs: int,
        minibatches: int,
        rng: np.random.Generator,
        overlap: bool = False,
    ):
        super().__init__(store, recorder)
        self.epochs, self.minibatches, self.rng = epochs, minibatches, rng
        self.plays_ahead = overlap

    def on_result(self, placement, result: RolloutResult, version):
        trajectories = [t for t in result.trajectories if t is not None]
        if not trajectories:
            return [placement]
        self.recorder.received(sum(t.nbytes for t in trajectories))
        staleness = self.store.version - min(t.version for t in trajectories)
        applied, started = 0, time.perf_counter()
        metrics: Metrics = {}
        for _ in range(self.epochs):  # > 1: PPO-style reuse of the batch
            for batch in minibatches(trajectories, self.minibatches, self.rng):
                try:
                    grads, metrics = self.store.learner.compute_gradients(batch)
                except NonFiniteGradients as exc:
                    self.store.reject(exc)
                    continue
                applied += self.store.apply(grads)
        steps = sum(len(t) for t in trajectories)
        self.recorder.learned(steps * self.epochs, time.perf_counter() - started)
        metrics["steps"] = float(steps)  # each step once
        metrics["truncated"] = sum(t.truncated for t in trajectories)
        self.recorder.record(applied, metrics, Ended.in_trajectories(trajectories), staleness)
        return [placement]


class AsyncUpdates(UpdateRule):
    def __init__(
        self,
        store,
        recorder,
        max_staleness: int,
        n_hosts: int = 1,
        damping: str = "excess",
        compression: str = "none",
        fraction: float = 0.01,
        combine: str = "none",
    ):
        super().__init__(store, recorder, compression, fraction)
        if damping not in ASYNC_DAMPINGS:
            raise ConfigError(
                f"Unknown async-lr-damping {damping!r}; choose one of {', '.join(ASYNC_DAMPINGS)}."
            )
        self.max_staleness, self.n_hosts, self.damping = max_staleness, n_hosts, damping
        self.combine = None if combine == "none" else LR_SCALINGS[combine]

    def counted(self, staleness: int) -> int:
        """The staleness the rule damps and drops by: with ``excess``, only what is beyond
        the H - 1 versions that H hosts make between two gradients of one, so that
        ``max-staleness`` means the same at any number of hosts."""
        if self.damping == "excess":
            return max(0, staleness - (self.n_hosts - 1))
        return staleness

    def lr_scale(self, staleness: int) -> float:
        """The learning-rate factor of a gradient ``staleness`` versions old."""
        return 1.0 / (1 + self.counted(staleness))

    def resize(self, n_hosts: int) -> list:
        self.n_hosts = n_hosts
        return []

    def on_result(self, placement, result: GradientResult, version):
        usable = self._usable(result, version)
        if usable is not None:
            self._apply(*usable)
        return [placement]

    def on_results(self, finished):
        if self.combine is None:  # one step each, each staleness counting the steps before
            return super().on_results(finished)
        usable = [self._usable(result, version) for _, result, version in finished]
        usable = [u for u in usable if u is not None]
        if len(usable) == 1:
            self._apply(*usable[0])
        elif usable:
            scales = [self.lr_scale(s) for _, s in usable]
            _apply_average(
                self,
                [r for r, _ in usable],
                scales,  # stale ones count less
                max(s for _, s in usable),
                lr_scale=self.combine(len(usable)) * float(np.mean(scales)),
            )
        return [placement for placement, _, _ in finished]

    def _apply(self, result: GradientResult, staleness: int) -> None:
        applied = self.store.apply(result.grads, lr_scale=self.lr_scale(staleness))
        self.recorder.record(applied, result.metrics, Ended.in_results([result]), staleness)

    def _usable(self, result: GradientResult, version: int):
        """(the result with its gradient unpacked, its staleness), or None for a result
        that is rejected or too stale (counted here)."""
        if result.grads is None:
            _count_rejected(self, result, version)
            return None
        staleness = self.store.version - version
        self.recorder.received(compression.nbytes(result.grads))
        if self.counted(staleness) > self.max_staleness:
            self.recorder.progress.dropped_stale += 1
            self.recorder.record(False, result.metrics, Ended.in_results([result]), staleness)
            return None
        return dataclasses.replace(result, grads=compression.unpack(result.grads)), staleness


class SyncUpdates(UpdateRule):
    def __init__(
        self,
        store,
        recorder,
        gradients_per_update: int,
        max_staleness: int,
        follow_hosts: bool = False,  # k is the number of hosts, as it changes
        lr_scaling: str = "none",
        compression: str = "none",
        fraction: float = 0.01,
    ):
        super().__init__(store, recorder, compression, fraction)
        self.k, self.max_staleness = gradients_per_update, max_staleness
        self.lr_scaling = LR_SCALINGS[lr_scaling]
        self._given_k = None if follow_hosts else gradients_per_update  # sync-gradients
        self._batch: list[tuple[GradientResult, int]] = []  # (unpacked result, its version)
        self._waiting: list = []  # placements whose result is in the batch

    def on_result(self, placement, result: GradientResult, version):
        staleness = self.store.version - version
        _count_rejected(self, result, version)
        if result.grads is not None and staleness > self.max_staleness:  # too late
            self.recorder.received(compression.nbytes(result.grads))
            self.recorder.progress.dropped_stale += 1
            self.recorder.record(False, result.metrics, Ended.in_results([result]), staleness)
            return [placement]  # fresh weights, fresh work
        if result.grads is not None:
            self.recorder.received(compression.nbytes(result.grads))
            result = dataclasses.replace(result, grads=compression.unpack(result.grads))
        self._batch.append((result, version))
        if staleness > 0:
            # A straggler: the update it was meant for is made. Its gradient waits for the
            # next one, but its host need not: it plays on with the weights there are now,
            # instead of sitting out a whole round (docs/results/scaling.md).
            return [placement, *self._update_when_full()]
        self._waiting.append(placement)
        return self._update_when_full()

    def resize(self, n_hosts: int) -> list:
        # sync-gradients, when given, holds as long as there are that many hosts
        self.k = n_hosts if self._given_k is None else min(self._given_k, n_hosts)
        return self._update_when_full()

    def _update_when_full(self) -> list:
        """Average and apply the batch once it holds ``k`` results; the hosts that waited
        for it then get new work."""
        if not self._batch or len(self._batch) < self.k:
            return []  # the hosts in it wait for the broadcast
        batch, self._batch = self._batch, []
        waiting, self._waiting = self._waiting, []
        usable = [(r, v) for r, v in batch if r.grads is not None]
        if usable:
            _apply_average(
                self,
                [r for r, _ in usable],
                [1.0 / (1 + self.store.version - v) for _, v in usable],
                max(self.store.version - v for _, v in usable),
                lr_scale=self.lr_scaling(len(usable)),
            )
        return waiting


# sync-lr-scaling: the learning-rate factor of an update that averages k gradients. The
# mean of k gradients has k times less variance, so it can take a larger step: linear keeps
# the step per sample of one host's updates, sqrt keeps the step's noise (the sources and
# the measurement are in docs/results/scaling.md).
LR_SCALINGS = {
    "none": lambda k: 1.0,
    "sqrt": lambda k: float(np.sqrt(k)),
    "linear": lambda k: float(k),
}
ASYNC_DAMPINGS = typing.get_args(AsyncDamping)  # async-lr-damping: AsyncUpdates.counted


def _apply_average(
    rule: UpdateRule,
    results: list[GradientResult],
    discounts: list[float],
    staleness: int,
    lr_scale: float,
) -> None:
    """One optimizer step of ``results``' per-step average (``average_gradients``),
    recorded as one update with every result's episodes: a sync update, or async
    gradients that arrived together."""
    grads, metrics = average_gradients(results, discounts)
    applied = rule.store.apply(grads, lr_scale=lr_scale)
    rule.recorder.record(applied, metrics, Ended.in_results(results), staleness)


def _count_rejected(rule: UpdateRule, result: GradientResult, version: int) -> None:
    """A host's gradients that it found non-finite (``EnvHost.work``): the store
    counts them as rejected, and the steps and scores played still count."""
    if result.rejected:
        rule.store.reject("non-finite on the host")
        ended = Ended.in_results([result])
        rule.recorder.record(False, result.metrics, ended, rule.store.version - version)


def make_update_rule(
    settings: TrainSettings,
    agent,
    store: ParameterStore,
    recorder: Recorder,
    n_hosts: int,
    rng: np.random.Generator,
) -> UpdateRule:
    """The rule for ``settings.mode``; ConfigError if its settings do not fit ``n_hosts``."""
    if settings.mode == "central":
        return CentralUpdates(
            store, recorder, agent.epochs, agent.minibatches, rng, settings.overlap
        )
    if settings.mode == "async":
        return AsyncUpdates(
            store,
            recorder,
            settings.max_staleness,
            n_hosts,
            settings.async_lr_damping,
            settings.compression,
            settings.topk_fraction,
            settings.async_combine,
        )
    k = settings.sync_gradients or n_hosts
    if k > n_hosts:
        raise ConfigError(
            f"sc2dask.train.sync-gradients is {k} but the run has {n_hosts} env "
            f"hosts (one per worker); set it to at most {n_hosts}, or leave it "
            f"unset for one gradient per host."
        )
    return SyncUpdates(
        store,
        recorder,
        k,
        settings.max_staleness,
        follow_hosts=settings.sync_gradients is None,
        lr_scaling=settings.sync_lr_scaling,
        compression=settings.compression,
        fraction=settings.topk_fraction,
    )


def average_gradients(
    results: list[GradientResult], discounts: list[float] | None = None
) -> tuple[list[np.ndarray], dict[str, float]]:
    """The per-step average of hosts' unpacked gradients: a host that played more steps
    counts more, as if one learner had seen every step. ``discounts`` (one per result,
    default 1) scale a result's weight before normalising: stale ones count less."""
    weights = np.array([r.metrics["steps"] for r in results], dtype=np.float64)
    if discounts is not None:
        weights *= np.asarray(discounts, dtype=np.float64)
    weights /= weights.sum()
    unpacked = [r.grads for r in results if r.grads is not None]
    assert len(unpacked) == len(results), "average only results that carry gradients"
    per_result = weights.astype(np.float32)
    grads = [_weighted_sum([g[i] for g in unpacked], per_result) for i in range(len(unpacked[0]))]
    # A metric is the mean over the results that have it: a rollout in which no episode
    # ended has no mean_episode_score (sc2dask/agents/a2c.py), and with K of N gradients
    # per update the hosts' episodes no longer end in the same rollout.
    keys = dict.fromkeys(key for r in results for key in r.metrics)
    metrics = {
        key: float(np.mean([r.metrics[key] for r in results if key in r.metrics])) for key in keys
    }
    metrics["steps"] = float(sum(r.metrics["steps"] for r in results))
    metrics["truncated"] = sum(r.metrics.get("truncated", 0) for r in results)
    return grads, metrics


def _weighted_sum(arrays: list[np.ndarray], weights: np.ndarray) -> np.ndarray:
    """``sum(w * a)`` in the arrays' own precision, reusing one buffer: a sync update of
    hundreds of hosts spent most of its averaging allocating temporaries."""
    total = arrays[0] * weights[0]
    scaled = np.empty_like(total)
    for weight, array in zip(weights[1:], arrays[1:]):
        np.multiply(array, weight, out=scaled)
        total += scaled
    return total


def minibatches(trajectories: list, n: int, rng: np.random.Generator) -> list[list]:
    """``trajectories`` shuffled into ``n`` groups (fewer when there are fewer)."""
    order = rng.permutation(len(trajectories))
    return [
        [trajectories[i] for i in group]
        for group in np.array_split(order, min(n, len(trajectories)))
    ]
