"""Which macros a trained Simple64 checkpoint picks, against which were open to it, per game.

A diagnosis for the full-game runs: a policy that has collapsed onto one choice shows it
here long before its win rate says why. Plays ``GAMES`` games (seeds 2000+) against the
bot ``LEVEL`` on this machine's game, sampling as in training.

    python benchmarks/macro_choices.py CHECKPOINT_DIR medium 2
"""

from __future__ import annotations

import collections
import sys

import numpy as np
from absl import flags

from sc2dask.game import EnvConfig
from sc2dask.game.agents import play_episode
from sc2dask.game.macros import MACROS, available
from sc2dask.training import checkpoint


class Counted:
    """A macro-playing agent that counts, per macro, the steps it was open and chosen."""

    def __init__(self, agent):
        self.agent = agent
        self.chosen: collections.Counter = collections.Counter()
        self.open_to: collections.Counter = collections.Counter()

    def reset(self):
        self.chosen.clear()
        self.open_to.clear()
        self.agent.reset()

    def step(self, timestep):
        self.open_to.update(MACROS[i] for i in np.flatnonzero(available(timestep.observation)))
        call = self.agent.step(timestep)
        self.chosen[MACROS[call.index]] += 1
        return call


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__.rstrip().splitlines()[-1].strip())
    directory, level, games = sys.argv[1], sys.argv[2], int(sys.argv[3])
    flags.FLAGS(["macro_choices"])
    env = checkpoint.checkpoint_env(directory) | {"opponent": f"bot:terran:{level}"}
    config = EnvConfig(**env, reward="outcome")
    trained = checkpoint.CheckpointAgent(directory)
    trained.rng = np.random.default_rng(0)
    agent = Counted(trained)
    for seed in range(2000, 2000 + games):
        with config.make(seed=seed) as game:
            play_episode(game, agent)
        steps = sum(agent.chosen.values())
        print(f"seed {seed} against {level}: outcome {game.outcome}, {steps} steps")
        print(
            "  chosen/open: "
            + ", ".join(f"{m} {agent.chosen[m]}/{agent.open_to[m]}" for m in MACROS)
        )


if __name__ == "__main__":
    main()
