"""Mini-games on the emulator under fixed policies: what each way of playing
scores, to tell a learning failure from a hard map, and to find the action set a map needs.

    python benchmarks/bench_fixed_policies.py --map DefeatRoaches --episodes 10
    python benchmarks/bench_fixed_policies.py --map DefeatZerglingsAndBanelings --episodes 10
    python benchmarks/bench_fixed_policies.py --map FindAndDefeatZerglings --episodes 10
    python benchmarks/bench_fixed_policies.py --map CollectMineralShards --episodes 10

DefeatRoaches, over the ``attack`` action set; each policy selects the army on its first
step, then: ``uniform`` picks no_op, select_army or Attack_screen at a random pixel at
random each step (the untrained policy); ``once_random`` attacks one random pixel and
waits; ``roach_every_20`` attacks a pixel of a roach every 20 steps and waits between;
``roach_every_step`` attacks a roach pixel every step; ``weakest_every_step`` attacks
the roach with the least life left every step (focus fire, the scripted play the set
allows); ``random_every_step`` a random pixel every step.

DefeatZerglingsAndBanelings, over the ``attack`` set: ``uniform`` and ``once_random`` as
above; ``banelings_first_every_step`` attacks the enemy nearest the marines every step, a
baneling while any is on the screen (banelings kill marines in a clump at once).

FindAndDefeatZerglings, over the ``sweep`` set: ``uniform`` as above with Attack_minimap;
``sweep_every_N`` attack-moves the army to a random minimap point every N steps and waits
between (a blind sweep of the fog); ``seek_every_N`` attack-moves it to the enemy nearest
the army on the minimap, else to the nearest pathable minimap pixel never seen (what the
set allows to one who reads the minimap's ``visibility_map`` and ``pathable``).

CollectMineralShards, over the ``move`` set: ``uniform`` as above with Move_screen;
``nearest_shard_every_step`` moves the army to the shard nearest the marines' centre
every step (pysc2's scripted agent's play, on the set's 32x32 screen): what the set
allows without splitting the marines.

Prints each policy's mean and its episodes' scores; asserts nothing.
"""

from __future__ import annotations

import argparse

import numpy as np
from absl import flags

from sc2dask.game import make_env
from sc2dask.game.pysc2lib import actions, features

F = actions.FUNCTIONS
SELF, NEUTRAL, ENEMY = 1, 3, 4  # features.PlayerRelative
BANELING = 9  # its unit type id
HIDDEN = 0  # visibility_map: never seen (1: seen, under fog; 2: in sight)


