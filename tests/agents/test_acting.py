"""Sampling actions from the policy: only available ones, and only calls the game accepts."""

import numpy as np
import pytest

from sc2dask.agents.a2c import A2CConfig, Policy
from sc2dask.game.pysc2lib import actions
from tests.agents.a2c_helpers import _env, _obs_spec

pytestmark = pytest.mark.usefixtures("sc2path")


@pytest.mark.unit
def test_sampling_respects_available_actions():
    policy = Policy(A2CConfig(action_set="minigames", screen=16, minimap=16), _obs_spec(16, 16))
    rng = np.random.default_rng(0)
    n = len(policy.action_set.function_ids)
    batch = {
        k: rng.integers(0, 4, (64, *s.shape)).astype(s.dtype)
        for k, s in policy.encoder.spec().items()
    }
    batch["available"] = rng.random((64, n)) < 0.3
    batch["available"][:, 0] = True  # no_op, as in the game
    for _ in range(20):
        chosen, behaviour, calls, _ = policy.act(batch, rng)
        assert batch["available"][np.arange(64), chosen["function"]].all()
        assert behaviour["value"].shape == behaviour["log_prob"].shape == (64,)
        assert (behaviour["log_prob"] <= 0).all() and np.isfinite(behaviour["log_prob"]).all()
        for head, size in policy.action_set.heads.items():
            assert chosen[head].dtype == np.int32 and (0 <= chosen[head]).all()
            assert (chosen[head] < size).all()
    batch["available"][:] = False
    with pytest.raises(ValueError, match="available"):
        policy.act(batch, rng)


def test_sampled_actions_play_in_the_game():
    """Every sampled call is one the game accepts, on a rectangular screen."""
    config = A2CConfig(action_set="minigames", screen=(24, 16), minimap=16)
    env = _env(config, map_name="DefeatRoaches")
    try:
        policy = Policy(config, env.observation_spec()[0])
        rng = np.random.default_rng(1)
        timestep = env.reset()[0]
        used = set()
        for _ in range(40):
            chosen, _, calls, _ = policy.act([timestep.observation], rng)
            call = calls[0]
            assert call.function in timestep.observation["available_actions"]
            function = actions.FUNCTIONS[call.function]
            for arg, value in zip(function.args, call.arguments):
                bounds = {"screen": (24, 16), "screen2": (24, 16), "minimap": (16, 16)}.get(
                    arg.name, arg.sizes
                )
                assert all(0 <= v < b for v, b in zip(value, bounds)), (function, value)
            used.add(call.function)
            timestep = env.step(calls)[0]
            if timestep.last():
                timestep = env.reset()[0]
        assert len(used) >= 3
    finally:
        env.close()
