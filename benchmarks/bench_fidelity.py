"""How close the emulator plays to the real game: random and scripted play on all seven maps.

For each mini-game, pysc2's ``RandomAgent`` plays ``--episodes`` episodes (64x64,
step_mul 8) and the mean is set against the random-policy row of SC2LE's Table 1, with
the band the emulator should land in, max(2, 35 %) of it. The scripted agents (pysc2's
and ``sc2dask.game.scripted_agents``) play ``--scripted-episodes`` each, beside the
trained-agent references (SC2LE's FullyConv, Relational DRL). Maps run two at a time, one
process each. Prints a table and ends with one JSON line; asserts nothing.

    python benchmarks/bench_fidelity.py --episodes 30 --seed 1000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time

import numpy as np

MAPS = [
    "MoveToBeacon",
    "CollectMineralShards",
    "FindAndDefeatZerglings",
    "DefeatRoaches",
    "DefeatZerglingsAndBanelings",
    "CollectMineralsAndGas",
    "BuildMarines",
]
# SC2LE Table 1 (Vinyals et al. 2017): the random policy ("below 1" for BuildMarines is
# taken as 0), FullyConv, and Relational DRL (Zambaldi et al. 2018) for the trained end.
SC2LE_RANDOM = {
    "MoveToBeacon": 1,
    "CollectMineralShards": 17,
    "FindAndDefeatZerglings": 4,
    "DefeatRoaches": 1,
    "DefeatZerglingsAndBanelings": 23,
    "CollectMineralsAndGas": 12,
    "BuildMarines": 0,
}
FULLYCONV = {
    "MoveToBeacon": 26,
    "CollectMineralShards": 103,
    "FindAndDefeatZerglings": 45,
    "DefeatRoaches": 100,
    "DefeatZerglingsAndBanelings": 62,
    "CollectMineralsAndGas": 3978,
    "BuildMarines": 3,
}
RELATIONAL = {
    "MoveToBeacon": 27,
    "CollectMineralShards": 196,
    "FindAndDefeatZerglings": 62,
    "DefeatRoaches": 303,
    "DefeatZerglingsAndBanelings": 736,
    "CollectMineralsAndGas": 5055,
    "BuildMarines": 123,
}


def band(reference: float) -> tuple[float, float]:
    """Within max(2, 35 %) of the real game's figure (combat scores can be negative)."""
    margin = max(2.0, 0.35 * reference)
    return reference - margin, reference + margin


def play_map(job) -> dict:
    map_name, episodes, scripted_episodes, seed = job
    from sc2dask.game import find_game, load_agent_class, make_env, scripted_agent_path
    from sc2dask.game.agents import SCRIPTED_AGENTS
    from sc2dask.game.pysc2lib import random_agent

    find_game()
    started = time.perf_counter()
    np.random.seed(seed)  # pysc2's RandomAgent draws from numpy's global generator
    with make_env(map_name, random_seed=seed) as env:
        spec = (env.observation_spec()[0], env.action_spec()[0])
        random_scores = _play(env, random_agent.RandomAgent(), spec, episodes)
        scripted_scores = []
        if map_name in SCRIPTED_AGENTS:
            agent = load_agent_class(scripted_agent_path(map_name))()
            scripted_scores = _play(env, agent, spec, scripted_episodes)
    low, high = band(SC2LE_RANDOM[map_name])
    mean = float(np.mean(random_scores))
    return {
        "map": map_name,
        "random_mean": mean,
        "random_sd": float(np.std(random_scores)),
        "random_median": float(np.median(random_scores)),
        "sc2le_random": SC2LE_RANDOM[map_name],
        "band": [low, high],
        "in_band": low <= mean <= high,
        "scripted_mean": float(np.mean(scripted_scores)) if scripted_scores else None,
        "fullyconv": FULLYCONV[map_name],
        "relational": RELATIONAL[map_name],
        "episodes": episodes,
        "seconds": time.perf_counter() - started,
    }


def _play(env, agent, spec, episodes) -> list[float]:
    from sc2dask.game import play_episode

    agent.setup(*spec)
    return [play_episode(env, agent) for _ in range(episodes)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument("--scripted-episodes", type=int, default=3)
    parser.add_argument(
        "--seed", type=int, default=1000, help="seeds other than the tests' and the tuning runs'"
    )
    parser.add_argument("--maps", default=",".join(MAPS))
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    maps = args.maps.split(",")
    jobs = [(m, args.episodes, args.scripted_episodes, args.seed + i) for i, m in enumerate(maps)]
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        rows = pool.map(play_map, jobs, chunksize=1)

    print(
        f"Random play ({args.episodes} episodes a map, 64x64, step_mul 8, seeds "
        f"{args.seed}+) against SC2LE Table 1; band = max(2, 35 %) of SC2LE's figure"
    )
    print(
        f"{'map':28} {'emulator':>14} {'median':>7} {'SC2LE':>6} {'band':>13}  {'in':3} "
        f"{'scripted':>9} {'FullyConv':>9} {'RelDRL':>7}"
    )
    for r in rows:
        low, high = r["band"]
        scripted = f"{r['scripted_mean']:.1f}" if r["scripted_mean"] is not None else "-"
        print(
            f"{r['map']:28} {r['random_mean']:7.1f} ±{r['random_sd']:5.1f} "
            f"{r['random_median']:7.1f} {r['sc2le_random']:6} {low:6.1f}-{high:<6.1f} "
            f"{'yes' if r['in_band'] else 'NO':3} "
            f"{scripted:>9} {r['fullyconv']:>9} {r['relational']:>7}"
        )
    print(json.dumps({"rows": rows, "in_band": sum(r["in_band"] for r in rows), "maps": len(rows)}))


if __name__ == "__main__":
    main()
