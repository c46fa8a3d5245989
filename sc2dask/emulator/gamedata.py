"""The game's own numbers, in one table: the build imitated, the clock, abilities and unit stats.

Everything else in the emulator reads these; none of them is written anywhere else.
Unit stats are the game's (patch ~5.0 values), converted to game loops: speeds are world
units per loop and cooldowns are loops.
"""

from __future__ import annotations

import dataclasses

from s2clientprotocol import common_pb2, data_pb2

# --- the game build ---------------------------------------------------------------------

# 4.10.0: a build pysc2 knows, so both "latest" and "4.10.0" resolve to it.
GAME_VERSION = "4.10.0"
BASE_BUILD = 75689
DATA_VERSION = "B89B5D6FA7CBF6452E721311BFBC6CB2"

# The mini-games run at Normal speed: 16 game loops per game second (22.4 at Faster).
LOOPS_PER_SECOND = 16

# --- abilities --------------------------------------------------------------------------

NO_TARGET = data_pb2.AbilityData.Target.Value("None")
POINT_OR_UNIT = data_pb2.AbilityData.PointOrUnit


@dataclasses.dataclass(frozen=True)
class Ability:
    ability_id: int
    link_name: str
    link_index: int
    button_name: str
    hotkey: str
    target: int  # AbilityData.Target
    remaps_to: int = 0  # the general ability a specific one folds into
    allow_minimap: bool = False

    @property
    def requires_point(self) -> bool:
        """What ``AvailableAbility.requires_point`` says for this ability."""
        return self.target != NO_TARGET

    @property
    def general_id(self) -> int:
        """The id pysc2 sends for this ability by default: its general one, if it has one."""
        return self.remaps_to or self.ability_id


# General abilities: what pysc2 sends by default (hide_specific_actions).
ATTACK = Ability(3674, "Attack", 0, "Attack", "A", POINT_OR_UNIT, allow_minimap=True)
MOVE = Ability(3794, "Move", 0, "Move", "M", POINT_OR_UNIT, allow_minimap=True)
PATROL = Ability(3795, "Patrol", 0, "Patrol", "P", POINT_OR_UNIT, allow_minimap=True)
HOLD_POSITION = Ability(3793, "HoldPosition", 0, "HoldPosition", "H", NO_TARGET)
STOP = Ability(3665, "Stop", 0, "Stop", "S", NO_TARGET)
# Specific abilities: what a selected unit reports as available.
SMART = Ability(1, "Smart", 0, "Smart", "", POINT_OR_UNIT, allow_minimap=True)
STOP_STOP = Ability(4, "Stop", 0, "Stop", "S", NO_TARGET, remaps_to=STOP.ability_id)
MOVE_MOVE = Ability(16, "move", 0, "Move", "M", POINT_OR_UNIT, MOVE.ability_id, True)
MOVE_PATROL = Ability(17, "move", 1, "Patrol", "P", POINT_OR_UNIT, PATROL.ability_id, True)
MOVE_HOLD = Ability(18, "move", 2, "HoldPosition", "H", NO_TARGET, HOLD_POSITION.ability_id)
ATTACK_ATTACK = Ability(23, "attack", 0, "Attack", "A", POINT_OR_UNIT, ATTACK.ability_id,
                        True)

ABILITIES = {a.ability_id: a for a in (
    SMART, STOP_STOP, MOVE_MOVE, MOVE_PATROL, MOVE_HOLD, ATTACK_ATTACK,
    ATTACK, MOVE, PATROL, HOLD_POSITION, STOP)}
# The specific ability a general id stands for, e.g. for orders in raw observations.
SPECIFIC = {a.remaps_to: a.ability_id for a in ABILITIES.values() if a.remaps_to}

# --- unit types -------------------------------------------------------------------------


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
    race: int = common_pb2.NoRace
    hits_air: bool = False  # the weapon targets air as well as ground
    has_minerals: bool = False  # a mineral field (the shards are one)

    @property
    def can_attack(self) -> bool:
        return self.damage > 0


def _per_loop(per_second: float) -> float:
    return per_second / LOOPS_PER_SECOND


MARINE = UnitType(
    48, "Marine", health=45, speed=_per_loop(2.25), radius=0.375, damage=6,
    weapon_range=5, cooldown=0.861 * LOOPS_PER_SECOND, sight=9, acquire_range=6,
    light=True, food=1, mineral_cost=50, race=common_pb2.Terran, hits_air=True)
ZERGLING = UnitType(
    105, "Zergling", health=35, speed=_per_loop(2.953), radius=0.375, damage=5,
    weapon_range=0.1, cooldown=0.696 * LOOPS_PER_SECOND, sight=8, acquire_range=5,
    light=True, food=0.5, mineral_cost=25, race=common_pb2.Zerg)
ROACH = UnitType(
    110, "Roach", health=145, armor=1, speed=_per_loop(2.25), radius=0.5, damage=16,
    weapon_range=4, cooldown=2.0 * LOOPS_PER_SECOND, sight=9, acquire_range=5,
    armored=True, food=2, mineral_cost=75, race=common_pb2.Zerg)
BANELING = UnitType(
    9, "Baneling", health=30, speed=_per_loop(2.5), radius=0.375, damage=16,
    bonus_vs_light=19, weapon_range=0.25, cooldown=1, sight=8, acquire_range=5,
    splash_radius=2.2, food=0.5, mineral_cost=50, race=common_pb2.Zerg)
BEACON = UnitType(
    317, "Beacon_Terran", health=0, radius=1.0, sight=0, army=False, collides=False)
MINERAL_SHARD = UnitType(
    1680, "NaturalMinerals", health=0, radius=0.5, sight=0, army=False, collides=False,
    has_minerals=True)

UNIT_TYPES = {t.type_id: t for t in (MARINE, ZERGLING, ROACH, BANELING, BEACON, MINERAL_SHARD)}

# Supply by unit type id: what CommandCenter (18) and SupplyDepot (19) provide, and the
# cap. The marine maps have no supply structure, so their cap is 0 as in the real maps.
SUPPLY_PROVIDED = {18: 15, 19: 8}
SUPPLY_LIMIT = 200
WORKER_TYPES = {45}  # SCV
