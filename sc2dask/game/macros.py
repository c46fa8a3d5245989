"""Macro actions for a Terran melee game: a few whole intentions, each one raw pysc2 action.

A policy that clicks pysc2's features functions must find a worker, a free site and the
right moment on its own before a single barracks stands; random play wins nothing, and A2C
learns nothing from it in hours. A policy that picks among intentions ("build barracks",
"train a marine", "attack") learns what to do when: the macro-action approach of Pang et
al. 2019 and TStarBot1, both of which beat the built-in AI this way. The work of each
intention (which SCV, which site, which target) is written here once, from the raw units
the player sees, so it plays the real game as well as the emulator. The scripted
``TerranMacro`` agent is the same intentions picked by a fixed priority.

``available`` says which macros can act now (the policy's mask); ``call`` turns one into
the raw action for this step, ``no_op`` where it cannot act.
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

from .pysc2lib import actions, base_env_wrapper, features, units

RAW = actions.RAW_FUNCTIONS
SCV, MARINE = units.Terran.SCV, units.Terran.Marine
COMMAND_CENTER, SUPPLY_DEPOT, BARRACKS = (
    units.Terran.CommandCenter,
    units.Terran.SupplyDepot,
    units.Terran.Barracks,
)
MINERAL_FIELDS = {units.Neutral.MineralField, units.Neutral.MineralField750}
GEYSER = units.Neutral.VespeneGeyser
STRUCTURES = {
    COMMAND_CENTER,
    units.Terran.CommandCenterFlying,
    SUPPLY_DEPOT,
    units.Terran.SupplyDepotLowered,
    BARRACKS,
    units.Terran.Refinery,
}
SELF, ENEMY = 1, 4  # raw units' alliance (features.PlayerRelative)
# Raw units name an order by its raw function's id.
BUILD_DEPOT, BUILD_BARRACKS = RAW.Build_SupplyDepot_pt.id, RAW.Build_Barracks_pt.id
DEFEND_RADIUS = 20  # map cells around the command center that count as home
SEARCH_RADIUS = 12  # map cells from the enemy's start to the places searched around it

# One raw unit as plain Python values, its fields named as pysc2's. A row of pysc2's
# NamedNumpyArray looks its field up by name on every access: reading a board that way
# took milliseconds a step, twice a step in training (the mask, then the action).
Unit = collections.namedtuple("Unit", [f.name for f in sorted(features.FeatureUnit)])

MACROS = (
    "no_op",
    "build_supply_depot",
    "build_barracks",
    "train_scv",
    "train_marine",
    "gather",
    "defend",
    "attack",
    "retreat",
)


@dataclasses.dataclass(frozen=True)
class MacroCall:
    """What a policy over macros sends the env: the macro's index in ``MACROS``;
    ``MacroEnv`` turns it into this step's raw action."""

    index: int


