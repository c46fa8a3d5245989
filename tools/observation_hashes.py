"""Fingerprints of seeded games: one hash per game over every observation pysc2 decodes.

A change to the emulator meant to be exact (a faster loop, the same rules) must leave
every fingerprint as it was; run this before and after and compare. Plays Simple64 with
the scripted TerranMacro (raw actions) and with pysc2's RandomAgent against a bot, and
each mini-game with the RandomAgent, all seeded. Prints a line per game; asserts nothing.

    python tools/observation_hashes.py [--steps-scale 1.0]
"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np
from absl import flags

from sc2dask.game import make_env
from sc2dask.game.pysc2lib import features, random_agent, sc2_env
from sc2dask.game.scripted_agents import TerranMacro

OBSERVED = (
    "feature_screen",
    "feature_minimap",
    "raw_units",
    "score_cumulative",
    "player",
    "available_actions",
)
MINI_GAMES = (
    "DefeatZerglingsAndBanelings",
    "DefeatRoaches",
    "FindAndDefeatZerglings",
    "CollectMineralsAndGas",
    "CollectMineralShards",
    "BuildMarines",
    "MoveToBeacon",
)


def fingerprint(map_name: str, agent, steps: int, raw: bool, bot: str | None = None) -> str:
    """The hash of ``steps`` observations and rewards of one seeded game (reset at its end)."""
    players = [sc2_env.Agent(sc2_env.Race.terran)]
    if bot:
        players.append(sc2_env.Bot(sc2_env.Race.terran, sc2_env.Difficulty[bot]))
    aif = features.AgentInterfaceFormat(
        feature_dimensions=features.Dimensions(screen=64, minimap=64),
        use_raw_units=True,
        use_raw_actions=raw,
    )
    np.random.seed(3)  # pysc2's RandomAgent draws from numpy's global generator
    digest = hashlib.sha1()
    with make_env(map_name, players=players, agent_interface_format=aif, random_seed=1) as env:
        agent.setup(env.observation_spec()[0], env.action_spec()[0])
        agent.reset()
        timestep = env.reset()[0]
        for _ in range(steps):
            for key in OBSERVED:
                if key in timestep.observation:
                    digest.update(np.ascontiguousarray(timestep.observation[key]).tobytes())
            digest.update(str(timestep.reward).encode())
            if timestep.last():
                timestep = env.reset()[0]
                agent.reset()
            else:
                timestep = env.step([agent.step(timestep)])[0]
    return digest.hexdigest()[:12]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps-scale", type=float, default=1.0, help="more or fewer steps")
    args = parser.parse_args()
    flags.FLAGS(["observation_hashes"])

    def steps(n: int) -> int:
        return max(1, int(n * args.steps_scale))

    games = {
        "Simple64 TerranMacro": lambda: fingerprint(
            "Simple64", TerranMacro(), steps(950), True, "very_easy"
        ),
        "Simple64 random": lambda: fingerprint(
            "Simple64", random_agent.RandomAgent(), steps(500), False, "medium"
        ),
    }
    for name in MINI_GAMES:
        games[name] = lambda name=name: fingerprint(
            name, random_agent.RandomAgent(), steps(400), False
        )
    for name, play in games.items():
        print(f"{name}: {play()}", flush=True)


if __name__ == "__main__":
    main()
