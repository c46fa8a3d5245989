"""A miniature multi-node Dask cluster on one machine: each node a network namespace.

Node i is the namespace ``sc2dmc-n<i>``, joined to the bridge ``sc2dmc-br`` by a veth
pair whose two ends shape traffic with ``tc netem`` (``--rate``, ``--delay``; a kernel
without netem gets the rate alone, from a token bucket), with the private address
10.213.0.<10+i>. Each node's ``dask worker`` (``--preload sc2dask.worker``,
``--resources SC2=<sc2>``) and every game it starts run in the cgroup v1 ``cpu`` group
``sc2dmc-n<i>``, capped at ``--cpu`` cores. The scheduler runs in the root namespace, on
the bridge's 10.213.0.1, so the client reaches every node over a shaped link.

Everything is torn down on exit, on an error and on SIGTERM, and whatever a killed run
left behind (its names are fixed) is removed before a new one starts. It needs root.

    sudo python tools/minicluster.py --nodes 4 --cpu 0.4 -- \\
        sc2dask train --scheduler '{scheduler}' --envs 8 --mode sync --max-steps 100000
    python tools/minicluster.py --nodes 2 --hold 600   # print the address, wait

Tests and benchmarks use ``MiniCluster`` (a context manager) directly.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PREFIX = "sc2dmc"
BRIDGE = f"{PREFIX}-br"
SUBNET = "10.213.0"  # private (RFC 1918); used only inside the namespaces made here
SCHEDULER_IP = f"{SUBNET}.1"
CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
CGROUP_CPUACCT = Path("/sys/fs/cgroup/cpuacct")  # v1 keeps usage in its own hierarchy here
CFS_PERIOD_US = 100_000
BIN = Path(sys.executable).parent


class MiniClusterUnavailable(RuntimeError):
    """This machine cannot build the cluster (not root, no ``ip``/``tc``, no cgroup v1 cpu)."""


def unavailable_reason() -> str | None:
    """Why ``MiniCluster`` cannot run here, or None."""
    if os.geteuid() != 0:
        return "the miniature cluster needs root (network namespaces, tc and cgroups)"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"the miniature cluster needs iproute2's `{tool}`"
    if not (CGROUP_CPU / "cpu.cfs_quota_us").exists():
        return f"the miniature cluster needs the cgroup v1 cpu controller at {CGROUP_CPU}"
    return None


def node_name(i: int) -> str:
    return f"{PREFIX}-n{i}"


def node_ip(i: int) -> str:
    return f"{SUBNET}.{10 + i}"


class MiniCluster:
    """``nodes`` namespaced nodes, a scheduler on the bridge, one worker per node.

    ``scheduler_address`` is ready once entered; ``workers[i]`` is node i's ``dask worker``
    process (its Nanny). ``add_node()`` and ``stop_node(i)`` make nodes join and leave,
    ``kill_node(i)`` and ``restart_node(i)`` kill a node outright and boot it again;
    ``link_down(i)``/``link_up(i)`` cut and restore a node's network; ``in_group`` runs a
    command (the client) in a capped cgroup of its own, and ``cpu_seconds`` reads any
    group's CPU time.
    """

    def __init__(
        self,
        nodes: int = 2,
        cpu: float = 0.4,
        rate: str = "1gbit",
        delay: str = "0.2ms",
        sc2: int = 2,
        nthreads: int = 1,
        env: dict | None = None,
        logs: str | os.PathLike | None = None,
    ):
        if nodes < 1 or nodes > 200:
            raise ValueError(f"nodes must be 1..200, not {nodes}")
        if not cpu > 0:
            raise ValueError(f"cpu must be > 0 cores, not {cpu}")
        self.nodes, self.cpu, self.rate, self.delay = nodes, cpu, rate, delay
        self.sc2, self.nthreads, self.env = sc2, nthreads, dict(env or {})
        self.delay_applied: bool | None = None  # False: no netem here, bandwidth only
        self.logs = Path(logs) if logs else Path(tempfile.mkdtemp(prefix=f"{PREFIX}-logs-"))
        self.scheduler_address: str | None = None
        self.scheduler: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self._previous_sigterm = None

    # --- lifecycle -----------------------------------------------------------------------

    def __enter__(self) -> MiniCluster:
        reason = unavailable_reason()
        if reason:
            raise MiniClusterUnavailable(reason)
        self._previous_sigterm = signal.signal(signal.SIGTERM, _exit_on_sigterm)
        try:
            teardown()  # what a killed run left
            self._network()
            self._start_scheduler()
            for i in range(self.nodes):
                self.workers.append(self._start_worker(i))
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process is not None:
                _kill_group(process)
        self.workers, self.scheduler = [], None
        teardown()
        if self._previous_sigterm is not None:
            signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._previous_sigterm = None

    # --- building ------------------------------------------------------------------------

    def _network(self) -> None:
        _run("ip", "link", "add", BRIDGE, "type", "bridge")
        _run("ip", "addr", "add", f"{SCHEDULER_IP}/24", "dev", BRIDGE)
        _run("ip", "link", "set", BRIDGE, "up")
        for i in range(self.nodes):
            self._node_network(i)

    def _node_network(self, i: int) -> None:
        """Node i's namespace, its shaped veth link to the bridge, and its cgroup."""
        ns, outside = node_name(i), f"{PREFIX}-v{i}"
        _run("ip", "netns", "add", ns)
        _run("ip", "link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", ns)
        _run("ip", "link", "set", outside, "master", BRIDGE, "up")
        _run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{node_ip(i)}/24", "dev", "eth0")
        _run("ip", "netns", "exec", ns, "ip", "link", "set", "eth0", "up")
        _run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        # Both directions shaped: the bridge side to the node, eth0 from it.
        for device, prefix in ((outside, []), ("eth0", ["ip", "netns", "exec", ns])):
            self._shape(prefix, device)
        _make_group(ns, self.cpu)

    def _shape(self, prefix: list[str], device: str) -> None:
        """Bandwidth and delay with netem; where the kernel has no netem (sch_netem), the
        bandwidth alone with a token bucket, and ``delay_applied`` says so."""
        add = [*prefix, "tc", "qdisc", "add", "dev", device, "root"]
        if self.delay_applied is not False:
            done = subprocess.run(
                [*add, "netem", "delay", self.delay, "rate", self.rate],
                capture_output=True,
                text=True,
            )
            if done.returncode == 0:
                self.delay_applied = True
                return
            if "unknown" not in done.stderr:
                raise RuntimeError(f"tc netem on {device} failed: {done.stderr.strip()}")
            self.delay_applied = False
            print(
                f"minicluster: this kernel has no tc netem; links get {self.rate} but no "
                f"added delay",
                file=sys.stderr,
            )
        _run(*add, "tbf", "rate", self.rate, "burst", "512kb", "latency", "50ms")

    def _start_scheduler(self) -> None:
        info = self.logs / "scheduler.json"
        info.unlink(missing_ok=True)
        scheduler = [
            str(BIN / "dask"),
            "scheduler",
            "--host",
            SCHEDULER_IP,
            "--port",
            "0",
            "--dashboard-address",
            "127.0.0.1:0",
            "--scheduler-file",
            str(info),
            "--preload",
            "sc2dask.dashboard",
        ]
        self.scheduler = self._spawn("scheduler", self.in_group("scheduler", None, scheduler))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                self.scheduler_address = json.loads(info.read_text())["address"]
                return
            if self.scheduler.poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError(f"the scheduler did not start; see {self.logs / 'scheduler.log'}")

    def _start_worker(self, i: int) -> subprocess.Popen:
        ns = node_name(i)
        worker = [
            str(BIN / "dask"),
            "worker",
            self.scheduler_address,
            "--host",
            node_ip(i),
            "--nthreads",
            str(self.nthreads),
            "--resources",
            f"SC2={self.sc2}",
            "--preload",
            "sc2dask.worker",
            "--name",
            ns,
        ]
        # Join the node's cgroup first, so the worker and every game it starts are in it.
        return self._spawn(f"worker{i}", _joining(ns, ["ip", "netns", "exec", ns, *worker]))

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "ab")
        env = {**os.environ, **self.env}
        return subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )

    def in_group(self, name: str, cpu: float | None, command: list[str]) -> list[str]:
        """``command`` to run in cgroup ``sc2dmc-<name>`` (root namespace), capped at ``cpu``
        cores (None: no cap, only measured): e.g. the client, beside the nodes."""
        _make_group(f"{PREFIX}-{name}", cpu)
        return _joining(f"{PREFIX}-{name}", command)

    def cpu_seconds(self, group: str) -> float:
        """CPU time used so far in cgroup ``group`` (a node's name, or ``sc2dmc-<name>``)."""
        path = CGROUP_CPUACCT / group / "cpuacct.usage"
        return int(path.read_text()) / 1e9 if path.exists() else float("nan")

    def throttled_seconds(self, group: str) -> float:
        """Time the quota held ``group`` back so far (cpu.stat's throttled_time)."""
        stat = dict(
            line.split() for line in (CGROUP_CPU / group / "cpu.stat").read_text().splitlines()
        )
        return int(stat.get("throttled_time", 0)) / 1e9

    # --- nodes joining and leaving ------------------------------------------------------

    def add_node(self) -> int:
        """A new node (namespace, link, quota, worker) joins the running cluster; its index."""
        i = len(self.workers)
        self._node_network(i)
        self.workers.append(self._start_worker(i))
        self.nodes = len(self.workers)
        return i

    def stop_node(self, i: int) -> None:
        """Node i's worker leaves: SIGTERM, so it closes as a retired node would (its
        preload's teardown closes its games), SIGKILL after 10 s."""
        if self.workers[i] is not None:
            _kill_group(self.workers[i])

    def kill_node(self, i: int) -> int:
        """Node i dies at once, as a machine that loses power: SIGKILL to every process in
        its cgroup (worker, Nanny, games) and namespace; the number of processes killed."""
        pids = self.cgroup_pids(i) | _netns_pids(node_name(i))
        _kill_pids(pids)
        if self.workers[i] is not None:
            self.workers[i].wait()
            self.workers[i] = None
        return len(pids)

    def restart_node(self, i: int) -> None:
        """Node i, killed or stopped, boots again: its worker starts and rejoins."""
        self.workers[i] = self._start_worker(i)

    # --- faults --------------------------------------------------------------------------

    def link_down(self, i: int) -> None:
        _run("ip", "link", "set", f"{PREFIX}-v{i}", "down")

    def link_up(self, i: int) -> None:
        _run("ip", "link", "set", f"{PREFIX}-v{i}", "master", BRIDGE, "up")

    def link_is_up(self, i: int) -> bool:
        """Whether node i's link to the bridge is up (the kernel's word for it)."""
        done = subprocess.run(
            ["ip", "-o", "link", "show", f"{PREFIX}-v{i}"], capture_output=True, text=True
        )
        return ",UP" in done.stdout or "<UP" in done.stdout

    def cgroup_pids(self, i: int) -> set[int]:
        """Processes in node i's cpu cgroup (its worker, nanny and games)."""
        text = (CGROUP_CPU / node_name(i) / "cgroup.procs").read_text()
        return {int(pid) for pid in text.split()}


