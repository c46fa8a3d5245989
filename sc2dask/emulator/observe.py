"""What the agent sees: ``ResponseObservation`` and ``ResponseGameInfo`` built from a World.

Everything pysc2's ``transform_obs`` reads is filled (player, score, abilities, the
UI panel, raw units, feature layers). The session adds ``player_result`` and the status.
"""

from __future__ import annotations

import math

import numpy as np
from s2clientprotocol import common_pb2, raw_pb2, score_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from . import economy, render
from .gamedata import PRODUCES, SPECIFIC, TOWN_HALLS, TRAINS
from .geometry import screen_geometry
from .score import CATEGORIES, in_production, melee_score
from .units import Owner, Unit
from .world import MAP_SIZE

# The screen pysc2 assumes when raw data is requested without feature layers.
_DEFAULT_CAMERA = sc_pb.SpatialCameraSetup(width=24, resolution=common_pb2.Size2DI(x=64, y=64))


def observe(world, options: sc_pb.InterfaceOptions) -> sc_pb.ResponseObservation:
    """The observation for the agent (player 1) under its ``InterfaceOptions``."""
    response = sc_pb.ResponseObservation()
    obs = response.observation
    obs.game_loop = world.game_loop
    own = world.own_units()
    _player_common(obs.player_common, world, own)
    _score(obs.score, world, own)
    selected = world.selected_units()
    _abilities(obs, world, selected)
    _ui(obs.ui_data, world, selected)
    visible = None
    if options.raw:
        visible = world.visible_units()
        _raw(obs.raw_data, world, options, visible)
    if options.HasField("feature_layer"):
        obs.feature_layer_data.CopyFrom(
            render.render_feature_layers(world, options.feature_layer, visible)
        )
    for result in world.agent.action_errors:
        response.action_errors.add(result=result)
    return response


def game_info(
    world, map_path: str, options: sc_pb.InterfaceOptions, race: int, computers=()
) -> sc_pb.ResponseGameInfo:
    """Map, players and the echoed options; pysc2 rejects options that differ from its own.
    ``computers``: the built-in players' setups on a map for two."""
    scenario = world.scenario
    info = sc_pb.ResponseGameInfo(map_name=scenario.name, local_map_path=map_path)
    # The hostile player 2 of the mini-games is not a player of the game; a bot is.
    info.player_info.add(
        player_id=1,
        type=sc_pb.Participant,
        race_requested=race,
        race_actual=race if race != common_pb2.Random else common_pb2.Terran,
    )
    for player_id, computer in enumerate(computers, start=2):
        info.player_info.add(
            player_id=player_id,
            type=sc_pb.Computer,
            race_requested=computer.race,
            race_actual=common_pb2.Terran,
            difficulty=computer.difficulty,
        )
    start = info.start_raw
    start.map_size.x, start.map_size.y = MAP_SIZE
    playable = _playable_grid(scenario.playable)
    _image(start.pathing_grid, playable, 1)
    _image(start.placement_grid, playable, 1)
    _image(start.terrain_height, np.where(playable, render.height_value(), 0), 8)
    # The game lists the opponents' starts: none on a mini-game.
    if computers:
        x, y = scenario.start_location(Owner.HOSTILE)
        start.start_locations.add(x=x, y=y)
    x0, y0, x1, y1 = scenario.playable
    start.playable_area.p0.x, start.playable_area.p0.y = int(x0), int(y0)
    start.playable_area.p1.x, start.playable_area.p1.y = int(x1), int(y1)
    info.options.CopyFrom(options)
    return info


# --- parts of the observation ----------------------------------------------------------


def _player_common(pc, world, own: list[Unit]) -> None:
    army = [u for u in own if u.type.army]
    workers = [u for u in own if u.type in economy.WORKERS]
    pc.player_id = Owner.AGENT
    pc.minerals = int(world.agent.minerals)
    pc.vespene = int(world.agent.vespene)
    # Half-supply units (zerglings) round up, as the game's supply counter does.
    pc.food_army = math.ceil(sum(u.type.food for u in army))
    pc.food_workers = math.ceil(sum(u.type.food for u in workers))
    pc.food_used = economy.food_used(world)  # units in production count, as in the game
    pc.food_cap = economy.food_cap(world)
    pc.army_count = len(army)  # makes select_army available
    pc.idle_worker_count = sum(1 for u in workers if not u.orders)


