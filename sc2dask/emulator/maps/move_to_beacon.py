"""MoveToBeacon: walk one marine onto a beacon; +1 and a new beacon each time."""

from __future__ import annotations

import math

from ..gamedata import BEACON, MARINE
from ..units import Owner
from .base import Scenario

# Region 3: this rectangle minus the circle of radius 4 around (33, 28).
BEACON_RECT = (23.5, 21.5, 42.5, 34.5)
BEACON_HOLE = (33.0, 28.0, 4.0)
BEACON_MIN_DISTANCE = 5.0  # from the marine: the map script uses 5 (its description says 4)
# The trigger tests the marine's centre against this radius around the beacon.
PICKUP_RADIUS = 1.25


def place_beacon(world, marine_xy):
    """A beacon position by the script's rule: in region 3 and >= 5 from the marine."""
    hx, hy, hr = BEACON_HOLE
    while True:
        x, y = world.random_point(BEACON_RECT, avoid=[marine_xy], min_dist=BEACON_MIN_DISTANCE)
        if math.hypot(x - hx, y - hy) >= hr:
            return x, y


class MoveToBeacon(Scenario):
    name = "MoveToBeacon"

    def setup(self, world) -> None:
        x, y = world.random_point(self.playable)
        self.marine = world.spawn(MARINE, Owner.AGENT, x, y)
        self.beacon = world.spawn(BEACON, Owner.NEUTRAL, *place_beacon(world, (x, y)))

    def on_loop(self, world) -> None:
        m, b = self.marine, self.beacon
        if math.hypot(m.x - b.x, m.y - b.y) <= PICKUP_RADIUS:
            world.agent.score += 1
            b.x, b.y = place_beacon(world, (m.x, m.y))