@dataclasses.dataclass
class Board:
    """One observation's raw units, sorted into what the macros read."""

    raw: list
    minerals: int
    supply_left: int
    hall: object | None
    scvs: list
    marines: list
    depots: list
    barracks: list

    @classmethod
    def read(cls, observation) -> Board:
        raw = [Unit._make(row) for row in np.asarray(observation["raw_units"]).tolist()]
        mine = [u for u in raw if u.alliance == SELF]
        player = observation["player"]
        halls = [u for u in mine if u.unit_type == COMMAND_CENTER and u.build_progress == 100]
        return cls(
            raw=raw,
            minerals=int(player.minerals),
            supply_left=int(player.food_cap - player.food_used),
            hall=halls[0] if halls else None,
            scvs=[u for u in mine if u.unit_type == SCV],
            marines=[u for u in mine if u.unit_type == MARINE],
            depots=[u for u in mine if u.unit_type == SUPPLY_DEPOT],
            barracks=[u for u in mine if u.unit_type == BARRACKS],
        )

    def underway(self, order_id: int, structures: list) -> tuple[int, int]:
        """How many of a structure are underway: (placed and unfinished, ordered but not
        placed yet). A builder keeps its build order while it constructs, as in the game:
        one with no unfinished structure of its kind beside it is still on its way."""
        unfinished = [s for s in structures if s.build_progress < 100]
        walking = sum(
            order_id in (u.order_id_0, u.order_id_1)
            and not any(
                (u.x - s.x) ** 2 + (u.y - s.y) ** 2 <= (s.radius + 2) ** 2 for s in unfinished
            )
            for u in self.scvs
        )
        return len(unfinished), walking

    def idle_barracks(self) -> list:
        return [b for b in self.barracks if b.build_progress == 100 and b.order_length == 0]

    def defenders(self) -> list:
        """The marines a defence calls: the idle ones and those at home (an attack under
        way goes on)."""
        return [
            u
            for u in self.marines
            if u.order_length == 0 or self.hall is not None and self.from_home(u) < DEFEND_RADIUS**2
        ]

    def enemies_near(self) -> list:
        """The enemies in sight within ``DEFEND_RADIUS`` of the command center."""
        if self.hall is None:
            return []
        return sorted(
            (u for u in self.raw if u.alliance == ENEMY and self.from_home(u) < DEFEND_RADIUS**2),
            key=self.from_home,
        )

    def from_home(self, unit) -> float:
        """Squared distance from the command center."""
        return (unit.x - self.hall.x) ** 2 + (unit.y - self.hall.y) ** 2

    def centre(self) -> tuple[float, float] | None:
        """The map's centre, in the raw units' frame: the mean place of its geysers, which
        the game shows from the start (snapshots where fogged), which a map for two lays
        out point-symmetrically, and which stay where they are when mined out (mineral
        fields vanish). Read from the map itself, not assumed: the real Simple64 is 88x96
        and its raw frame is scaled, the emulator's 64x64. The mineral fields where no
        geyser is shown; None where no resource is."""
        geysers = [(u.x, u.y) for u in self.raw if u.unit_type == GEYSER]
        places = geysers or [(u.x, u.y) for u in self.raw if u.unit_type in MINERAL_FIELDS]
        if not places:
            return None
        return sum(x for x, _ in places) / len(places), sum(y for _, y in places) / len(places)

    def enemy_start(self) -> tuple[float, float] | None:
        """The start opposite home: the command center mirrored through the centre."""
        centre = self.centre()
        if centre is None or self.hall is None:
            return None
        return 2 * centre[0] - self.hall.x, 2 * centre[1] - self.hall.y

    def toward_centre(self) -> int:
        """+1 where the map's centre is to the right (larger x) of home, else -1."""
        centre = self.centre()
        return 1 if centre is None or self.hall.x < centre[0] else -1

    def can(self) -> dict[str, bool]:
        """Each macro's preconditions, by name. Structures go up side by side, as the
        game allows, but one builder of a type walks to its site at a time: the site it
        was sent to looks free until the structure stands, and a second builder would be
        sent there too."""
        hall, minerals, supply = self.hall, self.minerals, self.supply_left
        free_scvs = any(u.order_id_0 not in (BUILD_DEPOT, BUILD_BARRACKS) for u in self.scvs)
        army = bool(self.marines)
        return {
            "no_op": True,
            "build_supply_depot": hall is not None
            and free_scvs
            and minerals >= 100
            and not self.underway(BUILD_DEPOT, self.depots)[1],
            "build_barracks": hall is not None
            and free_scvs
            and minerals >= 150
            and any(d.build_progress == 100 for d in self.depots)
            and not self.underway(BUILD_BARRACKS, self.barracks)[1],
            "train_scv": hall is not None
            and hall.order_length == 0
            and minerals >= 50
            and supply >= 1,
            "train_marine": minerals >= 50 and supply >= 1 and bool(self.idle_barracks()),
            "gather": hall is not None and any(u.order_length == 0 for u in self.scvs),
            "defend": bool(self.defenders()) and bool(self.enemies_near()),
            "attack": army,
            "retreat": army and hall is not None,
        }


def available(
    observation, board: Board | None = None, can: dict[str, bool] | None = None
) -> np.ndarray:
    """[len(MACROS)] bool: the macros that can act on this observation (``board`` and
    ``can``: its board and the board's preconditions, where the caller has them
    already). It reads the observation alone, so a policy's mask and the env's actions
    agree, but for a few cases the mask cannot see, which play no_op: every building site
    refused three times, no mineral field left, no target and no command center to
    attack from."""
    can = can if can is not None else (board or Board.read(observation)).can()
    return np.array([can[name] for name in MACROS], bool)


