"""Turns the ``sc_pb.Action`` messages pysc2 sends into selection changes and unit orders.

Feature-layer, UI and raw actions are all handled here, with the game's semantics for
selection, control groups and smart/attack targeting. Each action yields an
``ActionResult`` code; failures never raise.
"""

from __future__ import annotations

import math

from s2clientprotocol import error_pb2, spatial_pb2, ui_pb2

from . import economy, gamedata
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
_IDLE = ui_pb2.ActionSelectIdleWorker


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
    screen = screen_geometry(fl, world.agent.camera)
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
            (ax, ay), (bx, by) = (
                screen.screen_to_world(r.p0.x, r.p0.y),
                screen.screen_to_world(r.p1.x, r.p1.y),
            )
            half = 0.5 / screen.scale  # the rectangle covers whole pixels
            rects.append(
                (min(ax, bx) - half, min(ay, by) - half, max(ax, bx) + half, max(ay, by) + half)
            )
        return select_rect(world, rects, sel.selection_add)
    if kind == "unit_command":
        cmd = act.unit_command
        point = unit = None
        if cmd.HasField("target_screen_coord"):
            point = screen.screen_to_world(cmd.target_screen_coord.x, cmd.target_screen_coord.y)
            unit = _unit_at(world, *point)
            if not _is_resource(unit) and _wants_resource(world, cmd.ability_id):
                # The cursor picks the resource under a worker standing on it, as the
                # ability's target filter does in the game.
                unit = _resource_under(world, *point) or unit
        elif cmd.HasField("target_minimap_coord"):
            # A minimap click is a place: a unit on it is not the target (pysc2's
            # minimap functions take a point only).
            point = _minimap_to_world(world, fl, cmd.target_minimap_coord)
        return command(
            world,
            world.selected_units(),
            cmd.ability_id,
            point=point,
            target=unit,
            queue=cmd.queue_command,
        )
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
    world.agent.camera = (min(max(x, 0.0), float(w)), min(max(y, 0.0), float(h)))


def _unit_at(world: World, x: float, y: float) -> Unit | None:
    """The visible unit under a world point: own units first, units before the
    structures they stand by, nearest centre first. Structures are hit on their footprint."""
    hits = [u for u in world.units.values() if world.is_visible(u) and _under(u, x, y)]
    hits.sort(
        key=lambda u: (u.owner != Owner.AGENT, u.type.is_structure, math.hypot(u.x - x, u.y - y))
    )
    return hits[0] if hits else None


def _under(unit: Unit, x: float, y: float, margin: float = 0.25) -> bool:
    """Whether a click at (x, y) hits the unit: on its disc as the layers draw it, or
    for a structure anywhere on its footprint."""
    if unit.type.is_structure:
        x0, y0, x1, y1 = unit.footprint()
        if x0 - margin <= x <= x1 + margin and y0 - margin <= y <= y1 + margin:
            return True
    return math.hypot(unit.x - x, unit.y - y) <= unit.type.radius + margin


def select_point(world: World, x: float, y: float, kind: int, screen) -> int:
    unit = _unit_at(world, x, y)
    if kind == _SELECT.Select:
        world.select([unit.tag] if unit else [])
    elif kind == _SELECT.Toggle:
        if unit is None:
            return SUCCESS
        if unit.tag in world.agent.selection:
            world.select([t for t in world.agent.selection if t != unit.tag])
        elif unit.owner == Owner.AGENT and _own_selection(world):
            world.select(world.agent.selection + [unit.tag])
        else:
            world.select([unit.tag])
    elif kind in (_SELECT.AllType, _SELECT.AddAllType):
        if unit is None:
            if kind == _SELECT.AllType:
                world.select([])
            return SUCCESS
        same = [
            u.tag
            for u in world.units.values()
            if u.owner == unit.owner and u.type is unit.type and screen.on_screen(u.x, u.y)
        ]
        if unit.owner != Owner.AGENT:
            same = [unit.tag]
        keep = world.agent.selection if kind == _SELECT.AddAllType and _own_selection(world) else []
        world.select(keep + same)
    else:
        return ERROR
    return SUCCESS


def _own_selection(world: World) -> bool:
    return all(u.owner == Owner.AGENT for u in world.selected_units())


