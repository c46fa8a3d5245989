"""Simple64, emulated: a melee map for two, each player with a main base, against a
built-in bot (``emulator/bots.py``) as player 2.

The layout has Simple64's name, 64x64 size and two start locations in opposite corners,
each with a Command Center, 12 SCVs, 8 mineral fields and 2 geysers. Its terrain is
simpler than the real map's: flat and open, with no ramps, cliffs or natural expansions.
A player with no structures left loses; 30 game minutes (pysc2's limit for melee maps)
end the game as a tie.
"""

from __future__ import annotations

from s2clientprotocol import sc2api_pb2 as sc_pb
from s2clientprotocol import score_pb2

from .. import gamedata as gd
from ..bots import THINK_EVERY, Bot
from ..economy import LANDS, snap
from ..units import Order, Owner
from ..world import World
from .base import Scenario

MAP_SIDE = 64.0
# Player 1's base; player 2's mirrors it through the map's centre.
START = (16.5, 47.5)
FIELD_OFFSETS = [(-7.0, -3.5), (-7.5, -2.5), (-7.0, -1.5), (-7.5, -0.5), (-7.0, 0.5),
                 (-7.5, 1.5), (-7.0, 2.5), (-7.5, 3.5)]  # fmt: skip
GEYSER_OFFSETS = [(-3.5, 7.0), (3.5, 7.0)]
SCV_OFFSETS = [(dx, dy) for dx in (-3.5, -4.5) for dy in (2.5, 1.5, 0.5, -0.5, -1.5, -2.5)]
START_MINERALS = 50


def mirrored(point: tuple[float, float], owner: Owner) -> tuple[float, float]:
    """A point of player 1's half as it lies in ``owner``'s."""
    x, y = point
    return (x, y) if owner == Owner.AGENT else (MAP_SIDE - x, MAP_SIDE - y)


class Simple64(Scenario):
    name = "Simple64"
    players = 2
    time_limit_loops = 30 * 60 * gd.LOOPS_PER_SECOND
    playable = (2.0, 2.0, 62.0, 62.0)
    camera_start = START
    camera_locked = False
    fog = True
    timeout_result = sc_pb.Tie
    score_type = score_pb2.Score.Melee

    def __init__(self):
        self.bot: Bot | None = None  # player 2
        self.first_bot: Bot | None = None  # player 1 too, in a game of two bots
        self.difficulty = sc_pb.VeryEasy

    def configure(self, computers) -> None:
        """The Computer player's setup from ``RequestCreateGame``."""
        if computers:
            self.difficulty = computers[0].difficulty

    def start_location(self, owner: Owner) -> tuple[float, float]:
        return mirrored(START, owner)

    def setup(self, world) -> None:
        for owner in (Owner.AGENT, Owner.HOSTILE):
            self._place_base(world, owner)
            world.players[owner].camera = self.start_location(owner)
        self.bot = Bot(
            self.difficulty, Owner.HOSTILE, self.start_location(Owner.AGENT), rng=world.rng
        )

    def _place_base(self, world, owner: Owner) -> None:
        cx, cy = START
        fields = [
            world.spawn(gd.MINERAL_FIELD, Owner.NEUTRAL, *mirrored((cx + dx, cy + dy), owner))
            for dx, dy in FIELD_OFFSETS
        ]
        for dx, dy in GEYSER_OFFSETS:
            world.spawn(gd.VESPENE_GEYSER, Owner.NEUTRAL, *mirrored((cx + dx, cy + dy), owner))
        hall = world.spawn(
            gd.COMMAND_CENTER, owner, *snap(gd.COMMAND_CENTER, *mirrored(START, owner))
        )
        for i, (dx, dy) in enumerate(SCV_OFFSETS):
            scv = world.spawn(gd.SCV, owner, *mirrored((cx + dx, cy + dy), owner))
            field = fields[i % len(fields)]
            scv.orders.append(
                Order("gather", gd.HARVEST_GATHER_SCV.ability_id, target=field.tag, phase="go")
            )
        hall.rally_target = fields[0].tag
        world.players[owner].minerals = START_MINERALS

    def on_loop(self, world) -> None:
        for bot in (self.first_bot, self.bot):  # both decide on the same loop's state
            if bot is not None:
                bot.step(world)
        if not _has_buildings(world, Owner.AGENT):
            world.end(sc_pb.Defeat)
        elif not _has_buildings(world, Owner.HOSTILE):
            world.end(sc_pb.Victory)


def _has_buildings(world, owner: Owner) -> bool:
    """Whether ``owner`` has a structure left (a lifted-off one counts, as in the game)."""
    return any(u.type.is_structure or u.type in LANDS for u in world.own_units(owner))


def bots_game(level_1: int, level_2: int, seed: int) -> int:
    """A whole game of two built-in bots, ``level_1`` as player 1 (sc2api difficulties),
    on the world directly: player 1's result, +1, 0 or -1."""
    scenario = Simple64()
    scenario.difficulty = level_2
    world = World(scenario, seed)
    scenario.first_bot = Bot(
        level_1, Owner.AGENT, scenario.start_location(Owner.HOSTILE), rng=world.rng
    )
    while not world.ended:
        world.step(THINK_EVERY)
    return {sc_pb.Victory: 1, sc_pb.Defeat: -1}.get(world.result, 0)
