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
POINT = data_pb2.AbilityData.Point
UNIT = data_pb2.AbilityData.Unit
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
ATTACK_ATTACK = Ability(23, "attack", 0, "Attack", "A", POINT_OR_UNIT, ATTACK.ability_id, True)

# The economy: harvesting, building, training and rallying (general id first).
HARVEST_GATHER = Ability(3666, "Harvest", 0, "Gather", "G", UNIT)
HARVEST_RETURN = Ability(3667, "Harvest", 1, "ReturnCargo", "C", NO_TARGET)
RALLY_UNITS = Ability(3673, "Rally", 0, "Rally", "Y", POINT_OR_UNIT, allow_minimap=True)
RALLY_WORKERS = Ability(3690, "RallyWorkers", 0, "Rally", "Y", POINT_OR_UNIT, allow_minimap=True)
HARVEST_GATHER_SCV = Ability(295, "SCVHarvest", 0, "Gather", "G", UNIT, HARVEST_GATHER.ability_id)
HARVEST_RETURN_SCV = Ability(
    296, "SCVHarvest", 1, "ReturnCargo", "C", NO_TARGET, HARVEST_RETURN.ability_id
)
BUILD_COMMANDCENTER = Ability(318, "TerranBuild", 0, "CommandCenter", "C", POINT)
BUILD_SUPPLYDEPOT = Ability(319, "TerranBuild", 2, "SupplyDepot", "S", POINT)
BUILD_REFINERY = Ability(320, "TerranBuild", 3, "Refinery", "R", UNIT)
BUILD_BARRACKS = Ability(321, "TerranBuild", 4, "Barracks", "B", POINT)
RALLY_BUILDING = Ability(195, "Rally", 0, "Rally", "Y", POINT_OR_UNIT, RALLY_UNITS.ability_id, True)
RALLY_COMMANDCENTER = Ability(
    203, "RallyCommand", 0, "Rally", "Y", POINT_OR_UNIT, RALLY_WORKERS.ability_id, True
)
LIFT = Ability(3679, "Lift", 0, "Lift", "L", NO_TARGET)
LAND = Ability(3678, "Land", 0, "Land", "L", POINT)
CANCEL_LAST = Ability(3671, "Cancel", 0, "CancelLast", "", NO_TARGET)
LIFT_COMMANDCENTER = Ability(
    417, "CommandCenterLiftOff", 0, "Lift", "L", NO_TARGET, LIFT.ability_id
)
LAND_COMMANDCENTER = Ability(419, "CommandCenterLand", 0, "Land", "L", POINT, LAND.ability_id)
CANCEL_QUEUE5 = Ability(306, "Queue5", 0, "CancelLast", "", NO_TARGET, CANCEL_LAST.ability_id)
TRAIN_SCV = Ability(524, "CommandCenterTrain", 0, "SCV", "S", NO_TARGET)
TRAIN_MARINE = Ability(560, "BarracksTrain", 0, "Marine", "A", NO_TARGET)

ABILITIES = {
    a.ability_id: a
    for a in (
        SMART,
        STOP_STOP,
        MOVE_MOVE,
        MOVE_PATROL,
        MOVE_HOLD,
        ATTACK_ATTACK,
        ATTACK,
        MOVE,
        PATROL,
        HOLD_POSITION,
        STOP,
        HARVEST_GATHER,
        HARVEST_RETURN,
        RALLY_UNITS,
        RALLY_WORKERS,
        HARVEST_GATHER_SCV,
        HARVEST_RETURN_SCV,
        BUILD_COMMANDCENTER,
        BUILD_SUPPLYDEPOT,
        BUILD_REFINERY,
        BUILD_BARRACKS,
        RALLY_BUILDING,
        RALLY_COMMANDCENTER,
        TRAIN_SCV,
        TRAIN_MARINE,
        LIFT,
        LAND,
        CANCEL_LAST,
        LIFT_COMMANDCENTER,
        LAND_COMMANDCENTER,
        CANCEL_QUEUE5,
    )
}
# The specific ability a general id stands for, e.g. for orders in raw observations.
SPECIFIC = {a.remaps_to: a.ability_id for a in ABILITIES.values() if a.remaps_to}

# --- unit types -------------------------------------------------------------------------


