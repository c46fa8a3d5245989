"""The simulation's shortcuts change no outcome: a pass skipped because nothing moved,
and a target search skipped because every enemy is far (tools/observation_hashes.py
checks whole games; these check the cases a shortcut could get wrong)."""

from sc2dask.emulator import gamedata as gd
from sc2dask.emulator.maps import scenario_for
from sc2dask.emulator.units import Owner
from sc2dask.emulator.world import MAX_RADIUS, World


def _marines_world(*positions) -> tuple[World, list]:
    world = World(scenario_for("DefeatRoaches"), seed=0)
    for unit in list(world.units.values()):
        world.remove(unit)
    marines = [world.spawn(gd.MARINE, Owner.AGENT, x, y) for x, y in positions]
    return world, marines


def _gap(a, b) -> float:
    return a.distance_to(b.x, b.y) - a.type.radius - b.type.radius


def test_units_standing_apart_are_separated_again_once_one_is_moved_onto_another():
    world, (a, b) = _marines_world((30.0, 28.0), (34.0, 28.0))
    world.step(8)  # they stand apart: the next passes are skipped
    assert (a.x, a.y, b.x, b.y) == (30.0, 28.0, 34.0, 28.0)
    assert world._apart is not None
    b.x = 30.2  # moved onto the other between loops, as a debug command can
    world.step(8)
    assert _gap(a, b) > -1e-6


def test_a_unit_spawned_onto_a_standing_one_is_pushed_out():
    world, (a,) = _marines_world((30.0, 28.0))
    world.step(8)
    assert world._apart is not None
    b = world.spawn(gd.MARINE, Owner.AGENT, 30.1, 28.0)
    world.step(8)
    assert _gap(a, b) > -1e-6


def test_an_idle_unit_finds_an_enemy_in_reach_and_none_beyond_it():
    world, (marine,) = _marines_world((30.0, 28.0))
    far = world.spawn(gd.ROACH, Owner.HOSTILE, 42.0, 28.0)  # beyond every reach
    world.step(8)
    assert marine.target is None and far.target is None and far.health == gd.ROACH.health
    # At the edge of the marine's reach: a box with any less margin would miss it.
    edge = gd.MARINE.acquire_range + gd.MARINE.radius + gd.ROACH.radius - 0.01
    near = world.spawn(gd.ROACH, Owner.HOSTILE, 30.0 + edge, 28.0)
    world.step(1)
    assert marine.target == near.tag


def test_no_unit_is_wider_than_the_target_search_allows():
    """The target search's box and cells assume no unit is wider than MAX_RADIUS."""
    types = [t for t in vars(gd).values() if isinstance(t, gd.UnitType)]
    assert types and max(t.radius for t in types) <= MAX_RADIUS
