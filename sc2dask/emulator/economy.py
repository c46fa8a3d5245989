"""The economy: workers harvest, structures are placed and constructed, units are trained.

``World`` calls ``work`` for a worker's gather, return, build and construct orders and
``produce`` for every structure, once per game loop. The same rules (costs, supply,
tech, placement) decide which abilities ``observe`` offers, so the two never disagree.
"""

from __future__ import annotations

import math

import numpy as np
from s2clientprotocol import error_pb2

from . import gamedata
from .gamedata import SCV, TOWN_HALLS, UnitType
from .units import Order, Owner, Unit

ARRIVE = 0.25  # a worker this close to a footprint's edge has arrived
MINERAL_WALK = 4.0  # a worker finding its field taken tries a free one this near it
TOWN_HALL_SPACING = 3  # cells a town hall keeps from minerals and geysers
BASE_RADIUS = 8.0  # mineral fields this near a town hall's edge belong to its base
WORKER_ORDERS = ("gather", "return", "build", "construct")
LIFTS = {gamedata.COMMAND_CENTER: gamedata.COMMAND_CENTER_FLYING}  # grounded -> flying
LANDS = {flying: grounded for grounded, flying in LIFTS.items()}
WORKERS = (SCV,)

# --- supply, costs and tech -------------------------------------------------------------


def food_used(world, owner: Owner = Owner.AGENT) -> int:
    """Supply of a player's units plus the ones in production, rounded up as the game does."""
    own = world.own_units(owner)
    used = sum(u.type.food for u in own)
    used += sum(u.queue[0].food for u in own if u.queue and u.train_loops is not None)
    return math.ceil(used)


def food_cap(world, owner: Owner = Owner.AGENT) -> int:
    supply = sum(u.type.supply for u in world.own_units(owner) if u.finished)
    return min(gamedata.SUPPLY_LIMIT, supply)


def cost_error(world, unit_type: UnitType, owner: Owner = Owner.AGENT) -> int | None:
    """Why a player cannot pay for or make ``unit_type`` now (an ActionResult), or None."""
    needed = gamedata.REQUIRES.get(unit_type)
    own = world.own_units(owner)
    if needed is not None and not any(u.type is needed and u.finished for u in own):
        return (
            error_pb2.BuildTechRequirementsNotMet
            if unit_type.is_structure
            else error_pb2.TechRequirementsNotMet
        )
    bank = world.players[owner]
    if bank.minerals < unit_type.mineral_cost:
        return error_pb2.NotEnoughMinerals
    if bank.vespene < unit_type.vespene_cost:
        return error_pb2.NotEnoughVespene
    return None


def train_error(world, producer: Unit, unit_type: UnitType) -> int | None:
    """Why ``producer`` cannot queue ``unit_type`` now, or None."""
    if not producer.finished:
        return error_pb2.BuildingIsUnderConstruction
    if len(producer.queue) >= gamedata.BUILD_QUEUE_SIZE:
        return error_pb2.QueueIsFull
    owner = producer.owner
    problem = cost_error(world, unit_type, owner)
    if problem is None and food_used(world, owner) + unit_type.food > food_cap(world, owner):
        return error_pb2.NotEnoughFood
    return problem


def train(world, producers: list[Unit], unit_type: UnitType) -> int:
    """Queue one ``unit_type`` at the selected producer with the shortest queue, paying now."""
    able = [p for p in producers if unit_type in _trains(p.type)]
    if not able:
        return error_pb2.Error
    problems = [train_error(world, p, unit_type) for p in able]
    ready = [p for p, problem in zip(able, problems) if problem is None]
    if not ready:
        return problems[0]
    producer = min(ready, key=lambda p: len(p.queue))
    _pay(world, unit_type, producer.owner)
    producer.queue.append(unit_type)
    return error_pb2.Success


def cancel(world, producer: Unit, index: int) -> int:
    """Take item ``index`` out of a build queue and refund it, as the queue panel does."""
    if not 0 <= index < len(producer.queue):
        return error_pb2.Error
    unit_type = producer.queue.pop(index)
    if index == 0:
        producer.train_loops = None
    _pay(world, unit_type, producer.owner, refund=True)
    return error_pb2.Success


def _pay(world, unit_type: UnitType, owner: Owner, refund: bool = False) -> None:
    """Take ``unit_type``'s cost from a player's bank (give it back with ``refund``)."""
    sign = 1 if refund else -1
    bank = world.players[owner]
    bank.minerals += sign * unit_type.mineral_cost
    bank.vespene += sign * unit_type.vespene_cost
    bank.stats.paid(unit_type, refund)


def _trains(producer_type: UnitType) -> list[UnitType]:
    return [gamedata.TRAINS[a.ability_id] for a in gamedata.PRODUCES.get(producer_type, ())]


