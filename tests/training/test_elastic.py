"""Elastic runs: hosts added on workers that join, hosts of workers that leave closed and
their work carried by the others, and adaptive scaling by the SC2 capacity wanted."""

import time

import numpy as np
import pytest
from distributed import Client

from sc2dask import SC2Adaptive, train
from sc2dask.core import GradientResult
from sc2dask.errors import ConfigError
from sc2dask.training.cluster import local_cluster, sc2_capacity
from sc2dask.training.recorder import Progress, Recorder
from sc2dask.training.updates import AsyncUpdates, SyncUpdates
from tests.waiting import wait_until

TINY = dict(action_set="move", screen=16, minimap=16)


class _Store:
    """The two things SyncUpdates asks of a ParameterStore: its version, and apply."""

    def __init__(self):
        self.version, self.applied, self.lr_scales = 0, [], []

    def apply(self, grads, lr_scale=1.0):
        self.applied.append(grads)
        self.lr_scales.append(lr_scale)
        self.version += 1
        return True

    def reject(self, reason):
        raise AssertionError(reason)


def _result(value):
    return GradientResult([np.full(3, value, np.float32)], {"steps": 8.0, "loss": 0.0}, [])


@pytest.mark.unit
def test_sync_waits_for_every_host_as_hosts_come_and_go():
    store = _Store()
    rule = SyncUpdates(
        store,
        Recorder(Progress(), time.monotonic(), lambda: store.version, lambda: None, 0),
        2,
        4,
        follow_hosts=True,
    )
    assert rule.on_result("a", _result(1.0), 0) == []
    assert rule.resize(3) == []  # a host joined: the update waits for its gradient too
    assert rule.on_result("b", _result(2.0), 0) == []
    assert rule.resize(2) == ["a", "b"]  # one left before it answered: the two are enough
    np.testing.assert_allclose(store.applied[0][0], 1.5)
    fixed = SyncUpdates(store, rule.recorder, 2, 4, follow_hosts=False)
    fixed.resize(1)
    assert fixed.k == 1  # sync-gradients given: capped by the hosts there are,
    fixed.resize(5)
    assert fixed.k == 2  # and back to it when hosts return


@pytest.mark.unit
def test_sync_k_of_n_gives_a_straggler_work_at_once_and_its_gradient_to_the_next_update():
    store = _Store()
    rule = SyncUpdates(
        store,
        Recorder(Progress(), time.monotonic(), lambda: store.version, lambda: None, 0),
        2,
        4,
        follow_hosts=False,
    )
    rule.resize(3)  # K = 2 of N = 3
    assert rule.on_result("a", _result(1.0), 0) == []
    assert rule.on_result("b", _result(3.0), 0) == ["a", "b"]  # update 1, without c
    assert rule.on_result("c", _result(5.0), 0) == ["c"]  # late: plays on, on version 1
    assert len(store.applied) == 1  # c's gradient waits for the next update
    assert rule.on_result("a", _result(2.0), 1) == ["a"]  # update 2: c's and a's
    # weighted by steps (equal) times 1 / (1 + staleness): c's by 1/2, a's by 1
    np.testing.assert_allclose(store.applied[1][0], (0.5 * 5.0 + 2.0) / 1.5)


@pytest.mark.unit
@pytest.mark.parametrize(
    "damping, scales",
    [
        ("staleness", [1.0, 1 / 4, 1 / 5, 1 / 3]),  # 1 / (1 + staleness)
        ("excess", [1.0, 1.0, 1 / 2, 1 / 2]),  # only what is older than H - 1 versions
    ],
)
def test_async_damps_a_gradient_by_its_staleness_or_by_what_the_hosts_do_not_explain(
    damping, scales
):
    store = _Store()
    recorder = Recorder(Progress(), time.monotonic(), lambda: store.version, lambda: None, 0)
    rule = AsyncUpdates(store, recorder, max_staleness=8, n_hosts=4, damping=damping)
    assert rule.on_result("a", _result(1.0), 0) == ["a"]  # fresh
    store.version = 3
    rule.on_result("b", _result(1.0), 0)  # 3 versions old: what 4 hosts make anyway
    store.version = 5
    rule.on_result("c", _result(1.0), 1)  # 4 old: 1 more than four hosts explain
    assert rule.resize(2) == []  # two hosts left: they make 1 version of lag, not 3
    store.version = 7
    rule.on_result("a", _result(1.0), 5)  # 2 old: 1 more than two hosts explain
    np.testing.assert_allclose(store.lr_scales, scales)
    strict = AsyncUpdates(store, recorder, max_staleness=1, n_hosts=4, damping=damping)
    applied = len(store.applied)
    store.version = 12
    strict.on_result("a", _result(1.0), 8)  # 4 old: 1 beyond four hosts' 3
    store.version = 13
    strict.on_result("b", _result(1.0), 8)  # 5 old: 2 beyond
    kept = {"staleness": 0, "excess": 1}[damping]  # the limit counts what the rule damps
    assert len(store.applied) - applied == kept
    assert recorder.progress.dropped_stale == 2 - kept
    with pytest.raises(ConfigError, match="async-lr-damping"):
        AsyncUpdates(store, recorder, 8, damping="none")


