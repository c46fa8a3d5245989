"""What a run keeps of each update: counters, the history row, and where the row goes.

The update rules call ``Recorder.record`` once per batch; the recorder counts steps,
episodes and scores into ``Progress``, appends the history row, and hands the row to the
training page (``TrainingPublisher``), to TensorBoard, to the checkpoint cadence and to
the user's ``on_update`` callback, so no update rule knows about any of them.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Callable

import numpy as np

from ..core import Ended
from .tensorboard import ScalarWriter


@dataclasses.dataclass
class Progress:
    """What a running training reports; ``history`` has one row per update."""

    agent_steps: int = 0
    updates: int = 0
    episodes: int = 0
    scores: collections.deque = dataclasses.field(
        default_factory=lambda: collections.deque(maxlen=100)
    )
    # +1, 0, -1 of the last 100 games for two; their totals below
    outcomes: collections.deque = dataclasses.field(
        default_factory=lambda: collections.deque(maxlen=100)
    )
    wins: int = 0
    draws: int = 0
    losses: int = 0
    # (bot level, outcome) of the last 100 games against easier bots (train.easier-games),
    # counted apart
    practice: collections.deque = dataclasses.field(
        default_factory=lambda: collections.deque(maxlen=100)
    )
    history: list = dataclasses.field(default_factory=list)
    bytes_moved: int = 0  # both directions: bytes_to_hosts + bytes_from_hosts
    bytes_to_hosts: int = 0  # weights
    bytes_from_hosts: int = 0  # trajectories (central) or gradients, as sent
    dropped_stale: int = 0
    counted_twice: int = 0  # rollouts whose result came back more than once (none should)
    truncated: int = 0  # trajectories cut by a crashed game (bootstrapped, not ended)
    learner_samples: int = 0  # steps through the client's learner (central mode), reuse counted
    learner_seconds: float = 0.0  # wall time the client's learner spent on them

    @property
    def learner_samples_per_s(self) -> float:
        """The client learner's speed (gradients and updates), or NaN where it ran none."""
        return self.learner_samples / self.learner_seconds if self.learner_seconds else float("nan")

    @property
    def mean_score_last_100(self) -> float:
        return float(np.mean(self.scores)) if self.scores else float("nan")

    @property
    def win_rate_last_100(self) -> float:
        """Wins over the last 100 games for two (ties count as not won); NaN before any."""
        return float(np.mean(np.array(self.outcomes) > 0)) if self.outcomes else float("nan")

    @property
    def practice_win_rate_last_100(self) -> float:
        """Wins over the last 100 games against easier bots; NaN before any."""
        return float(np.mean([o > 0 for _, o in self.practice])) if self.practice else float("nan")

    @property
    def practice_level_last_100(self) -> float:
        """The mean level (pysc2's, VeryEasy 1) of the last 100 games against easier bots:
        with ``climb``, how far the envs have climbed; NaN before any."""
        return float(np.mean([lv for lv, _ in self.practice])) if self.practice else float("nan")


class Recorder:
    """Counts each batch into ``progress`` and passes its row on.

    ``started`` is the run's start (``time.monotonic()``); ``version`` reads the store's
    version; ``checkpoint`` is called every ``checkpoint_every`` applied updates (0: never
    from here).
    """

    def __init__(
        self,
        progress: Progress,
        started: float,
        version: Callable[[], int],
        checkpoint: Callable[[], None],
        checkpoint_every: int,
        publisher=None,
        summaries: ScalarWriter | None = None,
        on_update=None,
    ):
        self.progress = progress
        self.started = started  # time.monotonic() when the run began: rows' wall_s count from it
        self._version, self._checkpoint, self._every = version, checkpoint, checkpoint_every
        self._publisher, self._summaries, self._on_update = publisher, summaries, on_update
        self.checkpointed_at = progress.updates  # updates at the last checkpoint
        self._arrived: dict[str, int] = {}  # each host's newest rollout counted

    def sent(self, nbytes: int) -> None:
        """Count bytes sent to a host (weights)."""
        self.progress.bytes_to_hosts += int(nbytes)
        self.progress.bytes_moved += int(nbytes)

    def arrived(self, rollout: str) -> None:
        """Note a rollout's result (``HOST-N``, the host's Nth) as it arrives; one seen
        before counts in ``counted_twice``: the fault campaigns check that a redone call
        never counts a rollout's steps twice (``benchmarks/bench_faults.py``). A host has
        one rollout in flight at a time, so its results come in order, and one per host is
        all there is to keep."""
        host, _, count = rollout.rpartition("-")
        if not host or not count.isdigit():
            return  # a host that does not name its rollouts
        if int(count) <= self._arrived.get(host, 0):
            self.progress.counted_twice += 1
        self._arrived[host] = max(int(count), self._arrived.get(host, 0))

    def received(self, nbytes: int) -> None:
        """Count bytes a host sent back (trajectories or gradients, as they travelled)."""
        self.progress.bytes_from_hosts += int(nbytes)
        self.progress.bytes_moved += int(nbytes)

    def learned(self, samples: int, seconds: float) -> None:
        """Count steps that went through the client's learner, and the time they took."""
        self.progress.learner_samples += int(samples)
        self.progress.learner_seconds += seconds

    def record(self, applied: int, metrics: dict, ended: Ended, staleness: int) -> None:
        """Count a batch's steps and the episodes that ended in it (games against easier
        bots apart), and ``applied`` optimizer steps made from it."""
        p = self.progress
        scores, outcomes = ended.scores, ended.outcomes
        p.agent_steps += int(metrics.get("steps", 0))
        p.truncated += int(metrics.get("truncated", 0))
        p.episodes += len(scores)
        p.scores.extend(scores)
        p.outcomes.extend(outcomes)
        p.practice.extend(ended.practice)
        p.wins += sum(o > 0 for o in outcomes)
        p.draws += sum(o == 0 for o in outcomes)
        p.losses += sum(o < 0 for o in outcomes)
        p.updates += int(applied)
        row = {
            **metrics,  # the learner's; the run's own counters win below
            "update": p.updates,
            "agent_steps": p.agent_steps,
            "version": self._version(),
            "staleness": staleness,
            "mean_score_last_100": p.mean_score_last_100,
            "win_rate_last_100": p.win_rate_last_100,
            "practice_win_rate_last_100": p.practice_win_rate_last_100,
            "practice_level_last_100": p.practice_level_last_100,
            "episodes": p.episodes,
            "bytes_moved": p.bytes_moved,
            "bytes_to_hosts": p.bytes_to_hosts,
            "bytes_from_hosts": p.bytes_from_hosts,
            "wall_s": time.monotonic() - self.started,
        }
        p.history.append(row)
        if self._publisher is not None:
            self._publisher.publish(row, scores)
        if applied and self._every and p.updates - self.checkpointed_at >= self._every:
            self._checkpoint()
            self.checkpointed_at = p.updates
        if self._summaries is not None:
            self._summaries.write(row, p.agent_steps)
        if self._on_update is not None:
            self._on_update(p)
