"""The cluster guide's commands, for real: `dask scheduler`, `dask worker --preload sc2dask.worker`
and `sc2dask train --scheduler`, each its own process (group), as on separate nodes."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from distributed import Client

from sc2dask.training.cluster import tls_security
from tests.processes import Processes, read_json
from tests.waiting import wait_until

BIN = Path(sys.executable).parent
TINY_AGENT = {
    "DASK_SC2DASK__AGENT__SCREEN": "16",
    "DASK_SC2DASK__AGENT__MINIMAP": "16",
    "DASK_SC2DASK__AGENT__ACTION_SET": "move",
}


@pytest.fixture
def processes(tmp_path):
    procs = Processes(tmp_path)
    yield procs
    procs.close()


def worker_command(address: str) -> list[str]:
    return [
        str(BIN / "dask"),
        "worker",
        address,
        "--nworkers",
        "1",
        "--nthreads",
        "1",
        "--resources",
        "SC2=1",
        "--preload",
        "sc2dask.worker",
    ]


@pytest.mark.cluster
def test_train_on_a_command_line_cluster_uses_both_workers(processes, tmp_path):
    address = processes.scheduler()
    emulator = {"SC2DASK_EMULATOR_DIR": str(tmp_path / "emulator"), "SC2PATH": None}
    workers = [
        processes.start(f"worker{i}", *worker_command(address), env=emulator) for i in range(2)
    ]
    with Client(address, timeout=30) as client:
        client.wait_for_workers(2, timeout=120)
        reports = [
            info["sc2dask"] for info in client.scheduler_info(n_workers=-1)["workers"].values()
        ]
    assert all(r["ok"] and r["tf_threads"] == 1 for r in reports), reports

    train = processes.start(
        "train",
        str(BIN / "sc2dask"),
        "train",
        "--map",
        "MoveToBeacon",
        "--envs",
        "2",
        "--max-steps",
        "64",
        "--scheduler",
        address,
        "--json",
        env=TINY_AGENT,
    )
    played = set()  # worker processes that ran a game while training
    while train.poll() is None:
        for worker in workers:
            if any(
                "sc2dask.emulator" in " ".join(_cmdline(c))
                for c in psutil.Process(worker.pid).children(recursive=True)
            ):
                played.add(worker.pid)
        time.sleep(0.2)
    assert train.returncode == 0, processes.log("train")[-3000:]
    summary = json.loads(processes.log("train").strip().splitlines()[-1])
    assert summary["agent_steps"] >= 64 and summary["updates"] > 0, summary
    assert played == {w.pid for w in workers}
    assert "TensorFlow threads 1" in processes.log("worker0")


@pytest.mark.cluster
def test_a_worker_without_a_usable_game_is_named_with_the_fix(processes, tmp_path):
    """A worker configured by YAML (the `dask ssh` recipe) whose SC2PATH is an empty folder."""
    config = tmp_path / "dask-config"
    config.mkdir()
    (config / "sc2dask-worker.yaml").write_text(
        "distributed:\n  worker:\n    resources: {SC2: 1}\n    preload: [sc2dask.worker]\n"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    address = processes.scheduler()
    processes.start(
        "worker",
        str(BIN / "dask"),
        "worker",
        address,
        "--nthreads",
        "1",
        env={"DASK_CONFIG": str(config), "SC2PATH": str(empty)},
    )
    with Client(address, timeout=30) as client:
        client.wait_for_workers(1, timeout=120)
        (worker,) = client.scheduler_info(n_workers=-1)["workers"]
        event = wait_until(lambda: client.get_events("sc2dask-worker"), 60, "the worker's event")[
            0
        ][1]
    assert event["worker"] == worker and not event["ok"] and str(empty) in event["error"]
    assert "cannot host envs (it cannot start StarCraft II)" in processes.log("worker")

    train = subprocess.run(
        [
            str(BIN / "sc2dask"),
            "train",
            "--map",
            "MoveToBeacon",
            "--envs",
            "1",
            "--max-steps",
            "16",
            "--scheduler",
            address,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **TINY_AGENT},
    )
    assert train.returncode == 2, train.stderr[-3000:]
    error = train.stderr.strip().splitlines()[-1]
    assert error.startswith("error: StarCraft II cannot start on worker " + worker)
    assert f"SC2PATH={empty} holds no game binary" in error and "Unset SC2PATH" in error


@pytest.fixture
def tls_files(tmp_path):
    """A self-signed certificate (its own CA) for 127.0.0.1, made with openssl."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
    )
    return ["--tls-ca-file", str(cert), "--tls-cert", str(cert), "--tls-key", str(key)]