# Attack timing: the game's weapon data, as mirrored in Ahli/sc2xml at 9e9e87c (version
# 5.0.14.93333); C is mods/core.sc2mod/base.sc2data/gamedata/weapondata.xml, L, LM and VM
# the same file of liberty.sc2mod, libertymulti.sc2mod and voidmulti.sc2mod. An attack
# starts when the weapon is ready and the target in range; its damage comes DamagePoint
# later (a unit killed before then deals none), and the unit then stands for Backswing
# unless it is given a new order; the weapon is ready again Period after the start. Each
# period gets CWeaponLegacy's RandomDelayMin/Max (C, l.35-36): -0.0625 to +0.125 s.
RANDOM_DELAY_LOOPS = (-0.0625 * LOOPS_PER_SECOND, 0.125 * LOOPS_PER_SECOND)
DAMAGE_POINT = 0.167 * LOOPS_PER_SECOND  # CWeapon's default DamagePoint (C, l.17)
BACKSWING = 0.5 * LOOPS_PER_SECOND  # CWeapon's default Backswing (C, l.18)
# CWeapon's default RangeSlop (C, l.13): a target may be this far beyond the weapon's
# range when the damage point comes and still be hit.
RANGE_SLOP = 1.0


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
    cooldown: float = 0.0  # game loops between shots (the weapon's Period)
    damage_point: float = 0.0  # game loops from an attack's start to its damage
    backswing: float = 0.0  # game loops the unit stands after the damage
    missile_speed: float = 0.0  # world units per loop of its missile; 0: instant damage
    structure_damage: float = 0.0  # a splash's damage to structures, armour ignored
    sight: float = 9.0
    acquire_range: float = 0.0  # how far an idle unit notices enemies (MinScanRange)
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
    has_vespene: bool = False  # a geyser, and the refinery built on it
    mechanical: bool = False
    vespene_cost: int = 0
    build_loops: int = 0  # game loops to train or construct
    supply: int = 0  # food a finished structure provides
    footprint: tuple[int, int] = (0, 0)  # cells a structure or resource covers; 0 for units
    contents: int = 0  # minerals or gas a resource starts with
    acceleration: float = 0.0  # speed gained per loop from standing; 0: at full speed at once
    # The score (emulator/score.py): the game data's ScoreMake, ScoreKill and CostCategory
    # (the source is named above the unit types); types the game does not score keep 0
    # and "none".
    score_make: int = 0
    score_kill: int = 0
    category: str = "none"

    @property
    def can_attack(self) -> bool:
        return self.damage > 0

    @property
    def is_structure(self) -> bool:
        """Structures and resources: placed on the grid, never moving."""
        return self.footprint != (0, 0)


# Where score_make, score_kill, category and the Zerg units' vespene costs come from: the
# game's unit data as mirrored in the public repository Ahli/sc2xml (game version
# 5.0.14.93333), mods/liberty.sc2mod/base.sc2data/gamedata/unitdata.xml, each CUnit's
# ScoreMake, ScoreKill, CostCategory and CostResource; no later mod of that mirror
# (swarm, void, balancemulti) overrides them for these types.


def _per_loop(per_second: float) -> float:
    return per_second / LOOPS_PER_SECOND


