"""Training throughput against env-only throughput and against a baseline commit, side by side.

One invocation runs, one after another on the same machine, whole commands as a user
types them (cluster start-up counted in each):

1. env only: ``sc2dask evaluate`` with pysc2's RandomAgent, ``--episodes`` episodes;
2. training: ``sc2dask train`` with this checkout, the same number of agent steps;
3. the baseline: ``sc2dask train`` of ``--baseline`` (a commit, checked out in a git
   worktree), the same steps and envs.

It prints agent steps/s of each and the ratios (training / env only, training /
baseline). This VM's speed drifts by a fifth between hours, and within a run from one
command to the next, so ``--rounds N`` plays the whole sequence N times in turn and
prints each round's ratios and their median. Figures, not a pass/fail test. Run it with
nothing else busy.

    python benchmarks/bench_training_throughput.py --envs 4 --episodes 160 --baseline f28b49e [--rounds 2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from source_trees import ROOT, checked_out, environment

EPISODE_STEPS = 240  # MoveToBeacon: 120 game seconds * 16 loops / step_mul 8
RANDOM_AGENT = "pysc2_evolved.agents.random_agent.RandomAgent"
# Both the baseline's and this checkout's command line: `python -c` with a source root.
CLI = "import sys; from sc2dask.cli import main; sys.exit(main())"


def run(source: Path, args: list[str], scratch: Path, name: str) -> tuple[float, dict]:
    """Wall seconds of ``sc2dask ARGS`` run from ``source``, and its JSON summary."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", CLI, *args, "--json"],
        cwd=scratch,
        env=environment(source, scratch, name),
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"{name} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--episodes", type=int, default=160)
    parser.add_argument("--map", default="MoveToBeacon")
    parser.add_argument("--baseline", default="f28b49e", help="a commit; '' to skip")
    parser.add_argument(
        "--train-args",
        action="append",
        help="extra flags for this checkout's train, e.g. '--overlap'; give "
        "it again for another run of this checkout beside the first",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run the whole sequence this many times in turn; the ratios "
        "are each round's, then their median",
    )
    args = parser.parse_args()
    steps = args.episodes * EPISODE_STEPS
    common = ["--map", args.map, "--envs", str(args.envs)]
    env_only = "env only (evaluate, RandomAgent)"
    rounds = []
    with (
        tempfile.TemporaryDirectory(prefix="sc2dask-bench-") as tmp,
        contextlib.ExitStack() as trees,
    ):
        scratch = Path(tmp)
        base = trees.enter_context(checked_out(args.baseline, scratch)) if args.baseline else None
        for _ in range(args.rounds):
            results = {}
            wall, summary = run(
                ROOT,
                ["evaluate", *common, "--episodes", str(args.episodes), "--agent", RANDOM_AGENT],
                scratch,
                "env-only",
            )
            results[env_only] = (summary["episodes"] * EPISODE_STEPS, wall)
            for extra in args.train_args or [""]:
                wall, summary = run(
                    ROOT,
                    ["train", *common, "--max-steps", str(steps), *extra.split()],
                    scratch,
                    "train",
                )
                name = f"training (this checkout{' ' + extra if extra else ''})"
                results[name] = (summary["agent_steps"], wall)
            if base is not None:
                wall, summary = run(
                    base, ["train", *common, "--max-steps", str(steps)], scratch, "baseline"
                )
                results[f"training ({args.baseline})"] = (summary["agent_steps"], wall)
            rounds.append(results)
    print(f"{args.map}, {args.envs} envs, {steps} agent steps each, start-up included")
    rates, ratios = [], []
    for number, results in enumerate(rounds, 1):
        if len(rounds) > 1:
            print(f"round {number}")
        rates.append({name: n / wall for name, (n, wall) in results.items()})
        for name, (n, wall) in results.items():
            print(f"  {name:<36} {n:>7} steps {wall:7.1f} s  {rates[-1][name]:7.1f} agent steps/s")
        ratios.append(_ratios(rates[-1], env_only, f"training ({args.baseline})" if base else None))
        for name, ratio in ratios[-1].items():
            print(
                f"  {name}: {ratio['over_env_only']:.2f} of env only"
                + (f", {ratio['over_baseline']:.2f}x {args.baseline}" if base else "")
            )
    median = {
        name: {kind: float(np.median([r[name][kind] for r in ratios])) for kind in ratios[0][name]}
        for name in ratios[0]
    }
    if len(rounds) > 1:
        print(f"median of {len(rounds)} rounds")
        for name, ratio in median.items():
            print(
                f"  {name}: {ratio['over_env_only']:.3f} of env only"
                + (f", {ratio['over_baseline']:.2f}x {args.baseline}" if base else "")
            )
    print(
        json.dumps(
            {
                "rates": rates if len(rounds) > 1 else rates[0],
                "ratios": median,
                **({"rounds": ratios} if len(rounds) > 1 else {}),
            }
        )
    )


def _ratios(rates: dict, env_only: str, baseline: str | None) -> dict:
    """Each of this checkout's trainings over env only and over the baseline, one round."""
    ratios = {}
    for name, rate in rates.items():
        if name.startswith("training (this checkout"):
            ratios[name] = {"over_env_only": rate / rates[env_only]}
            if baseline is not None:
                ratios[name]["over_baseline"] = rate / rates[baseline]
    return ratios


if __name__ == "__main__":
    main()
