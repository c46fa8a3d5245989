"""Playing n steps of a host's envs with the policy: the unit of work of an env host.

All envs of a host move in lockstep: one forward pass chooses the actions of every env
still playing (batched inference, as EnvPool and Sample Factory do), then the envs step
concurrently, each in its own thread (the games are other processes; pysc2 waits on
their sockets without the GIL).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Sequence

import numpy as np

from ..core import State, Trajectory
from ..game import GAME_FAILURES
from .slot import EnvSlot, Step


class _Record:
    """What one env did in a rollout, step by step, until it ended or its game crashed."""

    def __init__(self):
        self.encoded, self.actions, self.log_probs, self.extras = [], [], [], []
        self.rewards, self.terminal, self.scores = [], [], []
        self.outcomes: list[int] = []
        self.practice: list[tuple[int, int]] = []  # (level, outcome) against easier bots
        self.initial_state: State = {}  # the policy's memory before the first step
        self.crashed = False

    def stepped(self, step: Step) -> None:
        """A step's reward; the score and outcome of a game it ended, except a game against
        an easier bot, which the run learns from but does not count."""
        self.rewards.append(step.reward)
        self.terminal.append(step.terminal)
        if step.practice:
            if step.outcome is not None:
                self.practice.append((step.practice, step.outcome))
            return
        if step.score is not None:
            self.scores.append(step.score)
        if step.outcome is not None:
            self.outcomes.append(step.outcome)

    def trajectory(self, version: int) -> Trajectory | None:
        """The steps as one Trajectory; after a crash, cut at the last good state and
        marked truncated (so the learner bootstraps it), or None when nothing is left."""
        done = len(self.rewards)  # an action whose step failed is dropped; its state is kept
        if not self.crashed:
            return Trajectory.from_steps(
                self.encoded,
                self.actions,
                self.rewards,
                self.terminal,
                version,
                episode_scores=self.scores,
                episode_outcomes=self.outcomes,
                practice_outcomes=self.practice,
                log_probs=self.log_probs,
                initial_state=self.initial_state,
                extras=self.extras,
            )
        if done == 0:
            return None
        encoded = self.encoded[: done + 1]
        if len(encoded) == done:  # the crash hit the reset after an episode end, which
            encoded.append(encoded[-1])  # needs no bootstrap state: any will do
        return Trajectory.from_steps(
            encoded,
            self.actions[:done],
            self.rewards,
            self.terminal,
            version,
            truncated=True,
            episode_scores=self.scores,
            episode_outcomes=self.outcomes,
            practice_outcomes=self.practice,
            log_probs=self.log_probs[:done],
            initial_state=self.initial_state,
            extras=self.extras[:done],
        )


def play_batch(
    slots: Sequence[EnvSlot],
    policy,
    version: int,
    n_steps: int,
    rng: np.random.Generator,
    threads: concurrent.futures.Executor | None = None,
    env_groups: int = 1,
) -> list[Trajectory | None]:
    """Up to ``n_steps`` steps of every slot's env, one ``Trajectory`` per slot.

    Episodes that end inside are reset in place (``terminal`` marks the step). A game
    that crashes drops out of the rest of the rollout: its trajectory stops at the last
    good state, marked ``truncated``, and its slot restarts the game on the next use;
    the trajectory is None when the crash left no step to learn from.

    With ``env_groups`` > 1 (and ``threads``) the envs are split into that many groups
    that take turns: while one group's games step, the next group's actions are chosen,
    so the host computes while it waits (double buffering with 2). Each forward pass is
    then smaller, so it pays only where a host would otherwise sit idle.

    A recurrent policy's memory of each env stays in its slot (``EnvSlot.memory``) from
    one rollout to the next, and starts afresh with each episode.
    """
    run = _concurrently(threads) if threads is not None and len(slots) > 1 else map
    rollout = _Rollout(slots, policy, rng, run)
    groups = (
        [list(range(g, len(slots), env_groups)) for g in range(min(env_groups, len(slots)))]
        if threads is not None
        else []
    )
    if len(groups) > 1:
        _take_turns(groups, n_steps, rollout, threads)
    else:
        for _ in range(n_steps):
            live = [i for i, t in enumerate(rollout.timesteps) if t is not None]
            if not live:
                break
            calls = rollout.act(live)
            for i, timestep in zip(live, run(rollout.step, live, calls)):
                rollout.timesteps[i] = timestep
    return rollout.trajectories(version)


class _Rollout:
    """One ``play_batch``: each env's current timestep (None once its game crashed) and
    what it did so far (``_Record``)."""

    def __init__(self, slots: Sequence[EnvSlot], policy, rng: np.random.Generator, run=map):
        """``run`` maps over the envs: ``map``, or concurrently on a host's threads."""
        self.slots, self.policy, self.rng = slots, policy, rng
        self.records = [_Record() for _ in slots]
        self.fresh = {k: v[0] for k, v in policy.initial_state(1).items()}  # an episode's start
        self.timesteps: list = list(run(self.observe, range(len(slots))))

    def observe(self, i: int):
        """The observation env i acts on next; a crash takes it out of the rollout."""
        try:
            return self.slots[i].current()
        except GAME_FAILURES as exc:
            self.slots[i].crashed(exc)
            self.records[i].crashed = True
            return None

    def step(self, i: int, action):
        """Env i's step with ``action``, then the observation it acts on next."""
        try:
            self.records[i].stepped(self.slots[i].step(action))
        except GAME_FAILURES as exc:
            self.slots[i].crashed(exc)
            self.records[i].crashed = True
            return None
        return self.observe(i)

    def act(self, live: list[int]) -> list:
        """One forward pass for the envs ``live``; their calls, recorded."""
        slots, records, fresh = self.slots, self.records, self.fresh
        batch = self.policy.encoder.encode_batch([self.timesteps[i].observation for i in live])
        memories = [fresh if slots[i].memory is None else slots[i].memory for i in live]
        state = {k: np.stack([memory[k] for memory in memories]) for k in fresh}
        heads, behaviour, calls, after = self.policy.act(batch, self.rng, state)
        extras = {k: np.asarray(v) for k, v in behaviour.items() if k != "log_prob"}
        for row, i in enumerate(live):
            if not records[i].actions:
                records[i].initial_state = memories[row]
            slots[i].memory = {k: v[row] for k, v in after.items()}
            records[i].encoded.append({k: v[row] for k, v in batch.items()})
            records[i].actions.append({head: int(index[row]) for head, index in heads.items()})
            records[i].log_probs.append(float(behaviour["log_prob"][row]))
            records[i].extras.append({k: v[row] for k, v in extras.items()})
        return calls

    def trajectories(self, version: int) -> list[Trajectory | None]:
        """One per env: the last state of each env still playing closes its trajectory."""
        for i, timestep in enumerate(self.timesteps):
            if timestep is not None:
                self.records[i].encoded.append(self.policy.encoder.encode(timestep.observation))
        return [record.trajectory(version) for record in self.records]


