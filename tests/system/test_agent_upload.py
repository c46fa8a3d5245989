"""A user's agent module reaches workers that never saw it: `dask worker`s started in another
folder, where `examples` cannot be imported, train `examples.custom_agent:Agent` because the
client uploads the module with Dask's own UploadFile plugin."""

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest
from distributed import Client

from tests.processes import BIN, Processes
from tests.system.test_multinode import worker_command

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.cluster
def test_a_custom_agent_reaches_workers_started_in_another_folder(tmp_path):
    processes = Processes(tmp_path)
    try:
        address = processes.scheduler()
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        env = {"SC2DASK_EMULATOR_DIR": str(tmp_path / "emulator"), "SC2PATH": None}
        for i in range(2):
            processes.start(f"worker{i}", *worker_command(address), env=env, cwd=elsewhere)
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=120)
            # before the run (find_spec travels by reference: these tests cannot)
            assert set(client.run(importlib.util.find_spec, "examples").values()) == {None}
        done = subprocess.run(
            [str(BIN / "sc2dask"), "train", "--agent-class", "examples.custom_agent:Agent",
             "--map", "MoveToBeacon", "--envs", "2", "--max-steps", "300",
             "--scheduler", address, "--json"],
            capture_output=True, text=True, timeout=300, cwd=ROOT,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        assert summary["agent_steps"] >= 300 and summary["updates"] > 0, summary
    finally:
        processes.close()
