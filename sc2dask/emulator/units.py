"""Unit types the mini-games use, with their game stats, and the live unit record.

Stats come from ``shared/docs/minigames.md`` (sc2-techtree data, patch ~5.0),
converted to game loops: speeds are world units per loop and cooldowns are loops.
"""

from __future__ import annotations

import dataclasses
import enum


class Owner(enum.IntEnum):
    """SC2 player ids as the emulator uses them (16 is neutral in the API)."""

    AGENT = 1
    HOSTILE = 2
    NEUTRAL = 16


class Alliance(enum.IntEnum):
    """``raw_pb2.Alliance`` and the ``player_relative`` layer share these values."""

    SELF = 1
    ALLY = 2
    NEUTRAL = 3
    ENEMY = 4


@dataclasses.dataclass(frozen=True)
class UnitType:
    type_id: int
    name: str
    health: float
    armor: float = 0.0
    speed: float = 0.0  # world units per game loop
    radius: float = 0.5
    damage: float = 0.0
    bonus_vs_light: float = 0.0
    weapon_range: float = 0.0
    cooldown: float = 0.0  # game loops between shots
    sight: float = 9.0
    acquire_range: float = 0.0  # how far an idle unit notices enemies (calibrated)
    light: bool = False
    armored: bool = False
    army: bool = True  # counts towards army_count / select_army
    food: float = 0.0
    mineral_cost: int = 0
    splash_radius: float = 0.0  # banelings: explode on contact
    collides: bool = True  # pickups and beacons do not block movement

    @property
    def can_attack(self) -> bool:
        return self.damage > 0


_LOOPS_PER_SECOND = 16.0


def _per_loop(per_second: float) -> float:
    return per_second / _LOOPS_PER_SECOND


MARINE = UnitType(
    48, "Marine", health=45, speed=_per_loop(2.25), radius=0.375, damage=6,
    weapon_range=5, cooldown=0.861 * _LOOPS_PER_SECOND, sight=9, acquire_range=6,
    light=True, food=1, mineral_cost=50)
ZERGLING = UnitType(
    105, "Zergling", health=35, speed=_per_loop(2.953), radius=0.375, damage=5,
    weapon_range=0.1, cooldown=0.696 * _LOOPS_PER_SECOND, sight=8, acquire_range=5,
    light=True, food=0.5, mineral_cost=25)
ROACH = UnitType(
    110, "Roach", health=145, armor=1, speed=_per_loop(2.25), radius=0.5, damage=16,
    weapon_range=4, cooldown=2.0 * _LOOPS_PER_SECOND, sight=9, acquire_range=5,
    armored=True, food=2, mineral_cost=75)
BANELING = UnitType(
    9, "Baneling", health=30, speed=_per_loop(2.5), radius=0.375, damage=16,
    bonus_vs_light=19, weapon_range=0.25, cooldown=1, sight=8, acquire_range=5,
    splash_radius=2.2, food=0.5, mineral_cost=50)
BEACON = UnitType(
    317, "Beacon_Terran", health=0, radius=1.0, sight=0, army=False, collides=False)
MINERAL_SHARD = UnitType(
    1680, "NaturalMinerals", health=0, radius=0.5, sight=0, army=False, collides=False)

UNIT_TYPES = {t.type_id: t for t in (MARINE, ZERGLING, ROACH, BANELING, BEACON, MINERAL_SHARD)}


@dataclasses.dataclass
class Order:
    """One queued command: ``kind`` is move, attack (unit or point), patrol or hold."""

    kind: str
    ability_id: int
    point: tuple[float, float] | None = None
    target: int | None = None  # unit tag
    origin: tuple[float, float] | None = None  # patrol start
    closest: float = float("inf")  # progress tracking for arrival in a crowd
    stalled: int = 0


@dataclasses.dataclass(eq=False)
class Unit:
    """A unit on the map; ``World.spawn`` creates them."""

    type: UnitType
    owner: Owner
    x: float
    y: float
    health: float = -1.0
    facing: float = 0.0
    tag: int = 0  # assigned by World.spawn, unique within a game
    orders: list[Order] = dataclasses.field(default_factory=list)
    cooldown: float = 0.0  # loops until the weapon may fire again
    target: int | None = None  # tag being auto-attacked when idle
    leash: tuple[float, float] | None = None  # where an idle chase started
    holding: bool = False

    def __post_init__(self):
        if self.health < 0:
            self.health = float(self.type.health)

    @property
    def alive(self) -> bool:
        return self.type.health == 0 or self.health > 0

    @property
    def alliance(self) -> Alliance:
        if self.owner == Owner.AGENT:
            return Alliance.SELF
        if self.owner == Owner.NEUTRAL:
            return Alliance.NEUTRAL
        return Alliance.ENEMY

    def distance_to(self, x: float, y: float) -> float:
        return ((self.x - x) ** 2 + (self.y - y) ** 2) ** 0.5
