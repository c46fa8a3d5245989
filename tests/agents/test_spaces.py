"""Observation encoding and action sets (sc2dask/agents/spaces.py) against real pysc2 envs
on the emulator."""

import numpy as np
import pytest

from sc2dask.agents.a2c import A2CConfig
from sc2dask.agents.spaces import ACTION_SETS, ActionSet, ObservationEncoder
from sc2dask.errors import ConfigError
from sc2dask.game.pysc2lib import actions
from tests.agents.a2c_helpers import MOVE_16, _env, _obs_spec

pytestmark = pytest.mark.usefixtures("sc2path")


@pytest.mark.parametrize("screen,minimap", [(16, 16), ((32, 24), (20, 12))])
def test_encoder_matches_the_env(screen, minimap):
    config = A2CConfig(action_set="minigames", screen=screen, minimap=minimap)
    env = _env(config)
    try:
        obs_spec = env.observation_spec()[0]
        encoder = ObservationEncoder(obs_spec, config)
        spec = encoder.spec()
        _, sh, sw = obs_spec["feature_screen"]
        _, mh, mw = obs_spec["feature_minimap"]
        assert spec["screen"].shape == (len(config.screen_layers), sh, sw)
        assert spec["minimap"].shape == (len(config.minimap_layers), mh, mw)
        assert spec["player"].shape == (11,)
        assert spec["available"].shape == (len(ACTION_SETS["minigames"]),)
        assert spec["screen"].dtype == np.int16  # unit_type does not fit in uint8
        assert spec["minimap"].dtype == np.uint8
        timestep = env.reset()[0]
        for _ in range(3):
            encoded = encoder.encode(timestep.observation)
            for key, s in spec.items():
                assert encoded[key].shape == s.shape and encoded[key].dtype == s.dtype, key
            allowed = set(timestep.observation["available_actions"])
            assert set(encoder.action_set.function_ids[encoded["available"]]) == (
                allowed & set(encoder.action_set.function_ids)
            )
            screen_layers = timestep.observation["feature_screen"]
            np.testing.assert_array_equal(encoded["screen"][0], screen_layers.player_relative)
            np.testing.assert_array_equal(encoded["screen"][2], screen_layers.unit_type)
            timestep = env.step([actions.FUNCTIONS.select_army("select")])[0]
        batch = encoder.encode_batch([timestep.observation] * 3)
        assert batch["screen"].shape == (3, *spec["screen"].shape)
    finally:
        env.close()


@pytest.mark.unit
def test_encoder_refuses_an_env_of_another_size():
    with pytest.raises(ConfigError, match="16x16"):
        ObservationEncoder(_obs_spec(16, 16), A2CConfig(screen=32, minimap=32))


@pytest.mark.unit
def test_action_sets():
    move = ActionSet.create("move", (16, 16), (16, 16))
    assert move.heads == {"function": 3, "screen": 256}  # queued, select_add fixed at 0
    move_now = move.function_call({"function": 2, "screen": 3 * 16 + 5})
    assert move_now.function == actions.FUNCTIONS.Move_screen.id
    assert [list(a) for a in move_now.arguments] == [[0], [5, 3]]
    split = ActionSet.create("split", (16, 16), (16, 16))
    assert split.heads == {"function": 4, "screen": 256}  # select_point_act fixed too
    pick = split.function_call({"function": 2, "screen": 7 * 16 + 1})
    assert pick.function == actions.FUNCTIONS.select_point.id
    assert [list(a) for a in pick.arguments] == [[0], [1, 7]]  # select (not toggle) at x 1, y 7
    sweep = ActionSet.create("sweep", (16, 16), (8, 8))
    assert sweep.heads == {"function": 3, "minimap": 64}
    go = sweep.function_call({"function": 2, "minimap": 2 * 8 + 5})
    assert go.function == actions.FUNCTIONS.Attack_minimap.id
    assert [list(a) for a in go.arguments] == [[0], [5, 2]]  # now, at x 5, y 2
    minigames = ActionSet.create("minigames", (32, 24), (16, 16))
    assert 15 <= len(minigames.function_ids) <= 30
    assert minigames.heads["screen"] == minigames.heads["screen2"] == 32 * 24
    assert minigames.heads["minimap"] == 256
    assert len(ActionSet.create("all", (16, 16), (16, 16)).function_ids) == len(actions.FUNCTIONS)
    with pytest.raises(ConfigError, match="move"):
        ActionSet.create("nope", (16, 16), (16, 16))


@pytest.mark.unit
def test_spatial_indices_map_to_x_y():
    action_set = ActionSet.create("minigames", (32, 24), (16, 12))
    heads = {h: 0 for h in action_set.heads}
    function = list(action_set.function_ids).index(actions.FUNCTIONS.select_rect.id)
    call = action_set.function_call(
        {
            **heads,
            "function": function,
            "select_add": 1,
            "screen": 5 * 32 + 7,
            "screen2": 23 * 32 + 31,
        }
    )
    assert call.function == actions.FUNCTIONS.select_rect.id
    assert [list(a) for a in call.arguments] == [[1], [7, 5], [31, 23]]
    function = list(action_set.function_ids).index(actions.FUNCTIONS.move_camera.id)
    call = action_set.function_call({**heads, "function": function, "minimap": 11 * 16 + 15})
    assert [list(a) for a in call.arguments] == [[15, 11]]


def test_a_policy_that_clicks_the_beacon_scores(beacon_env):
    """Head index -> screen (x, y) is right: clicking the beacon's cell wins points."""
    encoder = ObservationEncoder(beacon_env.observation_spec()[0], MOVE_16)
    timestep, score = beacon_env.reset()[0], 0.0
    for _ in range(80):
        encoded = encoder.encode(timestep.observation)
        ys, xs = np.nonzero(encoded["screen"][0] == 3)  # player_relative: neutral beacon
        move = bool(encoded["available"][2] and len(xs))
        index = int(round(ys.mean())) * 16 + int(round(xs.mean())) if move else 0
        call = encoder.action_set.function_call(
            {"function": 2 if move else 1, "screen": index, "queued": 0, "select_add": 0}
        )
        timestep = beacon_env.step([call])[0]
        score += timestep.reward
    assert score >= 5
