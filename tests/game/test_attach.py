"""Envs on games that are already running (``--sc2 HOST:PORT``), the seed's deployment:
real `sc2dask emulator serve` processes, real pysc2 over the wire, a real Dask cluster."""

import contextlib
import json
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from distributed import Client

from sc2dask import evaluate, train
from sc2dask.errors import ConfigError, EndpointUnreachableError, NoCapacityError
from sc2dask.settings import TrainSettings, load
from sc2dask.training.placement import plan_attached
from tests.emulator_process import free_port
from tests.processes import Processes
from tests.waiting import wait_until

BIN = Path(sys.executable).parent
SCRIPTED = "pysc2_evolved.agents.scripted_agent.MoveToBeacon"
TINY_AGENT = {"screen": 16, "minimap": 16}


@contextlib.contextmanager
def serving(n: int, ports: list[int] | None = None):
    """``n`` `sc2dask emulator serve` processes; yields [(process, "127.0.0.1:PORT")]."""
    games = []
    try:
        for port in ports or [free_port() for _ in range(n)]:
            games.append(start_game(port))
        for _, endpoint in games:
            wait_until(lambda e=endpoint: _listening(e), 60, f"the game at {endpoint}")
        yield games
    finally:
        for process, _ in games:
            stop_game(process)


def start_game(port: int):
    process = subprocess.Popen(
        [str(BIN / "sc2dask"), "emulator", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return process, f"127.0.0.1:{port}"


def stop_game(process) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


def _listening(endpoint: str) -> bool:
    import socket

    host, port = endpoint.rsplit(":", 1)
    with contextlib.suppress(OSError), socket.create_connection((host, int(port)), timeout=1):
        return True
    return False


# --- placement and settings ---------------------------------------------------------------


@pytest.mark.unit
def test_each_game_goes_to_a_worker_on_its_machine_and_a_workers_own_games_to_it():
    own = {
        "tcp://10.0.0.1:4000": ["127.0.0.1:5000"],
        "tcp://10.0.0.2:4000": [],
        "tcp://10.0.0.3:4000": [],
    }
    placements = plan_attached(own, ("10.0.0.2:5000", "10.0.0.2:5001", "10.0.0.9:5000"))
    by_worker = {(p.worker, p.pinned): p.endpoints for p in placements}
    assert by_worker[("tcp://10.0.0.1:4000", True)] == ("127.0.0.1:5000",)
    assert by_worker[("tcp://10.0.0.2:4000", False)] == ("10.0.0.2:5000", "10.0.0.2:5001")
    # no worker on 10.0.0.9: the one with the fewest envs so far
    assert by_worker[("tcp://10.0.0.3:4000", False)] == ("10.0.0.9:5000",)
    assert sum(p.n_envs for p in placements) == 4
    assert sum(p.n_envs for p in plan_attached(own, ("10.0.0.2:5000",), n_envs=1)) == 1
    with pytest.raises(NoCapacityError, match="3 running games"):
        plan_attached(own, ("10.0.0.2:5000", "10.0.0.2:5001"), n_envs=4)
    with pytest.raises(NoCapacityError, match="dask worker"):
        plan_attached({}, ("10.0.0.2:5000",))


@pytest.mark.unit
@pytest.mark.parametrize(
    "bad, says",
    [
        ("127.0.0.1", "not a game address"),
        ("host:0", "not a game address"),
        ("a:1,a:1", "listed twice"),
    ],
)
def test_a_malformed_game_address_is_named_with_the_fix(bad, says):
    with pytest.raises(ConfigError, match=f"sc2dask.train.sc2 .*{says}"):
        load(TrainSettings, {"sc2": bad})
    assert load(TrainSettings, {"sc2": "h:1, [::1]:2"}).values.sc2 == ("h:1", "[::1]:2")


# --- against running games ----------------------------------------------------------------


@pytest.mark.cluster
def test_evaluate_plays_on_two_running_games_and_leaves_them_running(sc2path):
    with serving(2) as games:
        before = [psutil.Process(p.pid).cpu_times().user for p, _ in games]
        done = subprocess.run(
            [
                str(BIN / "sc2dask"),
                "evaluate",
                "--map",
                "MoveToBeacon",
                "--sc2",
                ",".join(e for _, e in games),
                "--agent",
                SCRIPTED,
                "--episodes",
                "4",
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout.strip().splitlines()[-1])
        assert result["episodes"] == 4 and 20 <= result["mean"] <= 32, result
        for (process, endpoint), cpu in zip(games, before):
            assert process.poll() is None, f"the game at {endpoint} was quit"
            assert psutil.Process(process.pid).cpu_times().user > cpu + 0.2, (
                f"the game at {endpoint} played nothing"
            )


@pytest.mark.cluster
def test_a_game_address_that_does_not_answer_is_named_with_the_fix(client):
    endpoint = f"127.0.0.1:{free_port()}"
    with pytest.raises(EndpointUnreachableError, match=f"{endpoint}.*emulator serve"):
        evaluate(SCRIPTED, map="MoveToBeacon", episodes=1, client=client, sc2=[endpoint])


@pytest.mark.cluster
def test_training_reconnects_to_a_game_that_died_once_it_listens_again(client):
    with serving(2) as games:
        handle = train(
            client=client,
            sc2=[e for _, e in games],
            max_steps=2000,
            rollout_steps=8,
            agent_overrides=TINY_AGENT,
        )
        wait_until(lambda: handle.progress.updates >= 3 or not handle.running, 300, "3 updates")
        process, endpoint = games[0]
        stop_game(process)
        games[0] = start_game(int(endpoint.rsplit(":", 1)[1]))  # the same address again
        summary = handle.wait(300)
        restarted = psutil.Process(games[0][0].pid).cpu_times().user
    assert summary["agent_steps"] >= 2000 and summary["restarts"] >= 1, summary
    assert restarted > 0.2, "the game started again at the same address played nothing"


@pytest.mark.cluster
def test_a_workers_own_games_from_its_environment_host_its_envs(sc2path, tmp_path):
    processes = Processes(tmp_path)
    with serving(1) as games, contextlib.closing(processes):
        address = processes.scheduler()
        processes.start(  # no SC2 resource: the games are not this worker's to start
            "worker",
            str(BIN / "dask"),
            "worker",
            address,
            "--nthreads",
            "1",
            "--preload",
            "sc2dask.worker",
            env={"DASK_SC2DASK__WORKER__SC2": games[0][1]},
        )
        with Client(address, timeout=30) as own_client:
            own_client.wait_for_workers(1, timeout=120)
            result = evaluate(SCRIPTED, map="MoveToBeacon", episodes=2, client=own_client)
    assert result.episodes == 2 and result.mean >= 15, result
