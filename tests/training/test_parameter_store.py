"""The parameter store and the sync update rule on a real learner: the step size a sync
update takes, the snapshots hosts read, and resuming at a new learning rate."""

import dataclasses
import time

import numpy as np
import pytest

from sc2dask.agents.a2c import Learner
from sc2dask.core import GradientResult
from tests.agents.a2c_helpers import MOVE_16, _obs_spec

pytestmark = pytest.mark.usefixtures("sc2path")


def _one_sync_update(scaling: str, n_hosts: int) -> np.ndarray:
    """How far each weight moves in one sync update averaging ``n_hosts`` equal gradients."""
    from sc2dask.training.recorder import Progress, Recorder
    from sc2dask.training.store import ParameterStore
    from sc2dask.training.updates import SyncUpdates

    learner = Learner(MOVE_16, _obs_spec(16, 16))
    store = ParameterStore(learner)
    recorder = Recorder(
        Progress(),
        started=time.monotonic(),
        version=lambda: store.version,
        checkpoint=lambda: None,
        checkpoint_every=0,
    )
    rule = SyncUpdates(store, recorder, n_hosts, max_staleness=4, lr_scaling=scaling)
    before = learner.get_weights()
    rng = np.random.default_rng(0)
    grads = [rng.choice([-1e-2, 1e-2], size=w.shape).astype(np.float32) for w in before]
    for host in range(n_hosts):
        assert store.version == 0  # the update waits for every host
        rule.on_result(host, GradientResult(grads, {"steps": 16.0}, []), version=0)
    assert store.version == 1
    return np.concatenate([np.abs(a - b).ravel() for a, b in zip(learner.get_weights(), before)])


@pytest.mark.parametrize("scaling, factor", [("sqrt", np.sqrt(3)), ("linear", 3.0)])
def test_sync_lr_scaling_sizes_the_step_by_the_gradients_averaged(scaling, factor):
    """From the same weights and gradients, Adam's first step is proportional to the
    learning rate, so averaging 3 hosts' gradients moves every weight factor times as far."""
    plain = _one_sync_update("none", 3)
    assert plain.min() > 0
    np.testing.assert_allclose(_one_sync_update(scaling, 3), plain * factor, rtol=1e-4)


@pytest.mark.unit
def test_the_store_reads_each_version_once_and_shares_it_read_only():
    """Every host given work at one version gets the same arrays; an update makes new ones."""
    from sc2dask.training.store import ParameterStore

    store = ParameterStore(Learner(MOVE_16, _obs_spec(16, 16)))
    version, weights = store.snapshot()
    assert store.snapshot()[1] is weights
    assert not weights[0].flags.writeable
    assert store.apply([np.ones(w.shape, np.float32) for w in weights])
    new_version, new_weights = store.snapshot()
    assert new_version == version + 1
    assert any(not np.array_equal(a, b) for a, b in zip(new_weights, weights))
    np.testing.assert_array_equal(new_weights[0], store.learner.get_weights()[0])
    bad = [np.full(w.shape, np.nan, np.float32) for w in weights]
    assert not store.apply(bad)  # rejected: the weights, and so the snapshot, stay
    assert store.snapshot() == (new_version, new_weights)
    state = store.learner.get_optimizer_state()
    store.restore(weights, state, version=7)
    restored_version, restored = store.snapshot()
    assert restored_version == 7 and restored is not new_weights
    np.testing.assert_array_equal(restored[0], weights[0])


@pytest.mark.unit
def test_a_resumed_run_learns_at_its_own_rate_not_the_checkpoints():
    """Adam's state carries the rate it was saved with; README.md's warm-up recipe resumes
    with a new rate, which must hold for every update after the restore."""
    from sc2dask.training.store import ParameterStore

    saved = Learner(dataclasses.replace(MOVE_16, learning_rate=1e-3), _obs_spec(16, 16))
    saved.apply_gradients([np.ones(w.shape, np.float32) for w in saved.get_weights()])
    store = ParameterStore(
        Learner(dataclasses.replace(MOVE_16, learning_rate=4e-3), _obs_spec(16, 16))
    )
    store.restore(saved.get_weights(), saved.get_optimizer_state(), version=1)
    assert store.learner.optimizer.learning_rate.numpy() == pytest.approx(4e-3)
    store.apply([np.ones(w.shape, np.float32) for w in saved.get_weights()])
    assert store.learner.optimizer.learning_rate.numpy() == pytest.approx(4e-3)