# --- placement --------------------------------------------------------------------------


def blocked_cells(world) -> np.ndarray:
    """Map cells [y, x] covered by a structure or resource."""

    def compute():
        grid = np.zeros(world.map_size[::-1], dtype=bool)
        for unit in world.units.values():
            if unit.type.is_structure:
                x0, y0, x1, y1 = (int(round(v)) for v in unit.footprint())
                grid[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)] = True
        return grid

    return world.cached("blocked_cells", compute)


def snap(unit_type: UnitType, x: float, y: float) -> tuple[float, float]:
    """The centre the game places a footprint at for a click at (x, y): on whole cells."""
    w, h = unit_type.footprint
    return round(x - w / 2) + w / 2, round(y - h / 2) + h / 2


def placement_error(world, unit_type: UnitType, x: float, y: float) -> int | None:
    """Why ``unit_type`` cannot stand with its centre at (x, y), or None.

    Refineries are placed on a geyser by ``geyser_at`` instead. The agent's own units
    step aside for a new structure, as in the game, so only the grid is checked.
    """
    w, h = unit_type.footprint
    x0, y0 = int(round(x - w / 2)), int(round(y - h / 2))
    px0, py0, px1, py1 = world.scenario.playable
    if x0 < px0 - 1e-6 or y0 < py0 - 1e-6 or x0 + w > px1 + 1e-6 or y0 + h > py1 + 1e-6:
        return error_pb2.CantBuildLocationInvalid
    if blocked_cells(world)[y0 : y0 + h, x0 : x0 + w].any():
        return error_pb2.CantBuildLocationInvalid
    if unit_type in TOWN_HALLS:
        s = TOWN_HALL_SPACING
        for res in world.units.values():
            if res.type.has_minerals or res.type.has_vespene:
                rx0, ry0, rx1, ry1 = res.footprint()
                if rx0 - s < x0 + w and x0 < rx1 + s and ry0 - s < y0 + h and y0 < ry1 + s:
                    return error_pb2.CantBuildTooCloseToResources
    return None


def geyser_at(world, x: float, y: float) -> Unit | None:
    """The free vespene geyser under (x, y), if any."""
    for unit in world.units.values():
        if unit.type is gamedata.VESPENE_GEYSER:
            x0, y0, x1, y1 = unit.footprint()
            if x0 <= x <= x1 and y0 <= y <= y1:
                return unit
    return None


# --- what an ability may do now ---------------------------------------------------------


def available(world, unit: Unit, ability: gamedata.Ability) -> bool:
    """Whether ``unit`` may use ``ability`` now: costs, supply, tech, cargo and progress."""
    aid = ability.ability_id
    if aid in gamedata.TRAINS:
        return train_error(world, unit, gamedata.TRAINS[aid]) is None
    if aid in gamedata.BUILDS:
        return cost_error(world, gamedata.BUILDS[aid], unit.owner) is None
    if ability.general_id == gamedata.HARVEST_RETURN.ability_id:
        return unit.cargo > 0
    if ability.general_id == gamedata.LIFT.ability_id:
        return unit.finished and not unit.queue
    if ability.general_id == gamedata.CANCEL_LAST.ability_id:
        return bool(unit.queue)
    if unit.type.is_structure:
        return unit.finished
    return True


def is_harvestable(world, unit: Unit | None, owner: Owner = Owner.AGENT) -> bool:
    """Mineral fields, and a player's own finished refineries with gas left."""
    if unit is None or unit.tag not in world.units:
        return False
    if unit.type.has_minerals and unit.type is not gamedata.MINERAL_SHARD:
        return unit.contents > 0
    return (
        unit.type is gamedata.REFINERY
        and unit.owner == owner
        and unit.finished
        and unit.contents > 0
    )


def harvesters(world, base: Unit) -> tuple[int, int]:
    """(assigned, ideal) workers of a town hall (2 per nearby field) or a refinery (3)."""
    if base.type in TOWN_HALLS:
        fields = {
            u.tag
            for u in world.units.values()
            if u.type is gamedata.MINERAL_FIELD and base.gap_to(u) <= BASE_RADIUS
        }
        ideal = 2 * len(fields)
    else:
        fields, ideal = {base.tag}, 3
    assigned = sum(
        1
        for u in world.own_units(base.owner)
        if u.type in WORKERS and u.harvesting and u.harvest_from in fields
    )
    return assigned, ideal


# --- the worker's orders ----------------------------------------------------------------


