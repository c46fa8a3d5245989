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
    """One queued command: ``kind`` is move, attack (unit or point), patrol or hold, or a
    worker's gather, return, build (a new structure) or construct (an unfinished one)."""

    kind: str
    ability_id: int
    point: tuple[float, float] | None = None
    target: int | None = None  # unit tag
    origin: tuple[float, float] | None = None  # patrol start
    closest: float = float("inf")  # progress tracking for arrival in a crowd
    stalled: int = 0
    build: UnitType | None = None  # what a build order places
    phase: str = ""  # where a gather order is in its trip: go, mine, pause, return
    timer: int = 0  # loops left in the current phase


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
    strike: tuple[int, int] | None = None  # (game loop, target tag) of an attack's damage
    stands_until: int = 0  # the game loop its backswing ends: till then it does not move
    burst: bool = False  # a baneling that has burst (it bursts once, attacking or killed)
    target: int | None = None  # tag being auto-attacked when idle
    leash: tuple[float, float] | None = None  # where an idle chase started
    holding: bool = False
    build_progress: float = 1.0  # below 1 while a structure is under construction
    contents: int = 0  # minerals or gas left in a resource (a refinery holds its geyser's)
    miner: int | None = None  # the worker mining this resource now
    cargo: int = 0  # resources a worker carries
    cargo_gas: bool = False
    harvest_from: int | None = None  # the resource a worker goes back to after returning
    queue: list[UnitType] = dataclasses.field(default_factory=list)  # what a structure trains
    train_loops: int | None = None  # loops the first of ``queue`` has trained; None: waiting
    rally: tuple[float, float] | None = None
    rally_target: int | None = None  # a resource to gather from, for trained workers
    speed_now: float = 0.0  # for units that accelerate: the speed reached so far
    moved_at: int = -2  # the game loop it last moved in
    # (x, y, structure version, harvesting, where it stopped): the straight way to (x, y)
    # met no structure, so from a point further along it none is met either
    clear_way: tuple | None = None

    def __post_init__(self):
        if self.health < 0:
            self.health = float(self.type.health)
        if not self.contents:
            self.contents = self.type.contents

    @property
    def harvesting(self) -> bool:
        """On a gather or return-cargo trip: such workers pass through each other."""
        return bool(self.orders) and self.orders[0].kind in ("gather", "return")

    @property
    def finished(self) -> bool:
        return self.build_progress >= 1.0

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

    def footprint(self) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) of the cells a structure or resource covers."""
        w, h = self.type.footprint
        return self.x - w / 2, self.y - h / 2, self.x + w / 2, self.y + h / 2

    def gap_to(self, other: Unit) -> float:
        """Edge-to-edge distance: to a structure's footprint, or between two discs.

        ``footprint`` and ``distance_to`` are written out here (the same arithmetic):
        workers ask this several times a loop each."""
        x, y, kind = self.x, self.y, other.type
        if kind.is_structure:
            w, h = kind.footprint
            half_w, half_h = w / 2, h / 2
            nx = min(max(x, other.x - half_w), other.x + half_w)
            ny = min(max(y, other.y - half_h), other.y + half_h)
            return ((x - nx) ** 2 + (y - ny) ** 2) ** 0.5 - self.type.radius
        return ((x - other.x) ** 2 + (y - other.y) ** 2) ** 0.5 - self.type.radius - kind.radius
