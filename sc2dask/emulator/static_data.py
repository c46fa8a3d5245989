"""``RequestData``: the unit types and abilities the emulator knows, as the game describes them.

pysc2 reads this for ``env.static_data()`` and the human renderer (names, hotkeys, the
specific-to-general ability remapping). The ability table here is also what
``observe`` offers for a selection, so the two never disagree.
"""

from __future__ import annotations

import dataclasses

from s2clientprotocol import common_pb2, data_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from .units import UNIT_TYPES, UnitType

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

_ZERG = {105, 110, 9}
_TERRAN = {48, 45, 18, 19, 21}
_A = data_pb2.Attribute


def unit_abilities(unit_type: UnitType) -> list[Ability]:
    """The command card of a unit type, as the mini-game maps leave it."""
    if unit_type.speed <= 0:
        return []
    card = [SMART, STOP_STOP, MOVE_MOVE, MOVE_PATROL, MOVE_HOLD]
    if unit_type.can_attack:
        card.append(ATTACK_ATTACK)
    return card


def static_data(request: sc_pb.RequestData) -> sc_pb.ResponseData:
    """The lists ``request`` asks for; upgrades, buffs and effects are empty in the mini-games."""
    response = sc_pb.ResponseData()
    if request.ability_id:
        for ability in ABILITIES.values():
            _ability_data(response.abilities.add(), ability)
    if request.unit_type_id:
        for unit_type in UNIT_TYPES.values():
            _unit_type_data(response.units.add(), unit_type)
    return response


def _ability_data(msg: data_pb2.AbilityData, a: Ability) -> None:
    msg.ability_id = a.ability_id
    msg.link_name = a.link_name
    msg.link_index = a.link_index
    msg.button_name = a.button_name
    # The game names specific abilities "<Link> <Button>", e.g. "Move Patrol".
    msg.friendly_name = (f"{a.link_name.capitalize()} {a.button_name}" if a.remaps_to
                         else a.button_name)
    msg.hotkey = a.hotkey
    if a.remaps_to:
        msg.remaps_to_ability_id = a.remaps_to
    msg.available = True
    msg.target = a.target
    msg.allow_minimap = a.allow_minimap


def _unit_type_data(msg: data_pb2.UnitTypeData, t: UnitType) -> None:
    msg.unit_id = t.type_id
    msg.name = t.name
    msg.available = True
    msg.mineral_cost = t.mineral_cost
    msg.food_required = t.food
    msg.race = (common_pb2.Zerg if t.type_id in _ZERG else
                common_pb2.Terran if t.type_id in _TERRAN else common_pb2.NoRace)
    msg.sight_range = t.sight
    # The API reports speed per normal-speed second; UnitType keeps it per game loop.
    msg.movement_speed = t.speed * 16
    msg.armor = t.armor
    msg.has_minerals = t.type_id == 1680
    attributes = []
    if t.light:
        attributes.append(_A.Light)
    if t.armored:
        attributes.append(_A.Armored)
    if t.army:  # every army unit in the mini-games is biological
        attributes.append(_A.Biological)
    msg.attributes.extend(attributes)
    if t.can_attack and not t.splash_radius:  # a baneling's attack is its detonation
        weapon = msg.weapons.add()
        weapon.type = data_pb2.Weapon.Any if t.type_id == 48 else data_pb2.Weapon.Ground
        weapon.damage = t.damage
        weapon.attacks = 1
        weapon.range = t.weapon_range
        weapon.speed = t.cooldown / 16  # seconds between attacks, normal speed
        if t.bonus_vs_light:
            weapon.damage_bonus.add(attribute=_A.Light, bonus=t.bonus_vs_light)