def work(world, unit: Unit, order: Order) -> bool:
    """One loop of a worker's economy order; True once it is done (the World pops it)."""
    if order.kind == "gather":
        return _gather(world, unit, order)
    if order.kind == "return":
        if not unit.cargo:
            return True
        if not _return_cargo(world, unit):
            return not _town_hall(world, unit)
        resource = world.units.get(unit.harvest_from) if unit.harvest_from else None
        if not is_harvestable(world, resource, unit.owner):
            return True
        unit.orders[0] = Order(
            "gather", gamedata.HARVEST_GATHER_SCV.ability_id, target=resource.tag, phase="go"
        )
        return False
    if order.kind == "build":
        return _build(world, unit, order)
    return _construct(world, unit, order)


def _gather(world, unit: Unit, order: Order) -> bool:
    if unit.cargo and order.phase in ("", "go", "return"):
        order.phase = "return"  # carry the load home first
        if not _return_cargo(world, unit):
            return not _town_hall(world, unit)
        order.phase = "go"
        return False
    resource = world.units.get(order.target)
    if not is_harvestable(world, resource, unit.owner):
        resource = _free_field_near(
            world, order.point or (unit.x, unit.y), 2 * MINERAL_WALK, unit, any_field=True
        )
        if resource is None:
            return True
        order.target = resource.tag
    order.point = (resource.x, resource.y)
    unit.harvest_from = resource.tag
    if order.phase in ("", "go"):
        if not approach(world, unit, resource):
            return False
        miner = _miner(world, resource)
        if miner is not None and miner is not unit:
            if resource.type.has_minerals:  # mineral walking: try a free field nearby
                free = _free_field_near(world, (resource.x, resource.y), MINERAL_WALK, unit)
                if free is not None:
                    order.target = free.tag
            return False  # wait at the field
        resource.miner = unit.tag
        order.phase = "mine"
        order.timer = (
            gamedata.GAS_GATHER_LOOPS
            if resource.type.has_vespene
            else gamedata.MINERAL_GATHER_LOOPS
        )
        return False
    if order.phase == "mine":
        order.timer -= 1
        if order.timer > 0:
            return False
        gas = resource.type.has_vespene
        amount = min(
            gamedata.GAS_PER_TRIP if gas else gamedata.MINERALS_PER_TRIP, resource.contents
        )
        resource.contents -= amount
        resource.miner = None
        unit.cargo, unit.cargo_gas = amount, gas
        if resource.contents <= 0 and resource.type.has_minerals:
            world.remove(resource)  # a mined-out field disappears; a refinery stays
        order.phase, order.timer = "pause", gamedata.GATHER_PAUSE_LOOPS
        return False
    order.timer -= 1  # the pause after mining
    if order.timer <= 0:
        order.phase = "return"
    return False


def _miner(world, resource: Unit) -> Unit | None:
    """The worker mining ``resource`` right now (one whose order moved on does not count)."""
    worker = world.units.get(resource.miner) if resource.miner is not None else None
    if worker is None or not worker.orders:
        return None
    order = worker.orders[0]
    if order.kind == "gather" and order.target == resource.tag and order.phase == "mine":
        return worker
    return None


def _free_field_near(world, point, radius: float, worker: Unit, any_field=False) -> Unit | None:
    """The nearest mineral field within ``radius`` of ``point`` that nobody mines
    (``any_field``: taken ones too, to replace a field that ran out)."""
    best, best_d = None, radius
    for res in world.units.values():
        if (
            res.type is gamedata.MINERAL_FIELD
            and res.contents > 0
            and (any_field or _miner(world, res) in (None, worker))
        ):
            d = math.dist(point, (res.x, res.y))
            if d <= best_d:
                best, best_d = res, d
    return best


def _town_hall(world, unit: Unit) -> Unit | None:
    halls = world.cached(
        f"town_halls {unit.owner}",
        lambda: [u for u in world.own_units(unit.owner) if u.type in TOWN_HALLS and u.finished],
    )
    return min(halls, key=unit.gap_to, default=None)


def _return_cargo(world, unit: Unit) -> bool:
    """Walk the load to the nearest finished town hall; True once it is delivered."""
    hall = _town_hall(world, unit)
    if hall is None or not approach(world, unit, hall):
        return False
    player = world.players[unit.owner]
    if unit.cargo_gas:
        player.vespene += unit.cargo
        player.stats.collected_vespene += unit.cargo
    else:
        player.minerals += unit.cargo
        player.stats.collected_minerals += unit.cargo
    unit.cargo, unit.cargo_gas = 0, False
    return True


def approach(world, unit: Unit, target: Unit) -> bool:
    """Walk towards ``target``'s edge; True once within ``ARRIVE`` of it."""
    if unit.gap_to(target) <= ARRIVE:
        return True
    goal = target.footprint() if target.type.is_structure else None
    x0, y0, x1, y1 = goal or (target.x, target.y, target.x, target.y)
    nx, ny = min(max(unit.x, x0), x1), min(max(unit.y, y0), y1)
    stop = unit.type.radius + (0.0 if target.type.is_structure else target.type.radius)
    world.move_towards(unit, nx, ny, stop_at=stop + ARRIVE / 2, goal=goal)
    return unit.gap_to(target) <= ARRIVE