def select_rect(world: World, rects, add: bool) -> int:
    """Box selection picks the agent's units whose disc touches any rectangle."""
    touched = []
    for x0, y0, x1, y1 in rects:
        for u in world.own_units():
            nx, ny = min(max(u.x, x0), x1), min(max(u.y, y0), y1)
            if math.hypot(u.x - nx, u.y - ny) <= u.type.radius:
                touched.append(u)
    # The game boxes units; structures only when the box holds no unit.
    units = [u.tag for u in touched if u.type.speed > 0]
    picked = units or [u.tag for u in touched if u.type.is_structure]
    keep = world.agent.selection if add and _own_selection(world) else []
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
        keep = (
            world.agent.selection if act.select_army.selection_add and _own_selection(world) else []
        )
        world.select(keep + army)
        return SUCCESS
    if kind == "multi_panel":
        return multi_panel(world, act.multi_panel.type, act.multi_panel.unit_index)
    if kind == "select_idle_worker":
        return select_idle_worker(world, act.select_idle_worker.type)
    if kind == "production_panel":
        selected = world.selected_units()
        if len(selected) != 1 or selected[0].owner != Owner.AGENT:
            return ERROR
        return economy.cancel(world, selected[0], act.production_panel.unit_index)
    return ERROR  # warp gates, larva, cargo, autocast: none on these maps


def select_idle_worker(world: World, kind: int) -> int:
    """Set/Add one idle worker (the next after the selected one), or All/AddAll of them."""
    idle = [u for u in world.own_units() if u.type in economy.WORKERS and not u.orders]
    if not idle:
        return ERROR
    keep = (
        world.agent.selection if kind in (_IDLE.Add, _IDLE.AddAll) and _own_selection(world) else []
    )
    if kind in (_IDLE.All, _IDLE.AddAll):
        world.select(keep + [u.tag for u in idle])
    elif kind in (_IDLE.Set, _IDLE.Add):
        tags = [u.tag for u in idle]
        after = [t for t in tags if t > max(world.agent.selection, default=0)]
        world.select(keep + [(after or tags)[0]])
    else:
        return ERROR
    return SUCCESS


def control_group(world: World, action: int, index: int) -> int:
    if not 0 <= index < len(world.agent.control_groups):
        return ERROR
    groups = world.agent.control_groups
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
        return command(
            world, units, cmd.ability_id, point=point, target=target, queue=cmd.queue_command
        )
    return NOT_SUPPORTED  # toggle_autocast


# --- unit commands --------------------------------------------------------------------


def command(
    world: World, units: list[Unit], ability_id: int, point=None, target=None, queue=False
) -> int:
    """Give an ability to the agent's selected units; each kind of unit takes its part.

    Structures train and rally; workers gather, return cargo and build; every mover
    moves, attacks, patrols, holds and stops. Smart means what a right-click would.
    """
    ability = gamedata.ABILITIES.get(ability_id)  # all of them are unit commands
    own = [u for u in units if u.owner == Owner.AGENT]
    if not own or ability is None:
        return ERROR
    if point is not None:
        if not (math.isfinite(point[0]) and math.isfinite(point[1])):
            return error_pb2.MustTargetWalkableLocation
        w, h = MAP_SIZE  # a target off the map means its edge, as in the game
        point = (min(max(point[0], 0.0), float(w)), min(max(point[1], 0.0), float(h)))
    general = ability.general_id  # a specific ability acts as its general one
    structures = [u for u in own if u.type.is_structure]
    movers = [u for u in own if u.type.speed > 0]
    workers = [u for u in movers if u.type in economy.WORKERS]
    if ability_id in gamedata.TRAINS:
        return economy.train(world, structures, gamedata.TRAINS[ability_id])
    if general == gamedata.LIFT.ability_id:
        return economy.lift(world, structures)
    if general == gamedata.CANCEL_LAST.ability_id:
        queued = [u for u in structures if u.queue]
        return economy.cancel(world, queued[0], len(queued[0].queue) - 1) if queued else ERROR
    if general == gamedata.LAND.ability_id:
        return _land(world, [u for u in own if u.type in economy.LANDS], ability_id, point, queue)
    if general in (gamedata.RALLY_UNITS.ability_id, gamedata.RALLY_WORKERS.ability_id):
        return _rally(structures, point, target)
    if ability_id in gamedata.BUILDS:
        return _build(world, workers, gamedata.BUILDS[ability_id], ability_id, point, queue)
    if general == gamedata.HARVEST_GATHER.ability_id:
        return _gather(world, workers, ability_id, target, queue)
    if general == gamedata.HARVEST_RETURN.ability_id:
        carrying = [u for u in workers if u.cargo]
        if not carrying:
            return ERROR
        world.command(carrying, Order("return", ability_id), queue)
        return SUCCESS
    if general == gamedata.SMART.ability_id and structures and not movers:
        return _rally(structures, point, target)
    if not movers:
        return ERROR
    return _mover_command(world, movers, workers, general, ability_id, point, target, queue)


def _land(world: World, flyers: list[Unit], ability_id: int, point, queue: bool) -> int:
    """The first lifted structure lands on the grid cell nearest ``point``, if it fits."""
    if not flyers or point is None:
        return ERROR
    site = economy.snap(economy.LANDS[flyers[0].type], *point)
    problem = economy.placement_error(world, economy.LANDS[flyers[0].type], *site)
    if problem is not None:
        return problem
    world.command(flyers[:1], Order("land", ability_id, point=site), queue)
    return SUCCESS


