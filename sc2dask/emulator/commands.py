"""Turns the ``sc_pb.Action`` messages pysc2 sends into selection changes and unit orders.

Feature-layer, UI and raw actions are all handled here, with the game's semantics for
selection, control groups and smart/attack targeting. Each action yields an
``ActionResult`` code; failures never raise.
"""

from __future__ import annotations

import math

from s2clientprotocol import error_pb2, spatial_pb2, ui_pb2

from . import gamedata
from .geometry import screen_geometry
from .render import minimap_frame
from .units import Order, Owner, Unit
from .world import MAP_SIZE, World

SUCCESS = error_pb2.Success
ERROR = error_pb2.Error
NOT_SUPPORTED = error_pb2.NotSupported

_SELECT = spatial_pb2.ActionSpatialUnitSelectionPoint
_GROUP = ui_pb2.ActionControlGroup
_PANEL = ui_pb2.ActionMultiPanel


def apply_action(world: World, action, options) -> int:
    """Apply every part of one ``sc_pb.Action``; the first failure's code wins."""
    results = []
    if action.HasField("action_feature_layer"):
        results.append(_feature_layer(world, action.action_feature_layer, options))
    if action.HasField("action_ui"):
        results.append(_ui(world, action.action_ui))
    if action.HasField("action_raw"):
        results.append(_raw(world, action.action_raw))
    if action.HasField("action_render"):
        results.append(NOT_SUPPORTED)
    return next((r for r in results if r != SUCCESS), SUCCESS)


# --- feature-layer actions ------------------------------------------------------------

def _feature_layer(world: World, act, options) -> int:
    if not options.HasField("feature_layer"):
        return NOT_SUPPORTED
    fl = options.feature_layer
    screen = screen_geometry(fl, world.camera)
    kind = act.WhichOneof("action")
    if kind == "camera_move":
        p = act.camera_move.center_minimap
        move_camera(world, *_minimap_to_world(world, fl, p))
        return SUCCESS
    if kind == "unit_selection_point":
        sel = act.unit_selection_point
        x, y = screen.screen_to_world(sel.selection_screen_coord.x, sel.selection_screen_coord.y)
        return select_point(world, x, y, sel.type or _SELECT.Select, screen)
    if kind == "unit_selection_rect":
        sel = act.unit_selection_rect
        rects = []
        for r in sel.selection_screen_coord:
            (ax, ay), (bx, by) = (screen.screen_to_world(r.p0.x, r.p0.y),
                                  screen.screen_to_world(r.p1.x, r.p1.y))
            half = 0.5 / screen.scale  # the rectangle covers whole pixels
            rects.append((min(ax, bx) - half, min(ay, by) - half,
                          max(ax, bx) + half, max(ay, by) + half))
        return select_rect(world, rects, sel.selection_add)
    if kind == "unit_command":
        cmd = act.unit_command
        target = None
        if cmd.HasField("target_screen_coord"):
            target = screen.screen_to_world(cmd.target_screen_coord.x, cmd.target_screen_coord.y)
        elif cmd.HasField("target_minimap_coord"):
            target = _minimap_to_world(world, fl, cmd.target_minimap_coord)
        return command(world, world.selected_units(), cmd.ability_id, point=target,
                       target=_unit_at(world, *target) if target else None,
                       queue=cmd.queue_command)
    return SUCCESS  # an empty feature-layer action is a no-op


def _minimap_to_world(world: World, feature_layer, p) -> tuple[float, float]:
    mini, (ox, oy) = minimap_frame(feature_layer, world.scenario.playable)
    x, y = mini.minimap_to_world(p.x, p.y)
    return x + ox, y + oy


def move_camera(world: World, x: float, y: float) -> None:
    """Centre the camera on (x, y), unless the map locks it; keep it on the map."""
    if world.scenario.camera_locked or not (math.isfinite(x) and math.isfinite(y)):
        return
    w, h = MAP_SIZE
    world.camera = (min(max(x, 0.0), float(w)), min(max(y, 0.0), float(h)))


def _unit_at(world: World, x: float, y: float) -> Unit | None:
    """The visible unit under a world point, own units first, nearest centre first."""
    hits = [u for u in world.units.values()
            if world.is_visible(u) and math.hypot(u.x - x, u.y - y) <= u.type.radius + 0.25]
    hits.sort(key=lambda u: (u.owner != Owner.AGENT, math.hypot(u.x - x, u.y - y)))
    return hits[0] if hits else None


def select_point(world: World, x: float, y: float, kind: int, screen) -> int:
    unit = _unit_at(world, x, y)
    if kind == _SELECT.Select:
        world.select([unit.tag] if unit else [])
    elif kind == _SELECT.Toggle:
        if unit is None:
            return SUCCESS
        if unit.tag in world.selection:
            world.select([t for t in world.selection if t != unit.tag])
        elif unit.owner == Owner.AGENT and _own_selection(world):
            world.select(world.selection + [unit.tag])
        else:
            world.select([unit.tag])
    elif kind in (_SELECT.AllType, _SELECT.AddAllType):
        if unit is None:
            if kind == _SELECT.AllType:
                world.select([])
            return SUCCESS
        same = [u.tag for u in world.units.values() if u.owner == unit.owner
                and u.type is unit.type and screen.on_screen(u.x, u.y)]
        if unit.owner != Owner.AGENT:
            same = [unit.tag]
        keep = world.selection if kind == _SELECT.AddAllType and _own_selection(world) else []
        world.select(keep + same)
    else:
        return ERROR
    return SUCCESS


def _own_selection(world: World) -> bool:
    return all(u.owner == Owner.AGENT for u in world.selected_units())


