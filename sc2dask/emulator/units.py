"""The live unit record: who owns a unit, its orders, health and position.

The unit types themselves (stats, ids) are game data, in ``gamedata``.
"""

from __future__ import annotations

import dataclasses
import enum

from .gamedata import UnitType


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