def _build(world, unit: Unit, order: Order) -> bool:
    """Walk to the site, then pay and place the structure and start constructing it. A
    site built over on the way is dropped at once, where the game drops it on arrival:
    the builder could not stand at a site inside a structure."""
    unit_type = order.build
    geyser = world.units.get(order.target) if order.target is not None else None
    site = geyser or Unit(unit_type, unit.owner, *order.point)  # a footprint to walk to
    if geyser is None and placement_error(world, unit_type, *order.point) is not None:
        return True  # the game drops the order with an alert
    if not approach(world, unit, site):
        return False
    if unit_type is gamedata.REFINERY:
        problem = None if geyser is not None else error_pb2.CantBuildOnThat
    else:
        problem = placement_error(world, unit_type, *order.point)
    if problem is None:
        problem = cost_error(world, unit_type, unit.owner)
    if problem is not None:
        return True  # the game drops the order with an alert
    _pay(world, unit_type, unit.owner)
    structure = world.spawn(
        unit_type, unit.owner, site.x, site.y, build_progress=0.0, health=unit_type.health * 0.1
    )
    if geyser is not None:
        structure.contents = geyser.contents
        world.remove(geyser)
    order.kind, order.target, order.build = "construct", structure.tag, None
    return False


def _construct(world, unit: Unit, order: Order) -> bool:
    """An SCV builds while it stays; another order pauses the structure, as in the game."""
    structure = world.units.get(order.target)
    if structure is None or structure.finished:
        return True
    if not approach(world, unit, structure):
        return False
    t = structure.type
    structure.build_progress = min(1.0, structure.build_progress + 1.0 / t.build_loops)
    structure.health = min(t.health, structure.health + 0.9 * t.health / t.build_loops)
    if not structure.finished:
        return False
    structure.health = float(t.health)
    world.structure_version += 1  # a finished town hall takes cargo
    world.players[structure.owner].stats.made(t)
    if t is gamedata.REFINERY:  # its builder starts on the gas, as in the game
        unit.orders[0] = Order(
            "gather", gamedata.HARVEST_GATHER_SCV.ability_id, target=structure.tag, phase="go"
        )
        return False
    return True


# --- lifting off and landing --------------------------------------------------------------


def lift(world, structures: list[Unit]) -> int:
    """Lift the selected finished, idle Command Centers off: they fly, and stop being a
    drop-off point or a footprint on the grid until they land."""
    lifted = [u for u in structures if u.type in LIFTS and u.finished and not u.queue]
    for unit in lifted:
        unit.type = LIFTS[unit.type]
        world.structure_version += 1
    return error_pb2.Success if lifted else error_pb2.Error


def land(world, unit: Unit, order: Order) -> bool:
    """Fly to the landing site, then land if the footprint fits there; True when done."""
    grounded = LANDS[unit.type]
    if not world.move_towards(unit, *order.point, stop_at=0.0):
        return False
    if placement_error(world, grounded, *order.point) is None:
        unit.type = grounded
        unit.x, unit.y = order.point
        world.structure_version += 1
    return True


# --- production -------------------------------------------------------------------------


def produce(world, structure: Unit) -> None:
    """One loop of a structure's build queue; the first item waits for free supply."""
    if not structure.queue or not structure.finished:
        return
    unit_type = structure.queue[0]
    if structure.train_loops is None:
        owner = structure.owner
        if food_used(world, owner) + unit_type.food > food_cap(world, owner):
            return  # supply blocked
        structure.train_loops = 0
    structure.train_loops += 1
    if structure.train_loops < unit_type.build_loops:
        return
    structure.queue.pop(0)
    structure.train_loops = None
    x0, y0, _, _ = structure.footprint()
    unit = world.spawn(unit_type, structure.owner, structure.x, y0 - unit_type.radius - 0.05)
    world.players[structure.owner].stats.made(unit_type)
    rally_target = world.units.get(structure.rally_target) if structure.rally_target else None
    if unit_type in WORKERS and is_harvestable(world, rally_target, structure.owner):
        unit.orders.append(
            Order(
                "gather",
                gamedata.HARVEST_GATHER_SCV.ability_id,
                target=rally_target.tag,
                phase="go",
            )
        )
    elif structure.rally is not None:
        unit.orders.append(Order("move", gamedata.MOVE_MOVE.ability_id, point=structure.rally))
    world.scenario.on_trained(world, unit)
