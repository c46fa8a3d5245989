"""Win rates of the scripted agents against the emulated bots on Simple64, through pysc2.

Plays ``--games`` games (seeds 1000+) of pysc2's RandomAgent, of uniform random play over
the macro actions (``RandomMacro``: the untrained policy of Simple64's default action
set) and of the scripted TerranMacro against each bot level, and prints wins, draws and
losses and the game minutes they took. Then each bot level against the one below, in both
seats, on the emulator's world directly (the bots are the emulator's; no agent plays). The
targets on docs/results/fullgame.md: RandomAgent wins none, uniform random macro play at
most 10 % from Easy up, each level beats the one below at least 80 %, and TerranMacro's
table with the first level it cannot beat. Prints figures; asserts nothing.

    python benchmarks/bench_melee_bots.py --games 10
"""

from __future__ import annotations

import argparse
import json

from absl import flags
from s2clientprotocol import sc2api_pb2 as sc_pb

from sc2dask.emulator.bots import LEVELS
from sc2dask.emulator.maps import EMULATED_LEVELS
from sc2dask.emulator.maps.simple64 import bots_game
from sc2dask.game import make_env
from sc2dask.game.pysc2lib import features, random_agent, sc2_env
from sc2dask.game.scripted_agents import RandomMacro, TerranMacro

# random: pysc2's RandomAgent over every features function; random_macro: uniform over the
# macros available (the untrained policy of the macro action set); macro: TerranMacro.
AGENTS = {"random": random_agent.RandomAgent, "random_macro": RandomMacro, "macro": TerranMacro}
LOOPS_PER_MINUTE = 16 * 60


def play(agent_name: str, difficulty: str, seed: int, step_mul: int = 8) -> tuple[int, float, dict]:
    """One game: its outcome (+1, 0, -1), its length in game minutes, and the units each
    side had at the end. ``step_mul``: game loops per agent step (a decision)."""
    players = [
        sc2_env.Agent(sc2_env.Race.terran),
        sc2_env.Bot(sc2_env.Race.terran, sc2_env.Difficulty[difficulty]),
    ]
    aif = features.AgentInterfaceFormat(
        feature_dimensions=features.Dimensions(screen=64, minimap=64),
        use_raw_units=True,
        use_raw_actions=agent_name != "random",
    )
    # score_index -1: the reward is the outcome, +1, 0 or -1 at the last step
    with make_env(
        "Simple64",
        players=players,
        agent_interface_format=aif,
        random_seed=seed,
        score_index=-1,
        step_mul=step_mul,
    ) as env:
        agent = RandomMacro(seed) if agent_name == "random_macro" else AGENTS[agent_name]()
        agent.setup(env.observation_spec()[0], env.action_spec()[0])
        agent.reset()
        timestep = env.reset()[0]
        while not timestep.last():
            timestep = env.step([agent.step(timestep)])[0]
    obs = timestep.observation
    sides = {"own": 0, "enemy": 0}
    for unit in obs.raw_units:
        if unit.alliance in (1, 4):
            sides["own" if unit.alliance == 1 else "enemy"] += 1
    return int(timestep.reward), float(obs.game_loop[0]) / LOOPS_PER_MINUTE, sides


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--agents", default="random,random_macro,macro")
    parser.add_argument("--difficulties", default=",".join(EMULATED_LEVELS))
    parser.add_argument("--step-mul", type=int, default=8, help="game loops per agent step")
    parser.add_argument(
        "--bots",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also each bot level against the one below",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    flags.FLAGS(["bench"])
    table = {}
    for agent_name in filter(None, args.agents.split(",")):  # --agents '': the bots only
        for difficulty in args.difficulties.split(","):
            games = [
                play(agent_name, difficulty, 1000 + i, args.step_mul) for i in range(args.games)
            ]
            wins = sum(o > 0 for o, _, _ in games)
            draws = sum(o == 0 for o, _, _ in games)
            minutes = [round(m, 1) for _, m, _ in games]
            table[f"{agent_name} vs {difficulty}"] = {
                "wins": wins,
                "draws": draws,
                "losses": len(games) - wins - draws,
                "win_rate": wins / len(games),
                "game_minutes": minutes,
            }
            print(
                f"{agent_name:>12} vs {difficulty:<9}: {wins}-{draws}-{len(games) - wins - draws} "
                f"(W-D-L), win rate {wins / len(games):.0%}; game minutes {minutes}",
                flush=True,
            )
    levels = list(LEVELS) if args.bots else []
    for lower, higher in zip(levels, levels[1:]):
        low, high = sc_pb.Difficulty.Name(lower), sc_pb.Difficulty.Name(higher)
        as_1 = [bots_game(higher, lower, 1000 + i) for i in range(args.games)]
        as_2 = [-bots_game(lower, higher, 1000 + i) for i in range(args.games)]
        wins = [sum(r > 0 for r in side) for side in (as_1, as_2)]
        table[f"{high} vs {low}"] = {"wins_as_player_1": wins[0], "wins_as_player_2": wins[1]}
        print(
            f"{high} against {low}: wins {wins[0]} of {args.games} as player 1, "
            f"{wins[1]} of {args.games} as player 2",
            flush=True,
        )
    if args.json:
        print(json.dumps(table))


if __name__ == "__main__":
    main()
