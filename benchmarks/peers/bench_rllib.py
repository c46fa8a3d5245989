"""Side by side with RLlib: the same emulated MoveToBeacon, envs, cores and wall budget.

Each side runs in a process of its own, one after the other, on the same cores:

- sc2dask: its defaults on a local cluster of 2 workers with ``--envs`` envs, in the
  update mode ``--mode``: central, its default, unless asked (sync and async trained
  1.11x faster than central in run 5 of ``benchmarks/results/training_throughput.txt``);
- RLlib: its PPO on the new API stack (PyTorch) with ``--envs`` envs on 2 env runners, the
  learner in the driver, on ``sc2dask/MoveToBeacon-v0`` (``sc2dask.gym``: a Gymnasium env
  over the same pysc2 ``SC2Env`` on the same emulator), its observation one-hot encoded.

Both see ``player_relative`` and ``selected`` at 32x32 and act in the ``move`` set
(no_op, select_army, Move_screen at a point), step_mul 8. Each trains until the mean
score of its last 100 episodes reaches ``--target`` or ``--minutes`` pass. Printed side
by side: agent steps/s with learning (from the first update), time and steps to the
target or the score at the budget, peak memory of the whole process tree, start-up time
(start to first update), and CPU seconds per role (learner, env hosts or runners, games,
scheduler or Ray's own processes), which say where the time goes. The curves go to
``benchmarks/results/peers_rllib.{png,csv}``; the last line is one JSON object.

Needs the ``peers`` extra (``pip install -e '.[peers]'``); it installs nothing. Figures,
not a test: run it with nothing else busy.

    python benchmarks/peers/bench_rllib.py --minutes 10 --json
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
from pathlib import Path

import numpy as np
import psutil

from sc2dask.settings import Mode

ROOT = Path(__file__).resolve().parents[2]
SIDES = ("sc2dask", "rllib")
SCREEN = 32
# Differences that remain, printed with the figures.
DIFFERENCES = [
    "policy: sc2dask's FullyConv picks the function and the screen point with separate "
    "heads (the point from a 1x1 conv over the screen); RLlib's default catalog has one "
    "categorical over 2 + 32*32 actions from a dense layer over its conv encoder",
    "unavailable actions: sc2dask masks them; RLlib has no mask, so the env plays "
    "no_op for Move_screen before the army is selected",
    "algorithm: sc2dask A2C with a PPO clip, one pass per batch, on-policy per host; "
    "RLlib PPO with its minibatch epochs (settings in RLLIB_TRAINING)",
    "network size: sc2dask's MoveToBeacon defaults (16 and 16 filters at full resolution, "
    "a 4x4 dense grid: about 6 M multiply-adds per sample) against RLlib's encoder in "
    "RLLIB_MODEL (16 filters at full resolution, then two strided convs: about 4.7 M)",
]
RLLIB_TRAINING = {
    "lr": 3e-4,
    "train_batch_size_per_learner": 1024,
    "minibatch_size": 256,
    "num_epochs": 4,
    "gamma": 0.99,
    "entropy_coeff": 0.001,
}
RLLIB_MODEL = {
    "conv_filters": [[16, [5, 5], 1], [32, [3, 3], 2], [32, [3, 3], 2]],
    "head_fcnet_hiddens": [256],
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="wall budget per side")
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--target", type=float, default=25.0)
    parser.add_argument("--sides", default=",".join(SIDES), help="which to run, in order")
    parser.add_argument(
        "--mode",
        choices=typing.get_args(Mode),
        default="central",
        help="sc2dask's update mode (its other settings stay its defaults)",
    )
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/peers_rllib.png"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)  # a child's own
    parser.add_argument("--curve", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.side:
        return run_side(args)
    results, curves = {}, {}
    for side in args.sides.split(","):
        results[side], curves[side] = measure(side, args)
        if side == "sc2dask":
            results[side]["mode"] = args.mode
        print(f"{side}: {format_result(results[side])}", flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save(curves, out, args)
    print("differences that remain:")
    for line in DIFFERENCES:
        print(f"  - {line}")
    figures = {**results}
    if set(SIDES) <= set(results):
        ours, theirs = results["sc2dask"], results["rllib"]
        figures["ratio_steps_per_s"] = round(ours["steps_per_s"] / theirs["steps_per_s"], 3)
        figures["ratio_time_to_25"] = (
            round(ours["minutes_to_target"] / theirs["minutes_to_target"], 3)
            if ours["minutes_to_target"] and theirs["minutes_to_target"]
            else None
        )
    print(f"curves: {out} and {out.with_suffix('.csv')}")
    if args.json:
        print(json.dumps(figures))
    return 0


# --- the parent: one child per side, its process tree watched ------------------------------


def measure(side: str, args) -> tuple[dict, list[dict]]:
    with tempfile.TemporaryDirectory(prefix=f"peers-{side}-") as tmp:
        curve = Path(tmp) / "curve.json"
        child = subprocess.Popen(
            [
                sys.executable,
                __file__,
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
        return "dask workers (env hosts)"
    return "other"


# --- a child: one side's training --------------------------------------------------------


def run_side(args) -> int:
    started = time.monotonic()
    rows = (train_sc2dask if args.side == "sc2dask" else train_rllib)(args, started)
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


def move_to_beacon_gym(env_config=None):
    """``sc2dask/MoveToBeacon-v0`` (``sc2dask.gym``) as RLlib's default catalog reads it:
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
    env.reset(seed=seed)  # the game's seed, as before; RLlib's own resets restart it
    return env


