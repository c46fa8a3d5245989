"""The control plane under many hosts: the real client (parameter store, update rules,
compression, Adam in TensorFlow) and a real scheduler, with synthetic hosts.

    python benchmarks/bench_control_plane.py --hosts 16,64,256 --modes sync,async \\
        --compression none,int8 --async-combine none,sqrt --seconds 60

The hosts (``synthetic_host.py``) answer as real ones do, at a real host's pace, with
gradients of the real network's size, but play no game and import no TensorFlow; all of
them live in one worker process (one Dask worker each, many to the process), so that
hundreds fit this machine. Three processes, measured apart: the client (this one), the
scheduler, and the workers. For each point: updates/s, agent steps/s, the client's CPU
per update and in cores, the scheduler's and the workers' cores (all between the first
and the last update measured), the time from a host's send to the update that took its
gradient (p50, p99; in sync the mean over the gradients averaged; in async an update's
gradient, so gradients dropped as too stale are not in it), and bytes each way per update. Figures, not a test: run it with nothing else busy.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dask
import numpy as np
import psutil
from distributed import Client, Worker
from synthetic_host import ENV_STEPS_PER_S, SyntheticHost

import sc2dask
import sc2dask.training.supervisor

HERE = Path(__file__).resolve().parent


def serve_workers(address: str, n: int, envs: int) -> None:
    """``n`` Dask workers in this process, each with ``envs`` SC2 slots, until killed.

    Without a memory limit and with the system monitor slowed, so that a thousand workers'
    own polling (psutil, several times a second each) does not fill this process's core."""
    dask.config.set({"distributed.admin.system-monitor.interval": "60s"})

    async def run():
        workers = [
            Worker(address, nthreads=1, resources={"SC2": envs}, host="127.0.0.1", memory_limit=0)
            for _ in range(n)
        ]
        await asyncio.gather(*workers)
        print("ready", flush=True)
        await asyncio.Event().wait()

    asyncio.run(run())


CPU_CGROUPS = Path("/sys/fs/cgroup/cpu")  # cgroup v1, as tools/minicluster.py uses


@contextlib.contextmanager
def client_capped(cores: float | None):
    """This process, the client, held to ``cores`` (a cgroup v1 ``cpu`` group of its own)
    while a point is measured; the scheduler and the workers, started before, stay out.
    A quarter core with 64 hosts is a core's load with 256."""
    if cores is None:
        yield
        return
    group = CPU_CGROUPS / "sc2dask-bench-client"
    group.mkdir(exist_ok=True)
    (group / "cpu.cfs_period_us").write_text("100000")
    (group / "cpu.cfs_quota_us").write_text(str(int(cores * 100_000)))
    (group / "cgroup.procs").write_text(str(os.getpid()))  # every thread of it
    try:
        yield
    finally:
        (CPU_CGROUPS / "cgroup.procs").write_text(str(os.getpid()))
        group.rmdir()


def measure(
    client, mode, compression, hosts: int, envs: int, seconds: float, map_name: str, combine="none"
):
    """One point: train for ``seconds`` after the first update, with ``hosts`` hosts
    (``combine``: async-combine, in async mode)."""
    rows: list[tuple] = []  # (monotonic, client CPU s, row, wall clock, others' CPU s)
    me = psutil.Process()

    def record(progress):
        row = progress.history[-1]
        cpu = me.cpu_times()
        others = {name: process_cpu(pid) for name, pid in PROCESSES.items()}
        rows.append((time.monotonic(), cpu.user + cpu.system, row, time.time(), others))

    run = sc2dask.train(
        client=client,
        map=map_name,  # its defaults give the network, hence the gradients' size
        mode=mode,
        envs=hosts * envs,
        compression=compression,
        max_steps=10**12,
        on_update=record,
        **({"async_combine": combine} if mode == "async" else {}),
    )
    while not rows and run.running:
        time.sleep(0.2)
    started = time.monotonic()
    while run.running and time.monotonic() < started + seconds:
        time.sleep(0.2)
    window = [r for r in rows if r[0] >= started]  # taken before the hosts close
    run.stop()
    run.wait()
    if len(window) < 2:
        return {"hosts": hosts, "mode": mode, "compression": compression, "updates": 0}
    (t0, c0, r0, _, o0), (t1, c1, r1, _, o1) = window[0], window[-1]
    wall = t1 - t0
    updates = r1["update"] - r0["update"]
    latency = [now - row["sent_at"] for _, _, row, now, _ in window if "sent_at" in row]
    cores = {name: (o1[name] - o0[name]) / wall for name in PROCESSES}
    steps = r1["agent_steps"] - r0["agent_steps"]
    gradients = steps / (envs * run.settings.rollout_steps)  # one per host rollout
    return {
        "hosts": hosts,
        "map": map_name,
        "envs": hosts * envs,
        "mode": mode,
        "compression": compression,
        "async_combine": combine if mode == "async" else None,
        "updates_per_s": round(updates / wall, 2),
        "agent_steps_per_s": round(steps / wall, 1),
        "client_cores": round((c1 - c0) / wall, 3),
        "client_ms_per_update": round(1000 * (c1 - c0) / max(updates, 1), 2),
        "client_ms_per_gradient": round(1000 * (c1 - c0) / max(gradients, 1), 2),
        "scheduler_cores": round(cores["scheduler"], 3),
        "workers_cores": round(cores["workers"], 3),
        "workers_rss_mb": round(psutil.Process(PROCESSES["workers"]).memory_info().rss / 2**20),
        "latency_p50_ms": round(1000 * float(np.percentile(latency, 50)), 1) if latency else None,
        "latency_p99_ms": round(1000 * float(np.percentile(latency, 99)), 1) if latency else None,
        "bytes_to_hosts_per_update": int(
            (r1["bytes_to_hosts"] - r0["bytes_to_hosts"]) / max(updates, 1)
        ),
        "bytes_from_hosts_per_update": int(
            (r1["bytes_from_hosts"] - r0["bytes_from_hosts"]) / max(updates, 1)
        ),
    }


