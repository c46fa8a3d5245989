"""The miniature cluster (tools/minicluster.py): namespaced nodes with shaped links and CPU
quotas, training through them, and a teardown that survives SIGTERM and SIGKILL."""

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest
from distributed import Client

from tests.waiting import wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import minicluster  # noqa: E402
from minicluster import MiniCluster, node_name  # noqa: E402

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.slow,
    # one miniature cluster at a time: its namespaces, links and cgroups have fixed names
    pytest.mark.xdist_group("minicluster"),
    pytest.mark.skipif(
        minicluster.unavailable_reason() is not None, reason=minicluster.unavailable_reason() or ""
    ),
]
TINY = dict(action_set="move", screen=16, minimap=16)


@pytest.fixture(autouse=True)
def one_minicluster_at_a_time():
    """Its namespaces, links and cgroups have fixed names, and each cluster starts by
    removing any it finds: a lock on a file keeps two test processes (pytest-xdist) from
    building one at a time into each other."""
    with open(Path(tempfile.gettempdir()) / f"{minicluster.PREFIX}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _leftovers() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return (
        [line for line in listed.splitlines() if line.startswith(minicluster.PREFIX)]
        + [line for line in links.splitlines() if f"{minicluster.PREFIX}-" in line]
        + [str(p) for p in minicluster.CGROUP_CPU.glob(f"{minicluster.PREFIX}-*")]
        + [str(p) for p in minicluster.CGROUP_CPUACCT.glob(f"{minicluster.PREFIX}-*")]
    )


def test_an_elastic_run_grows_onto_a_node_that_joins_and_outlives_one_that_leaves(sc2path):
    """Each node's games run in its cgroup under its quota; a node that joins gets an env
    host, and when the first node leaves the run goes on with the second."""
    import sc2dask

    with (
        MiniCluster(
            nodes=1, cpu=0.5, rate="100mbit", sc2=1, env={"SC2PATH": str(sc2path)}
        ) as cluster,
        Client(cluster.scheduler_address, timeout=30, direct_to_workers=True) as client,
    ):
        client.wait_for_workers(1, timeout=120)
        quota = (minicluster.CGROUP_CPU / node_name(0) / "cpu.cfs_quota_us").read_text()
        assert int(quota) == 50_000  # 0.5 of a 100 ms period
        shaped = subprocess.run(
            ["tc", "qdisc", "show", "dev", f"{minicluster.PREFIX}-v0"],
            capture_output=True,
            text=True,
        ).stdout
        assert "100Mbit" in shaped, shaped
        run = sc2dask.train(
            client=client, mode="async", envs=1, envs_max=2, max_steps=10**7, agent_overrides=TINY
        )
        try:
            wait_until(lambda: run.progress.updates > 0 or not run.running, 300, "an update")
            cluster.add_node()
            wait_until(lambda: run.pool.n_envs == 2 or not run.running, 180, "a second host")
            hosts = {p.worker.split("//")[1].split(":")[0] for p in run.pool.placements}
            assert hosts == {minicluster.node_ip(0), minicluster.node_ip(1)}
            for i in range(2):  # the node's games run inside its cgroup, under its quota
                wait_until(lambda i=i: _games_in(cluster, i), 120, f"a game on node {i}")
            cluster.stop_node(0)
            wait_until(
                lambda: run.pool.n_envs == 1 or not run.running, 180, "the run to let node 0 go"
            )
            steps = run.progress.agent_steps
            wait_until(
                lambda: run.progress.agent_steps > steps or not run.running,
                180,
                "training on node 1 alone",
            )
            assert not _games_in(cluster, 0)
        finally:
            run.stop()
            summary = run.wait(timeout=300)
        assert summary["agent_steps"] > 0 and summary["rejected_gradients"] == 0
    assert _leftovers() == []


def _games_in(cluster, i) -> list:
    return [
        p
        for p in map(_process, cluster.cgroup_pids(i))
        if p and "sc2dask.emulator" in " ".join(_cmdline(p))
    ]


def test_sigterm_tears_everything_down_and_a_run_after_a_killed_one_starts(tmp_path):
    tool = [sys.executable, str(Path(minicluster.__file__)), "--nodes", "1", "--hold", "600"]
    for signum in (signal.SIGTERM, signal.SIGKILL):
        process = subprocess.Popen(
            tool, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        assert process.stdout.readline().startswith("scheduler: tcp://10.213.0.1:")
        os.kill(process.pid, signum)
        process.wait(timeout=60)
        if signum == signal.SIGTERM:
            assert _leftovers() == [], process.stderr.read()
        else:  # nothing could clean up: the next run must
            assert _leftovers()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    with MiniCluster(nodes=1, cpu=0.3) as cluster:
        assert cluster.scheduler_address.startswith("tcp://10.213.0.1:")
    assert _leftovers() == []


def test_a_killed_node_dies_whole_and_boots_again_and_a_cut_link_is_down():
    """The faults of the campaign at scale (benchmarks/bench_faults.py), one by one."""
    with (
        MiniCluster(nodes=1, cpu=0.3) as cluster,
        Client(cluster.scheduler_address, timeout=30) as client,
    ):
        client.wait_for_workers(1, timeout=120)
        assert cluster.kill_node(0) >= 2  # at least the Nanny and its worker
        wait_until(lambda: not cluster.cgroup_pids(0), 10, "node 0's processes gone")
        wait_until(lambda: not client.scheduler_info()["workers"], 60, "the worker gone")
        cluster.link_down(0)
        assert not cluster.link_is_up(0)
        cluster.link_up(0)
        assert cluster.link_is_up(0)
        cluster.restart_node(0)
        client.wait_for_workers(1, timeout=120)
        assert cluster.cgroup_pids(0)
    assert _leftovers() == []


def _process(pid):
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def _cmdline(process):
    try:
        return process.cmdline()
    except psutil.Error:
        return []
