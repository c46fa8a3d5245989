"""CollectMineralsAndGas: 12 idle SCVs and a Command Center; score = minerals + gas collected."""

from __future__ import annotations

from ..economy import snap
from ..gamedata import COMMAND_CENTER, LOOPS_PER_SECOND, MINERAL_FIELD, SCV, VESPENE_GEYSER
from ..units import Owner
from .base import Scenario

PLAYABLE = (19.94, 19.0, 45.94, 37.0)  # region 1
CAMERA = (32.94, 25.0)  # its centre, 3 units south
# The script's Command Center point; the game snaps the 5x5 footprint to whole cells.
COMMAND_CENTER_POINT = (29.83, 28.01)
LEFT_FIELDS = [
    (23, 28.5),
    (24, 29.5),
    (23, 26.5),
    (25, 22.5),
    (25, 32.5),
    (24, 23.5),
    (24, 31.5),
    (24, 25.5),
]
RIGHT_FIELDS = [
    (41, 22.5),
    (42, 25.5),
    (42, 23.5),
    (41, 32.5),
    (43, 26.5),
    (43, 28.5),
    (42, 29.5),
    (42, 31.5),
]
GEYSERS = [(26.5, 20.5), (39.5, 20.5), (26.5, 34.5), (39.5, 34.5)]
SCV_X_OFFSETS = (3.5, 4.5)  # two columns on one side of the Command Center
SCV_Y_OFFSETS = (2.5, 1.5, 0.5, -0.5, -1.5, -2.5)
START_MINERALS = 50


def place_base(world, fields) -> object:
    """The Command Center, 12 SCVs beside it (side drawn at random) and the fields."""
    cc = world.spawn(COMMAND_CENTER, Owner.AGENT, *snap(COMMAND_CENTER, *COMMAND_CENTER_POINT))
    side = 1 if world.rng.random() < 0.5 else -1
    scvs = [
        world.spawn(SCV, Owner.AGENT, cc.x + side * dx, cc.y + dy)
        for dx in SCV_X_OFFSETS
        for dy in SCV_Y_OFFSETS
    ]
    for x, y in fields:
        world.spawn(MINERAL_FIELD, Owner.NEUTRAL, x, y)
    world.agent.minerals = START_MINERALS
    return cc, scvs


class CollectMineralsAndGas(Scenario):
    name = "CollectMineralsAndGas"
    # 420 s in the map script; pysc2's docs say 300 (README.md, "What the emulator plays").
    time_limit_loops = 420 * LOOPS_PER_SECOND
    playable = PLAYABLE
    camera_start = CAMERA

    def setup(self, world) -> None:
        place_base(world, LEFT_FIELDS + RIGHT_FIELDS)
        for x, y in GEYSERS:
            world.spawn(VESPENE_GEYSER, Owner.NEUTRAL, x, y)

    def on_loop(self, world) -> None:
        # Spending does not lower the score: it counts what was collected.
        world.agent.score = (
            world.agent.stats.collected_minerals + world.agent.stats.collected_vespene
        )
