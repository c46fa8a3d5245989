"""DefeatRoaches and DefeatZerglingsAndBanelings: a marine column against an enemy group, in waves."""

from __future__ import annotations

import math

from ..gamedata import BANELING, MARINE, ROACH, ZERGLING
from ..units import Owner
from .base import Scenario

LEFT_REGION = (23.97, 25.06, 27.98, 31.05)  # region 4
RIGHT_REGION = (38.02, 25.04, 42.04, 31.08)  # region 5
GOLDEN_ANGLE = math.pi * (3 - math.sqrt(5))


def column_offsets(count: int) -> list[float]:
    """y-offsets 0, +1, -1, +2, -2, ... for a column of ``count`` units."""
    return [((i + 1) // 2) * (1 if i % 2 else -1) for i in range(count)]


class DefeatRoaches(Scenario):
    name = "DefeatRoaches"
    ends_when_marines_dead = True
    first_marines = 9
    wave_marines = 5
    enemy_score = 10

    def setup(self, world) -> None:
        self._wave(world, [(MARINE.health, None)] * self.first_marines)

    def _anchors(self, world):
        left = world.random_point(LEFT_REGION)
        right = world.random_point(RIGHT_REGION)
        return (left, right) if world.rng.random() < 0.5 else (right, left)

    def _wave(self, world, marines) -> None:
        """Place marines (health, _) in a column and a fresh enemy group; select the marines."""
        (mx, my), (ex, ey) = self._anchors(world)
        tags = []
        for (health, _), dy in zip(marines, column_offsets(len(marines))):
            tags.append(world.spawn(MARINE, Owner.AGENT, mx, my + dy, health=health).tag)
        self._spawn_enemies(world, ex, ey)
        world.select(tags)

    def _spawn_enemies(self, world, x, y) -> None:
        for dy in (0.5, 1.5, -0.5, -1.5):
            world.spawn(ROACH, Owner.HOSTILE, x, y + dy)

    def on_death(self, world, unit) -> None:
        if unit.owner == Owner.HOSTILE:
            world.agent.score += self.enemy_score
            if not world.units_of(Owner.HOSTILE):
                self._next_wave(world)
        elif unit.type is MARINE:
            world.agent.score -= 1
        super().on_death(world, unit)

    def _next_wave(self, world) -> None:
        """Survivors are re-created (new tags, same life), joined by reinforcements."""
        survivors = [(m.health, None) for m in world.units_of(Owner.AGENT, MARINE)]
        for unit in list(world.units.values()):
            world.remove(unit)
        world.agent.control_groups = [[] for _ in range(10)]
        self._wave(world, survivors + [(MARINE.health, None)] * self.wave_marines)


class DefeatZerglingsAndBanelings(DefeatRoaches):
    name = "DefeatZerglingsAndBanelings"
    wave_marines = 4
    enemy_score = 5

    def _spawn_enemies(self, world, x, y) -> None:
        # The script creates all ten on one point and the engine spreads them into a
        # blob around it; a sunflower spiral of unit-sized steps gives that blob directly.
        for i, unit_type in enumerate([ZERGLING] * 6 + [BANELING] * 4):
            r, a = 0.45 * math.sqrt(i), i * GOLDEN_ANGLE
            world.spawn(unit_type, Owner.HOSTILE, x + r * math.cos(a), y + r * math.sin(a))