def _score(score, world, own: list[Unit]) -> None:
    """score.proto's fields, each as its comment defines it (``emulator/score.py``).

    Nothing here heals, and no Terran or Zerg unit has shields or energy, so
    ``total_healed`` and the shields and energy of damage stay zero; no weapon hits its
    own side, so ``friendly_fire_*`` do too.
    """
    player = world.agent
    stats = player.stats
    score.score_type = world.scenario.score_type
    if score.score_type == score_pb2.Score.Melee:
        score.score = int(melee_score(player, own))
    else:
        score.score = int(player.score)
    details = score.score_details
    details.CopyFrom(_ZERO_DETAILS)
    for name in _SCALARS:
        setattr(details, name, getattr(stats, name))
    (
        details.collection_rate_minerals,
        details.collection_rate_vespene,
    ) = stats.collection_rate()
    for name in _BY_CATEGORY:
        _fill(getattr(details, name), getattr(stats, name))
    standing = [u.type for u in own]  # "for each existing unit": finished or being built
    _fill(details.food_used, _sum_by_category(standing + in_production(own), "food"))
    _fill(details.used_minerals, _sum_by_category(standing, "mineral_cost"))
    _fill(details.used_vespene, _sum_by_category(standing, "vespene_cost"))
    details.total_damage_dealt.life = stats.damage_dealt
    details.total_damage_taken.life = stats.damage_taken


_SCALARS = (
    "idle_production_time",
    "idle_worker_time",
    "total_value_units",
    "total_value_structures",
    "killed_value_units",
    "killed_value_structures",
    "collected_minerals",
    "collected_vespene",
    "spent_minerals",
    "spent_vespene",
)
_BY_CATEGORY = (
    "killed_minerals",
    "killed_vespene",
    "lost_minerals",
    "lost_vespene",
    "total_used_minerals",
    "total_used_vespene",
)


def _sum_by_category(types, field: str) -> dict[str, float]:
    totals = dict.fromkeys(CATEGORIES, 0.0)
    for unit_type in types:
        totals[unit_type.category] += getattr(unit_type, field)
    return totals


def _fill(category_details, totals: dict[str, float]) -> None:
    for name, amount in totals.items():
        setattr(category_details, name, amount)


def _zero_details() -> score_pb2.ScoreDetails:
    """Score details with every scalar and category explicitly present and zero."""
    details = score_pb2.ScoreDetails()
    for field in details.DESCRIPTOR.fields:
        if field.message_type is None:
            setattr(details, field.name, 0.0)
        else:
            sub = getattr(details, field.name)
            for part in sub.DESCRIPTOR.fields:
                setattr(sub, part.name, 0.0)
    return details


_ZERO_DETAILS = _zero_details()


def _abilities(obs, world, selected: list[Unit]) -> None:
    """The union of the selected own units' command cards, as this map trims them, less
    what the rules forbid now (costs, supply, tech, cargo); none for a foreign selection."""
    seen = {}
    card_of = world.scenario.command_card
    for unit in selected:
        if unit.owner == Owner.AGENT:
            for ability in card_of(unit.type):
                if ability.ability_id not in seen and economy.available(world, unit, ability):
                    seen[ability.ability_id] = ability
    for ability_id in sorted(seen):
        obs.abilities.add(ability_id=ability_id, requires_point=seen[ability_id].requires_point)


def _ui(ui, world, selected: list[Unit]) -> None:
    for index, tags in enumerate(world.agent.control_groups):
        alive = [world.units[t] for t in tags if t in world.units]
        if alive:
            ui.groups.add(
                control_group_index=index, leader_unit_type=alive[0].type.type_id, count=len(alive)
            )
    if len(selected) == 1 and selected[0].queue and selected[0].owner == Owner.AGENT:
        _production(ui.production, selected[0])
    elif len(selected) == 1:
        _unit_info(ui.single.unit, selected[0])
    elif selected:
        for unit in selected:
            _unit_info(ui.multi.units.add(), unit)


def _production(panel, producer: Unit) -> None:
    """A producer with a queue shows the production panel: its queue, first one in training."""
    _unit_info(panel.unit, producer)
    train = {TRAINS[a.ability_id]: a.ability_id for a in PRODUCES[producer.type]}
    for i, unit_type in enumerate(producer.queue):
        progress = (producer.train_loops or 0) / unit_type.build_loops if i == 0 else 0.0
        item = panel.build_queue.add(
            unit_type=unit_type.type_id,
            player_relative=1,
            health=int(unit_type.health),
            max_health=int(unit_type.health),
        )
        item.build_progress = progress
        panel.production_queue.add(ability_id=train[unit_type], build_progress=progress)


