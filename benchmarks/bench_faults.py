"""Fault campaign at scale: one training run on the miniature cluster while whole nodes
die, a node's link is cut, a node joins and the client is SIGKILLed and resumed.

    sudo python benchmarks/bench_faults.py --nodes 8 --minutes 20 --json

``--nodes`` namespaced nodes (``tools/minicluster.py``), each capped at ``--cpu`` cores
with ``--envs-per-node`` games, and the client (``sc2dask train`` on MoveToBeacon,
elastic: N x k envs, growing to (N + 1) x k, a checkpoint every ``--checkpoint-every``
updates) in a cgroup of its own. The plan, in seconds from the client's start:

- ``--kill-client-after`` (or its first checkpoint, if later): SIGKILL the client, then
  start it again with ``--resume``;
- from ``--node-every`` on, every ``--node-every``: SIGKILL a whole node (worker, Nanny
  and games, as a machine that loses power) and boot it ``--node-down`` later;
- ``--cut-at``: cut one node's link for ``--cut-for``;
- ``--add-at``: a new node joins.

Every fault is checked as it happens (the processes gone and the worker off the
scheduler, the link down, the new worker listed): a planned fault that did not happen
fails the campaign. At the budget the client is stopped with SIGINT. It reports updates
lost to the client's death against ``checkpoint-every``, rollouts counted twice, host
restarts against node kills, the rejected and stale counts, and the score against
``--target``. Figures, not a test: run it as root, with nothing else busy.
"""

from __future__ import annotations

import argparse
import contextlib
import json
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
from distributed import Client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from minicluster import (  # noqa: E402
    MiniCluster,
    MiniClusterUnavailable,
    node_name,
)

BIN = Path(sys.executable).parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--cpu", type=float, default=0.2, help="cores per node")
    parser.add_argument("--client-cpu", type=float, default=0.4, help="cores of the client")
    parser.add_argument("--envs-per-node", type=int, default=1)
    parser.add_argument("--mode", default="sync")
    parser.add_argument("--minutes", type=float, default=20.0, help="the whole campaign")
    parser.add_argument("--checkpoint-every", type=int, default=10)
    parser.add_argument("--kill-client-after", type=float, default=120.0)
    parser.add_argument("--node-every", type=float, default=240.0)
    parser.add_argument("--node-down", type=float, default=60.0)
    parser.add_argument("--cut-at", type=float, default=420.0)
    parser.add_argument("--cut-for", type=float, default=60.0)
    parser.add_argument("--add-at", type=float, default=660.0)
    parser.add_argument("--target", type=float, default=25.0)
    parser.add_argument("--seed", type=int, default=0, help="which nodes the faults hit")
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    parser.add_argument("--logs", help="keep the cluster's and the client's logs here")
    args = parser.parse_args(argv)
    with (
        contextlib.nullcontext(args.logs)
        if args.logs
        else tempfile.TemporaryDirectory(prefix="sc2dask-faults-")
    ) as tmp:
        try:
            with MiniCluster(
                nodes=args.nodes, cpu=args.cpu, sc2=args.envs_per_node, logs=tmp
            ) as cluster:
                report = Campaign(args, cluster, Path(tmp)).run()
        except MiniClusterUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    for key, value in report.items():
        print(f"  {key:<40} {value}")
    if args.json:
        print(json.dumps(report))
    return 0 if report["every planned fault happened"] else 1


