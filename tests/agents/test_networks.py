"""The FullyConv network (sc2dask/agents/fullyconv.py) as the policy and learner build it,
with real TensorFlow: sizes, weights in and out, mixed precision and the loss scale."""

import dataclasses
import pickle

import numpy as np
import pytest

from sc2dask.agents.a2c import A2CConfig, Learner, LossScale, Policy
from sc2dask.agents.fullyconv import build_fullyconv
from sc2dask.agents.spaces import ObservationEncoder
from sc2dask.core import Trajectory
from sc2dask.errors import ConfigError
from tests.agents.a2c_helpers import MOVE_16, _obs_spec

pytestmark = pytest.mark.usefixtures("sc2path")


@pytest.mark.unit
def test_model_stays_small_at_every_resolution():
    sizes = {}
    for screen, minimap, action_set in [
        (16, 16, "minigames"),
        (32, 32, "minigames"),
        (64, 64, "minigames"),
        ((64, 48), 32, "minigames"),
        (64, 64, "all"),
    ]:
        config = A2CConfig(action_set=action_set, screen=screen, minimap=minimap)
        encoder = ObservationEncoder(_obs_spec(screen, minimap), config)
        model = build_fullyconv(encoder.spec(), encoder.action_set, config)
        sizes[screen, minimap, action_set] = sum(w.nbytes for w in model.get_weights())
        batch = {k: np.zeros((2, *s.shape), s.dtype) for k, s in encoder.spec().items()}
        outputs = model({k: batch[k] for k in ("screen", "minimap", "player")})
        for head, n in encoder.action_set.heads.items():
            assert tuple(outputs[head].shape) == (2, n), head
        assert tuple(outputs["value"].shape) == (2,)
    assert all(size < 8e6 for size in sizes.values()), sizes


@pytest.mark.unit
def test_policy_rebuilds_from_config_and_weights():
    """What crosses the network: (config, obs_spec) and a list of arrays, never the model."""
    spec = _obs_spec(16, 16)
    policy = Policy(MOVE_16, spec)
    config, obs_spec, weights = pickle.loads(
        pickle.dumps((policy.config, policy.obs_spec, policy.get_weights()))
    )
    other = Policy(config, obs_spec)
    other.set_weights(weights)
    batch = {k: np.ones((3, *s.shape), s.dtype) for k, s in policy.encoder.spec().items()}
    np.testing.assert_array_equal(policy.value(batch), other.value(batch))


@pytest.mark.unit
def test_weights_read_are_a_copy_that_later_updates_leave_alone():
    """Hosts and the parameter store keep what ``get_weights`` returns (to send, to diff):
    an Adam step or a load into the model must not change it, nor it the model."""
    learner = Learner(MOVE_16, _obs_spec(16, 16))
    before = learner.get_weights()
    kept = [w.copy() for w in before]
    learner.apply_gradients([np.ones(w.shape, np.float32) for w in before])
    after = learner.get_weights()
    assert any(not np.array_equal(a, b) for a, b in zip(after, kept)), "the step moved nothing"
    for w, k in zip(before, kept):
        np.testing.assert_array_equal(w, k)
    before[0][...] = 7.0  # a caller's own array
    assert not np.array_equal(learner.get_weights()[0], before[0])
    learner.set_weights(kept)
    kept_now = [k.copy() for k in kept]
    kept[0][...] = 3.0  # the arrays a caller loaded stay the caller's
    for w, k in zip(learner.get_weights(), kept_now):
        np.testing.assert_array_equal(w, k)


@pytest.mark.unit
def test_set_weights_of_another_shape_names_the_weight():
    policy = Policy(MOVE_16, _obs_spec(16, 16))
    weights = policy.get_weights()
    with pytest.raises(ValueError, match="weight arrays for a model of"):
        policy.set_weights(weights[:-1])
    weights[0] = np.zeros((1, 2, 3), np.float32)
    with pytest.raises(ValueError, match="another config"):
        policy.set_weights(weights)


@pytest.mark.unit
def test_without_minimap_layers_the_model_has_no_minimap_tower():
    """MoveToBeacon's default: the camera sees the whole map, so the minimap adds cost only."""
    config = dataclasses.replace(
        MOVE_16, screen_layers=("player_relative", "selected"), minimap_layers=()
    )
    learner = Learner(config, _obs_spec(16, 16))
    spec = learner.policy.encoder.spec()
    assert "minimap" not in spec and spec["screen"].shape == (2, 16, 16)
    assert not [w for w in learner.model.weights if "minimap" in w.path]
    assert len(learner.model.weights) < len(Learner(MOVE_16, _obs_spec(16, 16)).model.weights)
    rng = np.random.default_rng(0)
    observations = {k: np.ones((4, *s.shape), s.dtype) for k, s in spec.items()}
    chosen, behaviour, _, _ = learner.policy.act({k: v[:3] for k, v in observations.items()}, rng)
    trajectory = Trajectory(
        observations=observations,
        actions={k: v for k, v in chosen.items()},
        rewards=np.array([0, 1, 0], np.float32),
        terminal=np.zeros(3, bool),
        version=0,
    )
    grads, metrics = learner.compute_gradients([trajectory])
    assert np.isfinite(metrics["loss"]) and any(np.abs(g).sum() > 0 for g in grads)
    with pytest.raises(ConfigError, match="minimap-layers cannot be empty"):
        ObservationEncoder(_obs_spec(16, 16), dataclasses.replace(config, action_set="minigames"))
    with pytest.raises(ConfigError, match="Unknown feature layer 'beacon'"):
        ObservationEncoder(
            _obs_spec(16, 16), dataclasses.replace(config, screen_layers=("beacon",))
        )


