"""Fault campaign: one MoveToBeacon run on a command-line cluster while its parts are killed.

The scheduler (with the training page), two workers and the client are each their own
process, as on separate nodes. During the run:

1. the client (`sc2dask train`) is SIGKILLed after ``--kill-client-after`` seconds and
   started again with ``--resume``;
2. then a game is SIGKILLed every ``--game-every`` seconds and a worker process (its
   Nanny restarts it) every ``--worker-every`` seconds, until the mean score reaches
   ``--target`` or ``--minutes`` pass; then the run is stopped with SIGINT.

It prints the updates lost to the client's death (seen on the scheduler's /metrics just
before it, against the checkpoint it resumed from), faults injected against restarts
counted, the rejected, stale and truncated counts, and the score. Figures, not a test;
run it with nothing else busy. (A network cut needs the miniature cluster of the scaling
issue, which does not exist yet.)

    python benchmarks/bench_faults.py --minutes 15 --json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

BIN = Path(sys.executable).parent


class Cluster:
    """Command-line processes in their own process groups, killed on exit."""

    def __init__(self, folder: Path):
        self.folder, self.processes = folder, []

    def start(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "ab")
        process = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes.append(process)
        return process

    def close(self) -> None:
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def metrics(dashboard: str) -> dict[str, float]:
    """The scheduler's sc2dask_ metrics, summed over labels; {} if it does not answer."""
    try:
        text = urllib.request.urlopen(f"{dashboard}/metrics", timeout=5).read().decode()
    except OSError:
        return {}
    values: dict[str, float] = {}
    for line in text.splitlines():
        match = re.match(r"^(sc2dask_\w+?)(\{.*\})? ([-+\d.eEna]+)$", line)
        if match:
            values[match[1]] = values.get(match[1], 0.0) + float(match[3])
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--kill-client-after", type=float, default=90.0)
    parser.add_argument("--game-every", type=float, default=30.0)
    parser.add_argument("--worker-every", type=float, default=180.0)
    parser.add_argument("--checkpoint-every", type=int, default=10)
    parser.add_argument("--target", type=float, default=25.0)
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    args = parser.parse_args()
    rng = random.Random(0)
    with tempfile.TemporaryDirectory(prefix="sc2dask-faults-") as tmp:
        folder = Path(tmp)
        cluster = Cluster(folder)
        try:
            report = campaign(args, cluster, folder, rng)
        finally:
            cluster.close()
    for key, value in report.items():
        print(f"  {key:<34} {value}")
    if args.json:
        print(json.dumps(report))


def campaign(args, cluster: Cluster, folder: Path, rng: random.Random) -> dict:
    info = folder / "scheduler.json"
    cluster.start(
        "scheduler",
        str(BIN / "dask"),
        "scheduler",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--dashboard-address",
        "127.0.0.1:0",
        "--scheduler-file",
        str(info),
        "--preload",
        "sc2dask.dashboard",
    )
    scheduler = _wait(lambda: json.loads(info.read_text()) if info.exists() else None)
    address = scheduler["address"]
    dashboard = f"http://127.0.0.1:{scheduler['services']['dashboard']}"
    per_worker = -(-args.envs // 2)
    nannies = [
        cluster.start(
            f"worker{i}",
            str(BIN / "dask"),
            "worker",
            address,
            "--nthreads",
            "1",
            "--resources",
            f"SC2={per_worker}",
            "--preload",
            "sc2dask.worker",
        )
        for i in range(2)
    ]
    checkpoints = folder / "run"
    train = [
        str(BIN / "sc2dask"),
        "train",
        "--scheduler",
        address,
        "--envs",
        str(args.envs),
        "--max-steps",
        "100000000",
        "--checkpoint-dir",
        str(checkpoints),
        "--checkpoint-every",
        str(args.checkpoint_every),
        "--json",
    ]
    started = time.monotonic()
    client = cluster.start("train", *train)
    seen = {}
    while time.monotonic() - started < args.kill_client_after:
        seen = metrics(dashboard) or seen
        time.sleep(1.0)
    seen = metrics(dashboard) or seen
    client.send_signal(signal.SIGKILL)
    client.wait()
    state = json.loads(
        (checkpoints / (checkpoints / "LATEST").read_text().strip() / "state.json").read_text()
    )
    report = {
        "updates seen before the client kill": int(seen.get("sc2dask_updates_total", 0)),
        "updates in the checkpoint resumed": state["updates"],
    }
    report["updates lost to the client kill"] = (
        report["updates seen before the client kill"] - state["updates"]
    )
    client = cluster.start("resumed", *train, "--resume")
    games = workers = 0
    next_game = time.monotonic() + args.game_every
    next_worker = time.monotonic() + args.worker_every
    score, reached = float("nan"), None
    deadline = started + args.minutes * 60
    while time.monotonic() < deadline and client.poll() is None:
        now = time.monotonic()
        if now >= next_game and _kill(_children(nannies, "sc2dask.emulator"), rng):
            games += 1
            next_game = now + args.game_every
        if now >= next_worker and _kill(_children(nannies, "multiprocessing", depth=1), rng):
            workers += 1
            next_worker = now + args.worker_every
        score = metrics(dashboard).get("sc2dask_episode_score", score)
        if reached is None and score >= args.target:
            reached = round((now - started) / 60, 2)
            break
        time.sleep(1.0)
    client.send_signal(signal.SIGINT)  # a clean stop: the summary
    client.wait(timeout=300)
    summary = json.loads((folder / "resumed.log").read_text().strip().splitlines()[-1])
    report.update(
        {
            "games killed / restarts counted": f"{games} / {summary['restarts']} (hosts and games)",
            "workers killed": workers,
            "rejected, stale, truncated": (
                summary["rejected_gradients"],
                summary["dropped_stale_gradients"],
                summary["truncated"],
            ),
            "agent steps, updates at the end": (summary["agent_steps"], summary["updates"]),
            "mean score (last 100) at the end": summary["mean_score_last_100"],
            f"minutes to mean >= {args.target:g}": reached,
        }
    )
    return report


def _children(nannies, needle: str, depth: int | None = None) -> list[psutil.Process]:
    """Processes under the ``dask worker`` nannies whose command line has ``needle`` (the
    worker itself is the Nanny's multiprocessing child; games are further down)."""
    found = []
    for nanny in nannies:
        with contextlib.suppress(psutil.Error):
            parent = psutil.Process(nanny.pid)
            children = parent.children(recursive=depth is None)
            found += [c for c in children if needle in " ".join(_cmdline(c))]
    return found


def _cmdline(process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def _kill(processes: list[psutil.Process], rng: random.Random) -> bool:
    if not processes:
        return False
    with contextlib.suppress(psutil.Error):
        rng.choice(processes).kill()
        return True
    return False


def _wait(probe, timeout: float = 60.0):
    stop = time.monotonic() + timeout
    while time.monotonic() < stop:
        with contextlib.suppress(OSError, ValueError):
            if (value := probe()) is not None:
                return value
        time.sleep(0.2)
    raise SystemExit("the scheduler did not start")


if __name__ == "__main__":
    main()
