"""Combat timed as the game's weapon data times it (sc2dask/emulator/combat.py): damage at
the damage point, a missile's flight, the backswing, banelings that burst when killed, and
no side favoured by the order in which a loop reaches its units."""

import pytest

from sc2dask.emulator import gamedata as gd
from sc2dask.emulator.units import Order, Owner
from sc2dask.emulator.world import World
from tests.emulator.fields import empty_world

pytestmark = pytest.mark.unit


def _world(seed: int = 0) -> World:
    return empty_world(seed)


def _loops_until(world: World, done, limit: int = 200) -> int:
    for loops in range(limit):
        if done():
            return loops
        world.step(1)
    raise AssertionError("not within the limit")


def test_a_marines_damage_comes_at_its_damage_point_and_its_shots_a_period_apart():
    world = _world()
    world.spawn(gd.MARINE, Owner.AGENT, 30.0, 30.0)
    roach = world.spawn(gd.ROACH, Owner.HOSTILE, 34.0, 30.0, health=10_000)
    roach.holding = True  # it stands and fires back at nothing in its reach
    hits = []
    for _ in range(120):
        before = roach.health
        world.step(1)
        if roach.health < before:
            hits.append(world.game_loop)
    gaps = [b - a for a, b in zip(hits, hits[1:])]
    assert hits[0] == 2  # acquired in loop 0, started in loop 1, damage one loop later
    period = gd.MARINE.cooldown
    low, high = (period + d for d in gd.RANDOM_DELAY_LOOPS)
    assert all(low - 1 <= g <= high + 1 for g in gaps), gaps
    assert len(set(gaps)) > 1  # the random delay: not one fixed period


def test_a_unit_killed_before_its_damage_point_deals_no_damage():
    world = _world()
    zergling = world.spawn(gd.ZERGLING, Owner.HOSTILE, 30.0, 30.0)
    marine = world.spawn(gd.MARINE, Owner.AGENT, 30.8, 30.0)  # in the zergling's reach
    world.step(1)  # the zergling starts its attack: its damage comes 3 loops later
    assert zergling.strike is not None
    zergling.health = 0  # killed meanwhile
    world.step(4)
    assert marine.health == gd.MARINE.health


def test_a_roachs_missile_flies_and_hits_after_its_shooter_died():
    world = _world()
    roach = world.spawn(gd.ROACH, Owner.HOSTILE, 30.0, 30.0)
    marine = world.spawn(gd.MARINE, Owner.AGENT, 34.4, 30.0, health=1_000)
    marine.holding = True
    _loops_until(world, lambda: world.missiles)
    launched = world.game_loop - 1
    assert world.missiles[0][0] - launched == 4  # 4.4 world units at 18.75 a second: 3.75 loops
    roach.health = 0
    world.step(4)
    assert marine.health == 1_000 - (gd.ROACH.damage - gd.MARINE.armor)


def test_after_its_shot_a_marine_stands_for_its_backswing_unless_ordered_to_move():
    world = _world()
    marine = world.spawn(gd.MARINE, Owner.AGENT, 30.0, 30.0)
    roach = world.spawn(gd.ROACH, Owner.HOSTILE, 35.8, 30.0, health=10_000)
    roach.holding = True
    _loops_until(world, lambda: roach.health < gd.ROACH.health * 100)  # the first hit
    roach.x += 3.0  # out of range: the marine would chase
    x = marine.x
    world.step(int(gd.MARINE.backswing) - 2)
    assert marine.x == x  # standing out its backswing
    world.command(
        [marine], Order("move", gd.MOVE_MOVE.ability_id, point=(20.0, 30.0))
    )  # the stutter step
    world.step(1)
    assert marine.x < x


def test_a_killed_baneling_bursts_and_its_burst_hits_structures_for_80():
    world = _world()
    baneling = world.spawn(gd.BANELING, Owner.HOSTILE, 30.0, 30.0)
    marine = world.spawn(gd.MARINE, Owner.AGENT, 31.0, 30.0)
    depot = world.spawn(gd.SUPPLY_DEPOT, Owner.AGENT, 30.0, 32.5)
    baneling.holding = True
    marine.holding = True
    baneling.health = 0  # killed before it reached anything
    world.step(1)
    assert marine.health == gd.MARINE.health - (gd.BANELING.damage + gd.BANELING.bonus_vs_light)
    assert depot.health == gd.SUPPLY_DEPOT.health - 80


def test_mirrored_fights_are_won_by_either_side():
    """Two columns of 10 marines facing each other: with damage dealt as each unit acted,
    player 1 (acted on first) won every one."""
    won = []
    for seed in range(10):
        world = _world(seed)
        agents = [world.spawn(gd.MARINE, Owner.AGENT, 30.0, 20.0 + i) for i in range(10)]
        hostiles = [world.spawn(gd.MARINE, Owner.HOSTILE, 35.5, 20.0 + i) for i in range(10)]
        world.step(400)
        assert not world.strikes and not world.missiles  # over: survivors out of range
        won.append(sum(u.alive for u in agents) > sum(u.alive for u in hostiles))
    assert 2 <= sum(won) <= 8, won
