"""The relational agent (sc2dask/agents/relational.py, relational_a2c.py) on fake observation
specs: its outputs match FullyConv's, it learns through the A2C learner, and its attention
relates cells that FullyConv's convs cannot."""

import dataclasses
import pickle

import numpy as np
import pytest

from sc2dask.agents.a2c import Policy
from sc2dask.agents.loading import agent_spec, build_agent
from sc2dask.agents.relational import build_relational
from sc2dask.agents.relational_a2c import RelationalA2C, RelationalConfig
from sc2dask.agents.spaces import ObservationEncoder
from sc2dask.core import Trajectory
from sc2dask.errors import ConfigError
from sc2dask.settings import AgentSettings, load
from tests.agents.a2c_helpers import _obs_spec

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("sc2path")]

PATH = "sc2dask.agents.relational_a2c:RelationalA2C"
MOVE_16 = RelationalConfig(action_set="move", screen=16, minimap=16)


def _observations(policy, n, seed=0):
    """n random encoded observations, every function available."""
    rng = np.random.default_rng(seed)
    batch = {
        k: rng.integers(0, 2, (n, *s.shape)).astype(s.dtype)
        for k, s in policy.encoder.spec().items()
    }
    batch["available"][:] = True
    return batch


def _trajectory(policy, steps=8, seed=0):
    """A trajectory of ``steps`` actions sampled by ``policy``, ending the episode."""
    observations = _observations(policy, steps + 1, seed)
    rng = np.random.default_rng(seed)
    chosen, behaviour, _, _ = policy.act({k: v[:steps] for k, v in observations.items()}, rng)
    return Trajectory(
        observations=observations,
        actions=chosen,
        rewards=(np.arange(steps) % 3 == 0).astype(np.float32),
        terminal=np.arange(steps) == steps - 1,
        version=0,
        log_probs=behaviour["log_prob"],
    )


@pytest.mark.parametrize("screen", [16, 32])
def test_outputs_are_fullyconvs_heads_at_every_screen_size(screen):
    config = RelationalConfig(action_set="minigames", screen=screen, minimap=screen)
    encoder = ObservationEncoder(_obs_spec(screen, screen), config)
    model = build_relational(encoder.spec(), encoder.action_set, config)
    batch = {k: np.zeros((3, *s.shape), s.dtype) for k, s in encoder.spec().items()}
    outputs = model({k: batch[k] for k in ("screen", "minimap", "player")})
    assert set(outputs) == {*encoder.action_set.heads, "value"}
    for head, n in encoder.action_set.heads.items():
        assert tuple(outputs[head].shape) == (3, n), head
        assert outputs[head].numpy().dtype == np.float32, head
    assert tuple(outputs["value"].shape) == (3,)
    # attention runs on the entity grid, not on every pixel
    entities = model.get_layer("entities").output.shape  # the cells, x and y
    assert tuple(entities) == (None, 8 * 8, config.conv_filters[-1] + 2)


def test_head_weights_are_the_logits_and_the_value_layers():
    policy = RelationalA2C(dataclasses.replace(MOVE_16, action_set="minigames")).make_policy(
        _obs_spec(16, 16)
    )
    heads = {w.path.split("/")[0] for w, h in zip(policy.model.weights, policy.head_weights()) if h}
    assert heads == {f"{h}_logits" for h in policy.action_set.heads} | {"value_dense"}
    assert 0 < sum(policy.head_weights()) < len(policy.get_weights())


def test_gradients_reach_every_layer_and_a_step_changes_the_weights():
    learner = RelationalA2C(MOVE_16).make_learner(_obs_spec(16, 16))
    grads, metrics = learner.compute_gradients([_trajectory(learner.policy)])
    assert np.isfinite(metrics["loss"]) and all(np.isfinite(g).all() for g in grads)
    variables = learner.model.trainable_variables
    silent = [v.path for g, v in zip(grads, variables) if not np.abs(g).sum() > 0]
    assert not silent, f"no gradient reaches {silent}"
    assert any(v.path.startswith("attention1_query") for v in variables)
    before = learner.get_weights()
    learner.apply_gradients(grads)
    after = learner.get_weights()
    assert all(not np.array_equal(a, b) for a, b in zip(before, after))