def nearest(xs, ys, mx, my) -> list[int]:
    """The pixel of ``xs, ys`` nearest the centre of the army's pixels ``mx, my``."""
    i = np.argmin(np.hypot(xs - mx.mean(), ys - my.mean()))
    return [int(xs[i]), int(ys[i])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--map",
        required=True,
        choices=[
            "DefeatRoaches",
            "DefeatZerglingsAndBanelings",
            "FindAndDefeatZerglings",
            "CollectMineralShards",
        ],
    )
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--screen", type=int, default=32, help="screen and minimap pixels a side")
    parser.add_argument("--policies", help="comma-separated names to play (default: all)")
    args = parser.parse_args()
    if args.screen < 8:
        parser.error(f"--screen {args.screen}: give at least 8 pixels a side")
    flags.FLAGS(["bench"])
    rng = np.random.default_rng(0)

    def anywhere(_obs):
        return [int(rng.integers(args.screen)), int(rng.integers(args.screen))]

    def a_roach(obs):
        ys, xs = np.nonzero(obs.feature_screen.player_relative == ENEMY)
        if not len(xs):
            return anywhere(obs)
        i = rng.integers(len(xs))
        return [int(xs[i]), int(ys[i])]

    def weakest_roach(obs):
        """A pixel of the roach with the least life left (the one being shot, once hit)."""
        screen = obs.feature_screen
        enemy = screen.player_relative == ENEMY
        if not enemy.any():
            return anywhere(obs)
        life = np.where(enemy, screen.unit_hit_points_ratio, np.iinfo(np.int32).max)
        y, x = np.unravel_index(np.argmin(life), life.shape)
        return [int(x), int(y)]

    def banelings_first(obs):
        """The enemy nearest the marines' centre, a baneling if any is on the screen."""
        screen = obs.feature_screen
        enemy = screen.player_relative == ENEMY
        if not enemy.any():
            return anywhere(obs)
        banelings = enemy & (screen.unit_type == BANELING)
        ys, xs = np.nonzero(banelings if banelings.any() else enemy)
        my, mx = np.nonzero(screen.player_relative == SELF)
        if not len(mx):
            return [int(xs[0]), int(ys[0])]
        return nearest(xs, ys, mx, my)

    def nearest_shard(obs):
        """The shard pixel nearest the marines' centre, as pysc2's scripted agent picks."""
        relative = obs.feature_screen.player_relative
        sy, sx = np.nonzero(relative == NEUTRAL)
        my, mx = np.nonzero(relative == SELF)
        if not len(sx) or not len(mx):
            return anywhere(obs)
        return nearest(sx, sy, mx, my)

    def seek(obs):
        """On the minimap: the enemy nearest the army, else the nearest pathable pixel never
        seen (the map's edge outside the playable area is never seen)."""
        minimap = obs.feature_minimap
        my, mx = np.nonzero(minimap.player_relative == SELF)
        ey, ex = np.nonzero(minimap.player_relative == ENEMY)
        if not len(ex):
            ey, ex = np.nonzero((minimap.visibility_map == HIDDEN) & (minimap.pathable > 0))
        if not len(ex) or not len(mx):
            return anywhere(obs)
        return nearest(ex, ey, mx, my)

    def every(function, where, steps):
        """Select the army, then call ``function`` at ``where`` every ``steps`` steps
        (0: once) and wait between."""

        def policy(obs, t):
            if t == 0:
                return F.select_army("select")
            if steps and (t - 1) % steps == 0 or not steps and t == 1:
                return function("now", where(obs))
            return F.no_op()

        return policy

    def uniform(function):
        def policy(obs, _t):
            choice = rng.integers(3)
            return [F.no_op(), F.select_army("select"), function("now", anywhere(obs))][choice]

        return policy

    policies = {
        "DefeatRoaches": {
            "uniform": uniform(F.Attack_screen),
            "once_random": every(F.Attack_screen, anywhere, 0),
            "roach_every_20": every(F.Attack_screen, a_roach, 20),
            "roach_every_step": every(F.Attack_screen, a_roach, 1),
            "weakest_every_step": every(F.Attack_screen, weakest_roach, 1),
            "random_every_step": every(F.Attack_screen, anywhere, 1),
        },
        "DefeatZerglingsAndBanelings": {
            "uniform": uniform(F.Attack_screen),
            "once_random": every(F.Attack_screen, anywhere, 0),
            "banelings_first_every_step": every(F.Attack_screen, banelings_first, 1),
        },
        "FindAndDefeatZerglings": {
            "uniform": uniform(F.Attack_minimap),
            "sweep_every_10": every(F.Attack_minimap, anywhere, 10),
            "sweep_every_30": every(F.Attack_minimap, anywhere, 30),
            "sweep_every_60": every(F.Attack_minimap, anywhere, 60),
            "seek_every_step": every(F.Attack_minimap, seek, 1),
            "seek_every_8": every(F.Attack_minimap, seek, 8),
        },
        "CollectMineralShards": {
            "uniform": uniform(F.Move_screen),
            "nearest_shard_every_step": every(F.Move_screen, nearest_shard, 1),
        },
    }[args.map]
    if args.policies:
        unknown = set(args.policies.split(",")) - set(policies)
        if unknown:
            parser.error(f"unknown policies {sorted(unknown)}; choose from {sorted(policies)}")
        policies = {name: policies[name] for name in args.policies.split(",")}
    aif = features.AgentInterfaceFormat(
        feature_dimensions=features.Dimensions(args.screen, args.screen)
    )
    with make_env(args.map, agent_interface_format=aif, random_seed=args.seed) as env:
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