class TerranMacros:
    """The macros of one game. It remembers the building sites the game refused, so
    ``reset`` it at each new game."""

    names = MACROS

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self._tried: collections.Counter = collections.Counter()  # build orders per site
        self._searched = 0  # the places looked for the enemy at (``_search``)

    def call(self, index: int, observation) -> actions.FunctionCall:
        """The raw action macro ``index`` makes of this observation (no_op if none)."""
        return self.play(MACROS[index], Board.read(observation))

    def play(self, name: str, board: Board, can: dict[str, bool] | None = None):
        """The raw action of macro ``name`` on a read ``board`` (no_op if it cannot act);
        ``can``: the board's preconditions, where the caller has them already."""
        if not (can if can is not None else board.can())[name]:
            return RAW.no_op()
        return getattr(self, f"_{name}")(board) or RAW.no_op()

    # --- what each does ------------------------------------------------------------------

    def _no_op(self, board):
        return RAW.no_op()

    def _build_supply_depot(self, board):
        return self._build(board, RAW.Build_SupplyDepot_pt, 1.0)

    def _build_barracks(self, board):
        return self._build(board, RAW.Build_Barracks_pt, 1.5)

    def _build(self, board: Board, function, half: float):
        """Send the SCV nearest a free site to build there. Sites are tried in rows towards
        the map's centre, a lane apart; a site is free when no structure or resource stands
        on its footprint (``half`` its half width) and the game has not refused it three
        times already (three orders there with nothing built)."""
        hall = board.hall
        toward = board.toward_centre()
        blocking = [
            u
            for u in board.raw
            if u.unit_type in STRUCTURES or u.unit_type in MINERAL_FIELDS | {GEYSER}
        ]
        site = next(
            (
                (x, y)
                for dx in (7, 11, 15, 19)
                for dy in (-4, 4, -8, 8, 0, -12, 12)
                for x, y in [(int(hall.x + toward * dx), int(hall.y + dy))]
                if self._tried[(x, y)] < 3
                and all(
                    abs(x - u.x) >= half + u.radius + 0.5 or abs(y - u.y) >= half + u.radius + 0.5
                    for u in blocking
                )
            ),
            None,
        )
        free = [u for u in board.scvs if u.order_id_0 not in (BUILD_DEPOT, BUILD_BARRACKS)]
        if not free or site is None:
            return None
        scv = min(free, key=lambda u: (u.x - site[0]) ** 2 + (u.y - site[1]) ** 2)
        self._tried[site] += 1
        return function("now", [scv.tag], list(site))

    def _train_scv(self, board):
        return RAW.Train_SCV_quick("now", [board.hall.tag])

    def _train_marine(self, board):
        return RAW.Train_Marine_quick("now", [board.idle_barracks()[0].tag])

    def _gather(self, board):
        idle = [u.tag for u in board.scvs if u.order_length == 0]
        fields = [u for u in board.raw if u.unit_type in MINERAL_FIELDS]
        if not fields:
            return None
        hall = board.hall
        field = min(fields, key=lambda f: (f.x - hall.x) ** 2 + (f.y - hall.y) ** 2)
        return RAW.Harvest_Gather_unit("now", idle, field.tag)

    def _defend(self, board):
        """The defenders at the intruder nearest home."""
        nearest = board.enemies_near()[0]
        tags = [u.tag for u in board.defenders()]
        return RAW.Attack_pt("now", tags, [int(nearest.x), int(nearest.y)])

    def _attack(self, board):
        """Every marine at the enemy structure in sight nearest the first marine (else the
        nearest enemy unit in sight, else the next place ``_search`` names)."""
        enemies = [u for u in board.raw if u.alliance == ENEMY]
        targets = [u for u in enemies if u.unit_type in STRUCTURES] or enemies
        lead = board.marines[0]
        if targets:
            target = min(targets, key=lambda u: (u.x - lead.x) ** 2 + (u.y - lead.y) ** 2)
            point = (target.x, target.y)
        elif (point := self._search(board)) is None:
            return None
        return RAW.Attack_pt("now", [u.tag for u in board.marines], [int(p) for p in point])

    def _search(self, board: Board) -> tuple[float, float] | None:
        """Where to look for an enemy out of sight: the start opposite home
        (``enemy_start``), then in turn the places ``SEARCH_RADIUS`` around it, inside the
        box of the map's resources and starts, each left once a marine stands there. A
        base's structures may stand beyond a marine's sight of its town hall, and a game
        ends only when the last of them falls."""
        start = board.enemy_start()
        if start is None:
            return None
        resources = [(u.x, u.y) for u in board.raw if u.unit_type in MINERAL_FIELDS | {GEYSER}]
        corners = [*resources, start, (board.hall.x, board.hall.y)]
        low = np.min(corners, axis=0)
        high = np.max(corners, axis=0)
        places = [start] + [
            tuple(
                np.clip(np.add(start, SEARCH_RADIUS * np.array([np.cos(a), np.sin(a)])), low, high)
            )
            for a in np.arange(8) * np.pi / 4
        ]
        here = self._searched % len(places)
        if any(
            (u.x - places[here][0]) ** 2 + (u.y - places[here][1]) ** 2 < 9 for u in board.marines
        ):
            self._searched += 1
        return places[self._searched % len(places)]

    def _retreat(self, board):
        """Every marine back to the command center's side towards the map's centre."""
        hall = board.hall
        point = [int(hall.x + board.toward_centre() * 6), int(hall.y)]
        return RAW.Move_pt("now", [u.tag for u in board.marines], point)


class MacroEnv(base_env_wrapper.BaseEnvWrapper):
    """A pysc2 env (made with raw units and raw actions) that takes ``MacroCall``s: each
    becomes this step's raw action, made from the observation the agent acted on. Other
    actions pass through, so a scripted agent's raw calls still play."""

    def __init__(self, env):
        super().__init__(env)
        self.macros = TerranMacros()
        self._observation = None

    def reset(self, *args, **kwargs):
        timesteps = self._env.reset(*args, **kwargs)
        self.macros.reset()
        self._observation = timesteps[0].observation
        return timesteps

    def step(self, actions, *args, **kwargs):
        actions = [
            self.macros.call(a.index, self._observation) if isinstance(a, MacroCall) else a
            for a in actions
        ]
        timesteps = self._env.step(actions, *args, **kwargs)
        self._observation = timesteps[0].observation
        return timesteps