def test_weights_round_trip_through_config_and_arrays():
    """What crosses the network: (config, obs_spec) and arrays; the agent rebuilds the rest."""
    policy = RelationalA2C(MOVE_16).make_policy(_obs_spec(16, 16))
    policy.set_weights([w + 0.01 for w in policy.get_weights()])  # not the initial ones
    config, obs_spec, weights = pickle.loads(
        pickle.dumps((policy.config, policy.obs_spec, policy.get_weights()))
    )
    other = RelationalA2C(config).make_policy(obs_spec)
    assert not np.array_equal(policy.get_weights()[0], other.get_weights()[0])
    other.set_weights(weights)
    batch = _observations(policy, 3)
    np.testing.assert_array_equal(policy.value(batch), other.value(batch))
    # same config, same initial weights; FullyConv's weights do not fit
    fresh = [RelationalA2C(MOVE_16).make_policy(_obs_spec(16, 16)) for _ in range(2)]
    for a, b in zip(fresh[0].get_weights(), fresh[1].get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="another config"):
        Policy(MOVE_16, _obs_spec(16, 16)).set_weights(weights)


def test_the_loss_on_a_fixed_batch_falls():
    learner = RelationalA2C(
        dataclasses.replace(MOVE_16, learning_rate=1e-3, normalize_advantages=True)
    ).make_learner(_obs_spec(16, 16))
    trajectory = _trajectory(learner.policy)
    losses, value_losses = [], []
    for _ in range(20):
        grads, metrics = learner.compute_gradients([trajectory])
        learner.apply_gradients(grads)
        losses.append(metrics["loss"])
        value_losses.append(metrics["value_loss"])
    assert max(losses[-5:]) < 0.5 * losses[0], losses
    assert max(value_losses[-5:]) < 0.2 * value_losses[0], value_losses


def test_attention_relates_far_cells_that_fullyconv_does_not():
    """A change at the far corner moves the screen logit of cell (0, 0) through attention;
    without attention blocks, as in FullyConv, that logit sees only nearby cells."""
    config = RelationalConfig(action_set="move", screen=32, minimap=32)
    no_attention = dataclasses.replace(config, attention_blocks=0)
    spec = _obs_spec(32, 32)
    policies = {
        "relational": RelationalA2C(config).make_policy(spec),
        "no attention": RelationalA2C(no_attention).make_policy(spec),
        "fullyconv": Policy(config, spec),
    }
    batch = _observations(policies["fullyconv"], 1)
    far = {k: v.copy() for k, v in batch.items()}
    far["screen"][0, :, 31, 31] = 1 - far["screen"][0, :, 31, 31]
    corner = {}
    for name, policy in policies.items():
        kernel = policy.model.get_layer("screen_logits").kernel
        # weights of order 1 rather than the near-uniform policy's 0.01
        kernel.assign(np.random.default_rng(0).normal(size=kernel.shape).astype("float32"))
        logits = [policy.forward(policy._inputs(b))["screen"].numpy()[0, 0] for b in (batch, far)]
        corner[name] = abs(logits[1] - logits[0])
    assert corner["relational"] > 1e-4, corner
    assert corner["no attention"] == 0 and corner["fullyconv"] == 0, corner


def test_mixed_precision_keeps_logits_float32_and_gradients_finite():
    config = dataclasses.replace(MOVE_16, precision="mixed_float16")
    learner = RelationalA2C(config).make_learner(_obs_spec(16, 16))
    assert learner.model.get_layer("attention0_query").compute_dtype == "float16"
    assert learner.model.get_layer("screen_logits").compute_dtype == "float32"
    grads, metrics = learner.compute_gradients([_trajectory(learner.policy)])
    assert np.isfinite(metrics["loss"]) and all(np.isfinite(g).all() for g in grads)


def test_a_run_builds_it_by_class_path_with_its_settings():
    settings = load(AgentSettings, {"agent_class": PATH, "screen": 16, "minimap": 16}).values
    spec = agent_spec(PATH, settings, seed=3)
    agent = build_agent(spec)
    assert isinstance(agent, RelationalA2C)
    assert (agent.config.screen, agent.config.seed) == (16, 3)
    assert agent.config.screen_layers == settings.screen_layers
    assert agent.config.entity_grid == RelationalConfig.entity_grid


def test_bad_shapes_are_refused_with_the_field_named():
    with pytest.raises(ConfigError, match="entity_grid must be at least 1"):
        RelationalConfig(entity_grid=0)
    with pytest.raises(ConfigError, match="attention_heads"):
        RelationalConfig(attention_heads=0)
    assert RelationalConfig(attention_blocks=0).attention_blocks == 0