def teardown() -> None:
    """Remove every namespace, link and cgroup of this tool (also a killed run's)."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    for ns in [line.split()[0] for line in listed.splitlines() if line.startswith(PREFIX)]:
        _kill_pids(_netns_pids(ns))
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    for line in links.splitlines():  # a veth outlives its namespace while a process holds it
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(f"{PREFIX}-"):
            subprocess.run(["ip", "link", "del", name], capture_output=True)
    subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True)
    for group in [*CGROUP_CPU.glob(f"{PREFIX}-*"), *CGROUP_CPUACCT.glob(f"{PREFIX}-*")]:
        with contextlib.suppress(OSError, ValueError):
            _kill_pids({int(p) for p in (group / "cgroup.procs").read_text().split()})
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:  # processes still leaving
                time.sleep(0.1)


def _make_group(name: str, cpu: float | None) -> None:
    """cgroup ``name`` in the cpu hierarchy (capped at ``cpu`` cores unless None) and, where
    it is mounted, in cpuacct, which counts its CPU time."""
    group = CGROUP_CPU / name
    group.mkdir(exist_ok=True)
    if cpu is not None:
        (group / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
        (group / "cpu.cfs_quota_us").write_text(str(max(1000, int(cpu * CFS_PERIOD_US))))
    if CGROUP_CPUACCT.is_dir():
        (CGROUP_CPUACCT / name).mkdir(exist_ok=True)


def _joining(name: str, command: list[str]) -> list[str]:
    """``command`` prefixed so that it joins cgroup ``name`` first; what it starts stays in."""
    files = [CGROUP_CPU / name / "cgroup.procs"]
    if (CGROUP_CPUACCT / name).is_dir():
        files.append(CGROUP_CPUACCT / name / "cgroup.procs")
    joins = " && ".join(f"echo $$ > {f}" for f in files)
    return ["sh", "-c", f'{joins} && exec "$@"', "sh", *command]


def _netns_pids(ns: str) -> set[int]:
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    return {int(pid) for pid in out.split()}


def _kill_pids(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _run(*args: str) -> None:
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"`{' '.join(args)}` failed: {done.stderr.strip()}")


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # unwinds through MiniCluster.__exit__: teardown


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--cpu", type=float, default=0.4, help="cores per node (cgroup quota)")
    parser.add_argument("--rate", default="1gbit", help="link bandwidth (tc netem rate)")
    parser.add_argument("--delay", default="0.2ms", help="one-way link delay (tc netem)")
    parser.add_argument("--sc2", type=int, default=2, help="SC2 games per node's worker")
    parser.add_argument(
        "--hold",
        type=float,
        default=None,
        help="without a command: keep the cluster up this many seconds",
    )
    parser.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        help="-- COMMAND: run it ({scheduler} is the address), then tear down",
    )
    args = parser.parse_args(argv)
    command = [c for c in args.command if c != "--"] if args.command else []
    try:
        with MiniCluster(args.nodes, args.cpu, args.rate, args.delay, args.sc2) as cluster:
            print(f"scheduler: {cluster.scheduler_address}  logs: {cluster.logs}", flush=True)
            if command:
                command = [c.replace("{scheduler}", cluster.scheduler_address) for c in command]
                return subprocess.run(command).returncode
            time.sleep(args.hold if args.hold is not None else 3600)
            return 0
    except MiniClusterUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
