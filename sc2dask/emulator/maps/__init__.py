"""The mini-game scenarios: one module per map, each a ``Scenario`` with the map's own rules."""

from __future__ import annotations

import os
import re

from s2clientprotocol import sc2api_pb2 as sc_pb

from ..bots import LEVELS
from .base import Scenario
from .build_marines import BuildMarines
from .collect_mineral_shards import CollectMineralShards
from .collect_minerals_and_gas import CollectMineralsAndGas
from .defeat_roaches import DefeatRoaches, DefeatZerglingsAndBanelings
from .find_and_defeat_zerglings import FindAndDefeatZerglings
from .move_to_beacon import MoveToBeacon
from .simple64 import Simple64

SCENARIOS: dict[str, type[Scenario]] = {
    cls.name: cls
    for cls in (
        MoveToBeacon,
        CollectMineralShards,
        FindAndDefeatZerglings,
        DefeatRoaches,
        DefeatZerglingsAndBanelings,
        CollectMineralsAndGas,
        BuildMarines,
    )
}

# Melee maps: two players, the second a built-in bot.
MELEE_MAPS: dict[str, type[Scenario]] = {Simple64.name: Simple64}
EMULATED_MAPS: dict[str, type[Scenario]] = {**SCENARIOS, **MELEE_MAPS}
# The races whose units and structures the emulator has rules for.
EMULATED_RACES = ("terran",)
# The built-in AI's levels the emulated bots play, named as pysc2's Difficulty names them
# (VeryEasy -> very_easy).
EMULATED_LEVELS = tuple(
    re.sub(r"(?<!^)(?=[A-Z])", "_", sc_pb.Difficulty.Name(level)).lower() for level in LEVELS
)


class UnsupportedMapError(ValueError):
    """A map the emulator cannot play; the message names the maps it can."""


def scenario_for(map_path: str) -> Scenario:
    """The scenario for a map path or name such as ``mini_games/MoveToBeacon.SC2Map``."""
    name = os.path.splitext(os.path.basename(map_path or ""))[0]
    if name in EMULATED_MAPS:
        return EMULATED_MAPS[name]()
    raise UnsupportedMapError(
        f"The sc2dask emulator cannot play {map_path!r}: unknown map {name!r}. Supported maps: "
        f"{', '.join(EMULATED_MAPS)}. Install the real StarCraft II (set SC2PATH) for other maps."
    )
