"""BuildMarines: 12 mining SCVs; build depots and barracks and train marines, +1 each."""

from __future__ import annotations

from .. import gamedata as gd
from ..gamedata import LOOPS_PER_SECOND, MARINE, UnitType
from ..units import Order, Owner
from .base import Scenario
from .collect_minerals_and_gas import CAMERA, LEFT_FIELDS, PLAYABLE, place_base

RALLY_FIELD = (23, 26.5)  # the script rallies the Command Center here and sends every SCV
# The map's unit data trims the command cards to what the task needs.
CARDS = {
    gd.SCV: [
        gd.SMART,
        gd.HARVEST_GATHER_SCV,
        gd.HARVEST_RETURN_SCV,
        gd.BUILD_SUPPLYDEPOT,
        gd.BUILD_BARRACKS,
    ],
    gd.COMMAND_CENTER: [gd.TRAIN_SCV],
    gd.BARRACKS: [gd.TRAIN_MARINE],
    gd.SUPPLY_DEPOT: [],
}


class BuildMarines(Scenario):
    name = "BuildMarines"
    time_limit_loops = 900 * LOOPS_PER_SECOND
    playable = PLAYABLE
    camera_start = CAMERA

    def setup(self, world) -> None:
        cc, scvs = place_base(world, LEFT_FIELDS)
        field = next(u for u in world.units_of(Owner.NEUTRAL) if (u.x, u.y) == RALLY_FIELD)
        cc.rally_target = field.tag
        for scv in scvs:
            scv.orders.append(
                Order("gather", gd.HARVEST_GATHER_SCV.ability_id, target=field.tag, phase="go")
            )

    def command_card(self, unit_type: UnitType) -> list[gd.Ability]:
        return list(CARDS[unit_type]) if unit_type in CARDS else super().command_card(unit_type)

    def on_trained(self, world, unit) -> None:
        if unit.type is MARINE:
            world.agent.score += 1
