"""Agent steps/s of one emulated Simple64 game against a built-in bot, through pysc2.

Plays pysc2's RandomAgent (or the raw scripted TerranMacro with ``--macro``) against the
emulator's bot at 64x64 with raw units, step_mul 8, for ``--steps`` agent steps or a whole
game, and prints the steps/s, the units seen (at the end and on average), and where a step's time
goes: the CPU of the game process (the emulator), of pysc2 in this process (its protocol
and observation decoding), and of the agent. Prints figures; asserts nothing. The target on docs/results/fullgame.md is 150 agent steps/s with about 50 units.

    python benchmarks/bench_melee_speed.py --steps 1500
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import psutil
from absl import flags

from sc2dask.game import find_game, make_env
from sc2dask.game.pysc2lib import features, random_agent, sc2_env
from sc2dask.game.scripted_agents import TerranMacro


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--difficulty", default="very_easy")
    parser.add_argument("--macro", action="store_true", help="TerranMacro instead of random")
    parser.add_argument(
        "--raw-only",
        action="store_true",
        help="with --macro: raw units and actions, no feature layers (the game renders none)",
    )
    args = parser.parse_args()
    flags.FLAGS(["bench"])
    print(find_game().summary)
    players = [
        sc2_env.Agent(sc2_env.Race.terran),
        sc2_env.Bot(sc2_env.Race.terran, sc2_env.Difficulty[args.difficulty]),
    ]
    if args.raw_only and not args.macro:
        parser.error("--raw-only needs --macro: pysc2's RandomAgent plays feature-layer actions")
    aif = features.AgentInterfaceFormat(
        feature_dimensions=None if args.raw_only else features.Dimensions(screen=64, minimap=64),
        use_raw_units=True,
        use_raw_actions=args.macro,
    )
    with make_env("Simple64", players=players, agent_interface_format=aif, random_seed=1) as env:
        np.random.seed(1)  # pysc2's RandomAgent draws from numpy's: the same game each run
        agent = TerranMacro() if args.macro else random_agent.RandomAgent()
        agent.setup(env.observation_spec()[0], env.action_spec()[0])
        agent.reset()
        timestep = env.reset()[0]
        games = [
            p for p in psutil.Process().children(recursive=True)
            if "sc2dask.emulator" in " ".join(p.cmdline())
        ]  # fmt: skip
        cpu_before = _cpu(psutil.Process()), sum(_cpu(g) for g in games)
        started, steps, agent_s, units_seen = time.perf_counter(), 0, 0.0, 0
        while not timestep.last() and steps < args.steps:
            units_seen += len(timestep.observation.raw_units)
            thinking = time.process_time()
            action = agent.step(timestep)
            agent_s += time.process_time() - thinking
            timestep = env.step([action])[0]
            steps += 1
        seconds = time.perf_counter() - started
        here = _cpu(psutil.Process()) - cpu_before[0]
        game = sum(_cpu(g) for g in games) - cpu_before[1]
    units = timestep.observation.raw_units
    print(
        f"Simple64 against {args.difficulty}, {'TerranMacro' if args.macro else 'RandomAgent'}: "
        f"{steps} agent steps in {seconds:.1f} s = {steps / seconds:.1f} agent steps/s; "
        f"game loop {int(timestep.observation.game_loop[0])}, {len(units)} units seen at the end "
        f"({units_seen / steps:.0f} on average, minerals and geysers included)"
    )
    per_step = {
        "the game (emulator) process": game,
        "pysc2 in this process": here - agent_s,
        "the agent": agent_s,
    }
    print(
        "CPU per agent step: "
        + ", ".join(f"{name} {1000 * s / steps:.2f} ms" for name, s in per_step.items())
        + f"; wall {1000 * seconds / steps:.2f} ms"
    )


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


if __name__ == "__main__":
    main()
