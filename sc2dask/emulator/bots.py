"""Built-in bots: player 2 of a melee map, playing by the same rules as the agent.

The levels are the real game's from VeryEasy to Hard (API levels 1-5), each a plan
acting on the world once a game second: keep the workers mining, train SCVs up to a
count, build supply depots before supply runs out, build barracks and train marines,
defend its base (with its workers too when its marines near home are fewer than the
intruders), and attack-move its army in waves once a wave is big enough. A higher level
builds more workers and barracks, and attacks sooner with bigger waves. The game's seed
moves each plan's wave size and first attack a little, so two seeds play two games. Like
the real AI below CheatVision it sees only what its units see: it attacks the enemy
structures it has seen, else the enemy's start location (which the game tells every
player), and searches the map when both are gone. The levels' results against each
other are on docs/results/fullgame.md (``benchmarks/bench_melee_bots.py``).
"""

from __future__ import annotations

import dataclasses
import math

from s2clientprotocol import sc2api_pb2 as sc_pb

from . import economy
from . import gamedata as gd
from .units import Order, Owner, Unit

THINK_EVERY = gd.LOOPS_PER_SECOND  # loops between decisions: once a game second
MAP_CENTRE = 32.0
# Building sites from the town hall of the base at the top left, towards the map's centre
# (mirrored for the other base): depots in a column, barracks in the next, a lane apart.
DEPOT_SITES = [(7.0, dy) for dy in (2.0, 5.0, 8.0, 11.0)] + [(10.0, dy) for dy in (8.0, 11.0)]
DEFEND_RADIUS = 16.0  # enemies this close to the town hall draw the army home
RESUME_CLEAR = 8.0  # no SCV goes on with a paused structure while enemies are this close
BUILD_ABILITY = {made: ability for ability, made in gd.BUILDS.items()}
RALLY = (12.0, 12.0)  # where the army gathers, from the town hall as the sites are
WAVE_JITTER, ATTACK_JITTER_S = 2, 60  # a game's plan: wave and first attack, +- these
# Barracks (3x3) centres lie on half cells: offsets of whole cells from the town hall keep
# them there, so the two bases' buildings mirror exactly (the grid rounds a half cell to
# even, which would set the two seats' barracks a cell apart).
BARRACKS_SITES = [(14.0, dy) for dy in (-1.0, 4.0, 9.0)] + [(20.0, dy) for dy in (-1.0, 4.0)]


@dataclasses.dataclass(frozen=True)
class Level:
    """A difficulty's plan: ``workers`` SCVs, ``barracks`` of them, and waves of ``wave``
    marines from ``first_attack_s`` game seconds."""

    workers: int
    barracks: int
    wave: int
    first_attack_s: int


# The plans are ours: the real AI's are closed. What each level must do is measured: each
# beats the one below, and uniform random macro play wins little from Easy up. Harder and
# VeryHard are not played yet: past five barracks one base's income caps production, and
# the plans tried for them lost as often as they won (docs/results/fullgame.md).
LEVELS = {
    sc_pb.VeryEasy: Level(workers=14, barracks=1, wave=6, first_attack_s=400),
    sc_pb.Easy: Level(workers=18, barracks=2, wave=8, first_attack_s=330),
    sc_pb.Medium: Level(workers=20, barracks=3, wave=12, first_attack_s=330),
    sc_pb.MediumHard: Level(workers=21, barracks=4, wave=16, first_attack_s=330),
    sc_pb.Hard: Level(workers=22, barracks=5, wave=18, first_attack_s=300),
}
# Where a bot looks for enemy structures once it knows of none: the map's corners and
# centre, the enemy's start first.
SEARCH = [(16.0, 16.0), (48.0, 48.0), (16.0, 48.0), (48.0, 16.0), (32.0, 32.0)]


