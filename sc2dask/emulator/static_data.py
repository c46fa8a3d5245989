"""``RequestData``: the unit types and abilities the emulator knows, as the game describes them.

pysc2 reads this for ``env.static_data()`` and the human renderer (names, hotkeys, the
specific-to-general ability remapping). The command cards here are also what
``observe`` offers for a selection, so the two never disagree.
"""

from __future__ import annotations

from s2clientprotocol import data_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from . import gamedata as gd
from .gamedata import ABILITIES, LOOPS_PER_SECOND, UNIT_TYPES, Ability, UnitType

_A = data_pb2.Attribute
_MOVER_CARD = [gd.SMART, gd.STOP_STOP, gd.MOVE_MOVE, gd.MOVE_PATROL, gd.MOVE_HOLD]
_CARDS = {
    gd.SCV: _MOVER_CARD
    + [
        gd.ATTACK_ATTACK,
        gd.HARVEST_GATHER_SCV,
        gd.HARVEST_RETURN_SCV,
        gd.BUILD_COMMANDCENTER,
        gd.BUILD_SUPPLYDEPOT,
        gd.BUILD_REFINERY,
        gd.BUILD_BARRACKS,
    ],
    gd.COMMAND_CENTER: [
        gd.SMART,
        gd.TRAIN_SCV,
        gd.RALLY_COMMANDCENTER,
        gd.LIFT_COMMANDCENTER,
        gd.CANCEL_QUEUE5,
    ],
    gd.COMMAND_CENTER_FLYING: [
        gd.SMART,
        gd.STOP_STOP,
        gd.MOVE_MOVE,
        gd.MOVE_PATROL,
        gd.MOVE_HOLD,
        gd.LAND_COMMANDCENTER,
    ],
    gd.BARRACKS: [gd.SMART, gd.TRAIN_MARINE, gd.RALLY_BUILDING],
}


def unit_abilities(unit_type: UnitType) -> list[Ability]:
    """The full command card of a unit type (``Scenario.command_card`` may trim it)."""
    if unit_type in _CARDS:
        return list(_CARDS[unit_type])
    if unit_type.speed <= 0:
        return []
    card = list(_MOVER_CARD)
    if unit_type.can_attack:
        card.append(gd.ATTACK_ATTACK)
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
    msg.friendly_name = (
        f"{a.link_name.capitalize()} {a.button_name}" if a.remaps_to else a.button_name
    )
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
    msg.has_vespene = t.has_vespene
    msg.vespene_cost = t.vespene_cost
    msg.build_time = t.build_loops
    msg.food_provided = t.supply
    attributes = []
    if t.light:
        attributes.append(_A.Light)
    if t.armored:
        attributes.append(_A.Armored)
    if t.food:  # every unit that costs supply in the mini-games is biological
        attributes.append(_A.Biological)
    if t.mechanical:
        attributes.append(_A.Mechanical)
    if t.is_structure and t.health:  # resources have no life and no attributes
        attributes.append(_A.Structure)
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
