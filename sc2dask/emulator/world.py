"""The game state and the per-loop simulation: movement, collision, combat, fog and score.

One ``World`` is one episode. A scenario (``maps/``) lays it out and adds the map's
triggers; everything else here is engine behaviour shared by all mini-games.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import combat, economy
from .gamedata import LOOPS_PER_SECOND, PRODUCER_IDS, SCV, UnitType
from .score import ScoreStats
from .units import Order, Owner, Unit

MAP_SIZE = (64, 64)
Box = tuple[float, float, float, float]  # a footprint's (x0, y0, x1, y1)
# Target search looks in a grid of the enemy's units as the loop began: cells of CELL
# world units. No unit moves CELL_SLACK in one loop, nor is any wider than MAX_RADIUS.
CELL, CELL_SLACK, MAX_RADIUS = 8.0, 2.0, 3.0
FOG_EVERY = 4  # loops between updates of the explored grid within a step
# The map scripts wait 2 "real" seconds after the last marine dies before pausing.
END_DELAY_LOOPS = 2 * LOOPS_PER_SECOND
# When a unit stops closing in on its move target this close to it, the move is done.
STALL_LOOPS = 8
STALL_RADIUS = 2.5


@dataclasses.dataclass
class PlayerState:
    """One player's side of a game: its bank, its score, its UI state (selection, control
    groups, camera) and the cells it has seen."""

    id: Owner
    camera: tuple[float, float]
    minerals: int = 0
    vespene: int = 0
    score: float = 0.0  # the curriculum score a mini-game's scripts set
    stats: ScoreStats = dataclasses.field(default_factory=ScoreStats)
    selection: list[int] = dataclasses.field(default_factory=list)
    control_groups: list[list[int]] = dataclasses.field(
        default_factory=lambda: [[] for _ in range(10)]
    )
    explored: np.ndarray = dataclasses.field(  # [y, x] cells seen so far
        default_factory=lambda: np.zeros(MAP_SIZE[::-1], dtype=bool)
    )
    action_errors: list[int] = dataclasses.field(default_factory=list)


class World:
    """All units, each player's state (``players``; ``agent`` is player 1's, the one a
    connection plays) and the clock."""

    map_size = MAP_SIZE

    def __init__(self, scenario, seed: int):
        self.scenario = scenario
        self.rng = np.random.default_rng(seed)
        # The order units act in within a loop, drawn afresh each loop from a stream of its
        # own (the game's other draws stay as they were): in creation order the older units
        # would always act first, and two bots building in step would leave every first
        # move to player 1 (docs/results/fullgame.md#the-ladder).
        self._turns = np.random.default_rng([seed, 1])
        self.units: dict[int, Unit] = {}
        self.game_loop = 0
        self.players = {
            owner: PlayerState(owner, tuple(scenario.camera_start))
            for owner in (Owner.AGENT, Owner.HOSTILE)
        }
        self.agent = self.players[Owner.AGENT]
        self.result: int | None = None  # sc2api Result (player 1's) once the game has ended
        self._end_at: int | None = None
        self._end_result = 0
        self._next_tag = 1
        self.structure_version = 0  # bumped when a structure or resource comes, goes or finishes
        self._structure_cache: dict[str, tuple[int, object]] = {}
        self._rosters: dict[Owner, list[Unit]] = {}  # each player's units as the loop began
        self._vis_cache: tuple[tuple, np.ndarray] = ((), np.zeros(0))
        self._apart: list | None = None  # (tag, x, y) of movers last found apart
        # each roster on a grid: cell -> [(index in the roster, unit)], and the box its
        # centres span (x0, y0, x1, y1)
        self._roster_cells: dict[Owner, dict[tuple[int, int], list]] = {}
        self._roster_boxes: dict[Owner, tuple[float, float, float, float]] = {}
        self.strikes: list[Unit] = []  # units between an attack's start and its damage
        self.missiles: list[tuple[int, Unit, int]] = []  # (arrival loop, shooter, target tag)
        scenario.setup(self)
        self._update_fog()

    # --- units -------------------------------------------------------------------------

    def spawn(self, unit_type: UnitType, owner: Owner, x: float, y: float, **kw) -> Unit:
        unit = Unit(unit_type, owner, float(x), float(y), **kw)
        # Tags look like the game's (index in the high bits); unique within a game.
        unit.tag = (self._next_tag << 18) | 1
        self._next_tag += 1
        self.units[unit.tag] = unit
        if unit_type.is_structure:
            self.structure_version += 1
        return unit

    def remove(self, unit: Unit) -> None:
        if self.units.pop(unit.tag, None) is not None and unit.type.is_structure:
            self.structure_version += 1
        for player in self.players.values():
            if unit.tag in player.selection:
                player.selection = [t for t in player.selection if t != unit.tag]

    def own_units(self, owner: Owner = Owner.AGENT) -> list[Unit]:
        return [u for u in self.units.values() if u.owner == owner]

    def cached(self, key: str, compute):
        """``compute()``, kept until a structure or resource comes, goes or finishes."""
        version, value = self._structure_cache.get(key, (-1, None))
        if version != self.structure_version:
            value = compute()
            self._structure_cache[key] = (self.structure_version, value)
        return value

    def _footprints(self):
        """The structures and resources, their footprints (m, 4) and which are resources."""

        def compute():
            structures = [u for u in self.units.values() if u.type.is_structure]
            rects = np.array([u.footprint() for u in structures], dtype=float).reshape(-1, 4)
            resource = np.array(
                [u.type.has_minerals or u.type.has_vespene for u in structures], dtype=bool
            )
            return structures, rects, resource

        return self.cached("footprints", compute)

    def units_of(self, owner: Owner, unit_type: UnitType | None = None) -> list[Unit]:
        return [
            u
            for u in self.units.values()
            if u.owner == owner and (unit_type is None or u.type is unit_type)
        ]

    def selected_units(self, owner: Owner = Owner.AGENT) -> list[Unit]:
        return [self.units[t] for t in self.players[owner].selection if t in self.units]

    def select(self, tags, owner: Owner = Owner.AGENT) -> None:
        self.players[owner].selection = [t for t in dict.fromkeys(tags) if t in self.units]

    def random_point(self, rect, avoid=(), min_dist=0.0, tries=200):
        """A uniform point in ``rect`` at least ``min_dist`` from every (x, y) in ``avoid``.

        The map scripts re-roll until the rule holds; we do the same, and after
        ``tries`` keep the farthest candidate so a crowded map cannot hang the game.
        """
        x0, y0, x1, y1 = rect
        best, best_d = None, -1.0
        for _ in range(tries):
            x, y = self.rng.uniform(x0, x1), self.rng.uniform(y0, y1)
            d = min((math.hypot(x - ax, y - ay) for ax, ay in avoid), default=math.inf)
            if d >= min_dist:
                return float(x), float(y)
            if d > best_d:
                best, best_d = (float(x), float(y)), d
        return best

    # --- clock -------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self.result is not None

    def end(self, result: int) -> None:
        if self.result is None:
            self.result = result

    def end_after_delay(self, result: int) -> None:
        """Schedule the end the way the map scripts do after the last marine dies."""
        if self._end_at is None:
            self._end_at = self.game_loop + END_DELAY_LOOPS
            self._end_result = result

    def step(self, loops: int) -> None:
        """Advance ``loops`` game loops, stopping early if the episode ends. The explored
        grid grows every ``FOG_EVERY`` loops and at the end, not every loop: in that time
        a unit moves about one cell, so only slivers at the edge of its sight go unseen."""
        for i in range(loops):
            if self.ended:
                break
            self._tick()
            if (i + 1) % FOG_EVERY == 0:
                self._update_fog()
        self._update_fog()

    def _tick(self) -> None:
        if self._end_at is None:  # after the last death the scripts pause all units
            acting = list(self.units.values())
            self._rosters = {
                owner: [u for u in acting if u.owner == owner]
                for owner in (Owner.AGENT, Owner.HOSTILE)
            }
            self._roster_cells = {owner: _cells(units) for owner, units in self._rosters.items()}
            self._roster_boxes = {
                owner: _box(units) for owner, units in self._rosters.items() if units
            }
            combat.land_due(self)  # this loop's damage, together, before anyone acts
            if all(self._rosters.values()):  # two players' units: neither acts first by rule
                acting = [acting[i] for i in self._turns.permutation(len(acting)).tolist()]
            for unit in acting:
                if unit.alive:  # a unit killed earlier in this loop starts no attack
                    self._act(unit)
            self._resolve_collisions()
            self._remove_the_dead()
            self.scenario.on_loop(self)
        self.game_loop += 1
        if self.game_loop % LOOPS_PER_SECOND == 0:
            for player in self.players.values():
                player.stats.second_passed()
        if self._end_at is not None and self.game_loop >= self._end_at:
            self.end(self._end_result)
        elif self.game_loop >= self.scenario.time_limit_loops:
            self.end(self.scenario.timeout_result)

    def _remove_the_dead(self) -> None:
        """The units killed in this loop; a baneling among them bursts as it dies, which
        may kill more."""
        dead = [u for u in self.units.values() if not u.alive]
        while dead:
            for unit in dead:
                self.remove(unit)
                self.scenario.on_death(self, unit)
                if unit.type.splash_radius:
                    combat.burst(self, unit)
            dead = [u for u in self.units.values() if not u.alive]

    # --- unit behaviour ----------------------------------------------------------------

    def _act(self, unit: Unit) -> None:
        if unit.cooldown > 0:
            unit.cooldown -= 1
        if unit.type.speed == 0 and not unit.type.can_attack:
            if unit.queue:
                economy.produce(self, unit)
            elif unit.type.type_id in PRODUCER_IDS and unit.finished:
                self.players[unit.owner].stats.idle_production_time += 1
            return
        order = unit.orders[0] if unit.orders else None
        if order is None:
            if unit.type is SCV:  # the one worker type emulated
                self.players[unit.owner].stats.idle_worker_time += 1
            self._idle(unit)
        elif order.kind == "move":
            if self.move_towards(unit, *order.point, stop_at=0.0) or self._stalled(unit, order):
                unit.orders.pop(0)
        elif order.kind == "attack" and order.target is not None:
            target = self.units.get(order.target)
            if target is None or not target.alive:
                unit.orders.pop(0)
            else:
                combat.engage(self, unit, target, may_move=True)
        elif order.kind in ("attack", "patrol"):
            enemy = self._acquire(unit, unit.type.acquire_range)
            if enemy is not None:
                order.stalled = 0
                combat.engage(self, unit, enemy, may_move=True)
            elif self.move_towards(unit, *order.point, stop_at=0.0) or self._stalled(unit, order):
                if order.kind == "patrol":
                    order.point, order.origin = order.origin, order.point
                    order.closest, order.stalled = float("inf"), 0
                else:
                    unit.orders.pop(0)
        elif order.kind == "land":
            if economy.land(self, unit, order):
                unit.orders.pop(0)
        elif order.kind in economy.WORKER_ORDERS:
            if economy.work(self, unit, order) and unit.orders and unit.orders[0] is order:
                unit.orders.pop(0)

    @staticmethod
    def _stalled(unit: Unit, order: Order) -> bool:
        """A group sent to one point cannot all stand on it: an order is done once the
        unit is near the point and has stopped getting closer for ``STALL_LOOPS``."""
        dist = unit.distance_to(*order.point)
        if dist < order.closest - 0.01:
            order.closest, order.stalled = dist, 0
            return False
        order.stalled += 1
        return order.stalled >= STALL_LOOPS and dist < STALL_RADIUS

    def _idle(self, unit: Unit) -> None:
        """Idle units fire at enemies they notice and chase them a little; holding ones never move."""
        if not unit.type.can_attack:
            return
        target = self.units.get(unit.target) if unit.target is not None else None
        reach = unit.type.weapon_range if unit.holding else unit.type.acquire_range
        if target is not None and target.alive and unit.leash is not None:
            if math.dist(unit.leash, (target.x, target.y)) > unit.type.acquire_range + 4:
                target = None  # gave up the chase
        if target is None or not target.alive:
            unit.target = None
            target = self._acquire(unit, reach)
            if target is None:
                return
            unit.target, unit.leash = target.tag, (unit.x, unit.y)
        combat.engage(self, unit, target, may_move=not unit.holding)

    def _acquire(self, unit: Unit, reach: float) -> Unit | None:
        """The nearest visible enemy within ``reach`` of the unit's edge."""
        opponent = Owner.HOSTILE if unit.owner == Owner.AGENT else Owner.AGENT
        cells = self._roster_cells.get(opponent)
        if not cells:
            return None
        # Only where a unit in reach can have been as the loop began (CELL_SLACK): most
        # searching units are far from every enemy, and the box of them all says so at once.
        ux, uy, ur = unit.x, unit.y, unit.type.radius  # distance_to, inlined: a hot loop
        span = reach + ur + MAX_RADIUS + CELL_SLACK
        bx0, by0, bx1, by1 = self._roster_boxes[opponent]
        if ux + span < bx0 or ux - span > bx1 or uy + span < by0 or uy - span > by1:
            return None
        x0, x1 = int((ux - span) // CELL), int((ux + span) // CELL)
        y0, y1 = int((uy - span) // CELL), int((uy + span) // CELL)
        best, best_key = None, (math.inf, 0)
        for i in range(x0, x1 + 1):
            for j in range(y0, y1 + 1):
                for order, other in cells.get((i, j), ()):
                    if not other.alive or other.tag not in self.units:
                        continue
                    d = ((ux - other.x) ** 2 + (uy - other.y) ** 2) ** 0.5 - ur - other.type.radius
                    # the nearest; of equals, the first in the roster
                    if d <= reach and (d, order) < best_key:
                        best, best_key = other, (d, order)
        return best

    def move_towards(
        self, unit: Unit, x: float, y: float, stop_at: float, goal: Box | None = None
    ) -> bool:
        """Walk at unit speed; True once within ``stop_at`` of (x, y) (or on it).
        ``goal``: the footprint (x0, y0, x1, y1) whose edge (x, y) lies on, where the
        walk is to a structure or a building site (``_waypoint``)."""
        dx, dy = x - unit.x, y - unit.y
        dist = math.hypot(dx, dy)
        remaining = dist - stop_at
        if remaining <= 1e-6:
            return True
        speed = unit.type.speed
        if unit.type.acceleration:  # from a standstill it speeds up loop by loop
            if unit.moved_at != self.game_loop - 1:
                unit.speed_now = 0.0
            unit.speed_now = speed = min(speed, unit.speed_now + unit.type.acceleration)
            unit.moved_at = self.game_loop
        step = min(speed, remaining)
        straight = unit.clear_way == (x, y, self.structure_version, unit.harvesting, unit.x, unit.y)
        if self.structure_version and unit.type.collides and not straight:  # flyers fly over
            wx, wy = self._waypoint(unit, x, y, goal)
            if (wx, wy) != (x, y):  # round a structure first
                dx, dy = wx - unit.x, wy - unit.y
                dist = max(math.hypot(dx, dy), 1e-9)
                unit.x += dx / dist * min(step, dist)
                unit.y += dy / dist * min(step, dist)
                unit.facing = math.atan2(dy, dx)
                return False
        unit.x += dx / dist * step
        unit.y += dy / dist * step
        unit.facing = math.atan2(dy, dx)
        # Unless a push moves it off this line, the rest of the way is clear too.
        unit.clear_way = (x, y, self.structure_version, unit.harvesting, unit.x, unit.y)
        return step >= remaining - 1e-6

    def _waypoint(
        self, unit: Unit, x: float, y: float, goal: Box | None = None
    ) -> tuple[float, float]:
        """Where to walk to get round the first structure on the straight line to (x, y):
        the corner of it that makes the shorter way. The emulator has no path finding;
        this is enough for a base's few buildings. Harvesting workers pass resources.
        The structure walked to is not in the way: the ``goal`` footprint where given,
        and any whose reach holds (x, y). A point of a ``goal``'s edge within another
        structure's reach (a site beside a depot) cannot be stood at: the way leads to
        the goal's centre instead, which its neighbour does not hide. A site built over
        meanwhile holds its centre too: the builder walks on to it, and the game refuses
        the order there, as it does a player's.

        Runs for most moving units every loop, so it is plain Python over the few boxes
        near the line: numpy's per-call cost on a few dozen rectangles was most of it."""
        r = unit.type.radius - 0.02  # just inside where the push-out leaves a unit
        passes_resources = unit.harvesting
        if goal is not None:
            x, y = self._open_point(x, y, goal, r, passes_resources)
        ax, ay = unit.x, unit.y
        lo_x, hi_x, lo_y, hi_y = min(ax, x), max(ax, x), min(ay, y), max(ay, y)
        first, nearest = None, 1.0
        for x0, y0, x1, y1, is_resource in self._footprint_boxes():
            gx0, gy0, gx1, gy1 = x0 - r, y0 - r, x1 + r, y1 + r
            if gx1 < lo_x or gx0 > hi_x or gy1 < lo_y or gy0 > hi_y:
                continue  # wholly to one side of the line: it cannot enter
            walked_to = (x0, y0, x1, y1) == goal or (gx0 <= x <= gx1 and gy0 <= y <= gy1)
            if (passes_resources and is_resource) or walked_to:
                continue  # a resource it passes, or the target itself
            t = _segment_enter(ax, ay, x, y, gx0, gy0, gx1, gy1)
            if t < nearest:
                first, nearest = (gx0, gy0, gx1, gy1), t
        if first is None:
            return x, y
        m = 0.15  # corners just clear of the footprint
        here = (ax, ay)
        corners = [
            (cx, cy)
            for cx in (first[0] - m, first[2] + m)
            for cy in (first[1] - m, first[3] + m)
            if math.dist(here, (cx, cy)) > 0.05  # not the corner it stands at
            and _segment_enter(ax, ay, cx, cy, *first) == math.inf
        ]
        if not corners:
            return x, y
        # Prefer a corner from which the destination is in sight: walking back to the
        # nearer corner would only come round again.
        return min(
            corners,
            key=lambda c: (
                _segment_enter(*c, x, y, *first) != math.inf,
                math.dist(here, c) + math.dist(c, (x, y)),
            ),
        )

    def _open_point(
        self, x: float, y: float, goal: Box, r: float, passes_resources: bool
    ) -> tuple[float, float]:
        """(x, y), or the centre of ``goal`` where another footprint's reach (``r``)
        holds (x, y) (a resource's not, for a unit that passes resources)."""
        for x0, y0, x1, y1, is_resource in self._footprint_boxes():
            if (passes_resources and is_resource) or (x0, y0, x1, y1) == goal:
                continue
            if x0 - r <= x <= x1 + r and y0 - r <= y <= y1 + r:
                return (goal[0] + goal[2]) / 2, (goal[1] + goal[3]) / 2
        return x, y

    def _footprint_boxes(self) -> list[tuple[float, float, float, float, bool]]:
        """The footprints as plain tuples (x0, y0, x1, y1, is a resource), for loops."""

        def compute():
            _, rects, resource = self._footprints()
            return [(*rect, bool(r)) for rect, r in zip(rects.tolist(), resource)]

        return self.cached("footprint boxes", compute)

    def _resolve_collisions(self) -> None:
        """Push overlapping ground units apart (half the overlap each) and out of
        structures, then keep them on the map. Harvesting workers pass through each
        other, as the game's do, and through resources (the emulator has no pathing
        around a mineral line)."""
        movers = [u for u in self.units.values() if u.type.collides and u.type.speed > 0]
        if self.structure_version:  # an economy map: workers, structures and resources
            harvesting = [u.harvesting for u in movers]
            self._separate([u for u, h in zip(movers, harvesting) if not h])
            self._push_out_of_structures(movers, harvesting)
        else:
            self._separate(movers)
        x0, y0, x1, y1 = self.scenario.playable
        for unit in movers:  # comparisons, not min(max()): this runs for every unit
            r = unit.type.radius
            if unit.x < x0 + r:
                unit.x = x0 + r
            elif unit.x > x1 - r:
                unit.x = x1 - r
            if unit.y < y0 + r:
                unit.y = y0 + r
            elif unit.y > y1 - r:
                unit.y = y1 - r

    def _separate(self, movers: list[Unit]) -> None:
        """Push overlapping ``movers`` apart, half the overlap each. Idle units stand
        still for many loops: while nobody moved since a pass found them all apart, the
        pass is not repeated (it would find the same)."""
        placed = [(u.tag, u.x, u.y) for u in movers]
        if placed == self._apart:
            return
        self._apart = None
        if len(movers) > 1:
            pos = np.array([(x, y) for _, x, y in placed])
            rad = np.array([u.type.radius for u in movers])
            delta = pos[:, None, :] - pos[None, :, :]
            dist = np.hypot(delta[..., 0], delta[..., 1])
            overlap = rad[:, None] + rad[None, :] - dist
            np.fill_diagonal(overlap, 0.0)
            hit = overlap > 1e-6
            if hit.any():
                # Coincident units separate along a fixed axis so results stay deterministic.
                safe = np.where(dist > 1e-9, dist, 1.0)
                direction = np.where(
                    (dist > 1e-9)[..., None],
                    delta / safe[..., None],
                    np.sign(
                        np.arange(len(movers))[:, None, None]
                        - np.arange(len(movers))[None, :, None]
                    )
                    * [1.0, 0.0],
                )
                push = (np.where(hit, overlap / 2, 0.0)[..., None] * direction).sum(axis=1)
                pos += push
                for i in np.flatnonzero(hit.any(axis=1)).tolist():  # the rest did not move
                    movers[i].x, movers[i].y = float(pos[i, 0]), float(pos[i, 1])
                return
        self._apart = placed

    def _push_out_of_structures(self, movers: list[Unit], harvesting: list[bool]) -> None:
        """Move each unit that overlaps a footprint to just outside its nearest edge."""
        structures, rects, resource = self._footprints()
        if not movers or not structures:
            return
        pos = np.array([(u.x, u.y) for u in movers])
        radii = np.array([u.type.radius for u in movers])[:, None]
        # Which units are within a radius of which footprints' boxes (the few to look at).
        near = (
            (rects[None, :, 0] - radii < pos[:, None, 0])
            & (pos[:, None, 0] < rects[None, :, 2] + radii)
            & (rects[None, :, 1] - radii < pos[:, None, 1])
            & (pos[:, None, 1] < rects[None, :, 3] + radii)
            & ~(np.array(harvesting)[:, None] & resource[None, :])
        )
        boxes = self._footprint_boxes()  # plain floats: positions stay Python floats
        for i, j in zip(*np.nonzero(near)):
            unit, (x0, y0, x1, y1, _) = movers[i], boxes[j]
            r = unit.type.radius
            nx, ny = min(max(unit.x, x0), x1), min(max(unit.y, y0), y1)
            d = math.hypot(unit.x - nx, unit.y - ny)
            if d > 1e-9:
                if d < r:
                    unit.x = nx + (unit.x - nx) / d * r
                    unit.y = ny + (unit.y - ny) / d * r
                continue
            # The centre is inside: leave through the nearest side.
            left, right, down, up = unit.x - x0, x1 - unit.x, unit.y - y0, y1 - unit.y
            nearest = min(left, right, down, up)
            if nearest == left:
                unit.x = x0 - r
            elif nearest == right:
                unit.x = x1 + r
            elif nearest == down:
                unit.y = y0 - r
            else:
                unit.y = y1 + r

    # --- fog ---------------------------------------------------------------------------

    def visibility(self) -> np.ndarray:
        """Per map cell [y, x]: 0 hidden, 1 fogged (seen before), 2 visible."""
        if not self.scenario.fog:
            return np.full(MAP_SIZE[::-1], 2, dtype=np.uint8)
        vis = self._visible_cells()
        return np.where(vis, 2, np.where(self.agent.explored, 1, 0)).astype(np.uint8)

    def _visible_cells(self) -> np.ndarray:
        """Cells whose centre is within some own unit's sight, each unit drawn in its own
        box of the grid only; once a game loop (the step's fog and its observation)."""
        # Units move only in a loop; between loops debug commands may add or kill some.
        key = (self.game_loop, self._next_tag, len(self.units))
        if self._vis_cache[0] != key:
            self._vis_cache = (key, self._draw_sight())
        return self._vis_cache[1]

    def _draw_sight(self) -> np.ndarray:
        height, width = MAP_SIZE[::-1]
        return sight_grid([(u.x, u.y, u.type.sight) for u in self.own_units()], width, height)

    def _update_fog(self) -> None:
        if self.scenario.fog:
            self.agent.explored |= self._visible_cells()

    def is_visible(self, unit: Unit) -> bool:
        if not self.scenario.fog or unit.owner == Owner.AGENT:
            return True
        return any(
            math.hypot(u.x - unit.x, u.y - unit.y) <= u.type.sight + unit.type.radius
            for u in self.own_units()
        )

    def visible_units(self, owner: Owner = Owner.AGENT) -> list[Unit]:
        """Every unit ``owner`` sees (its own, and others within its units' sight), at once."""
        units = list(self.units.values())
        if not self.scenario.fog:
            return units
        own = self.own_units(owner)
        if not own:
            return [u for u in units if u.owner == owner]
        eyes = np.array([(u.x, u.y, u.type.sight) for u in own])
        seen = np.array([(u.x, u.y, u.type.radius) for u in units])
        reach = eyes[:, None, 2] + seen[None, :, 2]
        close = np.hypot(eyes[:, None, 0] - seen[None, :, 0], eyes[:, None, 1] - seen[None, :, 1])
        visible = (close <= reach).any(axis=0)
        return [u for u, v in zip(units, visible) if v or u.owner == owner]

    # --- orders ------------------------------------------------------------------------

    def command(
        self, units: list[Unit], order: Order | None, queue: bool = False, owner=Owner.AGENT
    ) -> None:
        """Give ``order`` (None = stop) to ``owner``'s ``units``; hold is an order kind."""
        for unit in units:
            if unit.owner != owner or unit.type.speed == 0:
                continue
            unit.target, unit.leash = None, None
            if not queue:
                combat.cancel(unit)
            if order is None or order.kind == "hold":
                unit.orders.clear()
                unit.holding = order is not None
                continue
            unit.holding = False
            copy = dataclasses.replace(order)
            if copy.kind == "patrol":
                copy.origin = (unit.x, unit.y)
            if queue:
                unit.orders.append(copy)
            else:
                unit.orders[:] = [copy]


def sight_grid(eyes: list[tuple[float, float, float]], width: int, height: int) -> np.ndarray:
    """[y, x] cells whose centre is within some eye's sight, eyes given as (x, y, radius).

    Every eye's disc is computed at once, each in a square window around it, and OR-ed into
    a grid padded by a window, so that no window needs clipping at the map's edge: a
    handful of numpy calls for the whole army and one per unit, instead of ten per unit.
    """
    if not eyes:
        return np.zeros((height, width), dtype=bool)
    e = np.asarray(eyes, dtype=float)
    pad = int(math.ceil(e[:, 2].max())) + 1  # a centre in sight is at most s + 0.5 away
    size = 2 * pad + 1
    x0 = np.floor(e[:, 0]).astype(int) - pad
    y0 = np.floor(e[:, 1]).astype(int) - pad
    steps = np.arange(size)
    dx = x0[:, None] + steps + 0.5 - e[:, 0, None]
    dy = y0[:, None] + steps + 0.5 - e[:, 1, None]
    inside = dx[:, None, :] ** 2 + dy[:, :, None] ** 2 <= e[:, 2, None, None] ** 2
    grid = np.zeros((height + 2 * size, width + 2 * size), dtype=bool)
    for i, (x, y) in enumerate(zip(x0 + size, y0 + size)):
        grid[y : y + size, x : x + size] |= inside[i]
    return grid[size : size + height, size : size + width]


def _cells(units: list[Unit]) -> dict[tuple[int, int], list]:
    """``units`` bucketed by the ``CELL``-sized grid cell of their centre, with their index."""
    cells: dict[tuple[int, int], list] = {}
    for order, unit in enumerate(units):
        cells.setdefault((int(unit.x // CELL), int(unit.y // CELL)), []).append((order, unit))
    return cells


def _box(units: list[Unit]) -> tuple[float, float, float, float]:
    """The box (x0, y0, x1, y1) the centres of ``units`` span."""
    xs, ys = [u.x for u in units], [u.y for u in units]
    return min(xs), min(ys), max(xs), max(ys)


def _segment_enter(ax, ay, bx, by, x0, y0, x1, y1) -> float:
    """The fraction of the way from a to b at which the segment enters the rectangle
    (x0, y0, x1, y1) (Liang-Barsky clipping); inf where it misses it."""
    dx, dy = bx - ax, by - ay
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, ax - x0), (dx, x1 - ax), (-dy, ay - y0), (dy, y1 - ay)):
        if abs(p) < 1e-12:
            if q < 0:
                return math.inf
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
    return math.inf if t0 > t1 else t0