def _concurrently(threads: concurrent.futures.Executor):
    """``map`` that runs the first call in the calling thread and the others on ``threads``.

    The calling thread would only wait for them otherwise; this way each step waits on one
    hand-over between threads fewer, which saves wall time for the same CPU.
    """

    def run(fn, *iterables):
        calls = list(zip(*iterables))
        others = [threads.submit(fn, *args) for args in calls[1:]]
        first = [fn(*calls[0])] if calls else []
        return first + [future.result() for future in others]

    return run


def _take_turns(groups, n_steps, rollout: _Rollout, threads) -> None:
    """``play_batch`` with groups of envs in turn: group g's next actions are chosen while
    the other groups' games step (each env's step is one task on ``threads``)."""
    timesteps = rollout.timesteps
    stepping: dict[int, list] = {}  # group -> [(env, future of its step)]
    for _ in range(n_steps):
        for g, members in enumerate(groups):
            for i, future in stepping.pop(g, []):
                timesteps[i] = future.result()
            live = [i for i in members if timesteps[i] is not None]
            if live:
                stepping[g] = [
                    (i, threads.submit(rollout.step, i, call))
                    for i, call in zip(live, rollout.act(live))
                ]
    for g in list(stepping):
        for i, future in stepping.pop(g):
            timesteps[i] = future.result()
