"""Simple64's score as the real game keeps it: the Melee score and ``score_details``, each
field as s2client-proto's score.proto defines it, read through pysc2's own Features."""

import pytest
from s2clientprotocol import score_pb2

from sc2dask.emulator import gamedata as gd
from sc2dask.emulator import observe
from sc2dask.emulator.maps.simple64 import START
from sc2dask.emulator.units import Owner
from sc2dask.game.pysc2lib import actions
from tests.emulator.test_economy import Game

RAW = actions.RAW_FUNCTIONS


def _quiet_game() -> Game:
    """Simple64 with every SCV stopped, so nothing but the test's own orders moves the
    score (the bot's first attack comes minutes later)."""
    game = Game("Simple64", use_raw_units=True, use_raw_actions=True)
    for scv in game.units(gd.SCV):
        scv.orders.clear()
    return game


def _details(game):
    obs = game.obs()
    return obs["score_cumulative"], obs["score_by_category"]


def test_a_melee_game_reports_the_melee_score_of_what_stands_and_the_bank():
    """SC2LE (arXiv 1708.04782, 3.3): current resources plus the units and buildings
    alive: 12 SCVs (50 each), a Command Center (400) and the 50 minerals a game starts with."""
    game = _quiet_game()
    proto = observe.observe(game.world, game.options).observation.score
    assert proto.score_type == score_pb2.Score.Melee
    cumulative, _ = _details(game)
    assert cumulative.score == 12 * 50 + 400 + 50


def test_building_a_depot_spends_and_counts_its_value_when_it_is_placed_and_finished():
    """score.proto: ``spent_minerals`` grows "the moment it is spent"; the depot's value
    stands in the score in place of the minerals paid while it is built;
    ``total_value_structures`` and ``total_used_minerals`` count it once finished (its
    ScoreMake, 100, in the game's unit data)."""
    game = _quiet_game()
    game.world.agent.minerals = 150
    before, by_category = _details(game)
    assert (before.spent_minerals, before.total_value_structures) == (0, 0)
    scv = game.units(gd.SCV, Owner.AGENT)[0]
    x, y = START[0] + 6, START[1]  # east of the Command Center, clear of the minerals
    assert game.act(RAW.Build_SupplyDepot_pt("now", [scv.tag], [x, 64 - y])) == 1
    while not game.units(gd.SUPPLY_DEPOT, Owner.AGENT):
        game.world.step(1)
    placed, by_category = _details(game)
    assert placed.spent_minerals == 100
    assert game.world.agent.minerals == 50
    assert placed.score == before.score  # 100 minerals became a depot worth 100
    assert by_category["used_minerals"]["economy"] == 12 * 50 + 400 + 100
    assert placed.total_value_structures == 0  # not finished yet
    game.world.step(gd.SUPPLY_DEPOT.build_loops + 16)
    (depot,) = game.units(gd.SUPPLY_DEPOT, Owner.AGENT)
    assert depot.finished
    built, by_category = _details(game)
    assert built.total_value_structures == gd.SUPPLY_DEPOT.score_make == 100
    assert by_category["total_used_minerals"]["economy"] == 100
    assert built.score == before.score


def test_a_unit_lost_lowers_the_score_and_counts_for_its_killer():
    game = _quiet_game()
    scv = game.units(gd.SCV, Owner.AGENT)[0]
    marine = game.world.spawn(gd.MARINE, Owner.HOSTILE, scv.x + 1, scv.y)
    scv.health = 1  # one shot kills it, before the SCVs near it can fight back
    before, _ = _details(game)
    marine.target = scv.tag
    for _ in range(16 * 5):
        game.world.step(1)
        if scv.tag not in game.world.units:
            break
    after, by_category = _details(game)
    assert scv.tag not in game.world.units
    assert after.score == before.score - gd.SCV.mineral_cost
    assert by_category["lost_minerals"]["economy"] == 50
    killer = game.world.players[Owner.HOSTILE].stats
    assert killer.killed_value_units == gd.SCV.score_kill == 50
    assert killer.killed_minerals["economy"] == 50


def test_idle_workers_and_producers_add_up_their_idle_time_and_mining_sets_the_rate():
    game = _quiet_game()
    game.world.step(16)
    cumulative, _ = _details(game)
    assert cumulative.idle_worker_time == 12 * 16  # loops, summed over the idle SCVs
    assert cumulative.idle_production_time == 16  # the Command Center, nothing queued
    assert cumulative.collection_rate_minerals == 0
    mining = Game("Simple64")
    mining.world.step(16 * 90)
    cumulative, _ = _details(mining)
    stats = mining.world.agent.stats
    assert 0 < cumulative.collection_rate_minerals <= stats.collected_minerals
    assert cumulative.collection_rate_minerals == pytest.approx(
        stats.collected_minerals - stats._collected[0][0], abs=1
    )
