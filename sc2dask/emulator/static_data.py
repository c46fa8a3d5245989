"""``RequestData``: the unit types and abilities the emulator knows, as the game describes them.

pysc2 reads this for ``env.static_data()`` and the human renderer (names, hotkeys, the
specific-to-general ability remapping). The command cards here are also what
``observe`` offers for a selection, so the two never disagree.
"""

from __future__ import annotations

from s2clientprotocol import data_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from .gamedata import (ABILITIES, ATTACK_ATTACK, LOOPS_PER_SECOND, MOVE_HOLD, MOVE_MOVE,
                       MOVE_PATROL, SMART, STOP_STOP, UNIT_TYPES, Ability, UnitType)

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
    msg.race = t.race
    msg.sight_range = t.sight
    # The API reports speed per normal-speed second; UnitType keeps it per game loop.
    msg.movement_speed = t.speed * LOOPS_PER_SECOND
    msg.armor = t.armor
    msg.has_minerals = t.has_minerals
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
        weapon.type = data_pb2.Weapon.Any if t.hits_air else data_pb2.Weapon.Ground
        weapon.damage = t.damage
        weapon.attacks = 1
        weapon.range = t.weapon_range
        weapon.speed = t.cooldown / LOOPS_PER_SECOND  # seconds between attacks, normal speed
        if t.bonus_vs_light:
            weapon.damage_bonus.add(attribute=_A.Light, bonus=t.bonus_vs_light)
