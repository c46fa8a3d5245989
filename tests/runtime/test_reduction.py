"""The tree reduction: held gradients summed up a tree of real Dask actors on two workers,
and sync training through it on a real cluster with the emulator."""

import numpy as np
import pytest

from sc2dask import train
from sc2dask.runtime.reduction import KEPT, TreeReducer, weighted_sum
from sc2dask.training.reduction import ReductionFailed, plan_tree, reduce_on_workers

TINY = dict(action_set="move", screen=16, minimap=16)


class Holder(TreeReducer):
    """The tree reduction's part of an env host, with nothing else."""


def _depth(tree) -> int:
    return 1 + max((_depth(child) for child in tree.children), default=0)


@pytest.mark.unit
def test_the_tree_is_binary_rooted_at_the_first_part_and_log2_deep():
    tree = plan_tree([(f"host{i}", i, 1.0) for i in range(9)])
    assert tree.host == "host0" and [c.host for c in tree.children] == ["host1", "host2"]
    assert _depth(tree) == 4  # 9 parts: 1 + 2 + 4 + 2
    assert _depth(plan_tree([("only", 0, 1.0)])) == 1


@pytest.mark.unit
def test_a_host_keeps_its_newest_gradients_and_the_weighted_sum_is_float32():
    host = Holder()
    for version in range(KEPT + 2):
        host.hold(version, [np.full(3, version, np.float32)])
    assert sorted(host._held) == list(range(2, KEPT + 2))
    total = weighted_sum([np.ones(2, np.float32)], 0.5, [[np.full(2, 2.0, np.float32)]])
    assert total[0].dtype == np.float32 and np.allclose(total[0], 2.5)


@pytest.mark.cluster
def test_actors_on_two_workers_sum_their_held_gradients_up_the_tree(client):
    """Seven actors spread over both workers, each holding gradients of two arrays: the
    root's answer is the weighted sum a client would have computed."""
    rng = np.random.default_rng(0)
    workers = list(client.scheduler_info()["workers"])
    actors = [
        client.submit(Holder, actor=True, workers=[workers[i % 2]]).result() for i in range(7)
    ]
    grads = [[rng.standard_normal((4, 3)), rng.standard_normal(5)] for _ in actors]
    grads = [[g.astype(np.float32) for g in pair] for pair in grads]
    for i, (actor, pair) in enumerate(zip(actors, grads)):
        assert actor.hold(10 + i, pair).result().version == 10 + i
    weights = rng.dirichlet(np.ones(len(actors)))
    parts = [(a, 10 + i, float(w)) for i, (a, w) in enumerate(zip(actors, weights))]
    total = reduce_on_workers(parts, timeout=60)
    for j in range(2):
        expected = sum(w * pair[j] for w, pair in zip(weights, grads))
        np.testing.assert_allclose(total[j], expected, rtol=1e-5, atol=1e-6)
    # each held gradient is taken once: asking again names the host and the version
    with pytest.raises(ReductionFailed, match=r"host on tcp://.* holds no gradients of v1\d"):
        reduce_on_workers(parts, timeout=60)


@pytest.mark.cluster
@pytest.mark.slow
@pytest.mark.usefixtures("sc2path")
def test_sync_training_through_the_tree_takes_in_one_sum_per_update(client):
    """Two hosts, two gradients an update: the client takes in one sum instead of two, and
    with one gradient of two per update a straggler's held gradient (older than the one
    its host holds next) still joins the next update."""
    back = {}
    for reduce in ("client", "tree"):
        summary = train(
            client=client, mode="sync", envs=2, max_steps=256, sync_reduce=reduce,
            agent_overrides=TINY,
        ).wait(timeout=600)  # fmt: skip
        assert summary["agent_steps"] >= 256 and summary["updates"] == summary["version"] > 0
        assert summary["rejected_gradients"] == 0, reduce
        back[reduce] = summary["bytes_from_hosts"] / summary["updates"]
    assert back["tree"] == pytest.approx(back["client"] / 2, rel=0.05), back
    run = train(
        client=client, mode="sync", envs=2, max_steps=512, sync_reduce="tree",
        sync_gradients=1, max_staleness=1000, agent_overrides=TINY,
    )  # fmt: skip
    summary = run.wait(timeout=600)
    staleness = [row["staleness"] for row in run.progress.history]
    assert max(staleness) >= 1 and summary["rejected_gradients"] == 0
    assert summary["updates"] == len(staleness) and summary["dropped_stale_gradients"] == 0
