"""How units walk round structures: the line test (where a segment enters a box), and a
builder reaching a site beside another structure."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sc2dask.emulator import gamedata as gd
from sc2dask.emulator.units import Order, Owner
from sc2dask.emulator.world import _segment_enter
from tests.emulator.fields import empty_world

coordinate = st.floats(-10, 10, allow_nan=False)


def _inside(x, y, box, slack=1e-9):
    x0, y0, x1, y1 = box
    return x0 - slack <= x <= x1 + slack and y0 - slack <= y <= y1 + slack


@settings(max_examples=300, deadline=None)
@given(
    a=st.tuples(coordinate, coordinate),
    b=st.tuples(coordinate, coordinate),
    corner=st.tuples(coordinate, coordinate),
    size=st.tuples(st.floats(0.1, 6), st.floats(0.1, 6)),
)
def test_the_entry_is_the_first_point_of_the_segment_in_the_box(a, b, corner, size):
    box = (*corner, corner[0] + size[0], corner[1] + size[1])
    t = _segment_enter(*a, *b, *box)

    def at(s):
        return a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1])

    samples = np.linspace(0.0, 1.0, 2001)
    if math.isinf(t):
        assert not any(_inside(*at(s), box, slack=-1e-6) for s in samples)
        return
    assert 0.0 <= t <= 1.0
    assert _inside(*at(t), box)
    assert not any(_inside(*at(s), box, slack=-1e-6) for s in samples if s < t - 1e-6)


def test_a_segment_along_an_axis_and_one_that_stops_short():
    box = (2.0, 2.0, 4.0, 4.0)
    assert _segment_enter(0.0, 3.0, 6.0, 3.0, *box) == 2.0 / 6.0
    assert _segment_enter(0.0, 3.0, 1.5, 3.0, *box) == math.inf  # stops before the box
    assert _segment_enter(0.0, 5.0, 6.0, 5.0, *box) == math.inf  # passes above it
    assert _segment_enter(3.0, 3.0, 9.0, 9.0, *box) == 0.0  # starts inside


@pytest.mark.parametrize("start", [(22.0, 46.5), (21.5, 46.33), (24.2, 46.6), (20.0, 48.0)])
def test_a_builder_reaches_a_site_beside_a_depot_from_its_far_side(start):
    """The site's edge nearest the SCV is the depot's edge too: walking at it ran the SCV
    into the depot (or to and fro at its corner) for the rest of the game."""
    world = empty_world(minerals=1000)
    world.spawn(gd.SUPPLY_DEPOT, Owner.AGENT, 23.0, 45.0)  # covers x 22-24, y 44-46
    scv = world.spawn(gd.SCV, Owner.AGENT, *start)
    site = (23.0, 43.0)  # the cells just below the depot
    scv.orders.append(
        Order("build", gd.BUILD_SUPPLYDEPOT.ability_id, point=site, build=gd.SUPPLY_DEPOT)
    )
    world.step(10 * gd.LOOPS_PER_SECOND)  # a few cells' walk, at most
    assert [(u.x, u.y) for u in world.units_of(Owner.AGENT, gd.SUPPLY_DEPOT)] == [
        (23.0, 45.0),
        site,
    ]


def test_a_build_order_on_a_site_built_over_meanwhile_is_dropped():
    """The site's edge and centre both lie inside the barracks built there first: no SCV
    could stand at it, and one that kept the order stood against the barracks all game."""
    world = empty_world(minerals=1000)
    scv = world.spawn(gd.SCV, Owner.AGENT, 23.0, 50.0)
    scv.orders.append(
        Order("build", gd.BUILD_SUPPLYDEPOT.ability_id, point=(23.0, 43.0), build=gd.SUPPLY_DEPOT)
    )
    world.step(8)
    assert scv.orders  # on its way
    world.spawn(gd.BARRACKS, Owner.AGENT, 23.5, 43.5)  # covers x 22-25, y 42-45
    world.step(8)
    assert not scv.orders
    assert world.units_of(Owner.AGENT, gd.SUPPLY_DEPOT) == []
