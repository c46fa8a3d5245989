"""Training on a real LocalCluster with the emulator: checkpoints, faults and clear errors."""

import os
import signal

import numpy as np
import psutil
import pytest

from sc2dask import train
from sc2dask.errors import CheckpointError, ConfigError, UnknownMapError
from sc2dask.training import checkpoint
from tests.waiting import wait_until

pytestmark = [pytest.mark.usefixtures("sc2path"), pytest.mark.cluster]
TINY = dict(action_set="move", screen=16, minimap=16)


@pytest.mark.parametrize(
    "mode, extra",
    [("central", {}), ("sync", {}), ("async", {}), ("async", {"async_combine": "sqrt"})],
)
def test_every_mode_trains_and_counts_its_work(client, mode, extra):
    run = train(client=client, mode=mode, envs=2, max_steps=256, agent_overrides=TINY, **extra)
    summary = run.wait(timeout=600)
    assert summary["agent_steps"] >= 256 and summary["updates"] > 0
    assert summary["version"] == summary["updates"]
    assert summary["rejected_gradients"] == 0 and summary["restarts"] == 0
    # Only central mode learns on the client; the others' gradients come from the hosts.
    assert (summary["learner_samples_per_s"] > 0) == (mode == "central")


@pytest.mark.parametrize("max_staleness", [0, 1000])
def test_sync_with_k_of_n_gradients_counts_stragglers_staleness(client, max_staleness):
    """K = 1 of N = 2 hosts: each update takes the first gradient back, so the other
    host's, computed on the weights before that update, arrives at least one version late.
    Within ``max-staleness`` it joins the next update with its staleness recorded; beyond
    it, it is dropped and its host gets fresh weights."""
    run = train(
        client=client,
        mode="sync",
        envs=2,
        max_steps=512,
        sync_gradients=1,
        max_staleness=max_staleness,
        agent_overrides=TINY,
    )
    summary = run.wait(timeout=600)
    staleness = [row["staleness"] for row in run.progress.history]  # one row per gradient
    assert summary["agent_steps"] >= 512 and summary["updates"] == summary["version"] > 0
    assert max(staleness) >= 1
    if max_staleness == 0:  # every late gradient dropped, every update from fresh ones
        assert summary["dropped_stale_gradients"] == sum(s >= 1 for s in staleness) > 0
        assert summary["updates"] == staleness.count(0)
    else:  # late gradients applied, and counted as late
        assert summary["dropped_stale_gradients"] == 0
        assert summary["updates"] == len(staleness)


@pytest.mark.parametrize("overlap", [False, True])
def test_central_overlap_plays_the_next_rollout_one_update_behind(client, overlap):
    """One host: without overlap it always plays the newest weights; with it, each
    rollout but the first was played while the client learned from the one before."""
    run = train(
        client=client,
        envs=1,
        max_steps=160,
        rollout_steps=16,
        overlap=overlap,
        agent_overrides=TINY,
    )
    summary = run.wait(timeout=600)
    staleness = [row["staleness"] for row in run.progress.history]
    assert summary["agent_steps"] >= 160 and summary["updates"] == len(staleness)
    assert staleness == ([0] + [1] * (len(staleness) - 1) if overlap else [0] * len(staleness))


def test_a_seed_far_beyond_uint32_still_starts_every_game(client):
    """A resumed run seeds its games with seed + updates; pysc2's random_seed is a uint32
    (it used to overflow at seed 538 and crash every resume past ~538 updates)."""
    summary = train(client=client, envs=2, max_steps=64, seed=2**40, agent_overrides=TINY).wait(
        timeout=600
    )
    assert summary["agent_steps"] >= 64 and summary["restarts"] == 0


