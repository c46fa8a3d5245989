"""The harness of the side-by-side benchmarks: sc2dask against one peer framework on the
same emulated MoveToBeacon, envs, cores and wall budget.

Each side runs in a child process of its own, one after the other, on the same cores, and
the parent watches the child's whole process tree (peak memory, CPU by role). sc2dask
trains with its defaults on a local cluster of 2 workers in the update mode ``--mode``;
the peer trains on ``sc2dask/MoveToBeacon-v0`` (``sc2dask.gym``) as ``peer_gym`` shapes
it: ``player_relative`` one-hot (5) and ``selected`` (1) at 32x32 as one [32, 32, 6] image,
the ``move`` set's actions (0 no_op, 1 select_army, 2 + y*32 + x Move_screen there; no_op
where unavailable), step_mul 8. Each side trains until the mean score of its last 100
episodes reaches ``--target`` or ``--minutes`` pass.

A peer's script (``bench_rllib.py``, ``bench_sb3.py``) gives ``main`` its name, its
training function and the differences that remain; this module does the rest.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
import typing
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psutil

from sc2dask.settings import Mode

ROOT = Path(__file__).resolve().parents[2]
SCREEN = 32

# A peer's training: (parsed args, the child's start time) -> its curve's rows, each
# {"wall_s", "agent_steps", "episodes", "mean_score_last_100"}.
Train = Callable[[argparse.Namespace, float], list[dict]]


def main(peer: str, train_peer: Train, differences: list[str], script: str, argv=None) -> int:
    """Run sc2dask and ``peer`` one after the other (or, in a child, one side)."""
    sides = ("sc2dask", peer)
    parser = argparse.ArgumentParser(
        description=(sys.modules["__main__"].__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--minutes", type=float, default=10.0, help="wall budget per side")
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--target", type=float, default=25.0)
    parser.add_argument("--sides", default=",".join(sides), help="which to run, in order")
    parser.add_argument(
        "--mode",
        choices=typing.get_args(Mode),
        default="central",
        help="sc2dask's update mode (its other settings stay its defaults)",
    )
    parser.add_argument("--out", default=str(ROOT / f"benchmarks/results/peers_{peer}.png"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--side", choices=sides, help=argparse.SUPPRESS)  # a child's own
    parser.add_argument("--curve", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.side:
        return run_side(args, train_sc2dask if args.side == "sc2dask" else train_peer)
    results, curves = {}, {}
    for side in args.sides.split(","):
        results[side], curves[side] = measure(script, side, args)
        if side == "sc2dask":
            results[side]["mode"] = args.mode
        print(f"{side}: {format_result(results[side])}", flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save(curves, out, args, peer)
    print("differences that remain:")
    for line in differences:
        print(f"  - {line}")
    figures = {**results}
    if set(sides) <= set(results):
        ours, theirs = results["sc2dask"], results[peer]
        figures["ratio_steps_per_s"] = round(ours["steps_per_s"] / theirs["steps_per_s"], 3)
        # How many times sooner sc2dask reached the target (None: a side did not).
        figures["speedup_to_target"] = (
            round(theirs["minutes_to_target"] / ours["minutes_to_target"], 3)
            if ours["minutes_to_target"] and theirs["minutes_to_target"]
            else None
        )
    print(f"curves: {out} and {out.with_suffix('.csv')}")
    if args.json:
        print(json.dumps(figures))
    return 0


# --- the parent: one child per side, its process tree watched ------------------------------


def measure(script: str, side: str, args) -> tuple[dict, list[dict]]:
    with tempfile.TemporaryDirectory(prefix=f"peers-{side}-") as tmp:
        curve = Path(tmp) / "curve.json"
        child = subprocess.Popen(
            [
                sys.executable,
                script,
                "--side",
                side,
                "--minutes",
                str(args.minutes),
                "--envs",
                str(args.envs),
                "--target",
                str(args.target),
                "--curve",
                str(curve),
                "--mode",
                args.mode,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "RAY_DEDUP_LOGS": "0"},
        )
        watch = TreeWatch(child.pid)
        while child.poll() is None:
            watch.sample()
            time.sleep(0.5)
        out, err = child.communicate()
        watch.kill_survivors()  # e.g. Ray's agents, if its shutdown left them running
        if child.returncode != 0:
            raise RuntimeError(f"the {side} run failed:\n{err[-4000:]}")
        result = json.loads(out.strip().splitlines()[-1])
        result.update(
            peak_memory_mb=round(watch.peak_rss / 2**20),
            cpu_s_by_role={k: round(v, 1) for k, v in watch.cpu_by_role().items()},
        )
        return result, json.loads(curve.read_text())


class TreeWatch:
    """Peak RSS of a process and all its descendants, and each one's CPU time by role."""

    def __init__(self, pid: int):
        self.root, self.peak_rss = psutil.Process(pid), 0
        self.cpu: dict[int, tuple[str, float]] = {}  # pid -> (role, CPU seconds last seen)
        self.created: dict[int, float] = {}  # pid -> its start time, to know it again

    def sample(self) -> None:
        try:
            processes = [self.root, *self.root.children(recursive=True)]
        except psutil.Error:
            return
        rss = 0
        for process in processes:
            try:
                rss += process.memory_info().rss
                times = process.cpu_times()
                self.cpu[process.pid] = (role(process), times.user + times.system)
                self.created.setdefault(process.pid, process.create_time())
            except psutil.Error:
                continue
        self.peak_rss = max(self.peak_rss, rss)

    def kill_survivors(self) -> None:
        """Kill what is left of the tree (the same processes: a reused pid is left alone)."""
        for pid, created in self.created.items():
            try:
                process = psutil.Process(pid)
                if process.create_time() == created:
                    process.kill()
            except psutil.Error:
                pass

    def cpu_by_role(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for name, seconds in self.cpu.values():
            totals[name] = totals.get(name, 0.0) + seconds
        return totals


def role(process: psutil.Process) -> str:
    """What a process of either side does, from its command line."""
    command = " ".join(process.cmdline())
    name = process.name()
    if "sc2dask.emulator" in command or "SC2_x64" in command:
        return "games"
    if "--side" in command:
        return "driver and learner"
    if "ray::" in name or "ray::" in command:
        return "ray env runners and workers"
    if "raylet" in command or "gcs_server" in command or "ray/" in command:
        return "ray's own processes"
    if "multiprocessing" in command or "distributed" in command:
        return "env processes (Dask workers or SubprocVecEnv's)"
    return "other"


# --- a child: one side's training --------------------------------------------------------


def run_side(args, train: Train) -> int:
    started = time.monotonic()
    rows = train(args, started)
    Path(args.curve).write_text(json.dumps(rows))
    first = rows[0] if rows else None
    last = rows[-1] if rows else None
    reached = next(
        (r for r in rows if r["mean_score_last_100"] >= args.target and r["episodes"] >= 20), None
    )
    print(
        json.dumps(
            {
                "steps_per_s": round(
                    (last["agent_steps"] - first["agent_steps"])
                    / max(1e-9, last["wall_s"] - first["wall_s"]),
                    1,
                )
                if rows
                else None,
                "startup_s": round(first["wall_s"], 1) if first else None,
                "minutes_to_target": reached and round(reached["wall_s"] / 60, 2),
                "steps_to_target": reached and reached["agent_steps"],
                "score_at_end": last and round(last["mean_score_last_100"], 2),
                "agent_steps": last and last["agent_steps"],
                "minutes": last and round(last["wall_s"] / 60, 2),
            }
        )
    )
    return 0


def train_sc2dask(args, started: float) -> list[dict]:
    from distributed import Client

    import sc2dask

    rows = []
    with (
        sc2dask.local_cluster(2, -(-args.envs // 2)) as cluster,
        Client(cluster, direct_to_workers=True) as client,
    ):
        run = sc2dask.train(
            client=client,
            map="MoveToBeacon",
            envs=args.envs,
            mode=args.mode,
            max_steps=10**9,
            checkpoint_every=0,
        )
        seen = 0
        while run.running:
            history = run.progress.history
            for row in history[seen:]:
                rows.append(
                    {
                        "wall_s": time.monotonic() - started,
                        "agent_steps": row["agent_steps"],
                        "episodes": row["episodes"],
                        "mean_score_last_100": row["mean_score_last_100"],
                    }
                )
            seen = len(history)
            if rows and (
                rows[-1]["wall_s"] >= args.minutes * 60
                or (rows[-1]["episodes"] >= 20 and rows[-1]["mean_score_last_100"] >= args.target)
            ):
                run.stop()
            time.sleep(0.5)
        run.wait()
    return rows


def peer_gym(env_config=None):
    """``sc2dask/MoveToBeacon-v0`` (``sc2dask.gym``) as the peers read it:
    ``player_relative`` one-hot (5) and ``selected`` (1) at 32x32 as one [32, 32, 6] image;
    the ``move`` set's actions 0 no_op, 1 select_army, 2 + y*32 + x Move_screen there (no_op
    where unavailable). Made in a function because gymnasium is only in an extra."""
    import gymnasium as gym

    import sc2dask.gym

    env = gym.make(
        sc2dask.gym.env_id("MoveToBeacon"),
        screen=SCREEN,
        minimap=SCREEN,
        step_mul=8,
        action_set="move",
        screen_layers=("player_relative", "selected"),
        minimap_layers=(),
    )

    def one_hot(obs):
        relative, selected = obs["screen"]
        image = np.zeros((SCREEN, SCREEN, 6), np.float32)
        image[..., :5] = relative[..., None] == np.arange(5)
        image[..., 5] = selected > 0
        return image

    env = gym.wrappers.TransformObservation(
        env, one_hot, gym.spaces.Box(0.0, 1.0, (SCREEN, SCREEN, 6), np.float32)
    )
    seed = (env_config or {}).get("seed", 0)
    if hasattr(env_config, "worker_index"):
        seed += 100 * env_config.worker_index + env_config.vector_index
    env.reset(seed=seed)  # the game's seed; the peer's own resets restart that game
    return env


# --- output ------------------------------------------------------------------------------


def format_result(r: dict) -> str:
    target = (
        f"target at {r['minutes_to_target']} min ({r['steps_to_target']} steps)"
        if r["minutes_to_target"]
        else f"score {r['score_at_end']} at {r['minutes']} min"
    )
    return (
        f"{r['steps_per_s']} agent steps/s, {target}, start-up {r['startup_s']} s, peak "
        f"memory {r['peak_memory_mb']} MB, CPU s by role {r['cpu_s_by_role']}"
    )


def save(curves: dict, out: Path, args, peer: str) -> None:
    with open(out.with_suffix(".csv"), "w", newline="") as f:
        writer = csv.DictWriter(
            f, fieldnames=["side", "wall_s", "agent_steps", "episodes", "mean_score_last_100"]
        )
        writer.writeheader()
        for side, rows in curves.items():
            writer.writerows({"side": side, **row} for row in rows)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for side, rows in curves.items():
        left.plot(
            [r["agent_steps"] for r in rows], [r["mean_score_last_100"] for r in rows], label=side
        )
        right.plot(
            [r["wall_s"] / 60 for r in rows], [r["mean_score_last_100"] for r in rows], label=side
        )
    for ax in (left, right):
        ax.axhline(args.target, color="grey", linestyle="--", linewidth=0.8)
        ax.grid(alpha=0.3)
        ax.legend()
    left.set_xlabel("agent steps")
    left.set_ylabel("mean score, last 100 episodes")
    right.set_xlabel("wall time (min), start-up included")
    fig.suptitle(
        f"MoveToBeacon 32x32 on the emulator, {args.envs} envs, {os.cpu_count()} "
        f"cores: sc2dask defaults ({args.mode} mode) vs {peer} "
        f"({time.strftime('%Y-%m-%d')})",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=100)
