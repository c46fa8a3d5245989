"""``RequestDebug``: the debug commands pysc2's tests use, on the emulated world.

Creating units (of the types the emulator has rules for), killing units, setting a unit's
life, and ending the game are carried out; drawing, game-state cheats and score tests are
accepted and do nothing, as they change nothing an agent observes here.
"""

from __future__ import annotations

from s2clientprotocol import debug_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from .gamedata import UNIT_TYPES
from .units import Owner

_END = {
    debug_pb2.DebugEndGame.Surrender: sc_pb.Defeat,
    debug_pb2.DebugEndGame.DeclareVictory: sc_pb.Victory,
}


def apply(world, command: debug_pb2.DebugCommand) -> str | None:
    """Carry out one command; the reason when the emulator cannot, else None."""
    kind = command.WhichOneof("command")
    if kind == "create_unit":
        return _create(world, command.create_unit)
    if kind == "kill_unit":
        for tag in command.kill_unit.tag:
            unit = world.units.get(tag)
            if unit is not None:
                unit.health = 0
                world.remove(unit)
                world.scenario.on_death(world, unit)
        return None
    if kind == "unit_value":
        return _set_value(world, command.unit_value)
    if kind == "end_game":
        world.end(_END.get(command.end_game.end_result, sc_pb.Victory))
        return None
    return None  # draw, game_state, test_process, set_score: nothing to observe here


def _create(world, create: debug_pb2.DebugCreateUnit) -> str | None:
    unit_type = UNIT_TYPES.get(create.unit_type)
    if unit_type is None:
        return (
            f"unit type {create.unit_type} is not emulated; the emulator has "
            f"{', '.join(sorted(t.name for t in UNIT_TYPES.values()))}"
        )
    try:
        owner = Owner(create.owner)
    except ValueError:
        return f"owner {create.owner} is not a player (1, 2, or 16 for neutral)"
    for _ in range(max(1, create.quantity)):
        world.spawn(unit_type, owner, create.pos.x, create.pos.y)
    return None


def _set_value(world, value: debug_pb2.DebugSetUnitValue) -> str | None:
    unit = world.units.get(value.unit_tag)
    if unit is None:
        return f"no unit with tag {value.unit_tag}"
    if value.unit_value == debug_pb2.DebugSetUnitValue.Life:
        unit.health = min(float(value.value), float(unit.type.health))
    return None  # energy and shields: no Terran unit here has either
