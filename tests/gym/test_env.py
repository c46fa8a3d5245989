"""sc2dask.gym: the registered Gymnasium envs, checked by Gymnasium's own env checker on
every map the emulator plays, and their masks, scores and errors against pysc2's."""

import importlib
import sys
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from sc2dask.emulator.maps import SCENARIOS
from sc2dask.errors import ConfigError, UnknownMapError
from sc2dask.game.pysc2lib import actions, maps, units
from sc2dask.gym import SC2GymEnv, env_id

SMALL = {"screen": 16, "minimap": 16}  # quick to render; every map plays at any size


@pytest.mark.parametrize("map_name", list(SCENARIOS))
def test_gymnasiums_env_checker_passes_on_every_map_the_emulator_plays(sc2path, map_name):
    env = gymnasium.make(env_id(map_name), **SMALL)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped)
    finally:
        env.close()
    complaints = [str(w.message) for w in caught if "gymnasium" in w.filename]
    assert not complaints


@pytest.mark.unit
def test_every_map_pysc2_knows_is_registered():
    registered = set(gymnasium.registry)
    assert {env_id(m) for m in [*SCENARIOS, *maps.get_maps()]} <= registered


def test_the_action_mask_is_what_pysc2_makes_available(sc2path):
    env = gymnasium.make(env_id("CollectMineralsAndGas"), **SMALL).unwrapped
    try:
        functions = np.array(
            [int(env.function_call(i).function) for i in range(env.action_space.n)]
        )
        rng = np.random.default_rng(0)
        _, info = env.reset(seed=0)
        allowed = set()
        for _ in range(30):
            available = env.timestep.observation["available_actions"]
            np.testing.assert_array_equal(info["action_mask"], np.isin(functions, available))
            allowed.update(int(f) for f in available)
            action = rng.choice(np.flatnonzero(info["action_mask"]))
            _, _, terminated, truncated, info = env.step(action)
            assert not (terminated or truncated)
        assert len(allowed) > 3  # selecting SCVs made their commands available
        # An action the game does not allow now is played as no_op, not raised.
        env.step(np.flatnonzero(~info["action_mask"])[0])
        with pytest.raises(gymnasium.error.InvalidAction):
            env.step(env.action_space.n)
    finally:
        env.close()


def test_a_scripted_move_to_beacon_scores_and_its_rewards_sum_to_pysc2s_score(sc2path):
    env = gymnasium.make(env_id("MoveToBeacon"), screen_layers=["player_relative"], **SMALL)
    game = env.unwrapped
    obs, info = env.reset(seed=0)
    total, terminated, truncated = 0.0, False, False
    try:
        while not (terminated or truncated):
            y, x = np.nonzero(obs["screen"][0] == 3)  # player_relative 3: neutral, the beacon
            if not len(x):
                action = game.action_index("no_op")
            elif info["action_mask"][game.action_index("Move_screen", (0, 0))]:
                action = game.action_index("Move_screen", (int(x.mean()), int(y.mean())))
            else:
                action = game.action_index("select_army")
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
        assert terminated and not truncated  # the map's timer ends the game
        assert total == game.timestep.observation["score_cumulative"][0] > 0
    finally:
        env.close()


@pytest.mark.unit
def test_action_index_and_function_call_are_inverses(sc2path):
    env = SC2GymEnv("BuildMarines", screen=8, minimap=6)  # no game starts before reset
    sizes = [64 if a == "screen" else 36 if a == "minimap" else 1 for a in env._point_arg]
    assert env.action_space.n == sum(sizes)
    for index in range(env.action_space.n):
        call = env.function_call(index)
        point = next((tuple(a) for a in call.arguments if len(a) == 2), None)
        assert env.action_index(actions.FUNCTIONS[call.function].name, point) == index
    with pytest.raises(ConfigError, match="not in action set"):
        env.action_index("Build_Nexus_screen", (0, 0))


@pytest.mark.unit
@pytest.mark.parametrize(
    "kwargs, fix",
    [
        (
            {"action_set": "nope"},
            "choose one of move, split, minigames, attack, combat, explore, sweep, economy, all",
        ),
        ({"screen_layers": ["nope"]}, "pysc2 has height_map"),
        ({"screen": 0}, "must be >= 1"),
        ({"step_mul": "fast"}, "must be a whole number"),
    ],
)
def test_bad_keywords_raise_config_error_naming_the_fix(sc2path, kwargs, fix):
    with pytest.raises(ConfigError, match=fix):
        gymnasium.make(env_id("MoveToBeacon"), **kwargs)


@pytest.mark.unit
def test_maps_the_game_cannot_play_raise_unknown_map_error(sc2path):
    with pytest.raises(UnknownMapError, match="Install StarCraft II and set SC2PATH"):
        gymnasium.make(env_id("Flat64"))
    with pytest.raises(UnknownMapError, match="pysc2 knows: "):
        SC2GymEnv("NoSuchMap")


def test_a_melee_map_plays_against_its_opponent_and_says_the_outcome(sc2path):
    env = gymnasium.make(env_id("Simple64"), opponent="bot:terran:very_easy", reward="outcome")
    observation, info = env.reset(seed=1)
    assert env.observation_space.contains(observation) and info["action_mask"].any()
    # Simple64's default actions are macros: training an SCV is one of them, and plays.
    train_scv = env.unwrapped.action_index("train_scv")
    assert info["action_mask"][train_scv]
    observation, reward, terminated, truncated, info = env.step(train_scv)
    raw = env.unwrapped.timestep.observation.raw_units
    halls = [u for u in raw if u.alliance == 1 and u.unit_type == units.Terran.CommandCenter]
    assert halls[0].order_length == 1  # training the SCV
    assert not info["action_mask"][train_scv]  # busy: no second one until it is done
    for _ in range(3):
        observation, reward, terminated, truncated, info = env.step(0)  # no_op
    assert reward == 0 and not terminated and "outcome" not in info  # no outcome mid-game
    env.close()


@pytest.mark.unit
def test_without_gymnasium_the_package_names_the_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # as if it were not installed
    for name in ("sc2dask.gym", "sc2dask.gym.env"):
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError, match=r"pip install 'sc2dask\[gym\]'"):
        importlib.import_module("sc2dask.gym")
