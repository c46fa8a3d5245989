"""Env hosts on a real LocalCluster: placement by SC2 capacity, evaluation, and surviving crashes."""

import json
import os
import signal
import subprocess
import sys
import threading

import psutil
import pytest
from distributed import Client

from sc2dask import evaluate
from sc2dask.agents.loading import agent_spec
from sc2dask.errors import CheckpointError, ConfigError, NoCapacityError, UnknownMapError
from sc2dask.game import EnvConfig
from sc2dask.settings import AgentSettings, load
from sc2dask.training.cluster import local_cluster
from sc2dask.training.pool import EnvPool


def STATS(host):
    """The request the tests make most: a host's counters."""
    return host.stats()


pytestmark = pytest.mark.usefixtures("sc2path")

SCRIPTED = "pysc2_evolved.agents.scripted_agent.MoveToBeacon"
RANDOM = "pysc2_evolved.agents.random_agent.RandomAgent"
SMALL = EnvConfig(screen=16, minimap=16)


SC2_PER_WORKER = 2  # conftest's client: two games per worker


@pytest.mark.cluster
def test_hosts_fill_capacity_and_never_exceed_it(client):
    with EnvPool(client, SMALL, n_envs=3) as pool:
        per_worker = {}
        for p in pool.placements:
            per_worker[p.worker] = per_worker.get(p.worker, 0) + p.n_envs
        stats = pool.stats()
    assert sorted(per_worker.values()) == [1, 2]
    assert sum(len(h["envs"]) for h in stats["hosts"]) == 3
    with pytest.raises(NoCapacityError, match="4 SC2 slots"):
        EnvPool(client, SMALL, n_envs=5)


@pytest.mark.cluster
def test_envs_on_one_worker_run_their_games_at_the_same_time(client):
    """Both games of a two-env host are alive together while it plays (threads, not a queue)."""
    with EnvPool(client, SMALL, n_envs=2) as pool:
        (placement,) = pool.placements
        running = threading.Event()
        seen = []

        def watch():
            while not running.is_set():
                pids = [env["sc2_pid"] for env in pool.call(placement, STATS)["envs"]]
                seen.append(sum(p is not None and psutil.pid_exists(p) for p in pids))

        watcher = threading.Thread(target=watch)
        watcher.start()
        scores = pool.evaluate(RANDOM, 2)
        running.set()
        watcher.join()
    assert len(scores) == 2
    assert max(seen) == 2


@pytest.mark.cluster
def test_scripted_agent_scores_near_25_on_move_to_beacon(client):
    result = evaluate(SCRIPTED, "MoveToBeacon", episodes=6, client=client, config=SMALL)
    assert result.episodes == 6
    assert 20 <= result.mean <= 30, result.scores


@pytest.mark.cluster
def test_random_agent_scores_far_lower(client):
    result = evaluate(RANDOM, "MoveToBeacon", episodes=4, client=client, config=SMALL)
    assert result.mean < 5, result.scores


@pytest.mark.cluster
def test_prepare_leaves_every_game_running_and_returns_the_observation_spec(client):
    """What a run does as it starts (``EnvHost.prepare``), so its first rollout plays at once."""
    with EnvPool(client, SMALL, n_envs=2) as pool:
        (placement,) = pool.placements
        settings = load(AgentSettings, {"action_set": "move", "screen": 16, "minimap": 16}).values
        agent = agent_spec(settings.agent_class, settings)
        spec = pool.call(placement, lambda host: host.prepare(agent))
        pids = [env["sc2_pid"] for env in pool.call(placement, STATS)["envs"]]
        assert all(pid is not None and psutil.pid_exists(pid) for pid in pids)
        assert spec == pool.call(placement, lambda host: host.observation_spec())
        assert spec["feature_screen"][1:] == (16, 16)


@pytest.mark.cluster
def test_a_killed_game_is_restarted_in_place_and_counted(client):
    with EnvPool(client, SMALL, n_envs=1) as pool:
        (placement,) = pool.placements
        pool.evaluate(RANDOM, 1)  # starts the game
        pid = pool.call(placement, lambda host: host.crash_game(0))
        assert pid is not None and _gone(pid)
        scores = pool.evaluate(SCRIPTED, 2)
        stats = pool.stats()
    assert len(scores) == 2 and min(e.score for e in scores) > 10
    assert stats["game_restarts"] == 1 and stats["host_restarts"] == 0


@pytest.mark.cluster
def test_a_killed_worker_loses_its_host_which_is_recreated_and_counted(client):
    with EnvPool(client, SMALL, n_envs=2) as pool:
        (placement,) = pool.placements
        victim = pool.call(placement, STATS)["pid"]
        killer = threading.Timer(1.5, os.kill, (victim, signal.SIGKILL))
        killer.start()  # mid-evaluation: the episodes in flight are lost and replayed
        scores = pool.evaluate(SCRIPTED, 4)
        killer.join()
        stats = pool.stats()
    assert len(scores) == 4 and min(e.score for e in scores) > 10
    assert stats["host_restarts"] == 1
    assert stats["hosts"][0]["pid"] != victim


