"""A real SLURM: dask-jobqueue's ``SLURMCluster`` submits sc2dask workers with ``sbatch``,
with the worker options the docs give (``--resources SC2=N --preload sc2dask.worker``), and
``sc2dask.train`` trains through them. Skipped, with the reason, where SLURM cannot run."""

import os
import sys

import pytest
from distributed import Client

import sc2dask
from tests.slurm import LocalSlurm, SlurmUnavailable

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.usefixtures("sc2path")]


@pytest.fixture
def slurm(tmp_path, monkeypatch):
    local = LocalSlurm(tmp_path / "slurm")
    try:
        local.start()
    except SlurmUnavailable as exc:
        local.stop()
        pytest.skip(f"no SLURM here: {exc}")
    for key, value in local.env.items():
        monkeypatch.setenv(key, value)  # sbatch, squeue and scancel read it
    yield local
    local.stop()


def test_sc2dask_trains_on_workers_that_slurm_started(slurm, tmp_path):
    dask_jobqueue = pytest.importorskip("dask_jobqueue")
    with dask_jobqueue.SLURMCluster(
        cores=2,
        processes=1,
        memory="4GB",
        walltime="00:15:00",
        worker_extra_args=["--resources", "SC2=2", "--preload", "sc2dask.worker"],
        python=sys.executable,
        log_directory=str(tmp_path / "logs"),
        scheduler_options={"host": "127.0.0.1"},  # nothing beyond loopback in a test
    ) as cluster:
        cluster.scale(jobs=1)
        with Client(cluster, direct_to_workers=True) as client:
            client.wait_for_workers(1, timeout=180)
            jobs = set(client.run(lambda: os.environ.get("SLURM_JOB_ID")).values())
            assert None not in jobs and len(jobs) == 1  # started by sbatch, as a SLURM job
            assert jobs <= set(slurm.run("squeue", "--noheader", "--format=%i").split())
            run = sc2dask.train(
                client=client,
                map="MoveToBeacon",
                envs=2,
                mode="sync",
                max_steps=300,
                checkpoint_dir=str(tmp_path / "runs"),
            )
            summary = run.wait()
    assert summary["agent_steps"] >= 300 and summary["mode"] == "sync"
    assert summary["restarts"] == 0