MARINE = UnitType(
    48,
    "Marine",
    health=45,
    speed=_per_loop(2.25),
    radius=0.375,
    damage=6,
    weapon_range=5,
    cooldown=0.8608 * LOOPS_PER_SECOND,  # GuassRifle: L l.203, VM l.107
    damage_point=0.05 * LOOPS_PER_SECOND,
    backswing=0.75 * LOOPS_PER_SECOND,
    sight=9,
    acquire_range=5.5,  # GuassRifle's MinScanRange (VM l.107)
    light=True,
    food=1,
    mineral_cost=50,
    build_loops=400,  # 18 s at faster speed, as the game trains one
    race=common_pb2.Terran,
    hits_air=True,
    score_make=50,
    score_kill=50,
    category="army",
)
ZERGLING = UnitType(
    105,
    "Zergling",
    health=35,
    speed=_per_loop(2.953),
    radius=0.375,
    damage=5,
    weapon_range=0.1,
    cooldown=0.696 * LOOPS_PER_SECOND,  # Claws: L l.357, the default damage point
    damage_point=DAMAGE_POINT,
    backswing=BACKSWING,
    sight=8,
    acquire_range=5,
    light=True,
    food=0.5,
    mineral_cost=25,
    race=common_pb2.Zerg,
    score_make=25,
    score_kill=25,
    category="army",
)
ROACH = UnitType(
    110,
    "Roach",
    health=145,
    armor=1,
    speed=_per_loop(2.25),
    radius=0.5,
    damage=16,
    weapon_range=4,  # AcidSaliva: L l.339, range 4 in LM l.9
    cooldown=2.0 * LOOPS_PER_SECOND,
    damage_point=DAMAGE_POINT,
    backswing=BACKSWING,
    # AcidSaliva launches a missile (L/effectdata.xml l.2136, CEffectLaunchMissile) whose
    # mover flies at 18.75 a second (L/moverdata.xml l.670); its acceleration (3200) is
    # reached within a loop. Not emulated: its 0.6 minimum range and its melee weapon.
    missile_speed=_per_loop(18.75),
    sight=9,
    acquire_range=5,
    armored=True,
    food=2,
    mineral_cost=75,
    race=common_pb2.Zerg,
    vespene_cost=25,
    score_make=100,
    score_kill=100,
    category="army",
)
BANELING = UnitType(
    9,
    "Baneling",
    health=30,
    speed=_per_loop(2.5),
    radius=0.375,
    damage=16,
    bonus_vs_light=19,
    weapon_range=0.25,
    cooldown=1,
    # VolatileBurst: L l.463, DamagePoint 0. Its effects (L/effectdata.xml l.1739):
    # 16 (+19 to light, VM l.1025) to units within 2.2 of their edge, and 80 to structures
    # with no armour reduction (l.1052); then the baneling dies. A baneling killed first
    # bursts the same way (L/behaviordata.xml l.1141: BanelingExplode's DeathResponse).
    sight=8,
    acquire_range=5,
    splash_radius=2.2,
    structure_damage=80,
    food=0.5,
    mineral_cost=50,
    race=common_pb2.Zerg,
    vespene_cost=25,
    score_make=50,  # a morph: the Zergling's 25 was made before
    score_kill=75,
    category="army",
)
BEACON = UnitType(317, "Beacon_Terran", health=0, radius=1.0, sight=0, army=False, collides=False)
MINERAL_SHARD = UnitType(
    1680,
    "NaturalMinerals",
    health=0,
    radius=0.5,
    sight=0,
    army=False,
    collides=False,
    has_minerals=True,
)


