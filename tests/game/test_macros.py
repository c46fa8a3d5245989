"""Macro actions on Simple64 (the emulator through unmodified pysc2): each macro's mask is
what the game allows, and each plays as the raw action it names."""

import itertools
import types

import numpy as np
import pytest

from sc2dask.game import EnvConfig
from sc2dask.game.macros import MACROS, SEARCH_RADIUS, Board, MacroCall, TerranMacros, available
from sc2dask.game.pysc2lib import actions, features, units

RAW = actions.RAW_FUNCTIONS
NEUTRAL = 3  # raw units' alliance (features.PlayerRelative)
VISIBLE, SNAPSHOT = 1, 2  # raw.proto's DisplayType

pytestmark = pytest.mark.usefixtures("sc2path")


def _mine(timestep, unit_type):
    return [
        u for u in timestep.observation.raw_units if u.alliance == 1 and u.unit_type == unit_type
    ]


def _allowed(timestep) -> set[str]:
    return {name for name, ok in zip(MACROS, available(timestep.observation)) if ok}


def test_the_mask_follows_the_game_and_each_macro_does_its_job():
    config = EnvConfig(
        "Simple64", screen=16, minimap=16, opponent="bot:terran:very_easy", macro_actions=True
    )
    with config.make(seed=3) as env:
        timestep = env.reset()[0]
        # 50 minerals, every SCV mining, no depot, no marine: only an SCV can be trained.
        assert _allowed(timestep) == {"no_op", "train_scv"}
        timestep = env.step([MacroCall(MACROS.index("train_scv"))])[0]
        (hall,) = _mine(timestep, units.Terran.CommandCenter)
        assert hall.order_length == 1
        assert "train_scv" not in _allowed(timestep)  # one at a time
        # A macro the mask forbids plays no_op: no barracks before a depot.
        while timestep.observation.player.minerals < 150:
            timestep = env.step([MacroCall(0)])[0]
        assert "build_barracks" not in _allowed(timestep)
        assert "build_supply_depot" in _allowed(timestep)
        timestep = env.step([MacroCall(MACROS.index("build_barracks"))])[0]
        assert RAW.Build_Barracks_pt.id not in _orders(timestep)  # no barracks ordered
        timestep = env.step([MacroCall(MACROS.index("build_supply_depot"))])[0]
        assert RAW.Build_SupplyDepot_pt.id in _orders(timestep)
        assert "build_supply_depot" not in _allowed(timestep)  # one ordered at a time


def _orders(timestep) -> set[int]:
    """The raw function ids of the SCVs' current orders."""
    return {u.order_id_0 for u in _mine(timestep, units.Terran.SCV) if u.order_length}


COLUMN = features.FeatureUnit


_TAGS = itertools.count(1)


def _unit(unit_type, alliance, x, y, orders=0, progress=100, order_id=0):
    """A raw unit's row, as pysc2 lays it out."""
    row = np.zeros(len(COLUMN), np.int64)
    for field, value in dict(
        unit_type=unit_type, alliance=alliance, x=x, y=y, order_length=orders,
        build_progress=progress, order_id_0=order_id, tag=next(_TAGS),
    ).items():  # fmt: skip
        row[COLUMN[field]] = value
    return row


@pytest.mark.unit
def test_depots_go_up_side_by_side_but_one_builder_walks_to_a_site_at_a_time():
    """A trained policy lost whole games supply-blocked with thousands of minerals: the
    enemy had killed the SCV building a depot, and the mask waited for that depot. And
    one depot at a time, as the mask once read, capped six barracks' production: the
    game lets a player build as many as its SCVs and minerals allow."""
    player = types.SimpleNamespace(minerals=400, food_cap=23, food_used=23)
    base = [
        _unit(units.Terran.CommandCenter, 1, 16, 47),
        _unit(units.Terran.SupplyDepot, 1, 24, 43, progress=40),  # paused: nobody builds it
        _unit(units.Terran.SCV, 1, 10, 47, orders=1),  # mining
    ]
    depot = MACROS.index("build_supply_depot")
    assert available({"raw_units": np.stack(base), "player": player})[depot]
    order = RAW.Build_SupplyDepot_pt.id
    constructing = _unit(units.Terran.SCV, 1, 24, 44, orders=1, order_id=order)
    assert available({"raw_units": np.stack([*base, constructing]), "player": player})[depot]
    walking = _unit(units.Terran.SCV, 1, 12, 30, orders=1, order_id=order)
    on_its_way = np.stack([*base, constructing, walking])  # its site looks free: no second
    assert not available({"raw_units": on_its_way, "player": player})[depot]
    board = Board.read({"raw_units": on_its_way, "player": player})
    assert board.underway(order, board.depots) == (1, 1)  # (unfinished, walking)


