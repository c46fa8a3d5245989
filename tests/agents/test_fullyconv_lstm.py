"""FullyConv-LSTM (sc2dask/agents/fullyconv_lstm.py): its memory moves with what it sees,
and the learner, unrolling it through real rollouts' trajectories, computes what the
acting policy computed, step for step, across rollouts and episode ends."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from sc2dask.agents.a2c import log_prob_and_entropy
from sc2dask.agents.fullyconv_lstm import MEMORY
from sc2dask.agents.fullyconv_lstm_a2c import FullyConvLSTMA2C, LSTMConfig
from sc2dask.agents.loading import agent_spec, build_agent
from sc2dask.errors import ConfigError
from sc2dask.game import EnvConfig
from sc2dask.runtime.rollout import play_batch
from sc2dask.runtime.slot import EnvSlot
from sc2dask.settings import AgentSettings, load
from tests.agents.a2c_helpers import _obs_spec

pytestmark = pytest.mark.usefixtures("sc2path")

PATH = "sc2dask.agents.fullyconv_lstm_a2c:FullyConvLSTMA2C"
SMALL = LSTMConfig(action_set="move", screen=16, minimap=16, lstm_units=16)


@pytest.mark.unit
def test_the_memory_starts_at_zero_and_moves_with_what_it_sees():
    policy = FullyConvLSTMA2C(SMALL).make_policy(_obs_spec(16, 16))
    start = policy.initial_state(2)
    assert {k: v.shape for k, v in start.items()} == {k: (2, 16) for k in MEMORY}
    assert not any(v.any() for v in start.values())
    batch = {
        k: np.zeros((2, *s.shape), s.dtype) for k, s in policy.encoder.spec().items()
    }  # fmt: skip
    batch["available"][:] = True
    batch["screen"][1] = 1  # the second env sees something else
    _, _, _, after = policy.act(batch, np.random.default_rng(0), start)
    assert set(after) == set(MEMORY)
    assert all(v.any() for v in after.values())
    assert not np.allclose(after["memory_h"][0], after["memory_h"][1])
    _, again, _, later = policy.act(batch, np.random.default_rng(0), after)
    assert not np.allclose(later["memory_h"], after["memory_h"])  # it carries on


@pytest.mark.unit
def test_lstm_units_below_one_are_refused():
    with pytest.raises(ConfigError, match="lstm_units must be at least 1"):
        dataclasses.replace(SMALL, lstm_units=0)


def test_the_learner_unrolls_real_rollouts_as_the_policy_acted():
    # step_mul 120: a MoveToBeacon episode (1,920 game loops) is 16 agent steps, so three
    # rollouts of 6 steps cross an episode end, and each later rollout starts mid-episode.
    env = EnvConfig(screen=16, minimap=16, step_mul=120)
    overrides = {"screen": 16, "minimap": 16}
    settings = load(AgentSettings, overrides, map_name="MoveToBeacon").values
    agent = build_agent(agent_spec(PATH, settings))
    slots = [EnvSlot(env, seed=s) for s in (1, 2)]
    obs_spec = {k: tuple(v) for k, v in slots[0].ensure().observation_spec()[0].items()}
    policy, learner = agent.make_policy(obs_spec), agent.make_learner(obs_spec)
    learner.set_weights(policy.get_weights())
    rng = np.random.default_rng(0)
    try:
        trajectories = [t for v in range(3) for t in play_batch(slots, policy, v, 6, rng)]
    finally:
        for slot in slots:
            slot.close()
    assert sum(t.terminal.sum() for t in trajectories) == 2  # each env ended one episode
    assert any(np.any(t.initial_state["memory_h"]) for t in trajectories)  # carried over
    rows = {k: tf.convert_to_tensor(v) for k, v in learner._rows(trajectories).items()}
    outputs = learner._outputs(rows)
    starts = np.cumsum([0] + [len(t) + 1 for t in trajectories])[:-1]
    steps = np.concatenate([s + np.arange(len(t)) for s, t in zip(starts, trajectories)])
    values = tf.gather(outputs["value"], steps).numpy()
    acted = np.concatenate([t.extras["value"] for t in trajectories])
    np.testing.assert_allclose(values, acted, rtol=1e-4, atol=1e-5)
    actions = {
        h: np.concatenate([t.actions[h] for t in trajectories]) for h in policy.action_set.heads
    }
    log_prob, _ = log_prob_and_entropy(
        {k: tf.gather(v, steps) for k, v in outputs.items()},
        actions,
        tf.gather(rows["available"], steps),
        tf.constant(policy.action_set.uses),
        policy.action_set.argument_heads,
    )
    behaviour = np.concatenate([t.log_probs for t in trajectories])
    np.testing.assert_allclose(log_prob.numpy(), behaviour, rtol=1e-4, atol=1e-4)
    # and the gradient reaches the memory's weights
    grads, metrics = learner.compute_gradients(trajectories)
    lstm = [
        g for g, v in zip(grads, learner.model.trainable_variables) if v.path.startswith("lstm")
    ]
    assert lstm and all(np.abs(g).sum() > 0 for g in lstm)
    assert metrics["clip_fraction"] == 0.0  # the same weights: every ratio is 1