def select_rect(world: World, rects, add: bool) -> int:
    """Box selection picks the agent's units whose footprint touches any rectangle."""
    picked = []
    for x0, y0, x1, y1 in rects:
        for u in world.own_units():
            nx, ny = min(max(u.x, x0), x1), min(max(u.y, y0), y1)
            if math.hypot(u.x - nx, u.y - ny) <= u.type.radius and u.type.speed > 0:
                picked.append(u.tag)
    keep = world.selection if add and _own_selection(world) else []
    world.select(keep + picked)
    return SUCCESS


# --- UI actions -----------------------------------------------------------------------

def _ui(world: World, act) -> int:
    kind = act.WhichOneof("action")
    if kind == "control_group":
        return control_group(world, act.control_group.action, act.control_group.control_group_index)
    if kind == "select_army":
        army = [u.tag for u in world.own_units() if u.type.army]
        if not army:
            return ERROR
        keep = world.selection if act.select_army.selection_add and _own_selection(world) else []
        world.select(keep + army)
        return SUCCESS
    if kind == "multi_panel":
        return multi_panel(world, act.multi_panel.type, act.multi_panel.unit_index)
    return ERROR  # idle workers, warp gates, larva, cargo, production: none on these maps


def control_group(world: World, action: int, index: int) -> int:
    if not 0 <= index < len(world.control_groups):
        return ERROR
    groups = world.control_groups
    groups[index] = [t for t in groups[index] if t in world.units]
    own = [u.tag for u in world.selected_units() if u.owner == Owner.AGENT]
    if action == _GROUP.Recall:
        if groups[index]:
            world.select(groups[index])
        return SUCCESS
    if action in (_GROUP.SetAndSteal, _GROUP.AppendAndSteal):
        for i, group in enumerate(groups):
            if i != index:
                groups[i] = [t for t in group if t not in own]
    if action in (_GROUP.Set, _GROUP.SetAndSteal):
        groups[index] = own
    elif action in (_GROUP.Append, _GROUP.AppendAndSteal):
        groups[index] = list(dict.fromkeys(groups[index] + own))
    else:
        return ERROR
    return SUCCESS


def multi_panel(world: World, kind: int, index: int) -> int:
    selected = world.selected_units()
    if len(selected) < 2 or not 0 <= index < len(selected):
        return ERROR
    chosen = selected[index]
    if kind == _PANEL.SingleSelect:
        world.select([chosen.tag])
    elif kind == _PANEL.DeselectUnit:
        world.select([u.tag for i, u in enumerate(selected) if i != index])
    elif kind == _PANEL.SelectAllOfType:
        world.select([u.tag for u in selected if u.type is chosen.type])
    elif kind == _PANEL.DeselectAllOfType:
        world.select([u.tag for u in selected if u.type is not chosen.type])
    else:
        return ERROR
    return SUCCESS


# --- raw actions ----------------------------------------------------------------------

def _raw(world: World, act) -> int:
    kind = act.WhichOneof("action")
    if kind == "camera_move":
        p = act.camera_move.center_world_space
        move_camera(world, p.x, p.y)
        return SUCCESS
    if kind == "unit_command":
        cmd = act.unit_command
        units = [world.units[t] for t in cmd.unit_tags if t in world.units]
        target = world.units.get(cmd.target_unit_tag) if cmd.HasField("target_unit_tag") else None
        if cmd.HasField("target_unit_tag") and target is None:
            return error_pb2.CantTargetThatUnit
        point = None
        if cmd.HasField("target_world_space_pos"):
            point = (cmd.target_world_space_pos.x, cmd.target_world_space_pos.y)
        elif target is not None:
            point = (target.x, target.y)
        return command(world, units, cmd.ability_id, point=point, target=target,
                       queue=cmd.queue_command)
    return NOT_SUPPORTED  # toggle_autocast


# --- unit commands --------------------------------------------------------------------

def command(world: World, units: list[Unit], ability_id: int, point=None, target=None,
            queue=False) -> int:
    """Give an ability to the agent's units: Smart/Attack on an enemy attacks it."""
    units = [u for u in units if u.owner == Owner.AGENT and u.type.speed > 0]
    ability = gamedata.ABILITIES.get(ability_id)  # all of them are unit commands
    if not units or ability is None:
        return ERROR
    if point is not None:
        if not (math.isfinite(point[0]) and math.isfinite(point[1])):
            return error_pb2.MustTargetWalkableLocation
        w, h = MAP_SIZE  # a target off the map means its edge, as in the game
        point = (min(max(point[0], 0.0), float(w)), min(max(point[1], 0.0), float(h)))
    enemy = target if target is not None and target.owner == Owner.HOSTILE else None
    general = ability.general_id  # a specific ability acts as its general one
    if general == gamedata.STOP.ability_id:
        world.command(units, None)
    elif general == gamedata.HOLD_POSITION.ability_id:
        world.command(units, Order("hold", ability_id))
    elif point is None:
        return ERROR  # the other abilities need a target
    elif general == gamedata.ATTACK.ability_id or (
            general == gamedata.SMART.ability_id and enemy is not None):
        if enemy is not None:
            world.command(units, Order("attack", ability_id, point=point, target=enemy.tag), queue)
        else:
            world.command(units, Order("attack", ability_id, point=point), queue)
    elif general == gamedata.PATROL.ability_id:
        world.command(units, Order("patrol", ability_id, point=point), queue)
    else:  # Move, or Smart on the ground / a friendly unit
        world.command(units, Order("move", ability_id, point=point), queue)
    return SUCCESS
