"""Scripted agents for the two economy mini-games, in the manner of pysc2's own.

They read only the feature screen, the player row and the selection panels, so they play
the real game as well as the emulator. Each step either carries on a short plan (select
something, then command it) or picks the next plan by priority; a plan whose next action
is not available is dropped.
"""

from __future__ import annotations

import numpy as np

from . import macros
from .pysc2lib import actions, base_agent, units

FUNCTIONS = actions.FUNCTIONS
RAW = actions.RAW_FUNCTIONS
SCV, COMMAND_CENTER = units.Terran.SCV, units.Terran.CommandCenter
SUPPLY_DEPOT, BARRACKS, REFINERY = (
    units.Terran.SupplyDepot,
    units.Terran.Barracks,
    units.Terran.Refinery,
)
MINERAL_FIELD, GEYSER = units.Neutral.MineralField, units.Neutral.VespeneGeyser
SCREEN_WIDTH = 24.0  # world units across the screen (pysc2's default camera width)


def _pixels(screen, unit_type) -> np.ndarray:
    """(x, y) of every screen pixel showing ``unit_type``."""
    y, x = np.nonzero(screen.unit_type == unit_type)
    return np.stack([x, y], axis=1)


def _at(point) -> list[int]:
    """A screen point as the whole pixel pysc2's actions take."""
    return [int(round(float(point[0]))), int(round(float(point[1])))]


def _blobs(pixels: np.ndarray, radius: float) -> list[np.ndarray]:
    """Group pixels into the units they belong to: centres of clusters ``radius`` wide."""
    left, centres = pixels.astype(float), []
    while len(left):
        near = np.linalg.norm(left - left[0], axis=1) <= radius
        centres.append(left[near].mean(axis=0))
        left = left[~near]
    return centres