@pytest.mark.cluster
def test_train_over_tls_with_dasks_own_flags(processes, tmp_path, tls_files):
    """Scheduler, worker and `sc2dask train` all take the same --tls-* flags; a client
    without them is told what to add, and a plain-TCP client is refused."""
    info = tmp_path / "scheduler.json"
    processes.start(
        "scheduler",
        str(BIN / "dask"),
        "scheduler",
        "--protocol",
        "tls",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--dashboard-address",
        "127.0.0.1:0",
        "--scheduler-file",
        str(info),
        *tls_files,
    )
    address = wait_until(lambda: read_json(info), 60, "the scheduler file")["address"]
    assert address.startswith("tls://127.0.0.1:")
    for i in range(2):
        processes.start(
            f"worker{i}",
            *worker_command(address),
            *tls_files,
            env={"SC2DASK_EMULATOR_DIR": str(tmp_path / "emulator"), "SC2PATH": None},
        )
    security = tls_security(*tls_files[1::2])
    with Client(address, timeout=30, security=security) as client:
        client.wait_for_workers(2, timeout=120)
    train = subprocess.run(
        [
            str(BIN / "sc2dask"),
            "train",
            "--map",
            "MoveToBeacon",
            "--envs",
            "2",
            "--max-steps",
            "64",
            "--scheduler",
            address,
            "--json",
            *tls_files,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **TINY_AGENT},
    )
    assert train.returncode == 0, train.stderr[-3000:]
    assert json.loads(train.stdout.strip().splitlines()[-1])["agent_steps"] >= 64

    untold = subprocess.run(
        [str(BIN / "sc2dask"), "train", "--max-steps", "32", "--scheduler", address],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **TINY_AGENT},
    )
    assert untold.returncode == 2 and "--tls-ca-file" in untold.stderr, untold.stderr[-2000:]
    plain = subprocess.run(
        [
            str(BIN / "sc2dask"),
            "train",
            "--max-steps",
            "32",
            "--scheduler",
            address.replace("tls://", "tcp://"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **TINY_AGENT},
    )
    assert plain.returncode == 2 and "Traceback" not in plain.stderr, plain.stderr[-2000:]


def _cmdline(process):
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def test_an_emulator_folder_that_cannot_be_written_is_reported_with_the_fix(tmp_path, monkeypatch):
    from sc2dask.runtime.preload import check_game

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.delenv("SC2PATH", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/StarCraftII there
    monkeypatch.setenv("SC2DASK_EMULATOR_DIR", str(blocker / "StarCraftII"))
    report = check_game()
    assert not report["ok"]
    assert "cannot lay out the sc2dask emulator" in report["error"]
    assert "SC2DASK_EMULATOR_DIR" in report["error"]


@pytest.mark.cluster
def test_a_local_cluster_with_a_throwaway_certificate_trains_over_tls(sc2path):
    """local_cluster(security=True): distributed's Security.temporary() for every process."""
    import sc2dask
    from sc2dask.training.cluster import local_cluster

    with (
        local_cluster(n_workers=1, sc2_per_worker=1, security=True) as cluster,
        Client(cluster, security=cluster.security, direct_to_workers=True) as client,
    ):
        assert cluster.scheduler_address.startswith("tls://127.0.0.1:")
        assert all(w.startswith("tls://") for w in client.scheduler_info()["workers"])
        summary = sc2dask.train(
            client=client, envs=1, max_steps=32, action_set="move", screen=16, minimap=16
        ).wait(timeout=300)
    assert summary["agent_steps"] >= 32
