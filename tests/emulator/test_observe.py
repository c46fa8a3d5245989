"""Observations and game info read back through pysc2's own Features, as an agent would see them."""

import importlib

import numpy as np
from s2clientprotocol import common_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from sc2dask.emulator import observe, static_data
from sc2dask.emulator.gamedata import MARINE, UNIT_TYPES, ZERGLING
from sc2dask.emulator.geometry import screen_geometry
from sc2dask.emulator.maps import scenario_for
from sc2dask.emulator.units import Order, Owner
from sc2dask.emulator.world import World
from sc2dask.game.pysc2lib import PACKAGE_NAME, features, sc2_env

pysc2_static_data = importlib.import_module(PACKAGE_NAME + ".lib.static_data")

MARINE_ACTIONS = [0, 1, 2, 3, 4, 7, 12, 13, 274, 331, 332, 333, 334, 451, 452, 453]


def _env(map_name, screen=64, minimap=64, seed=1, **aif_kw):
    """A World plus the options and Features pysc2 would build for it."""
    world = World(scenario_for(map_name), seed=seed)
    aif = features.AgentInterfaceFormat(
        feature_dimensions=features.Dimensions(screen=screen, minimap=minimap), **aif_kw
    )
    options = sc2_env.SC2Env._get_interface(aif, False)
    info = observe.game_info(world, f"mini_games/{map_name}.SC2Map", options, common_pb2.Terran)
    feats = features.features_from_game_info(info, agent_interface_format=aif)
    return world, options, feats


def _obs(world, options, feats):
    return feats.transform_obs(observe.observe(world, options))


def test_available_actions_follow_the_selection():
    world, options, feats = _env("MoveToBeacon")
    assert sorted(_obs(world, options, feats)["available_actions"]) == [0, 1, 2, 3, 4, 7]
    world.select([world.scenario.marine.tag])
    obs = _obs(world, options, feats)
    assert sorted(obs["available_actions"]) == MARINE_ACTIONS
    assert obs["single_select"][0, 0] == MARINE.type_id
    world.select([world.scenario.beacon.tag])  # not the agent's: no commands
    assert sorted(_obs(world, options, feats)["available_actions"]) == [0, 1, 2, 3, 4, 7]


def test_player_score_and_ui():
    world, options, feats = _env("DefeatRoaches")  # 9 marines, pre-selected
    world.agent.control_groups[3] = [u.tag for u in world.units_of(Owner.AGENT)][:4]
    world.agent.stats.damage_dealt = 12
    world.agent.score = 20
    obs = _obs(world, options, feats)
    player = obs["player"]
    assert (player.player_id, player.army_count, player.food_army, player.food_used) == (1, 9, 9, 9)
    assert obs["multi_select"].shape == (9, 7)
    assert (obs["multi_select"][:, 1] == 1).all()
    assert tuple(obs["control_groups"][3]) == (MARINE.type_id, 4)
    assert obs["score_cumulative"].score == 20
    assert obs["score_by_vital"]["total_damage_dealt", "life"] == 12
    proto = observe.observe(world, options).observation
    assert proto.score.score_type == 1
    # 12 scalars, 11 categories, 3 vitals and the two APM fields, all present.
    assert len(proto.score.score_details.ListFields()) == 28


def test_feature_units_match_the_rendered_screen():
    world, options, feats = _env("MoveToBeacon", use_feature_units=True, use_raw_units=True)
    obs = _obs(world, options, feats)
    g = screen_geometry(options.feature_layer, world.agent.camera)
    marine = world.scenario.marine
    FU = features.FeatureUnit
    fu = np.asarray(obs["feature_units"])
    mine = fu[fu[:, FU.alliance] == 1]
    assert len(mine) == 1
    x, y = mine[0, FU.x], mine[0, FU.y]
    assert (x, y) == g.world_to_screen(marine.x, marine.y)
    assert mine[0, FU.is_on_screen] == 1
    assert obs["feature_screen"].player_relative[y, x] == 1
    assert len(obs["raw_units"]) == 2
    assert sorted(np.asarray(obs["raw_units"])[:, FU.tag].tolist()) == sorted(world.units)


def test_raw_units_respect_fog_and_report_orders():
    world, options, feats = _env("FindAndDefeatZerglings", use_raw_units=True)
    world.spawn(ZERGLING, Owner.HOSTILE, 35.0, 28.0)  # within sight of the marines
    marine = world.units_of(Owner.AGENT)[0]
    world.command([marine], Order("move", 3794, point=(20.0, 20.0)))
    visible = [u for u in world.units.values() if world.is_visible(u)]
    proto = observe.observe(world, options).observation
    assert len(proto.raw_data.units) == len(visible) < len(world.units)
    raw_marine = next(u for u in proto.raw_data.units if u.tag == marine.tag)
    assert raw_marine.orders[0].ability_id == 16  # reported as the specific Move
    assert raw_marine.orders[0].target_world_space_pos.x == 20.0
    assert (proto.raw_data.player.camera.x, proto.raw_data.player.camera.y) == world.agent.camera
    obs = feats.transform_obs(observe.observe(world, options))
    assert len(obs["raw_units"]) == len(visible)


def test_game_info_echoes_options_for_rectangular_screens():
    world, options, feats = _env("CollectMineralShards", screen=(84, 60), minimap=(64, 48))
    info = observe.game_info(world, "mini_games/CollectMineralShards.SC2Map", options, 1)
    assert info.options == options
    assert [p.player_id for p in info.player_info] == [1]
    assert (info.start_raw.map_size.x, info.start_raw.map_size.y) == (64, 64)
    grid = np.unpackbits(np.frombuffer(info.start_raw.pathing_grid.data, np.uint8))
    assert grid.reshape(64, 64)[25, 30] == 1 and grid.reshape(64, 64)[5, 5] == 0
    obs = _obs(world, options, feats)
    assert obs["feature_screen"].shape[1:] == (60, 84)
    assert obs["feature_minimap"].shape[1:] == (48, 64)


def test_action_errors_are_reported():
    world, options, feats = _env("MoveToBeacon")
    world.agent.action_errors.append(214)
    assert list(_obs(world, options, feats)["action_result"]) == [214]


def test_static_data_loads_in_pysc2_and_covers_offered_abilities():
    request = sc_pb.RequestData(
        ability_id=True, unit_type_id=True, upgrade_id=True, buff_id=True, effect_id=True
    )
    data = pysc2_static_data.StaticData(static_data.static_data(request))
    assert data.units[MARINE.type_id] == "Marine"
    assert data.unit_stats[MARINE.type_id].movement_speed > 0
    # Attack, Move, Patrol, Hold, Stop; Gather, Return, Rally units, Rally workers, Lift,
    # Land and Cancel last.
    assert data.general_abilities == {
        3674,
        3794,
        3795,
        3793,
        3665,
        3666,
        3667,
        3673,
        3690,
        3679,
        3678,
        3671,
    }
    for unit_type in UNIT_TYPES.values():
        for ability in static_data.unit_abilities(unit_type):
            assert ability.ability_id in data.abilities
            general = data.abilities[ability.ability_id].remaps_to_ability_id
            assert general == 0 or general in data.abilities
    assert data.abilities[23].hotkey == "a"
