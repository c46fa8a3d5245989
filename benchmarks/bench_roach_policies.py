"""DefeatRoaches on the emulator under fixed policies over the ``attack`` action set: what
each way of attacking scores, to tell a learning failure from a hard map.

    python benchmarks/bench_roach_policies.py --episodes 10

Each policy selects the army on its first step, then: ``uniform`` picks no_op,
select_army or Attack_screen at a random pixel at random each step (the untrained
policy); ``once_random`` attacks one random pixel and waits; ``roach_every_20`` attacks a
pixel of a roach every 20 steps and waits between; ``roach_every_step`` attacks a roach
pixel every step; ``random_every_step`` a random pixel every step. Prints each policy's
mean and its episodes' scores; asserts nothing.
"""

from __future__ import annotations

import argparse

import numpy as np
from absl import flags

from sc2dask.game import make_env
from sc2dask.game.pysc2lib import actions, features

F = actions.FUNCTIONS
SIZE = 32  # the map's default screen
ENEMY = 4  # features.PlayerRelative.ENEMY


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    flags.FLAGS(["bench"])
    rng = np.random.default_rng(0)

    def anywhere(_obs):
        return [int(rng.integers(SIZE)), int(rng.integers(SIZE))]

    def a_roach(obs):
        ys, xs = np.nonzero(obs.feature_screen.player_relative == ENEMY)
        if not len(xs):
            return anywhere(obs)
        i = rng.integers(len(xs))
        return [int(xs[i]), int(ys[i])]

    def attack(where, every):
        def policy(obs, t):
            if t == 0:
                return F.select_army("select")
            if every and (t - 1) % every == 0 or not every and t == 1:
                return F.Attack_screen("now", where(obs))
            return F.no_op()

        return policy

    def uniform(obs, _t):
        choice = rng.integers(3)
        return [F.no_op(), F.select_army("select"), F.Attack_screen("now", anywhere(obs))][choice]

    policies = {
        "uniform": uniform,
        "once_random": attack(anywhere, 0),
        "roach_every_20": attack(a_roach, 20),
        "roach_every_step": attack(a_roach, 1),
        "random_every_step": attack(anywhere, 1),
    }
    aif = features.AgentInterfaceFormat(feature_dimensions=features.Dimensions(SIZE, SIZE))
    with make_env("DefeatRoaches", agent_interface_format=aif, random_seed=args.seed) as env:
        for name, policy in policies.items():
            scores = []
            for _ in range(args.episodes):
                timestep, total, t = env.reset()[0], 0, 0
                while not timestep.last():
                    call = policy(timestep.observation, t)
                    if call.function not in timestep.observation.available_actions:
                        call = F.no_op()
                    timestep = env.step([call])[0]
                    total, t = total + int(timestep.reward), t + 1
                scores.append(total)
            print(f"{name:>18}: mean {np.mean(scores):6.1f}; episodes {scores}", flush=True)


if __name__ == "__main__":
    main()