@pytest.mark.unit
@pytest.mark.parametrize("precision", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_computes_the_body_in_half_and_keeps_outputs_float32(precision):
    config = dataclasses.replace(MOVE_16, precision=precision)
    learner = Learner(config, _obs_spec(16, 16))
    half = precision.removeprefix("mixed_")
    assert learner.model.get_layer("screen_conv0").compute_dtype == half
    assert learner.model.get_layer("screen_logits").compute_dtype == "float32"
    assert all(v.dtype == "float32" for v in learner.model.trainable_variables)
    rng = np.random.default_rng(0)
    observations = {
        k: rng.integers(0, 2, (9, *s.shape)).astype(s.dtype)
        for k, s in learner.policy.encoder.spec().items()
    }
    observations["available"][:] = True
    chosen, behaviour, _, _ = learner.policy.act({k: v[:8] for k, v in observations.items()}, rng)
    assert behaviour["value"].dtype == np.float32 and np.isfinite(behaviour["log_prob"]).all()
    trajectory = Trajectory(
        observations=observations,
        actions=chosen,
        rewards=rng.random(8).astype(np.float32),
        terminal=np.zeros(8, bool),
        version=0,
    )
    grads, metrics = learner.compute_gradients([trajectory])
    assert np.isfinite(metrics["loss"]) and all(np.isfinite(g).all() for g in grads)
    assert learner.loss_scale.value == (2.0**15 if half == "float16" else 1.0)
    before = learner.get_weights()
    learner.apply_gradients(grads)
    assert any(not np.array_equal(a, b) for a, b in zip(before, learner.get_weights()))


@pytest.mark.unit
def test_dynamic_loss_scale_halves_on_overflow_and_grows_after_finite_steps():
    scale = LossScale(dynamic=True)
    assert scale.update(finite=False) is False and scale.value == 2.0**14
    for _ in range(LossScale.GROWTH_STEPS):
        assert scale.update(finite=True)
    assert scale.value == 2.0**15
    fixed = LossScale(dynamic=False)
    assert fixed.update(finite=False) and fixed.value == 1.0  # rejected later, not retried


@pytest.mark.unit
def test_the_network_has_the_filters_kernels_and_dense_grid_of_its_settings():
    small = Policy(
        dataclasses.replace(MOVE_16, conv_filters=(8, 12), dense_grid=4), _obs_spec(16, 16)
    ).model
    assert small.get_layer("screen_conv0").kernel.shape[-1] == 8
    assert small.get_layer("screen_conv1").kernel.shape[-1] == 12
    # 16 -> 8 -> 4 cells a side, then the dense layer reads 4 * 4 cells of 12 and the player
    assert small.get_layer("dense").kernel.shape[0] == 4 * 4 * 12 + 11
    default = Policy(MOVE_16, _obs_spec(16, 16)).model
    assert default.get_layer("dense").kernel.shape[0] == 8 * 8 * 32 + 11
    assert default.get_layer("screen_conv0").kernel.shape[:2] == (5, 5)
    three = Policy(dataclasses.replace(MOVE_16, conv_kernels=(3, 1)), _obs_spec(16, 16)).model
    assert three.get_layer("screen_conv0").kernel.shape[:2] == (3, 3)
    assert three.get_layer("screen_conv1").kernel.shape[:2] == (1, 1)


@pytest.mark.unit
@pytest.mark.parametrize(
    "dilations, far_cell_seen", [((), False), ((3, 3), False), ((2, 4, 8), True)]
)
def test_spatial_dilations_let_a_clicks_logit_see_far_cells(dilations, far_cell_seen):
    """A cell's click logit reads the 7x7 cells around it through the tower's 5x5 and 3x3
    convs; each dilation rate r widens it by r cells each way (3, 3: 9; 2, 4, 8: 17)."""
    config = dataclasses.replace(MOVE_16, spatial_dilations=dilations)
    policy = Policy(config, _obs_spec(16, 16))
    spec, rng = policy.encoder.spec(), np.random.default_rng(0)
    batch = {
        k: rng.integers(0, 2, (1, *spec[k].shape)).astype(spec[k].dtype)
        for k in ("screen", "minimap", "player")
    }
    changed = {k: v.copy() for k, v in batch.items()}
    changed["screen"][0, :, 15, 15] = 1 - changed["screen"][0, :, 15, 15]  # the far corner
    before, after = (np.asarray(policy.model(b)["screen"])[0] for b in (batch, changed))
    assert (before[0] != after[0]) == far_cell_seen  # the logit of cell (0, 0)
    assert before[-1] != after[-1]  # the changed cell's own logit, in every case
