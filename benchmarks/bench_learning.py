"""Learning curve: MoveToBeacon mean score against agent steps and wall time.

Trains FullyConv A2C with sc2dask on a local cluster (32x32 by default) until
``--max-steps`` agent steps or ``--minutes`` of wall time, whichever comes first, then
saves the curve as a PNG and a CSV next to it and prints where the score first reached
``--target`` (SC2LE FullyConv: 26). Prints figures; asserts nothing.

    python benchmarks/bench_learning.py --max-steps 1000000 --minutes 60 --envs 4
    python benchmarks/bench_learning.py --mode sync --learning-rate 0.001 --json

Every train and agent setting is a flag (the same ones as ``sc2dask train``); the recipe
below fills the ones left out, and config fills the rest.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import threading
import time
from pathlib import Path

from distributed import Client
from resumable import open_text

import sc2dask
from sc2dask.cli.flags import add_setting_flags, given
from sc2dask.settings import AgentSettings, TrainSettings
from sc2dask.training.cluster import local_cluster

# The documented recipe (README, run-main.sh); any flag changes it.
RECIPE = {"map": "MoveToBeacon", "envs": 4, "max_steps": 1_000_000, "action_set": "move"}
# SC2LE Table 1 (Vinyals et al. 2017), the FullyConv column: the line on the plot.
FULLYCONV = {
    "MoveToBeacon": 26,
    "CollectMineralShards": 103,
    "FindAndDefeatZerglings": 45,
    "DefeatRoaches": 100,
    "DefeatZerglingsAndBanelings": 62,
}
# The curve, and the learner's own figures beside it: a flat score with a falling entropy
# is a policy that collapsed; one with the entropy still at its start has not moved.
CSV_COLUMNS = [
    "agent_steps",
    "wall_s",
    "mean_score_last_100",
    "episodes",
    "entropy",
    "value_loss",
    "mean_value",
    "grad_norm",
    "clip_fraction",
    "staleness",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--target", type=float, default=25.0)
    parser.add_argument("--out", default="benchmarks/results/learning_curve.png")
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    train_fields = add_setting_flags(parser, TrainSettings)
    agent_fields = add_setting_flags(parser, AgentSettings)
    args = parser.parse_args()
    chosen = {**RECIPE, **given(args, train_fields), **given(args, agent_fields)}

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    reported = {"steps": 0}

    def report(progress):
        if progress.agent_steps - reported["steps"] >= chosen["max_steps"] // 50:
            reported["steps"] = progress.agent_steps
            row = progress.history[-1]
            print(
                f"{row['agent_steps']:>9} steps {row['wall_s']:8.0f} s  mean score (last 100) "
                f"{row['mean_score_last_100']:6.2f}  episodes {row['episodes']}",
                flush=True,
            )

    per_worker = -(-chosen["envs"] // args.workers)
    with (
        local_cluster(args.workers, per_worker) as cluster,
        Client(cluster, direct_to_workers=True) as client,
    ):
        print(f"Dask dashboard: {client.dashboard_link}")
        run = sc2dask.train(client=client, on_update=report, **chosen)
        timer = threading.Timer(args.minutes * 60, run.stop)
        timer.start()
        summary = run.wait()
        timer.cancel()
    history = run.progress.history
    with open_text(out.with_suffix(".csv.gz"), "w") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(history)
    reached = next((row for row in history if row["mean_score_last_100"] >= args.target), None)
    summary.update(
        target=args.target,
        first_at_steps=reached and reached["agent_steps"],
        first_at_minutes=reached and round(reached["wall_s"] / 60, 2),
        settings={**vars(run.settings), **vars(run.agent_settings)},
    )
    print(f"\n{summary}")
    if reached:
        print(
            f"mean score >= {args.target:g} first at {reached['agent_steps']} agent steps, "
            f"{reached['wall_s'] / 60:.1f} min"
        )
    else:
        print(
            f"mean score never reached {args.target:g} (final {summary['mean_score_last_100']:.2f})"
        )
    plot(history, out, run)
    print(f"curve: {out} and {out.with_suffix('.csv.gz')}")
    if args.json:
        print(
            json.dumps(
                {
                    k: (None if isinstance(v, float) and math.isnan(v) else v)
                    for k, v in summary.items()
                }
            )
        )


def plot(history, out: Path, run) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["agent_steps"] for r in history]
    minutes = [r["wall_s"] / 60 for r in history]
    score = [r["mean_score_last_100"] for r in history]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    left.plot(steps, score)
    left.set_xlabel("agent steps")
    left.set_ylabel("mean score, last 100 episodes")
    right.plot(minutes, score)
    right.set_xlabel("wall time (min)")
    opts, agent = run.settings, run.agent_settings
    reference = FULLYCONV.get(opts.map)
    for ax in (left, right):
        if reference is not None:
            ax.axhline(reference, color="grey", linestyle="--", linewidth=0.8)
        ax.grid(alpha=0.3)
    if reference is not None:
        left.text(0, reference * 1.02, f"SC2LE FullyConv: {reference}", color="grey", fontsize=8)
    fig.suptitle(
        f"sc2dask A2C on emulated {opts.map}, {agent.screen}x{agent.screen}, "
        f"'{agent.action_set}' set, {opts.envs} envs, {opts.mode}, epochs "
        f"{agent.epochs}, step_mul {opts.step_mul} ({time.strftime('%Y-%m-%d')})",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    main()