def _unit_info(info, unit: Unit) -> None:
    info.unit_type = unit.type.type_id
    info.player_relative = unit.alliance
    info.health = int(unit.health)
    info.max_health = int(unit.type.health)
    info.shields = 0
    info.energy = 0
    info.build_progress = unit.build_progress


def _raw(raw, world, options, visible: list[Unit]) -> None:
    """Every unit the agent can see, in world coordinates (raw cropping is not applied)."""
    camera = options.feature_layer if options.HasField("feature_layer") else _DEFAULT_CAMERA
    screen = screen_geometry(camera, world.agent.camera)
    selected = set(world.agent.selection)
    raw.player.camera.x, raw.player.camera.y = world.agent.camera
    for unit in visible:
        _raw_unit(
            raw.units.add(), world, unit, unit.tag in selected, screen.on_screen(unit.x, unit.y)
        )
    seen = {unit.tag for unit in visible}
    for unit in world.units.values():
        resource = unit.type.has_minerals or unit.type.has_vespene
        if unit.owner == Owner.NEUTRAL and resource and unit.tag not in seen:
            _snapshot(raw.units.add(), unit, screen.on_screen(unit.x, unit.y))


def _snapshot(msg: raw_pb2.Unit, unit: Unit, on_screen: bool) -> None:
    """A mineral field or geyser in the fog, as the real game shows every one of them from
    the game's start: a snapshot (raw.proto's DisplayType Snapshot) of its type, place
    and size, without its contents. Bots map a game's bases from them (python-sc2's
    ``expansion_locations`` reads them on the first step)."""
    _shown(msg, unit, raw_pb2.Snapshot, on_screen)
    msg.build_progress = 1.0


def _shown(msg: raw_pb2.Unit, unit: Unit, display_type: int, on_screen: bool) -> None:
    """What the game shows of any unit it reports: who and what it is, and where."""
    msg.display_type = display_type
    msg.alliance = unit.alliance
    msg.tag = unit.tag
    msg.unit_type = unit.type.type_id
    msg.owner = unit.owner
    msg.pos.x, msg.pos.y, msg.pos.z = unit.x, unit.y, render.TERRAIN_HEIGHT
    msg.radius = unit.type.radius
    msg.cloak = raw_pb2.NotCloaked
    msg.is_on_screen = on_screen


def _raw_unit(msg: raw_pb2.Unit, world, unit: Unit, selected: bool, on_screen: bool) -> None:
    t = unit.type
    _shown(msg, unit, raw_pb2.Visible, on_screen)
    msg.facing = unit.facing % (2 * math.pi)  # the game reports 0..2pi
    msg.build_progress = unit.build_progress
    if t.has_minerals and t.is_structure:
        msg.mineral_contents = unit.contents
    elif t.has_vespene:
        msg.vespene_contents = unit.contents
    msg.is_selected = selected
    msg.is_powered = False
    msg.health = unit.health
    msg.health_max = t.health
    msg.weapon_cooldown = max(0.0, unit.cooldown)
    if unit.target is not None and unit.owner == Owner.AGENT:
        msg.engaged_target_tag = unit.target
    for i, unit_type in enumerate(unit.queue):  # a producer's queue shows as its orders
        ability = next(a for a in PRODUCES[t] if TRAINS[a.ability_id] is unit_type)
        msg.orders.add(
            ability_id=ability.ability_id,
            progress=((unit.train_loops or 0) / unit_type.build_loops if i == 0 else 0.0),
        )
    if unit.owner == Owner.AGENT and (t in TOWN_HALLS or t.has_vespene) and unit.finished:
        msg.assigned_harvesters, msg.ideal_harvesters = economy.harvesters(world, unit)
    for order in unit.orders:
        # Orders show the specific ability even when the command came as a general one.
        o = msg.orders.add(ability_id=SPECIFIC.get(order.ability_id, order.ability_id))
        if order.target is not None:
            o.target_unit_tag = order.target
        elif order.point is not None:
            o.target_world_space_pos.x, o.target_world_space_pos.y = order.point


def _playable_grid(playable) -> np.ndarray:
    """Map cells [y, x] (row 0 is y = 0, as the game's raw grids) inside the playable area."""
    x0, y0, x1, y1 = playable
    ys, xs = np.mgrid[0 : MAP_SIZE[1], 0 : MAP_SIZE[0]] + 0.5
    return (xs >= x0) & (xs < x1) & (ys >= y0) & (ys < y1)


def _image(img, values: np.ndarray, bpp: int) -> None:
    img.bits_per_pixel = bpp
    img.size.y, img.size.x = values.shape
    img.data = render.pack_layer(values, bpp)
