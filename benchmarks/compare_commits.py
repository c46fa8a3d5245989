"""Do two commits train the same? A small run that is deterministic, update by update.

One env on one worker in central mode makes a run deterministic: rollout, update and
the next rollout strictly alternate, and every random draw is seeded. This trains that
run from each source tree (a commit checked out in a git worktree, or this checkout)
and compares the learner's metrics of every update. Equal traces show a refactor kept
behaviour exactly; the first differing update shows where it did not.

    python benchmarks/compare_commits.py f28b49e HEAD --steps 640
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from source_trees import ROOT, checked_out, environment

KEYS = ("loss", "policy_loss", "value_loss", "entropy", "mean_return", "mean_value", "grad_norm")
RUN = """
import json, sys
import sc2dask
from distributed import Client
if __name__ == "__main__":
    with sc2dask.local_cluster(n_workers=1, sc2_per_worker=1) as cluster, \\
            Client(cluster, direct_to_workers=True) as client:
        run = sc2dask.train(client=client, map="MoveToBeacon", envs=1, mode="central",
                            max_steps=int(sys.argv[1]),
                            agent_overrides=dict(action_set="move", screen=16, minimap=16))
        run.wait()
    print(json.dumps([{k: r.get(k) for k in sys.argv[2].split(",")}
                      for r in run.progress.history]))
"""


def trace(source: Path, steps: int, scratch: Path, name: str) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(steps), ",".join(KEYS)],
        env=environment(source, scratch, name),
        cwd=scratch,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"training from {source} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "commits",
        nargs=2,
        help="two commits; 'HEAD' is this checkout, uncommitted changes included",
    )
    parser.add_argument("--steps", type=int, default=640)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="sc2dask-compare-") as tmp,
        contextlib.ExitStack() as trees,
    ):
        scratch, traces = Path(tmp), []
        for i, commit in enumerate(args.commits):
            source = ROOT if commit == "HEAD" else trees.enter_context(checked_out(commit, scratch))
            traces.append(trace(source, args.steps, scratch, f"run-{i}"))
    a, b = traces
    print(f"{len(a)} and {len(b)} updates from {args.steps} agent steps")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            print(
                f"first difference at update {i + 1}:\n  {args.commits[0]}: {x}\n  "
                f"{args.commits[1]}: {y}"
            )
            break
    else:
        same = len(a) == len(b)
        print(
            "identical: every update's metrics are equal"
            if same
            else "equal as far as both go, but the runs made a different number of updates"
        )


if __name__ == "__main__":
    main()
