"""The roles in an sc2dask run, and the one record that flows between them.

- An **environment host** (``EnvHost``, on a Dask worker) owns several pysc2 envs and
  plays them with a **policy** for n steps, returning ``Trajectory`` records.
- A **learner** turns trajectories into gradients and applies gradients to its weights.
- The **parameter store** (on the client) holds the learner's versioned weights; an
  **update rule** decides when gradients or trajectories become a new version.

A host is asked for work with a ``WorkOrder`` and answers with a ``RolloutResult`` or a
``GradientResult``: typed records, so that neither side reads the other's tuples by position.

Everything that crosses the network is plain numpy, so it pickles cheaply and never
depends on TensorFlow being importable where it lands. This module imports nothing else
of sc2dask: the rest of the code reads as the interplay of these roles.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

Weights = list[np.ndarray]  # one array per trainable variable, in the model's order
Metrics = dict[str, float]
# A recurrent policy's memory: arrays with one row per env; {} for a policy without one.
State = dict[str, np.ndarray]


@dataclasses.dataclass
class Trajectory:
    """n consecutive steps of one environment, played with weights ``version``.

    Observations are stored compactly (integer layers as small ints, not float64).
    ``observations[k]`` has shape ``[T + 1, ...]``: the last entry is the state after the
    final step, used to bootstrap the return when the trajectory does not end the episode.

    ``terminal[t]`` is True when step t ended the episode (the game said so).
    ``truncated`` is True when the trajectory was cut short by a crashed game: its last
    good state is ``observations[..][-1]`` and it must be bootstrapped, never treated as
    an episode end.

    ``initial_state`` is a recurrent policy's memory before step 0 (one env's row of
    ``Policy.initial_state``, no batch axis), so that a learner unrolls from where the
    acting policy was, not from an episode's start; it is reset after each terminal step.

    ``extras`` holds, per step, every output of ``Policy.act``'s second dict besides
    ``log_prob`` (the value the policy estimated, and whatever else an agent returns there:
    logits, a recurrent core's output), ``[T, ...]`` each: what PPO's value clipping or
    IMPALA's logits need of the acting policy.
    """

    observations: dict[str, np.ndarray]
    actions: dict[str, np.ndarray]  # "function" plus one entry per argument head, [T]
    rewards: np.ndarray  # [T] float32
    terminal: np.ndarray  # [T] bool
    version: int
    truncated: bool = False
    episode_scores: list[float] = dataclasses.field(default_factory=list)  # episodes ended here
    # their outcomes, +1, 0 or -1, where they were games for two (else empty)
    episode_outcomes: list[int] = dataclasses.field(default_factory=list)
    # (bot level, outcome) of games against easier bots than the run's opponent
    # (train.easier-games)
    practice_outcomes: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    # [T] float32 log pi(a_t|s_t) of the policy that acted: lets the learner correct for
    # weights that moved on since (clipped ratio) and reuse a batch for several epochs.
    log_probs: np.ndarray | None = None
    initial_state: State = dataclasses.field(default_factory=dict)
    extras: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_steps(
        cls,
        observations: Sequence[Mapping[str, np.ndarray]],
        actions: Sequence[Mapping[str, int]],
        rewards: Sequence[float],
        terminal: Sequence[bool],
        version: int,
        truncated: bool = False,
        episode_scores: Sequence[float] = (),
        log_probs: Sequence[float] | None = None,
        episode_outcomes: Sequence[int] = (),
        initial_state: State | None = None,
        extras: Sequence[Mapping[str, np.ndarray]] = (),
        practice_outcomes: Sequence[tuple[int, int]] = (),
    ) -> Trajectory:
        """A trajectory from one env's per-step records.

        ``observations``: T + 1 encoded observations (``ObservationEncoder.encode``);
        ``actions``: T dicts of head indices (one env's slice of ``Policy.act``'s actions);
        ``extras``: T dicts (one env's slice of ``act``'s outputs besides ``log_prob``), or
        none.
        """
        if len(observations) != len(actions) + 1:
            raise ValueError(
                f"A trajectory of {len(actions)} steps needs {len(actions) + 1} "
                f"observations, got {len(observations)}"
            )
        return cls(
            observations={k: np.stack([o[k] for o in observations]) for k in observations[0]},
            actions={h: np.array([a[h] for a in actions], np.int32) for h in actions[0]},
            rewards=np.asarray(rewards, np.float32),
            terminal=np.asarray(terminal, bool),
            version=version,
            truncated=truncated,
            episode_scores=list(episode_scores),
            episode_outcomes=list(episode_outcomes),
            practice_outcomes=list(practice_outcomes),
            log_probs=None if log_probs is None else np.asarray(log_probs, np.float32),
            initial_state=dict(initial_state or {}),
            extras={k: np.stack([np.asarray(e[k]) for e in extras]) for k in extras[0]}
            if extras
            else {},
        )

    def __len__(self) -> int:
        return len(self.rewards)

    @property
    def nbytes(self) -> int:
        arrays = [
            *self.observations.values(),
            *self.actions.values(),
            *self.initial_state.values(),
            *self.extras.values(),
            self.rewards,
            self.terminal,
        ]
        return sum(a.nbytes for a in arrays)


@dataclasses.dataclass(frozen=True)
class Ended:
    """The episodes that ended in a batch: their scores and, in games for two, their
    outcomes (+1, 0, -1), those against easier bots than the run's opponent apart
    (``practice``: the bot's level and the outcome): what a run's recorder counts of each
    batch."""

    scores: Sequence[float] = ()
    outcomes: Sequence[int] = ()
    practice: Sequence[tuple[int, int]] = ()

    @classmethod
    def in_trajectories(cls, trajectories: Sequence[Trajectory]) -> Ended:
        return cls(
            [s for t in trajectories for s in t.episode_scores],
            [o for t in trajectories for o in t.episode_outcomes],
            [o for t in trajectories for o in t.practice_outcomes],
        )

    @classmethod
    def in_results(cls, results: Sequence[GradientResult]) -> Ended:
        return cls(
            [s for r in results for s in r.scores],
            [o for r in results for o in r.outcomes],
            [o for r in results for o in r.practice],
        )


@dataclasses.dataclass(frozen=True)
class EpisodeResult:
    """How one evaluation episode ended: its score, and in a game for two its outcome
    (+1 win, 0 tie, -1 loss)."""

    score: float
    outcome: int | None = None


class Work(enum.Enum):
    """What a host does with a rollout: return it, or learn from it and return gradients."""

    ROLLOUT = "rollout"  # central updates: the client computes the gradients
    GRADIENTS = "gradients"  # sync and async updates: each host computes its own


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """An agent as it travels to workers: its class's path (``module:Class``) and its
    config's fields, plain data, so a worker unpickles it without importing the agent."""

    class_path: str
    config: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class WorkOrder:
    """The work an update rule asks of every host: ``n_steps`` of each env with the policy
    of ``agent``, then ``work``. ``env_groups`` splits a host's envs into
    groups that take turns (``play_batch``); ``compression`` and ``fraction`` say how
    gradients travel back (``sc2dask/compression.py``)."""

    work: Work
    n_steps: int
    agent: AgentSpec
    env_groups: int = 1
    compression: str = "none"
    fraction: float = 0.01


@dataclasses.dataclass
class RolloutResult:
    """A host's answer to ``Work.ROLLOUT``: one trajectory per env, None for an env whose
    game crashed before it played a step."""

    trajectories: list[Trajectory | None]
    rollout: str = ""  # this rollout's name, unique in the run (the host's and a count)


@dataclasses.dataclass
class GradientResult:
    """A host's answer to ``Work.GRADIENTS``.

    ``grads`` is packed by the order's compression, or None when there is nothing to apply:
    every game crashed, or the gradients were not finite (``rejected``), in which case the
    steps and scores played still count.
    """

    grads: Any | None
    metrics: Metrics  # the learner's, plus "steps" and "truncated"
    scores: list[float]  # episodes that ended in the rollout
    rejected: bool = False
    outcomes: list[int] = dataclasses.field(default_factory=list)  # of games for two
    practice: list[tuple[int, int]] = dataclasses.field(default_factory=list)  # as Ended's
    rollout: str = ""  # the rollout's name, unique in the run (the host's and a count)


class Encoder(Protocol):
    """Turns pysc2 observations into the arrays a policy acts on and ``Trajectory`` stores
    (``sc2dask.agents.ObservationEncoder`` is one)."""

    def encode(self, observation: Any) -> dict[str, np.ndarray]:
        """One pysc2 ``TimeStep.observation`` as a dict of small arrays."""

    def encode_batch(self, observations: Sequence[Any]) -> dict[str, np.ndarray]:
        """Several observations stacked on a leading batch axis."""


class Policy(Protocol):
    """Chooses actions for a batch of encoded observations (runs on env hosts).

    A recurrent policy carries a memory across steps: the rollout keeps each env's row
    between calls and rollouts, starts it from ``initial_state`` at each episode's start,
    and stores the row a trajectory began with (``Trajectory.initial_state``).
    """

    # Read-only members (properties here, so a plain attribute of a narrower type conforms).
    @property
    def obs_spec(self) -> Mapping[str, tuple]:
        """pysc2's observation spec it was built for, saved with its checkpoints."""

    @property
    def encoder(self) -> Encoder: ...

    def initial_state(self, batch_size: int) -> State:
        """The memory at an episode's start, ``batch_size`` rows; {} for a policy without."""

    def act(
        self, batch: dict[str, np.ndarray], rng: np.random.Generator, state: State
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], list, State]:
        """Sample one action per row of ``batch`` with each row's memory ``state``: (head
        indices, each [B] int32: "function" and one per argument head; {"log_prob": [B],
        log pi of the whole action, and any per-row outputs the learner wants, such as
        "value": [B], which reach it as ``Trajectory.extras``}; one pysc2 ``FunctionCall``
        per row; the memory after this step)."""

    def get_weights(self) -> Weights: ...

    def set_weights(self, weights: Weights) -> None: ...


class SplitsHeads(Protocol):
    """Optional for a policy: ``head_weights`` says which of its weights are the small
    output heads, so that layered sync (``layered-sync`` 2 and above) sends them with every
    update and the rest every k-th. A policy without it cannot run layered sync; below
    that, every weight travels with every update."""

    def head_weights(self) -> list[bool]:
        """One flag per weight, in ``get_weights``' order: True for a head's."""


class NonFiniteGradients(ValueError):
    """Gradients with NaN or inf: one bad batch, counted and skipped, not the end of a run."""


class Learner(Protocol):
    """Turns trajectories into gradients, and gradients into new weights; it owns the
    policy whose weights it learns.

    ``compute_gradients`` and ``apply_gradients`` raise ``NonFiniteGradients`` for
    gradients with NaN or inf, and ValueError for malformed input.
    """

    @property
    def policy(self) -> Policy:
        """The policy whose weights it learns (a plain attribute conforms)."""

    def compute_gradients(self, trajectories: Sequence[Trajectory]) -> tuple[Weights, Metrics]:
        """The gradients of the loss (to descend) and the learner's metrics."""

    def apply_gradients(self, grads: Weights, lr_scale: float = 1.0) -> None:
        """One optimizer step, its learning rate times ``lr_scale`` (the update rules damp
        stale gradients and scale averaged ones)."""

    def get_weights(self) -> Weights:
        """Copies the caller owns: the parameter store marks them read-only and shares
        them between hosts."""

    def set_weights(self, weights: Weights) -> None: ...

    def get_optimizer_state(self) -> Weights: ...

    def set_optimizer_state(self, state: Weights) -> None: ...


class PreparesAhead(Protocol):
    """Optional for a learner: ``prepare`` builds ahead what its first calls would (graphs,
    buffers), so that a run's first update does not wait for it. A learner without it
    builds on first use."""

    def prepare(self, gradients: bool, apply: bool) -> None:
        """``gradients``: this process will compute gradients; ``apply``: it will apply
        them (the client's learner does; a host's does not)."""


def prepare_ahead(learner: Learner, gradients: bool, apply: bool) -> None:
    """The learner's ``prepare`` (``PreparesAhead``), where it has one."""
    prepare = getattr(learner, "prepare", None)
    if callable(prepare):
        prepare(gradients=gradients, apply=apply)


class Agent(Protocol):
    """What ``agent-class`` names: the factory of one agent's parts, as in Acme's builders.

    ``Config`` is a dataclass of its hyperparameters: its fields named like sc2dask's agent
    settings (``sc2dask config show``) take the run's values, the others keep their
    defaults. The config travels to the workers as plain data; each process builds its own
    policy or learner from it and the env's observation spec.
    """

    Config: type  # a dataclass (annotated so: ``Config: type = MyConfig``)

    def __init__(self, config: Any) -> None: ...

    def make_policy(self, obs_spec: Mapping[str, tuple]) -> Policy:
        """A policy alone: evaluation plays it with a checkpoint's weights."""

    def make_learner(self, obs_spec: Mapping[str, tuple]) -> Learner:
        """A learner and its policy: the client's (central), or a host's."""
