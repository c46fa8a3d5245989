"""Combat, timed as the game's weapon data times it (``gamedata``: each value's source).

An attack starts when a unit's weapon is ready and its target in range: the unit turns at
once (every emulated unit turns at 999.8 degrees a second). Its damage comes
``DamagePoint`` later: a missile is launched then and hits when it arrives, an instant
weapon hits then; the next attack may start the weapon's ``Period`` after this one
started, stretched or shortened by the game's random delay. A unit killed before its
damage point deals no damage, and a new order or a target that died first drops the
attack (its period is not spent). After the damage the unit stands for its
``Backswing``, unless it is given a new order (the stutter step).

Damage that comes due in a loop lands together, before any unit acts in that loop, so
that two units striking at once both strike, whichever of them the loop reaches first:
with damage dealt as each unit acted, the first player's units won mirrored fights.
Banelings burst on contact, and when killed.
"""

from __future__ import annotations

import math

from .gamedata import RANDOM_DELAY_LOOPS, RANGE_SLOP
from .units import Owner, Unit

# Idle units this close to an attacked ally join the fight (calibrated: random agents
# must not win DefeatZerglingsAndBanelings fights piecemeal, as they cannot in the game).
HELP_RADIUS = 8.0
RANGE_SLACK = 1e-3  # world units: in range means within this of the weapon's reach


def engage(world, unit: Unit, target: Unit, may_move: bool) -> None:
    """Close in if out of range, then start an attack if the weapon is ready, in the same
    loop (a melee unit pushed back a little each loop would otherwise never strike).

    A unit closes in to just inside its range: stopping exactly at it left float rounding
    to decide, and a unit a hair beyond its range neither fired nor moved again. It does
    not move while its attack's damage point or its backswing lasts."""
    if unit.strike is not None or world.game_loop < unit.stands_until:
        return
    reach = unit.type.weapon_range + unit.type.radius + target.type.radius
    if unit.distance_to(target.x, target.y) > reach + RANGE_SLACK:
        if not may_move:
            return
        world.move_towards(unit, target.x, target.y, stop_at=reach - RANGE_SLACK)
        if unit.distance_to(target.x, target.y) > reach + RANGE_SLACK:
            return
    unit.facing = math.atan2(target.y - unit.y, target.x - unit.x)
    if unit.cooldown <= 0:
        _start_attack(world, unit, target)


def _start_attack(world, unit: Unit, target: Unit) -> None:
    if unit.type.damage_point <= 0:  # a baneling bursts at once
        _fired(world, unit)
        _strike(world, unit, target)
    else:
        unit.strike = (world.game_loop + math.ceil(unit.type.damage_point), target.tag)
        world.strikes.append(unit)


def _fired(world, unit: Unit) -> None:
    """The weapon fires: the next attack may start a Period (and the random delay) after
    this one started, and the unit stands for its backswing. An attack dropped before its
    damage point (a new order, a target dead or gone) costs no period."""
    waited = math.ceil(unit.type.damage_point)
    unit.cooldown = unit.type.cooldown + world.rng.uniform(*RANDOM_DELAY_LOOPS) - waited
    unit.stands_until = world.game_loop + math.ceil(unit.type.backswing)


def cancel(unit: Unit) -> None:
    """A new order: an attack not yet at its damage point is dropped, and so is the
    backswing (the game lets an order interrupt both)."""
    unit.strike, unit.stands_until = None, 0


def land_due(world) -> None:
    """Every strike and missile due by this loop, together: which units strike is decided
    before any of their damage lands, so two that strike each other both do. A strike
    whose target an earlier one of the same loop killed is dropped, as an attack on a
    dead unit is: the unit keeps its weapon ready for another target."""
    loop = world.game_loop
    due = [u for u in world.strikes if u.strike is not None and u.strike[0] <= loop]
    world.strikes = [u for u in world.strikes if u.strike is not None and u.strike[0] > loop]
    hits: list[tuple[Unit, Unit, bool]] = []  # (attacker, target, fires now)
    for unit in due:
        target = world.units.get(unit.strike[1])  # type: ignore[index]
        unit.strike = None
        if not unit.alive or target is None or not target.alive:
            continue
        reach = unit.type.weapon_range + unit.type.radius + target.type.radius
        if unit.distance_to(target.x, target.y) > reach + RANGE_SLOP:
            continue  # it got away during the damage point
        if unit.type.missile_speed:
            _fired(world, unit)
            flight = unit.distance_to(target.x, target.y) / unit.type.missile_speed
            world.missiles.append((loop + max(1, math.ceil(flight)), unit, target.tag))
        else:
            hits.append((unit, target, True))
    arrived = [m for m in world.missiles if m[0] <= loop]
    world.missiles = [m for m in world.missiles if m[0] > loop]
    for _, attacker, tag in arrived:  # a missile in flight hits even if its shooter died
        target = world.units.get(tag)
        if target is not None:
            hits.append((attacker, target, False))
    for attacker, target, fires in hits:
        if not target.alive:
            continue
        if fires:
            _fired(world, attacker)
        _strike(world, attacker, target)


def _strike(world, unit: Unit, target: Unit) -> None:
    if unit.type.splash_radius:
        burst(world, unit)
        unit.health = 0  # the burst kills the baneling (VolatileBurst's Suicide)
    else:
        damage(world, unit, target)


def burst(world, unit: Unit) -> None:
    """A baneling's VolatileBurst, once: every enemy unit or structure within the splash
    of its edge takes its damage (structures ``structure_damage``, armour ignored)."""
    if unit.burst:
        return
    unit.burst = True
    reach = unit.type.splash_radius
    for other in list(world.units.values()):
        if (
            other.owner != unit.owner
            and other.type.health > 0  # resources and beacons take no damage
            and other.alive
            and unit.distance_to(other.x, other.y) <= reach + other.type.radius
        ):
            if other.type.is_structure:
                damage(world, unit, other, unit.type.structure_damage, armour=False)
            else:
                damage(world, unit, other)


def damage(
    world, attacker: Unit, target: Unit, amount: float | None = None, armour: bool = True
) -> None:
    """The attacker's weapon damage (or ``amount``) less the target's armour, at least 0.5
    as in the game, counted in both players' score."""
    if amount is None:
        amount = attacker.type.damage + (attacker.type.bonus_vs_light if target.type.light else 0)
    if armour:
        amount = max(0.5, amount - target.type.armor)
    amount = min(amount, target.health)
    target.health -= amount
    dealer, taker = world.players.get(attacker.owner), world.players.get(target.owner)
    if dealer is not None:
        dealer.stats.damage_dealt += amount
    if taker is not None:
        taker.stats.damage_taken += amount
    if not target.alive:
        if dealer is not None:
            dealer.stats.killed(target.type)
        if taker is not None:
            taker.stats.lost(target.type)
    _call_for_help(world, target, attacker)


def _call_for_help(world, victim: Unit, attacker: Unit) -> None:
    """An attacked unit, and idle allies near it, turn on the attacker (engine default)."""
    if victim.owner == Owner.NEUTRAL:
        return
    for unit in world.units.values():
        if (
            unit.owner == victim.owner
            and unit.alive
            and unit.type.can_attack
            and not unit.orders
            and unit.target is None
            and not unit.holding
            and (unit is victim or unit.distance_to(victim.x, victim.y) <= HELP_RADIUS)
        ):
            unit.target, unit.leash = attacker.tag, (unit.x, unit.y)
