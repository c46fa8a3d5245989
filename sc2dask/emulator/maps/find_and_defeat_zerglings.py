"""FindAndDefeatZerglings: three marines explore under fog with a free camera."""

from __future__ import annotations

import math

from ..gamedata import LOOPS_PER_SECOND, MARINE, ZERGLING
from ..units import Owner
from .base import Scenario

CENTRE = (32.0, 28.0)
ZERGLING_RECT = (11.0, 13.0, 53.0, 43.0)
ZERGLING_SPACING = 5.0


class FindAndDefeatZerglings(Scenario):
    name = "FindAndDefeatZerglings"
    time_limit_loops = 180 * LOOPS_PER_SECOND
    playable = (10.0, 12.0, 54.0, 44.0)
    camera_start = (32.0, 25.0)
    camera_locked = False
    fog = True
    ends_when_marines_dead = True

    def setup(self, world) -> None:
        cx, cy = CENTRE
        tags = []
        for angle in (210, 330, 90):
            a = math.radians(angle)
            tags.append(world.spawn(MARINE, Owner.AGENT, cx + math.cos(a), cy + math.sin(a)).tag)
        world.select(tags)
        placed: list[tuple[float, float]] = []
        r = world.rng.uniform(8, 9)
        a = world.rng.uniform(0, 2 * math.pi)
        placed.append((cx + r * math.cos(a), cy + r * math.sin(a)))
        placed.append(self._ring_point(world, placed, 7.5, 9.5))
        while len(placed) < 25:
            placed.append(self._outer_point(world, placed, inner=10.5))
        for x, y in placed:
            world.spawn(ZERGLING, Owner.HOSTILE, x, y)

    def _ring_point(self, world, placed, r0, r1):
        cx, cy = CENTRE
        for _ in range(200):
            r, a = world.rng.uniform(r0, r1), world.rng.uniform(0, 2 * math.pi)
            p = (cx + r * math.cos(a), cy + r * math.sin(a))
            if min(math.dist(p, q) for q in placed) >= ZERGLING_SPACING:
                return p
        return p

    def _outer_point(self, world, placed, inner):
        for _ in range(200):
            p = world.random_point(ZERGLING_RECT, avoid=placed, min_dist=ZERGLING_SPACING)
            if math.dist(p, CENTRE) >= inner:
                return p
        return p

    def on_death(self, world, unit) -> None:
        if unit.owner == Owner.HOSTILE:
            world.agent.score += 1
            if not world.units_of(Owner.HOSTILE):
                self._respawn(world)
        elif unit.type is MARINE:
            world.agent.score -= 1
        super().on_death(world, unit)

    def _respawn(self, world) -> None:
        """25 new zerglings in region 1, >= 9 from every marine and >= 5 from each other."""
        marines = [(m.x, m.y) for m in world.units_of(Owner.AGENT, MARINE)]
        placed: list[tuple[float, float]] = []
        for _ in range(25):
            for _ in range(200):
                p = world.random_point(self.playable, avoid=marines, min_dist=9.0)
                if not placed or min(math.dist(p, q) for q in placed) >= ZERGLING_SPACING:
                    break
            placed.append(p)
            world.spawn(ZERGLING, Owner.HOSTILE, *p)