# The economy maps' units. Costs and build times are the game's (normal-speed seconds
# x 16); README.md, "What the emulator plays", gives the sources.
SCV = UnitType(
    45,
    "SCV",
    health=45,
    speed=_per_loop(2.8125),
    radius=0.375,
    damage=5,
    weapon_range=0.2,  # FusionCutter: VM l.102 (L l.195 gives 0.1)
    cooldown=1.5 * LOOPS_PER_SECOND,
    damage_point=DAMAGE_POINT,
    backswing=BACKSWING,
    sight=8,
    acquire_range=0,
    light=True,
    mechanical=True,
    army=False,
    food=1,
    mineral_cost=50,
    build_loops=272,
    race=common_pb2.Terran,
    # Workers accelerate at 2.5 per s^2 (most units: 1000, i.e. at once); with it 12 SCVs
    # on 8 fields bring about what the game's do (README.md, "What the emulator plays").
    acceleration=2.5 / LOOPS_PER_SECOND**2,
    score_make=50,
    score_kill=50,
    category="economy",
)
COMMAND_CENTER = UnitType(
    18,
    "CommandCenter",
    health=1500,
    armor=1,
    radius=2.75,
    sight=11,
    army=False,
    mineral_cost=400,
    build_loops=1600,
    supply=15,
    footprint=(5, 5),
    armored=True,
    mechanical=True,
    race=common_pb2.Terran,
    score_make=400,
    score_kill=400,
    category="economy",
)
# Lifted off: it flies (over everything), keeps its supply, and is no drop-off point.
COMMAND_CENTER_FLYING = UnitType(
    36,
    "CommandCenterFlying",
    health=1500,
    armor=1,
    speed=_per_loop(1.3125),
    radius=2.75,
    sight=11,
    army=False,
    supply=15,
    collides=False,
    armored=True,
    mechanical=True,
    race=common_pb2.Terran,
    mineral_cost=400,  # the same Command Center, worth what it cost
    score_kill=400,
    category="economy",
)
SUPPLY_DEPOT = UnitType(
    19,
    "SupplyDepot",
    health=400,
    armor=1,
    radius=1.25,
    army=False,
    mineral_cost=100,
    build_loops=480,
    supply=8,
    footprint=(2, 2),
    armored=True,
    mechanical=True,
    race=common_pb2.Terran,
    score_make=100,
    score_kill=100,
    category="economy",
)
REFINERY = UnitType(
    20,
    "Refinery",
    health=500,
    armor=1,
    radius=1.75,
    army=False,
    mineral_cost=75,
    build_loops=480,
    footprint=(3, 3),
    armored=True,
    mechanical=True,
    has_vespene=True,
    race=common_pb2.Terran,
    score_make=75,
    score_kill=75,
    category="economy",
)
BARRACKS = UnitType(
    21,
    "Barracks",
    health=1000,
    armor=1,
    radius=1.8125,
    army=False,
    mineral_cost=150,
    build_loops=1040,
    footprint=(3, 3),
    armored=True,
    mechanical=True,
    race=common_pb2.Terran,
    score_make=150,
    score_kill=150,
    category="technology",
)
# Field contents: the map script's reset path refills fields to 1500 and geysers to 2000.
MINERAL_FIELD = UnitType(
    341,
    "MineralField",
    health=0,
    radius=1.125,
    sight=0,
    army=False,
    has_minerals=True,
    footprint=(2, 1),
    contents=1500,
)
VESPENE_GEYSER = UnitType(
    342,
    "VespeneGeyser",
    health=0,
    radius=1.8125,
    sight=0,
    army=False,
    has_vespene=True,
    footprint=(3, 3),
    contents=2000,
)

UNIT_TYPES = {
    t.type_id: t
    for t in (
        MARINE,
        ZERGLING,
        ROACH,
        BANELING,
        BEACON,
        MINERAL_SHARD,
        SCV,
        COMMAND_CENTER,
        COMMAND_CENTER_FLYING,
        SUPPLY_DEPOT,
        REFINERY,
        BARRACKS,
        MINERAL_FIELD,
        VESPENE_GEYSER,
    )
}

SUPPLY_LIMIT = 200
TOWN_HALLS = (COMMAND_CENTER,)  # where workers return cargo
# What each builder ability makes, and what each producer trains.
BUILDS = {
    BUILD_COMMANDCENTER.ability_id: COMMAND_CENTER,
    BUILD_SUPPLYDEPOT.ability_id: SUPPLY_DEPOT,
    BUILD_REFINERY.ability_id: REFINERY,
    BUILD_BARRACKS.ability_id: BARRACKS,
}
TRAINS = {TRAIN_SCV.ability_id: SCV, TRAIN_MARINE.ability_id: MARINE}
PRODUCES = {COMMAND_CENTER: (TRAIN_SCV,), BARRACKS: (TRAIN_MARINE,)}
# The same by type id, for the loop's hot path: a look-up by UnitType hashes every field.
PRODUCER_IDS = frozenset(t.type_id for t in PRODUCES)
# Tech: a type can only be made once one of these is finished.
REQUIRES = {BARRACKS: SUPPLY_DEPOT}

# --- harvesting -------------------------------------------------------------------------
# A worker occupies a mineral field for 2.786 s and then pauses 0.5 s before it walks
# back (normal speed; sources in README.md); the next worker may start in the pause.
MINERAL_GATHER_LOOPS = round(2.786 * LOOPS_PER_SECOND)
GATHER_PAUSE_LOOPS = round(0.5 * LOOPS_PER_SECOND)
# Inside a refinery a worker spends about 1.4 faster-speed seconds (1.96 s normal).
GAS_GATHER_LOOPS = round(1.96 * LOOPS_PER_SECOND)
MINERALS_PER_TRIP = 5
GAS_PER_TRIP = 4
BUILD_QUEUE_SIZE = 5