def _gather(world: World, workers: list[Unit], ability_id: int, target, queue: bool) -> int:
    """Workers sent to a patch or a refinery: the game's error for anything else."""
    if not workers:
        return ERROR
    if not _is_resource(target):
        return error_pb2.MustTargetResources
    if target.type is gamedata.VESPENE_GEYSER:
        return error_pb2.MustBuildRefineryFirst
    if not economy.is_harvestable(world, target):
        return error_pb2.CantTargetExhaustedResources
    world.command(workers, Order("gather", ability_id, target=target.tag), queue)
    return SUCCESS


def _mover_command(world, movers, workers, general, ability_id, point, target, queue) -> int:
    enemy = target if target is not None and target.owner == Owner.HOSTILE else None
    if general == gamedata.STOP.ability_id:
        world.command(movers, None)
    elif general == gamedata.HOLD_POSITION.ability_id:
        world.command(movers, Order("hold", ability_id))
    elif point is None:
        return ERROR  # the other abilities need a target
    elif general == gamedata.ATTACK.ability_id or (
        general == gamedata.SMART.ability_id and enemy is not None
    ):
        if enemy is not None:
            world.command(movers, Order("attack", ability_id, point=point, target=enemy.tag), queue)
        else:
            world.command(movers, Order("attack", ability_id, point=point), queue)
    elif general == gamedata.PATROL.ability_id:
        world.command(movers, Order("patrol", ability_id, point=point), queue)
    elif (
        general == gamedata.SMART.ability_id
        and workers
        and target is not None
        and _smart_for_workers(world, movers, workers, ability_id, target, queue)
    ):
        return SUCCESS
    else:  # Move, or Smart on the ground / a friendly unit
        world.command(movers, Order("move", ability_id, point=point), queue)
    return SUCCESS


def _smart_for_workers(world, movers, workers, ability_id, target, queue) -> bool:
    """A right-click by workers on a resource gathers, on an unfinished structure builds;
    the other selected units walk there. False when the target means neither."""
    if economy.is_harvestable(world, target):
        order = Order("gather", ability_id, target=target.tag)
    elif target.owner == Owner.AGENT and target.type.is_structure and not target.finished:
        order = Order("construct", ability_id, target=target.tag)
    else:
        return False
    world.command(workers, order, queue)
    others = [u for u in movers if u not in workers]
    if others:
        world.command(others, Order("move", ability_id, point=(target.x, target.y)), queue)
    return True


def _wants_resource(world: World, ability_id: int) -> bool:
    """Gather, or a right-click by selected workers: a resource is what they aim at."""
    ability = gamedata.ABILITIES.get(ability_id)
    general = ability.general_id if ability else 0
    return general == gamedata.HARVEST_GATHER.ability_id or (
        general == gamedata.SMART.ability_id
        and any(u.type in economy.WORKERS for u in world.selected_units())
    )


def _is_resource(unit: Unit | None) -> bool:
    return (
        unit is not None
        and unit.type.is_structure
        and (unit.type.has_minerals or unit.type.has_vespene)
    )


def _resource_under(world: World, x: float, y: float) -> Unit | None:
    return next((u for u in world.units.values() if _is_resource(u) and _under(u, x, y)), None)


def _rally(structures: list[Unit], point, target) -> int:
    """Set where the selected producers send what they train (a resource: to mine it)."""
    producers = [u for u in structures if u.type in gamedata.PRODUCES and u.finished]
    if not producers or point is None:
        return ERROR
    resource = target if _is_resource(target) else None
    for producer in producers:
        producer.rally = point
        producer.rally_target = resource.tag if resource is not None else None
    return SUCCESS


def _build(world, workers, unit_type, ability_id, point, queue) -> int:
    """Send the selected worker nearest the site to build there, if the rules allow it."""
    if not workers:
        return ERROR
    if point is None:
        return error_pb2.MustTargetWalkableLocation
    problem = economy.cost_error(world, unit_type)
    if problem is not None:
        return problem
    geyser = None
    if unit_type is gamedata.REFINERY:
        geyser = economy.geyser_at(world, *point)
        if geyser is None:
            return error_pb2.CantBuildOnThat
        site = (geyser.x, geyser.y)
    else:
        site = economy.snap(unit_type, *point)
        problem = economy.placement_error(world, unit_type, *site)
        if problem is not None:
            return problem
    builder = min(workers, key=lambda u: u.distance_to(*site))
    world.command(
        [builder],
        Order(
            "build",
            ability_id,
            point=site,
            build=unit_type,
            target=geyser.tag if geyser is not None else None,
        ),
        queue,
    )
    return SUCCESS