@pytest.mark.cluster
def test_an_error_of_the_work_is_raised_at_once_not_taken_for_a_lost_host(client, tmp_path):
    """A checkpoint the workers cannot read is an OSError raised by the host's work, with
    its worker alive: it surfaces as it is, and no host is recreated for it."""
    with EnvPool(client, SMALL, n_envs=1) as pool:
        with pytest.raises(CheckpointError, match="No checkpoint in"):
            pool.evaluate(f"sc2dask.training.checkpoint.CheckpointAgent:{tmp_path}", 1)
        assert pool.stats()["host_restarts"] == 0


@pytest.mark.cluster
def test_an_unreachable_worker_is_a_lost_host_while_the_scheduler_still_lists_it(client):
    """Dask's actor proxy turns a dead worker's refused connection into a bare OSError,
    often before the scheduler drops that worker: the pool must not take it for an
    error of the work then. Here the worker is alive and listed, as in that moment. The
    work's own OS errors are subclasses (FileNotFoundError, ...) or sc2dask's own."""
    with EnvPool(client, SMALL, n_envs=1) as pool:
        placement = pool.placements[0]
        assert pool.lost(placement, OSError("Unable to contact Actor's worker"))
        assert not pool.lost(placement, FileNotFoundError("No such file"))  # the work's own
        assert not pool.lost(placement, CheckpointError("No checkpoint in x"))


@pytest.mark.cluster
def test_a_host_slower_than_call_timeout_is_closed_before_its_replacement(client):
    """Its games would otherwise play on beside the new host's, beyond the worker's room."""
    with EnvPool(client, SMALL, n_envs=2) as pool:
        (placement,) = pool.placements
        pool.evaluate(RANDOM, 2)  # both games started
        old_host = pool.call(placement, STATS)
        pool.call_timeout = 3
        old_games = {env["sc2_pid"] for env in old_host["envs"]}
        with pytest.raises(TimeoutError):  # every try times out: the call fails in the end
            pool.call(
                placement, lambda host: host.evaluate(SCRIPTED, 400)
            )  # ~100 s of play: past 3 s
        assert pool.host_restarts >= 1
        assert all(_gone(pid) for pid in old_games)  # closed, not left running
        games = [
            p
            for p in psutil.Process(old_host["pid"]).children(recursive=True)
            if "sc2dask.emulator" in " ".join(p.cmdline())
        ]
        assert len(games) <= placement.n_envs


@pytest.mark.cluster
def test_user_errors_are_clear(client):
    with pytest.raises(UnknownMapError, match="MoveToBeacon"):
        evaluate(SCRIPTED, "NoSuchMap", episodes=1, client=client)
    with pytest.raises(ConfigError, match="dotted path"):
        evaluate("no.such.Agent", "MoveToBeacon", episodes=1, client=client)


@pytest.mark.cluster
def test_a_client_that_goes_through_the_scheduler_is_told_how_not_to(client, caplog):
    """Without ``direct_to_workers`` every env call and its gradients are relayed by the
    scheduler; the pool still works, and says how to make the client go direct."""
    caplog.set_level("WARNING", logger="sc2dask.training.pool")
    with EnvPool(client, SMALL, n_envs=1) as pool:
        assert pool.call(pool.placements[0], STATS)["envs"]
    assert "direct_to_workers" not in caplog.text
    with Client(client.scheduler.address, timeout=30) as relayed:
        with EnvPool(relayed, SMALL, n_envs=1) as pool:
            assert pool.submit(pool.placements[0], STATS).result(timeout=60)["envs"]
    assert "Client(..., direct_to_workers=True)" in caplog.text


@pytest.mark.cluster
def test_zero_capacity_is_a_clear_error():
    with local_cluster(n_workers=1, sc2_per_worker=0) as cluster, Client(cluster) as client:
        with pytest.raises(NoCapacityError, match="--resources SC2="):
            EnvPool(client, SMALL)


@pytest.mark.cluster
def test_cli_evaluate_prints_one_json_object():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sc2dask.cli",
            "evaluate",
            "--map",
            "MoveToBeacon",
            "--agent",
            SCRIPTED,
            "--episodes",
            "2",
            "--envs",
            "2",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(summary) == {"map", "episodes", "mean", "std", "min", "max"}
    assert summary["episodes"] == 2 and summary["mean"] > 15


def test_cli_unreachable_scheduler_is_a_clear_error():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sc2dask.cli",
            "evaluate",
            "--map",
            "MoveToBeacon",
            "--agent",
            SCRIPTED,
            "--episodes",
            "1",
            "--scheduler",
            "tcp://127.0.0.1:9",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2
    assert "No Dask scheduler answers" in out.stderr and "Traceback" not in out.stderr


def _gone(pid, wait=10.0):
    """True once ``pid`` has exited (a zombie counts as gone), waiting at most ``wait`` s."""
    try:
        process = psutil.Process(pid)
        process.wait(timeout=wait) if process.status() != psutil.STATUS_ZOMBIE else None
    except psutil.NoSuchProcess:
        pass
    except psutil.TimeoutExpired:
        return process.status() == psutil.STATUS_ZOMBIE
    return True
