"""Learning curve: MoveToBeacon mean score against agent steps and wall time.

Trains FullyConv A2C with sc2dask on a local cluster (32x32 by default) until
``--max-steps`` agent steps or ``--minutes`` of wall time, whichever comes first, then
saves the curve as a PNG and a CSV next to it and prints where the score first reached
``--target`` (SC2LE FullyConv: 26). Prints figures; asserts nothing.

    python benchmarks/bench_learning.py --max-steps 1000000 --minutes 60 --envs 4
"""

from __future__ import annotations

import argparse
import csv
import threading
import time
from pathlib import Path

from distributed import Client

import sc2dask
from sc2dask.training.cluster import local_cluster


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-steps", type=int, default=1_000_000)
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--mode", default="central", choices=("central", "sync", "async"))
    parser.add_argument("--resolution", type=int, default=32)
    parser.add_argument("--action-set", default="move")
    parser.add_argument("--learning-rate", type=float, default=7e-4)
    parser.add_argument("--epochs", type=int, default=1, help="> 1: PPO-style batch reuse")
    parser.add_argument("--minibatches", type=int, default=1)
    parser.add_argument("--rollout-steps", type=int, default=16)
    parser.add_argument("--step-mul", type=int, default=8)
    parser.add_argument("--target", type=float, default=25.0)
    parser.add_argument("--out", default="benchmarks/results/learning_curve.png")
    args = parser.parse_args()

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    agent = dict(screen=args.resolution, minimap=args.resolution, action_set=args.action_set,
                 learning_rate=args.learning_rate, epochs=args.epochs,
                 minibatches=args.minibatches)
    reported = {"steps": 0}

    def report(progress):
        if progress.agent_steps - reported["steps"] >= args.max_steps // 50:
            reported["steps"] = progress.agent_steps
            row = progress.history[-1]
            print(f"{row['agent_steps']:>9} steps {row['wall_s']:8.0f} s  mean score (last 100) "
                  f"{row['mean_score_last_100']:6.2f}  episodes {row['episodes']}", flush=True)

    per_worker = -(-args.envs // args.workers)
    with local_cluster(args.workers, per_worker) as cluster, \
            Client(cluster, direct_to_workers=True) as client:
        print(f"Dask dashboard: {client.dashboard_link}")
        run = sc2dask.train(client=client, map="MoveToBeacon", envs=args.envs,
                            max_steps=args.max_steps, mode=args.mode, on_update=report,
                            rollout_steps=args.rollout_steps, step_mul=args.step_mul,
                            agent_overrides=agent)
        timer = threading.Timer(args.minutes * 60, run.stop)
        timer.start()
        summary = run.wait()
        timer.cancel()
    history = run.progress.history
    with open(out.with_suffix(".csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["agent_steps", "wall_s", "mean_score_last_100",
                                               "episodes"], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(history)
    reached = next((row for row in history if row["mean_score_last_100"] >= args.target), None)
    print(f"\n{summary}")
    if reached:
        print(f"mean score >= {args.target:g} first at {reached['agent_steps']} agent steps, "
              f"{reached['wall_s'] / 60:.1f} min")
    else:
        print(f"mean score never reached {args.target:g} "
              f"(final {summary['mean_score_last_100']:.2f})")
    plot(history, out, args)
    print(f"curve: {out} and {out.with_suffix('.csv')}")


def plot(history, out: Path, args) -> None:
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
    for ax in (left, right):
        ax.axhline(26, color="grey", linestyle="--", linewidth=0.8)
        ax.grid(alpha=0.3)
    left.text(0, 26.5, "SC2LE FullyConv: 26", color="grey", fontsize=8)
    fig.suptitle(f"sc2dask A2C on emulated MoveToBeacon, {args.resolution}x{args.resolution}, "
                 f"'{args.action_set}' set, {args.envs} envs, {args.mode}, epochs {args.epochs}, "
                 f"step_mul {args.step_mul} ({time.strftime('%Y-%m-%d')})", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    main()