PROCESSES: dict[str, int] = {}


def process_cpu(pid: int) -> float:
    cpu = psutil.Process(pid).cpu_times()
    return cpu.user + cpu.system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", default="16,64", help="comma-separated host counts")
    parser.add_argument("--modes", default="sync,async")
    parser.add_argument("--compression", default="none")
    parser.add_argument(
        "--client-cpu",
        type=float,
        help="hold the client to these cores while measuring (root; cgroup v1 cpu)",
    )
    parser.add_argument(
        "--async-combine", default="none", help="async-combine values for async, comma-separated"
    )
    parser.add_argument("--envs", type=int, default=2, help="envs per host")
    parser.add_argument(
        "--map", default="MoveToBeacon", help="whose default network the gradients match"
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="measured per point")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve-workers", nargs=3, metavar=("ADDRESS", "N", "ENVS"))
    args = parser.parse_args()
    if args.serve_workers:
        address, n, envs = args.serve_workers
        serve_workers(address, int(n), int(envs))
        return
    # The client starts synthetic hosts where it would start EnvHost actors.
    sc2dask.training.supervisor.EnvHost = SyntheticHost
    print(f"synthetic hosts at {ENV_STEPS_PER_S:g} agent steps/s per env", flush=True)
    results = []
    # The scheduler unpickles the hosts' class too, so both processes import from here.
    env = {**os.environ, "PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    for hosts in [int(h) for h in args.hosts.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            file = Path(tmp) / "scheduler.json"
            scheduler = subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                 "127.0.0.1", "--no-dashboard", "--scheduler-file", str(file)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
            )  # fmt: skip
            while not file.exists():
                time.sleep(0.2)
            address = json.loads(file.read_text())["address"]
            workers = subprocess.Popen(
                [sys.executable, __file__, "--serve-workers", address, str(hosts), str(args.envs)],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
            )  # fmt: skip
            PROCESSES.update(scheduler=scheduler.pid, workers=workers.pid)
            try:
                assert workers.stdout is not None
                workers.stdout.readline()  # "ready"
                # As the docs ask of users: env calls go straight to the workers, not
                # through the scheduler.
                with Client(address, timeout=120, direct_to_workers=True) as client:
                    client.wait_for_workers(hosts, timeout=600)
                    for mode, compression, combine in points(args):
                        with client_capped(args.client_cpu):
                            point = measure(
                                client,
                                mode,
                                compression,
                                hosts,
                                args.envs,
                                args.seconds,
                                args.map,
                                combine,
                            )
                        point["client_cpu_cap"] = args.client_cpu
                        results.append(point)
                        print(json.dumps(point), flush=True)
            finally:
                workers.kill()
                scheduler.kill()
                workers.wait()
                scheduler.wait()
    if args.json:
        print(json.dumps(results))


def points(args) -> list[tuple[str, str, str]]:
    """(mode, compression, async-combine) of each point at one host count."""
    return [
        (mode, compression, combine)
        for mode in args.modes.split(",")
        for compression in args.compression.split(",")
        for combine in (args.async_combine.split(",") if mode == "async" else ["none"])
    ]


if __name__ == "__main__":
    main()
