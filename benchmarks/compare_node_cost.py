"""Does a node under a CPU quota spend more per agent step at one commit than another?

Absolute figures on a shared VM drift by up to a quarter between hours, so a change in a
node's cost is read from pairs run in the same hour: each pair runs one node of
``bench_scaling.py`` (its defaults: 0.35 core and 2 envs a node, a 0.5-core client, sync
mode) from each commit's own tree, the two in alternating order, and compares the node's
CPU per agent step. Run as root, with nothing else busy.

    sudo python benchmarks/compare_node_cost.py cb65fa1 HEAD --pairs 3 --minutes 3
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from source_trees import ROOT, checked_out, environment


def node_cost(source: Path, scratch: Path, name: str, args) -> dict:
    """One node's run of ``source``'s own bench_scaling.py: steps/s, the node's cores and
    its CPU per agent step (ms)."""
    command = [
        sys.executable,
        str(source / "benchmarks/bench_scaling.py"),
        "--nodes=1",
        f"--mode={args.mode}",
        f"--minutes={args.minutes}",
        f"--cpu={args.cpu}",
        "--target=1e9",  # never reached: the whole budget is measured
        "--seed=0",
        f"--out={scratch / name}.png",
        "--json",
    ]
    done = subprocess.run(
        command, env=environment(source, scratch, name), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"the run of {source} failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    steps_per_s, cores = figures["agent_steps_per_s"][0], figures["node_cpu_cores"][0]
    return {
        "agent_steps_per_s": steps_per_s,
        "node_cpu_cores": cores,
        "node_cpu_ms_per_step": round(1e3 * cores / steps_per_s, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commits", nargs=2, help="two commits; 'HEAD' is this checkout")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=3.0, help="each run's budget")
    parser.add_argument("--cpu", type=float, default=0.35, help="the node's cores")
    parser.add_argument("--mode", default="sync")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs takes a whole number >= 1")
    runs: dict[str, list[dict]] = {c: [] for c in args.commits}
    with (
        tempfile.TemporaryDirectory(prefix="sc2dask-node-cost-") as tmp,
        contextlib.ExitStack() as trees,
    ):
        scratch = Path(tmp)
        sources = {
            c: ROOT if c == "HEAD" else trees.enter_context(checked_out(c, scratch))
            for c in args.commits
        }
        for pair in range(args.pairs):
            order = args.commits if pair % 2 == 0 else args.commits[::-1]
            for commit in order:
                run = node_cost(sources[commit], scratch, f"{commit}-{pair}", args)
                runs[commit].append(run)
                print(f"pair {pair + 1}, {commit}: {run}", flush=True)
    summary = {
        commit: {
            "node_cpu_ms_per_step": [r["node_cpu_ms_per_step"] for r in rs],
            "median_ms": statistics.median(r["node_cpu_ms_per_step"] for r in rs),
            "agent_steps_per_s": [r["agent_steps_per_s"] for r in rs],
        }
        for commit, rs in runs.items()
    }
    a, b = (summary[c]["median_ms"] for c in args.commits)
    print(
        f"median CPU per agent step on the node: {args.commits[0]} {a} ms, "
        f"{args.commits[1]} {b} ms ({b / a:.2f}x)"
    )
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