@pytest.mark.parametrize("mode", ["central", "async"])
def test_non_finite_gradients_are_counted_and_skipped_not_fatal(client, mode):
    """A learning rate of 1e30 blows the weights up after the first step; every gradient
    after it is NaN. Central mode finds that on the client, async mode on the hosts."""
    summary = train(
        client=client,
        mode=mode,
        envs=2,
        max_steps=192,
        agent_overrides={**TINY, "learning_rate": 1e30},
    ).wait(timeout=600)
    assert summary["agent_steps"] >= 192
    assert summary["rejected_gradients"] > 0 and summary["updates"] >= 1


def test_a_local_run_listens_on_loopback_only(client):
    """Scheduler, dashboard (the training page and /metrics with it), workers, nannies and
    games: while a run plays, no socket of this process tree listens beyond loopback."""
    run = train(client=client, envs=2, max_steps=10_000, agent_overrides=TINY)
    try:
        wait_until(lambda: run.progress.agent_steps > 0, 300, "the first rollout")
        processes = [psutil.Process(), *psutil.Process().children(recursive=True)]
        listening = {
            (p.pid, c.laddr.ip, c.laddr.port)
            for p in processes
            for c in _connections(p)
            if c.status == psutil.CONN_LISTEN
        }
    finally:
        run.stop()
        run.wait(timeout=300)
    assert any(
        port == int(client.dashboard_link.split(":")[2].split("/")[0]) for _, _, port in listening
    )  # the dashboard is among them
    assert len({pid for pid, _, _ in listening}) >= 5  # scheduler, 2 workers, 2 games
    assert {ip for _, ip, _ in listening} <= {"127.0.0.1", "::1"}, listening


def _connections(process):
    try:
        return process.net_connections(kind="inet")
    except psutil.Error:  # it ended meanwhile
        return []


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_compressed_gradients_and_weight_deltas_train_and_move_fewer_bytes(client, mode):
    """Gradients back and weight deltas out both shrink: topk most, then int8; layered
    sync sends the big layers only every k updates."""
    back, out = {}, {}
    for method, layered in (("none", 1), ("topk", 1), ("int8", 1), ("none", 4)):
        summary = train(
            client=client,
            mode=mode,
            envs=2,
            max_steps=256,
            compression=method,
            layered_sync=layered,
            agent_overrides=TINY,
        ).wait(timeout=600)
        assert summary["agent_steps"] >= 256 and summary["updates"] > 0, method
        assert summary["rejected_gradients"] == 0, method
        back[method, layered] = summary["bytes_from_hosts"] / summary["updates"]
        out[method, layered] = summary["bytes_to_hosts"] / summary["updates"]
    assert back["topk", 1] < 0.1 * back["none", 1], back
    assert back["topk", 1] < back["int8", 1] < back["none", 1], back
    # the first weights go whole; every later version as a delta
    assert out["topk", 1] < out["int8", 1] < 0.6 * out["none", 1], out
    assert out["none", 4] < 0.6 * out["none", 1], out