class _EconomyAgent(base_agent.BaseAgent):
    """The plan machinery and the screen reading both economy agents share."""

    # Agent steps before ordering the same structure again: about the time to walk there
    # and build it, less for depots, which a growing army needs two at a time.
    BUILD_COOLDOWN = 60
    DEPOT_COOLDOWN = 30

    def reset(self):
        super().reset()
        self._plan = None
        self._tried_sites: set[tuple[int, int]] = set()
        self._ordered: dict[int, int] = {}  # structure type -> step it was last ordered
        self._progress, self._stalled = -1, 0

    def step(self, obs):
        super().step(obs)
        self.obs = obs.observation
        self._watch_construction()
        available = set(self.obs.available_actions)
        for _attempt in range(2):  # carry on the plan, or start the next one
            if self._plan is None:
                self._plan = self.next_plan()
                if self._plan is None:
                    return FUNCTIONS.no_op()
            action = next(self._plan, None)
            if action is not None and action.function in available:
                return action
            self._plan = None
        return FUNCTIONS.no_op()

    def next_plan(self):
        """Idle SCVs to work and stalled buildings resumed first, then the map's own plan."""
        cc = self.command_center()
        field = self.field_near(cc)
        if cc is None or field is None:
            return None
        return self.common_plan(cc, field) or self.map_plan(cc, field)

    def map_plan(self, cc, field):
        raise NotImplementedError

    def _watch_construction(self) -> None:
        """Count the steps in which no structure under construction made progress (its
        SCV was called away: a Terran structure then waits for one to come back)."""
        screen = self.obs.feature_screen
        progress = int(screen.build_progress.sum())
        self._stalled = self._stalled + 1 if progress and progress == self._progress else 0
        self._progress = progress

    def may_order(self, unit_type) -> bool:
        wait = self.DEPOT_COOLDOWN if unit_type == SUPPLY_DEPOT else self.BUILD_COOLDOWN
        return self.steps - self._ordered.get(unit_type, -wait) >= wait

    def common_plan(self, cc, field):
        """What both agents do first: put idle SCVs to work and resume stalled buildings."""
        if self.obs.player.idle_worker_count:
            return self.mine_with_idle_workers(field)
        if self._stalled >= 8:
            self._stalled = 0
            screen = self.obs.feature_screen
            y, x = np.nonzero(screen.build_progress > 0)
            return self.resume(np.array([x[0], y[0]]), field)
        return None

    # --- what the screen shows ----------------------------------------------------------

    @property
    def scale(self) -> float:
        return self.obs.feature_screen.shape[2] / SCREEN_WIDTH  # pixels per world unit

    def centres(self, unit_type, size: float) -> list[np.ndarray]:
        return _blobs(_pixels(self.obs.feature_screen, unit_type), size * self.scale)

    def finished(self, unit_type, size: float) -> list[np.ndarray]:
        screen = self.obs.feature_screen
        done = (screen.unit_type == unit_type) & (screen.build_progress == 0)
        y, x = np.nonzero(done)
        return _blobs(np.stack([x, y], axis=1), size * self.scale)

    def under_construction(self, unit_type) -> bool:
        screen = self.obs.feature_screen
        return bool(((screen.unit_type == unit_type) & (screen.build_progress > 0)).any())

    def field_near(self, cc) -> np.ndarray | None:
        """The mineral field pixel nearest the command center (a click that hits it)."""
        return self.nearest(_pixels(self.obs.feature_screen, MINERAL_FIELD), cc)

    def command_center(self) -> np.ndarray | None:
        found = self.centres(COMMAND_CENTER, 5.5)
        return found[0] if found else None

    def nearest(self, points, to) -> np.ndarray | None:
        if not len(points) or to is None:
            return None
        points = np.asarray(points, dtype=float)
        return points[np.argmin(np.linalg.norm(points - to, axis=1))]

    def selected(self, unit_type) -> bool:
        chosen = (
            list(self.obs.multi_select[:, 0])
            if len(self.obs.multi_select)
            else list(self.obs.single_select[:, 0])
        )
        return bool(chosen) and all(t == unit_type for t in chosen)

    def build_site(self, cells: int, away_from) -> np.ndarray | None:
        """A screen point where a ``cells``-wide footprint plus a cell of walkway is
        buildable and free of units, the farthest such point from ``away_from`` first
        out of the ones not tried yet (a refused site is not offered again)."""
        screen = self.obs.feature_screen
        free = ((screen.buildable > 0) & (screen.unit_type == 0)).astype(np.int32)
        half = int(np.ceil((cells / 2 + 1) * self.scale))
        # Free pixels in every (2 half)-square window at once, from a summed-area table.
        table = np.pad(free.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
        k = 2 * half
        counts = table[k:, k:] - table[:-k, k:] - table[k:, :-k] + table[:-k, :-k]
        ys, xs = np.nonzero(counts == k * k)
        ys, xs = ys + half, xs + half  # window centres
        step = max(1, int(self.scale))
        keep = [
            (x, y)
            for x, y in zip(xs, ys)
            if x % step == 0 and y % step == 0 and (x, y) not in self._tried_sites
        ]
        if not keep:
            return None
        best = max(keep, key=lambda p: float(np.linalg.norm(np.array(p) - away_from)))
        best = (int(best[0]), int(best[1]))
        self._tried_sites.add(best)
        return np.array(best)

    # --- plans ----------------------------------------------------------------------------

    def mine_with_idle_workers(self, field):
        yield FUNCTIONS.select_idle_worker("select_all")
        yield FUNCTIONS.Harvest_Gather_screen("now", _at(field))

    def builder(self, field):
        """A mining SCV: the one nearest the mineral line, so never a builder at its site."""
        return self.nearest(_pixels(self.obs.feature_screen, SCV), field)

    def build(self, function, unit_type, site, field):
        scv = self.builder(field)
        if scv is None or site is None:
            return
        self._ordered[unit_type] = self.steps
        yield FUNCTIONS.select_point("select", _at(scv))
        yield function("now", _at(site))

    def resume(self, structure, field):
        scv = self.builder(field)
        if scv is None:
            return
        yield FUNCTIONS.select_point("select", _at(scv))
        yield FUNCTIONS.Smart_screen("now", _at(structure))

    def queue_short(self) -> bool:
        return len(self.obs.build_queue) < 2

    def send_worker(self, target):
        """One mining SCV (the one nearest the command center) to ``target``."""
        scvs = _pixels(self.obs.feature_screen, SCV)
        if not len(scvs):
            return
        yield FUNCTIONS.select_point("select", _at(self.nearest(scvs, self.command_center())))
        if self.selected(SCV):
            yield FUNCTIONS.Harvest_Gather_screen("now", _at(target))


class CollectMineralsAndGas(_EconomyAgent):
    """Every idle SCV mines; the command center trains SCVs up to 16 on minerals and 3 on
    each of two refineries, with depots built before supply runs out."""

    MINERAL_WORKERS = 16
    REFINERIES = 2

    def reset(self):
        super().reset()
        self._gas_workers = {}  # refinery screen position -> SCVs sent to it
        self._rallied = False

    def map_plan(self, cc, field):
        player = self.obs.player
        for refinery in self.finished(REFINERY, 3.0):
            key = tuple(np.round(refinery).astype(int))
            if self._gas_workers.setdefault(key, 1) < 3:  # its builder is the first
                self._gas_workers[key] += 1
                return self.send_worker(refinery)
        headroom = player.food_cap - player.food_used
        if headroom <= 3 and player.minerals >= 100 and self.may_order(SUPPLY_DEPOT):
            return self.build(
                FUNCTIONS.Build_SupplyDepot_screen, SUPPLY_DEPOT, self.build_site(2, field), field
            )
        started = len(self.centres(REFINERY, 3.0))
        if (
            started < self.REFINERIES
            and player.minerals >= 75
            and player.food_workers >= 14
            and self.may_order(REFINERY)
        ):
            geyser = self.nearest(self.centres(GEYSER, 3.0), cc)
            if geyser is not None:
                return self.build(FUNCTIONS.Build_Refinery_screen, REFINERY, geyser, field)
        wanted = self.MINERAL_WORKERS + 3 * self.REFINERIES
        if player.food_workers < wanted and player.minerals >= 50 and headroom >= 1:
            return self.train_scv(cc, field)
        return None

    def train_scv(self, cc, field):
        yield FUNCTIONS.select_point("select", _at(cc))
        if not self._rallied:
            self._rallied = True
            yield FUNCTIONS.Rally_Workers_screen("now", _at(field))
        if self.queue_short():
            yield FUNCTIONS.Train_SCV_quick("now")


class BuildMarines(_EconomyAgent):
    """Keep the SCVs mining and a few more training, depots ahead of supply, then
    barracks, and every barracks training marines."""

    WORKERS = 18
    BARRACKS = 8

    def map_plan(self, cc, field):
        player = self.obs.player
        barracks = self.finished(BARRACKS, 3.5)
        headroom = player.food_cap - player.food_used
        if (
            headroom <= 2 + 2 * len(barracks)
            and player.minerals >= 100
            and player.food_cap < 200
            and self.may_order(SUPPLY_DEPOT)
        ):
            return self.build(
                FUNCTIONS.Build_SupplyDepot_screen, SUPPLY_DEPOT, self.build_site(2, field), field
            )
        if barracks and player.minerals >= 50 and headroom >= 1:
            return self.train_marines(barracks[0])
        depots = self.finished(SUPPLY_DEPOT, 2.5)
        started = len(self.centres(BARRACKS, 3.5))
        if (
            depots
            and started < self.BARRACKS
            and player.minerals >= 150
            and self.may_order(BARRACKS)
        ):
            return self.build(
                FUNCTIONS.Build_Barracks_screen, BARRACKS, self.build_site(3, field), field
            )
        if player.food_workers < self.WORKERS and player.minerals >= 50 and headroom >= 1:
            return self.train_scv(cc)
        return None

    def train_scv(self, cc):
        yield FUNCTIONS.select_point("select", _at(cc))
        if self.queue_short():
            yield FUNCTIONS.Train_SCV_quick("now")

    def train_marines(self, barracks):
        # Every barracks on the screen at once: a queued marine goes to the shortest queue.
        yield FUNCTIONS.select_point("select_all_type", _at(barracks))
        for _ in range(2):
            yield FUNCTIONS.Train_Marine_quick("now")


class TerranMacro(base_agent.BaseAgent):
    """A scripted Terran for a melee map: the macro actions of ``macros.py`` (the env needs
    ``use_raw_units`` and ``use_raw_actions``) picked by a fixed priority. It builds
    supply depots ahead of its production, defends its base from the enemies it sees
    there, builds up to ``BARRACKS`` barracks, trains SCVs to ``WORKERS`` and marines
    always, keeps its SCVs mining, and once ``WAVE`` marines stand ready attacks with all of
    them whenever one is idle, until fewer than half a wave are left to gather again. One
    action a step, so it plays through pysc2 exactly as a learning agent does."""

    WORKERS, BARRACKS, WAVE = 16, 6, 30
    macro_actions = True  # it sends raw calls: sc2dask makes its env take them

    def reset(self):
        super().reset()
        self.attacking = False
        self.macros = macros.TerranMacros()

    def step(self, obs):
        super().step(obs)
        observation = obs.observation
        board = macros.Board.read(observation)
        can = board.can()
        # It attacks from a wave on, and gathers a new wave once fewer than half are left.
        marines = len(board.marines)
        self.attacking = marines >= self.WAVE or self.attacking and marines >= self.WAVE // 2
        for name in self.wanted(board, can, self.attacking):  # by priority
            action = self.macros.play(name, board, can)
            if action.function != RAW.no_op.id:
                return action
        return RAW.no_op()

    @classmethod
    def wanted(cls, board: macros.Board, can: dict[str, bool], attacking: bool) -> list[str]:
        """The macros it wants and can play on ``board``, first first (``attacking``: once
        a wave of ``WAVE`` marines has stood ready)."""
        idle_marine = any(u.order_length == 0 for u in board.marines)
        depots = board.underway(macros.BUILD_DEPOT, board.depots)
        wanted = {
            # 8 supply a depot underway; each barracks needs about 2 more while one goes up
            "build_supply_depot": board.supply_left + 8 * sum(depots) < 4 + 2 * len(board.barracks),
            "defend": idle_marine,
            "build_barracks": len(board.barracks) < cls.BARRACKS,
            "train_scv": len(board.scvs) < cls.WORKERS,
            "train_marine": True,
            "gather": True,
            "attack": attacking and idle_marine,
        }
        return [name for name, want in wanted.items() if want and can[name]]

    @classmethod
    def choice(cls, board: macros.Board, can: dict[str, bool]) -> int:
        """Its choice on ``board`` alone, as an index of ``macros.MACROS``: a teacher's for
        kickstarting (``agent.kickstart``). With no memory of the game, it attacks while
        ``WAVE`` marines stand, where ``step`` goes on attacking down to half a wave; and it is
        the first macro wanted, where ``step`` passes over one that cannot act after all
        (a site refused three times, which only the env's macros remember)."""
        first = cls.wanted(board, can, len(board.marines) >= cls.WAVE)[:1] or ["no_op"]
        return macros.MACROS.index(first[0])


class RandomMacro(base_agent.BaseAgent):
    """Uniform random play over the macros available each step: the untrained policy of
    the ``macro`` action set, the baseline a learning agent must beat."""

    macro_actions = True  # it sends raw calls: sc2dask makes its env take them

    def __init__(self, seed: int | str = 0):  # a str from ``Class:argument``
        super().__init__()
        self.seed(int(seed))

    def seed(self, seed: int) -> None:
        """Its choices from ``seed`` (an env host gives each episode its own)."""
        self.rng = np.random.default_rng(seed)

    def reset(self):
        super().reset()
        self.macros = macros.TerranMacros()

    def step(self, obs):
        super().step(obs)
        board = macros.Board.read(obs.observation)
        can = board.can()
        choices = [name for name in macros.MACROS if can[name]]
        return self.macros.play(choices[int(self.rng.choice(len(choices)))], board, can)