def train_rllib(args, started: float) -> list[dict]:
    # RLlib imports TensorFlow whenever it is installed (sc2dask needs it), and TensorFlow
    # and PyTorch in one process crash on their two copies of LLVM. This side is PyTorch.
    os.environ["RLLIB_TEST_NO_TF_IMPORT"] = "1"
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.tune.registry import register_env

    ray.init(
        num_cpus=os.cpu_count(),
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"RLLIB_TEST_NO_TF_IMPORT": "1"}},
    )
    register_env("MoveToBeaconGym", move_to_beacon_gym)
    runners = 2
    config = (
        PPOConfig()
        .environment("MoveToBeaconGym")
        .env_runners(
            num_env_runners=runners,
            num_envs_per_env_runner=-(-args.envs // runners),
            num_cpus_per_env_runner=0,
        )
        .learners(num_learners=0)
        .training(**RLLIB_TRAINING)
        .rl_module(model_config=DefaultModelConfig(**RLLIB_MODEL))
    )
    algo = config.build_algo()
    rows, episodes, window = [], 0, []  # window: (episodes, mean return) per iteration
    try:
        while True:
            result = algo.train()
            runner = result.get("env_runners", {})
            ended = int(runner.get("num_episodes", 0) or 0)
            episodes += ended
            if ended:  # RLlib's mean is this iteration's episodes': make it the last 100's
                window.append((ended, float(runner["episode_return_mean"])))
                while sum(n for n, _ in window) - window[0][0] >= 100:
                    window.pop(0)
            mean = (
                sum(n * m for n, m in window) / sum(n for n, _ in window)
                if window
                else float("nan")
            )
            rows.append(
                {
                    "wall_s": time.monotonic() - started,
                    "agent_steps": int(runner.get("num_env_steps_sampled_lifetime", 0)),
                    "episodes": episodes,
                    "mean_score_last_100": mean,
                }
            )
            if rows[-1]["wall_s"] >= args.minutes * 60 or (
                episodes >= 20 and rows[-1]["mean_score_last_100"] >= args.target
            ):
                break
    finally:
        algo.stop()
        ray.shutdown()
    return rows


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


def save(curves: dict, out: Path, args) -> None:
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
        f"cores: sc2dask defaults ({args.mode} mode) vs RLlib PPO "
        f"({time.strftime('%Y-%m-%d')})",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