class Bot:
    """One built-in player; ``step(world)`` every game loop."""

    def __init__(self, difficulty: int, owner: Owner, enemy_start: tuple[float, float], rng=None):
        if difficulty not in LEVELS:
            raise ValueError(f"no emulated bot of difficulty {difficulty}")
        level = LEVELS[difficulty]
        if rng is not None:  # each game's seed varies the plan a little, as the game's AI does
            level = dataclasses.replace(
                level,
                wave=level.wave + int(rng.integers(-WAVE_JITTER, WAVE_JITTER + 1)),
                first_attack_s=level.first_attack_s
                + int(rng.integers(-ATTACK_JITTER_S, ATTACK_JITTER_S + 1)),
            )
        self.level, self.owner, self.enemy_start = level, owner, enemy_start
        self.known: dict[int, tuple[float, float]] = {}  # enemy structures seen: tag -> place
        self.searched: list[tuple[float, float]] = []  # places seen empty since

    def step(self, world) -> None:
        if world.game_loop % THINK_EVERY:
            return
        own = world.own_units(self.owner)
        halls = [u for u in own if u.type is gd.COMMAND_CENTER and u.finished]
        if not halls:
            return
        hall = halls[0]
        workers = [u for u in own if u.type is gd.SCV]
        enemies = [u for u in world.visible_units(self.owner) if _hostile(u, self.owner)]
        self._remember(own, enemies)
        self._mine(world, workers, hall)
        self._resume(own, workers, enemies)
        self._supply(world, own, workers, hall)
        self._barracks(world, own, workers, hall)
        self._train(world, own, workers, hall)
        self._attack(world, own, hall, enemies)

    def _remember(self, own: list[Unit], enemies: list[Unit]) -> None:
        """Enemy structures in sight join the memory; one remembered whose place is in
        sight and that is not there any more leaves it."""
        for unit in enemies:
            if unit.type.is_structure:
                self.known[unit.tag] = (unit.x, unit.y)
        present = {u.tag for u in enemies}
        for tag, place in list(self.known.items()):
            if tag not in present and _in_sight(own, place):
                del self.known[tag]
        for place in [self.enemy_start, *SEARCH]:
            if place not in self.searched and _in_sight(own, place) and not self._near(place):
                self.searched.append(place)

    def _near(self, place) -> bool:
        return any(math.dist(place, p) < 8 for p in self.known.values())

    # --- the economy -------------------------------------------------------------------

    def _mine(self, world, workers: list[Unit], hall: Unit) -> None:
        fields = [u for u in world.units.values() if u.type is gd.MINERAL_FIELD]
        for worker in workers:
            if worker.orders or not fields:
                continue
            field = min(fields, key=lambda f: math.dist((f.x, f.y), (hall.x, hall.y)))
            worker.orders.append(
                Order("gather", gd.HARVEST_GATHER_SCV.ability_id, target=field.tag, phase="go")
            )

    def _resume(self, own: list[Unit], workers: list[Unit], enemies: list[Unit]) -> None:
        """A structure whose builder was killed stands unfinished (the game pauses it):
        the nearest miner goes on with it, as a player would, unless enemies stand by it
        (they would kill one miner after another)."""
        constructing = {o.target for w in workers for o in w.orders if o.kind == "construct"}
        miners = [w for w in workers if w.harvesting or not w.orders]
        for structure in own:
            if structure.finished or structure.tag in constructing or not miners:
                continue
            if any(
                math.dist((e.x, e.y), (structure.x, structure.y)) < RESUME_CLEAR for e in enemies
            ):
                continue
            builder = min(miners, key=lambda w: math.dist((w.x, w.y), (structure.x, structure.y)))
            miners.remove(builder)
            ability = BUILD_ABILITY[structure.type]  # the order a builder shows, as in the game
            builder.orders[:] = [Order("construct", ability, target=structure.tag)]

    def _supply(self, world, own, workers, hall) -> None:
        building = any(o.build is gd.SUPPLY_DEPOT for w in workers for o in w.orders)
        unfinished = any(u.type is gd.SUPPLY_DEPOT and not u.finished for u in own)
        left = economy.food_cap(world, self.owner) - economy.food_used(world, self.owner)
        if (
            left < 4
            and not building
            and not unfinished
            and economy.food_cap(world, self.owner) < 200
        ):
            self._build(world, workers, hall, gd.SUPPLY_DEPOT, gd.BUILD_SUPPLYDEPOT)

    def _barracks(self, world, own, workers, hall) -> None:
        count = sum(u.type is gd.BARRACKS for u in own)
        count += sum(o.build is gd.BARRACKS for w in workers for o in w.orders)
        has_depot = any(u.type is gd.SUPPLY_DEPOT and u.finished for u in own)
        if count < self.level.barracks and has_depot:
            self._build(world, workers, hall, gd.BARRACKS, gd.BUILD_BARRACKS)

    def _train(self, world, own, workers, hall) -> None:
        if len(workers) < self.level.workers and not hall.queue:
            economy.train(world, [hall], gd.SCV)
        side = 1.0 if hall.x < MAP_CENTRE else -1.0
        for barracks in [u for u in own if u.type is gd.BARRACKS and u.finished]:
            # marines gather in front of the base, out of the buildings' way
            barracks.rally = (hall.x + side * RALLY[0], hall.y - side * RALLY[1])
            if not barracks.queue:
                economy.train(world, [barracks], gd.MARINE)

    def _build(self, world, workers, hall, unit_type, ability) -> None:
        if economy.cost_error(world, unit_type, self.owner) is not None:
            return
        site = self._site(world, hall, unit_type)
        miners = [w for w in workers if w.harvesting or not w.orders]
        if site is None or not miners:
            return
        builder = min(miners, key=lambda w: math.dist((w.x, w.y), site))
        builder.orders[:] = [
            Order("build", ability.ability_id, point=site, build=unit_type),
        ]

    def _site(self, world, hall: Unit, unit_type) -> tuple[float, float] | None:
        """The first free site of the bot's building grid: in front of its base, towards
        the map's centre, with lanes between the buildings for its workers and army."""
        for site in sites(unit_type, hall.x, hall.y):
            if economy.placement_error(world, unit_type, *site) is None:
                return site
        return None

    # --- the army ----------------------------------------------------------------------

    def _attack(self, world, own, hall: Unit, enemies: list[Unit]) -> None:
        """Defend the base from enemies near it; else send the marines gathered at home in
        waves of ``wave`` once the first attack is due."""
        army = [u for u in own if u.type is gd.MARINE]
        at_home = [  # idle anywhere, or walking to the rally point
            u
            for u in army
            if not u.orders
            or (
                u.orders[0].kind == "move"
                and math.dist((u.x, u.y), (hall.x, hall.y)) <= 2 * DEFEND_RADIUS
            )
        ]
        near = [u for u in enemies if math.dist((u.x, u.y), (hall.x, hall.y)) <= DEFEND_RADIUS]
        if near:
            intruder = min(near, key=lambda u: math.dist((u.x, u.y), (hall.x, hall.y)))
            order = Order("attack", gd.ATTACK_ATTACK.ability_id, point=(intruder.x, intruder.y))
            defenders = at_home
            guard = [
                u for u in army if math.dist((u.x, u.y), (hall.x, hall.y)) <= 2 * DEFEND_RADIUS
            ]
            if len(guard) < len(near):  # outnumbered at home: the workers fight too
                defenders = at_home + [u for u in own if u.type is gd.SCV and u.harvesting]
            if defenders:
                world.command(defenders, order, owner=self.owner)
                return
        seconds = world.game_loop / gd.LOOPS_PER_SECOND
        if seconds < self.level.first_attack_s or len(at_home) < self.level.wave:
            return
        order = Order("attack", gd.ATTACK_ATTACK.ability_id, point=self._target())
        world.command(at_home, order, owner=self.owner)  # idle marines anywhere go too

    def _target(self) -> tuple[float, float]:
        """The remembered enemy structure nearest the enemy's start; else the first place
        not yet seen empty, the enemy's start first."""
        if self.known:
            return min(self.known.values(), key=lambda p: math.dist(p, self.enemy_start))
        for place in [self.enemy_start, *SEARCH]:
            if place not in self.searched:
                return place
        self.searched.clear()  # everything seen once: search again
        return self.enemy_start


def sites(unit_type, hall_x: float, hall_y: float) -> list[tuple[float, float]]:
    """The building grid of a base whose town hall stands at (hall_x, hall_y), in the
    order a bot fills it: in front of the base, towards the map's centre."""
    offsets = DEPOT_SITES if unit_type is gd.SUPPLY_DEPOT else BARRACKS_SITES
    side = 1.0 if hall_x < MAP_CENTRE else -1.0
    return [economy.snap(unit_type, hall_x + side * dx, hall_y - side * dy) for dx, dy in offsets]


def _hostile(unit: Unit, owner: Owner) -> bool:
    return unit.owner not in (owner, Owner.NEUTRAL)


def _in_sight(own: list[Unit], place: tuple[float, float]) -> bool:
    return any(math.dist((u.x, u.y), place) <= u.type.sight for u in own)