@pytest.mark.unit
def test_defend_is_offered_only_with_a_marine_it_would_order():
    """An intruder at home while every marine attacks far away: no defence to order (an
    order for no units is an error in pysc2), until a marine is idle again."""

    player = types.SimpleNamespace(minerals=0, food_cap=15, food_used=13)
    home = [_unit(units.Terran.CommandCenter, 1, 16, 47), _unit(units.Zerg.Zergling, 4, 18, 45)]
    raw_units = np.stack([*home, _unit(units.Terran.Marine, 1, 50, 10, orders=1)])
    defend = MACROS.index("defend")
    assert not available({"raw_units": raw_units, "player": player})[defend]
    raw_units[2, COLUMN.order_length] = 0  # the marine is idle again
    assert available({"raw_units": raw_units, "player": player})[defend]


def test_the_map_is_read_from_its_resources_and_attack_heads_for_the_opponents_start():
    """Every mineral field and geyser shows from the first step, the fogged ones as
    snapshots without their contents, as on the real game; the macros find the map's
    centre from them, so the start they attack is the one the game lists (game_info),
    not one assumed from a map size (the real Simple64 is 88x96 in a scaled raw frame)."""
    config = EnvConfig(
        "Simple64", opponent="bot:terran:very_easy", macro_actions=True, feature_layers=False
    )
    with config.make(seed=3) as env:
        observation = env.reset()[0].observation
        resources = [u for u in observation.raw_units if u.alliance == NEUTRAL]
        assert {int(u.display_type) for u in resources} == {VISIBLE, SNAPSHOT}
        assert all(u.mineral_contents == 0 for u in resources if u.display_type == SNAPSHOT)
        game = env
        while not hasattr(game, "game_info"):  # the SC2Env under the wrappers
            game = game._env
        start = game.game_info[0].start_raw
        listed = start.start_locations[0]
        expected = (listed.x, start.map_size.y - listed.y)  # pysc2's raw frame flips y
        found = Board.read(observation).enemy_start()
        assert np.hypot(found[0] - expected[0], found[1] - expected[1]) < 1.5, (found, expected)


@pytest.mark.unit
def test_the_centre_outlives_mined_out_fields_and_an_attack_searches_the_enemys_base():
    """A game drawn at 30 minutes with 175 marines: home's fields were mined out, the
    centre read from the fields left moved, and the army waited at a wrong start while
    a barracks stood out of its sight. Geysers stay; an attack with nothing in sight
    goes to the start, then around it."""
    player = types.SimpleNamespace(minerals=0, food_cap=200, food_used=100)
    neutral = units.Neutral
    geysers = [
        _unit(neutral.VespeneGeyser, NEUTRAL, x, y)
        for x, y in [(13, 9), (20, 9), (51, 54), (44, 54)]
    ]
    far_fields = [_unit(neutral.MineralField, NEUTRAL, 55, y) for y in range(44, 52)]  # home's gone
    hall = _unit(units.Terran.CommandCenter, 1, 16, 16)
    army = [_unit(units.Terran.Marine, 1, 30, 30) for _ in range(3)]
    observation = {"raw_units": np.stack([hall, *geysers, *far_fields, *army]), "player": player}
    assert Board.read(observation).enemy_start() == pytest.approx((48, 47))
    macros = TerranMacros()
    attack = MACROS.index("attack")
    first = macros.call(attack, observation)
    assert first.function == RAW.Attack_pt.id and list(first.arguments[2]) == [48, 47]
    observation["raw_units"][-3:, COLUMN.x] = 48  # the army stands at the start: nobody there
    observation["raw_units"][-3:, COLUMN.y] = 47
    second = macros.call(attack, observation)
    # SEARCH_RADIUS east of the start, kept inside the box of the map's resources
    assert list(second.arguments[2]) == [min(48 + SEARCH_RADIUS, 55), 47]
    enemy = _unit(units.Terran.Barracks, 4, 27, 48)  # in sight again: it is the target
    observation["raw_units"] = np.vstack([observation["raw_units"], enemy])
    assert list(macros.call(attack, observation).arguments[2]) == [27, 48]
