"""The roles in an sc2dask run, and the one record that flows between them.

- An **environment host** (``EnvHost``, on a Dask worker) owns several pysc2 envs and
  plays them with a **policy** for n steps, returning ``Trajectory`` records.
- The **parameter store** (on the client) holds versioned weights and optimizer state;
  a **learner** turns trajectories into gradients, which the store applies.

Everything that crosses the network is plain numpy, so it pickles cheaply and never
depends on TensorFlow being importable where it lands.
"""

from __future__ import annotations

import dataclasses

import numpy as np


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
    """

    observations: dict[str, np.ndarray]
    actions: dict[str, np.ndarray]  # "function" plus one entry per argument head, [T]
    rewards: np.ndarray  # [T] float32
    terminal: np.ndarray  # [T] bool
    version: int
    truncated: bool = False
    episode_scores: list[float] = dataclasses.field(default_factory=list)  # episodes ended here
    # [T] float32 log pi(a_t|s_t) of the policy that acted: lets the learner correct for
    # weights that moved on since (clipped ratio) and reuse a batch for several epochs.
    log_probs: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.rewards)

    @property
    def nbytes(self) -> int:
        arrays = [*self.observations.values(), *self.actions.values(), self.rewards, self.terminal]
        return sum(a.nbytes for a in arrays)