def test_central_mode_reuses_each_batch_for_several_epochs(client):
    """PPO-style reuse: every batch (one host's rollout) makes ``epochs`` optimizer steps."""
    summary = train(
        client=client,
        envs=2,
        max_steps=128,
        rollout_steps=16,
        agent_overrides={**TINY, "epochs": 3},
    ).wait(timeout=600)
    assert summary["agent_steps"] >= 128 and summary["rejected_gradients"] == 0
    assert summary["updates"] == 3 * (summary["agent_steps"] // 16) == summary["version"]


def test_checkpoint_then_resume_restores_weights_and_optimizer_exactly(client, tmp_path):
    first = train(
        client=client,
        envs=2,
        max_steps=96,
        checkpoint_dir=str(tmp_path),
        checkpoint_every=1,
        agent_overrides=TINY,
    )
    summary = first.wait(timeout=600)
    weights, optimizer, state = checkpoint.load(tmp_path)
    assert state["updates"] == summary["updates"] and state["version"] == summary["version"]

    resumed = train(
        client=client,
        envs=2,
        max_steps=summary["agent_steps"],  # no more steps
        checkpoint_dir=str(tmp_path),
        resume=True,
        agent_overrides=TINY,
    )
    again = resumed.wait(timeout=600)
    learner = resumed.store.learner
    for a, b in zip(weights, learner.get_weights()):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(optimizer, learner.get_optimizer_state()):
        np.testing.assert_array_equal(a, b)
    assert again["agent_steps"] == summary["agent_steps"]
    assert again["version"] == summary["version"]


@pytest.mark.slow
def test_a_melee_run_plays_whole_games_with_macro_actions_and_counts_outcomes(client, tmp_path):
    """Simple64's defaults (macro actions, the value reward, kickstarted) against VeryEasy:
    games end, the summary counts them, and the checkpoint remembers that its env takes
    macros and renders no feature layers, so evaluating it plays the same."""
    summary = train(
        client=client,
        map="Simple64",
        opponent="bot:terran:very_easy",
        envs=1,
        step_mul=64,
        max_steps=460,  # past the 30 game minutes (450 steps) that end a game as a tie
        checkpoint_dir=str(tmp_path),
        agent_overrides=dict(screen=16, minimap=16),
    ).wait(timeout=600)
    assert summary["episodes"] >= 1
    assert summary["wins"] + summary["draws"] + summary["losses"] == summary["episodes"]
    trained = checkpoint.checkpoint_env(tmp_path)
    assert trained["macro_actions"] is True and trained["feature_layers"] is False


def test_a_killed_game_is_restarted_and_training_goes_on(client):
    handle = train(client=client, envs=2, max_steps=480, agent_overrides=TINY)
    wait_until(lambda: handle.progress.updates >= 3, what="3 updates")
    pool = handle.pool
    pool.call(pool.placements[0], lambda host: host.crash_game(0))
    summary = handle.wait(timeout=600)
    assert summary["agent_steps"] >= 480
    assert summary["restarts"] >= 1  # the cut trajectory itself: tests/test_rollout.py
    assert summary["rejected_gradients"] == 0


def test_a_killed_worker_mid_rollout_is_replaced_and_training_goes_on(client):
    handle = train(client=client, envs=2, max_steps=480, agent_overrides=TINY)
    wait_until(lambda: handle.progress.updates >= 3, what="3 updates")
    pool = handle.pool
    victim = pool.call(pool.placements[0], lambda host: host.stats())["pid"]
    os.kill(victim, signal.SIGKILL)
    summary = handle.wait(timeout=300)
    assert not handle.running, "training stalled after the worker was killed"
    assert summary["agent_steps"] >= 480 and summary["rejected_gradients"] == 0
    assert pool.host_restarts >= 1 and summary["restarts"] >= 1
    assert summary["rollouts_counted_twice"] == 0  # the redone rollout counted once


def test_user_errors_are_clear(client, tmp_path):
    with pytest.raises(ConfigError, match="needs mode='central'"):
        train(client=client, mode="sync", agent_overrides={"epochs": 2})
    with pytest.raises(ConfigError, match="Unknown setting 'max_step'.*Did you mean 'max_steps'"):
        train(client=client, max_step=10)
    with pytest.raises(ConfigError, match="Did you mean 'learning_rate'"):
        train(client=client, learning_rat=0.1)
    with pytest.raises(ConfigError, match="given both"):
        train(client=client, screen=16, agent_overrides={"screen": 16})
    with pytest.raises(ConfigError, match="mode"):
        train(client=client, mode="sideways")
    with pytest.raises(UnknownMapError):
        train(client=client, map="NoSuchMap")
    (tmp_path / "LATEST").write_text("ckpt-00000001")
    (tmp_path / "ckpt-00000001").mkdir()
    (tmp_path / "ckpt-00000001" / "state.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="corrupt"):
        train(client=client, checkpoint_dir=str(tmp_path), resume=True, agent_overrides=TINY).wait(
            timeout=600
        )