@pytest.mark.unit
def test_async_combine_makes_one_step_of_the_gradients_that_arrived_together():
    store = _Store()
    recorder = Recorder(Progress(), time.monotonic(), lambda: store.version, lambda: None, 0)
    rule = AsyncUpdates(store, recorder, 8, n_hosts=4, damping="staleness", combine="sqrt")
    together = [("a", _result(1.0), 0), ("b", _result(3.0), 0), ("c", _result(5.0), 0)]
    assert rule.on_results(together) == ["a", "b", "c"]
    assert len(store.applied) == 1 and recorder.progress.updates == 1
    np.testing.assert_allclose(store.applied[0][0], 3.0)  # the per-step average
    np.testing.assert_allclose(store.lr_scales, [np.sqrt(3)])
    rule.on_results([("a", _result(2.0), 1)])  # alone: an ordinary async step
    rule.on_results([("b", _result(1.0), 2), ("c", _result(5.0), 0)])  # c: 2 versions old
    np.testing.assert_allclose(store.applied[2][0], (1.0 + 5.0 / 3) / (1 + 1 / 3))
    np.testing.assert_allclose(store.lr_scales, [np.sqrt(3), 1.0, np.sqrt(2) * (1 + 1 / 3) / 2])
    one_by_one = AsyncUpdates(store, recorder, 8, n_hosts=4, damping="staleness")
    store.version, store.lr_scales = 10, []
    one_by_one.on_results([("a", _result(1.0), 10), ("b", _result(1.0), 10)])
    np.testing.assert_allclose(store.lr_scales, [1.0, 1 / 2])  # b counts a's step


@pytest.mark.slow
@pytest.mark.cluster
def test_an_elastic_run_grows_onto_a_worker_that_joins_and_outlives_one_retired(sc2path):
    """The rollout cut by the retirement is dropped uncounted; sync's update then waits
    for one host's gradient instead of two."""
    with (
        local_cluster(n_workers=1, sc2_per_worker=1) as cluster,
        Client(cluster, direct_to_workers=True) as client,
    ):
        run = train(
            client=client,
            mode="sync",
            envs=1,
            envs_max=2,
            max_steps=10**7,
            rollout_steps=8,
            agent_overrides=TINY,
        )
        try:
            wait_until(lambda: run.progress.updates >= 2 or not run.running, 300, "2 updates")
            first = set(sc2_capacity(client))
            cluster.scale(2)
            wait_until(lambda: run.pool.n_envs == 2 or not run.running, 120, "a second host")
            assert {p.worker for p in run.pool.placements} - first, "the new worker got none"
            retired = run.pool.placements[0].worker
            run.retire_workers([retired])  # its host closes first: dask then retires it
            assert retired not in sc2_capacity(client)
            assert run.pool.n_envs == 1 and retired not in {p.worker for p in run.pool.placements}
            after = run.progress.agent_steps
            wait_until(
                lambda: run.progress.agent_steps > after + 32 or not run.running,
                300,
                "training after the retirement",
            )
        finally:
            run.stop()
            summary = run.wait(timeout=300)
    assert summary["updates"] > 2 and summary["rejected_gradients"] == 0, summary


@pytest.mark.cluster
def test_sc2_adaptive_asks_for_the_workers_the_envs_need(sc2path):
    with local_cluster(n_workers=1, sc2_per_worker=2) as cluster, Client(cluster) as client:
        cluster.adapt(
            Adaptive=SC2Adaptive, envs=5, minimum=1, maximum=4, interval="200ms", wait_count=1
        )
        wait_until(lambda: len(sc2_capacity(client)) == 3, 120, "3 workers for 5 envs")
        assert sum(sc2_capacity(client).values()) == 6
        time.sleep(2)  # and it stays there, though no task is running
        assert len(sc2_capacity(client)) == 3
    with pytest.raises(ConfigError, match="envs >= 1"):
        SC2Adaptive(None, envs=0)