class Campaign:
    """The run, the fault plan, and what each fault was seen to do."""

    def __init__(self, args, cluster: MiniCluster, folder: Path):
        self.args, self.cluster, self.folder = args, cluster, folder
        self.rng = random.Random(args.seed)
        self.dashboard = _dashboard(folder / "scheduler.json")
        self.faults: list[dict] = []  # each fault: what, when, checked
        self.checkpoints = folder / "run"
        self.client: subprocess.Popen | None = None
        self.seen: dict[str, float] = {}  # the scheduler's latest sc2dask_ metrics
        self.planned = self.plan()

    def train_command(self, *extra: str) -> list[str]:
        k = self.args.envs_per_node
        command = [
            str(BIN / "sc2dask"), "train", "--scheduler", self.cluster.scheduler_address,
            "--envs", str(self.args.nodes * k), "--envs-max", str((self.args.nodes + 1) * k),
            "--mode", self.args.mode, "--max-steps", "100000000",
            "--checkpoint-dir", str(self.checkpoints),
            "--checkpoint-every", str(self.args.checkpoint_every), "--json", *extra,
        ]  # fmt: skip
        return self.cluster.in_group("client", self.args.client_cpu, command)

    def start_client(self, name: str, *extra: str) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "ab")
        return subprocess.Popen(
            self.train_command(*extra), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def plan(self) -> list[tuple[float, str, tuple]]:
        """(seconds from the start, fault, its arguments), in order."""
        a = self.args
        budget = a.minutes * 60
        events = [(a.kill_client_after, "kill_client", ())]
        nodes = list(range(a.nodes))
        self.rng.shuffle(nodes)
        cut = nodes.pop()  # the cut node is never one that is killed
        t = a.node_every
        while t + a.node_down < budget - 60:
            victim = nodes[len([e for e in events if e[1] == "kill_node"]) % len(nodes)]
            events += [(t, "kill_node", (victim,)), (t + a.node_down, "boot_node", (victim,))]
            t += a.node_every
        events += [(a.cut_at, "cut_link", (cut,)), (a.cut_at + a.cut_for, "restore_link", (cut,))]
        events.append((a.add_at, "add_node", ()))
        return sorted(e for e in events if e[0] < budget)

    def run(self) -> dict:
        a = self.args
        reached = None
        events = list(self.planned)
        with Client(self.cluster.scheduler_address, timeout=60) as observer:
            self.observer = observer
            observer.wait_for_workers(a.nodes, timeout=300)
            self.client = self.start_client("train")
            started = time.monotonic()
            while time.monotonic() - started < a.minutes * 60:
                now = time.monotonic() - started
                while events and events[0][0] <= now:
                    at, what, params = events.pop(0)
                    self.faults.append(
                        {"fault": what, "planned_s": at, "at_s": round(now, 1),
                         **getattr(self, what)(*params)}
                    )  # fmt: skip
                    print(json.dumps(self.faults[-1]), flush=True)
                self.seen = _metrics(self.dashboard) or self.seen
                score = self.seen.get("sc2dask_episode_score", float("nan"))
                if reached is None and score >= a.target:
                    reached = round(now / 60, 2)
                time.sleep(1.0)
        assert self.client is not None
        self.client.send_signal(signal.SIGINT)  # a clean stop: the summary
        self.client.wait(timeout=300)
        summary = json.loads((self.folder / "resumed.log").read_text().strip().splitlines()[-1])
        return self.report(summary, reached)

    # --- the faults: each returns what was seen ------------------------------------------

    def kill_client(self) -> dict:
        assert self.client is not None
        # a run still starting has no checkpoint to resume from: the kill waits for one
        if not _wait(lambda: (self.checkpoints / "LATEST").exists(), 600):
            raise SystemExit("the client wrote no checkpoint in 10 minutes")
        seen = _metrics(self.dashboard) or self.seen
        self.client.send_signal(signal.SIGKILL)
        self.client.wait()
        latest = (self.checkpoints / "LATEST").read_text().strip()
        state = json.loads((self.checkpoints / latest / "state.json").read_text())
        updates_seen = int(seen.get("sc2dask_updates_total", seen.get("sc2dask_updates", 0)))
        self.client = self.start_client("resumed", "--resume")
        return {
            "checked": self.client.poll() is None,
            "updates_seen": updates_seen,
            "updates_in_checkpoint": state["updates"],
        }

    def kill_node(self, i: int) -> dict:
        killed = self.cluster.kill_node(i)
        gone = _wait(lambda: not self.cluster.cgroup_pids(i), 10)
        left = _wait(lambda: node_name(i) not in self._workers(), 60)
        return {"node": i, "processes_killed": killed, "checked": killed > 0 and gone and left}

    def boot_node(self, i: int) -> dict:
        self.cluster.restart_node(i)
        back = _wait(lambda: node_name(i) in self._workers(), 120)
        return {"node": i, "checked": back}

    def cut_link(self, i: int) -> dict:
        self.cluster.link_down(i)
        return {"node": i, "checked": not self.cluster.link_is_up(i)}

    def restore_link(self, i: int) -> dict:
        self.cluster.link_up(i)
        return {"node": i, "checked": self.cluster.link_is_up(i)}

    def add_node(self) -> dict:
        i = self.cluster.add_node()
        joined = _wait(lambda: node_name(i) in self._workers(), 120)
        return {"node": i, "checked": joined}

    def _workers(self) -> set[str]:
        return {w.get("name") for w in self.observer.scheduler_info()["workers"].values()}

    # --- the figures -------------------------------------------------------------------

    def report(self, summary: dict, reached) -> dict:
        kills = [f for f in self.faults if f["fault"] == "kill_node"]
        client = next(f for f in self.faults if f["fault"] == "kill_client")
        lost = client["updates_seen"] - client["updates_in_checkpoint"]
        instances = self.seen.get("sc2dask_sc2_instances")
        return {
            "every planned fault happened": all(f["checked"] for f in self.faults)
            and len(self.faults) == len(self.planned),
            "faults": {
                what: sum(f["fault"] == what for f in self.faults)
                for what in dict.fromkeys(f["fault"] for f in self.faults)
            },
            "updates lost to the client kill": lost,
            "checkpoint-every": self.args.checkpoint_every,
            "rollouts counted twice": summary["rollouts_counted_twice"],
            "node kills / host restarts counted": (len(kills), summary["restarts"]),
            "rejected, stale, truncated": (
                summary["rejected_gradients"],
                summary["dropped_stale_gradients"],
                summary["truncated"],
            ),
            "agent steps, updates at the end": (summary["agent_steps"], summary["updates"]),
            "SC2 instances at the end (scheduler)": instances,
            "mean score (last 100) at the end": summary["mean_score_last_100"],
            f"minutes to mean >= {self.args.target:g}": reached,
            "fault log": self.faults,
        }


def _dashboard(info: Path) -> str:
    port = json.loads(info.read_text())["services"]["dashboard"]
    return f"http://127.0.0.1:{port}"


def _metrics(dashboard: str) -> dict[str, float]:
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


def _wait(probe, timeout: float) -> bool:
    """Whether ``probe()`` came true within ``timeout`` seconds."""
    stop = time.monotonic() + timeout
    while time.monotonic() < stop:
        with contextlib.suppress(OSError, psutil.Error):
            if probe():
                return True
        time.sleep(0.5)
    return False


if __name__ == "__main__":
    sys.exit(main())
