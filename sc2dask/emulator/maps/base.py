"""What every mini-game scenario provides: its layout, its clock and its triggers."""

from __future__ import annotations

from s2clientprotocol import sc2api_pb2 as sc_pb
from s2clientprotocol import score_pb2

from ..gamedata import LOOPS_PER_SECOND, MARINE, Ability, UnitType
from ..static_data import unit_abilities
from ..units import Owner, Unit


class Scenario:
    """A map's rules. ``setup`` places units; ``on_loop`` and ``on_death`` are its triggers."""

    name = ""
    players = 1  # the mini-games: the agent alone (player 2 owns enemies but does not play)
    time_limit_loops = 120 * LOOPS_PER_SECOND
    playable = (22.0, 20.0, 44.0, 36.0)  # region 1: (x0, y0, x1, y1)
    camera_start = (33.0, 25.0)  # centre of region 1, 3 units south
    camera_locked = True  # CameraLockInput: single-screen maps ignore camera moves
    fog = False
    ends_when_marines_dead = False
    timeout_result = sc_pb.Tie  # the scripts never call game-over; pysc2 maps Tie to 0
    score_type = score_pb2.Score.Curriculum  # the map's triggers set the score

    def configure(self, computers) -> None:
        """Take the Computer players' setups of ``RequestCreateGame`` (a map for two)."""

    def start_location(self, owner: Owner) -> tuple[float, float] | None:
        """Where ``owner`` starts, on a map with start locations."""
        return None

    def setup(self, world) -> None:
        raise NotImplementedError

    def on_loop(self, world) -> None:
        """Runs after units act, every game loop."""

    def command_card(self, unit_type: UnitType) -> list[Ability]:
        """The abilities a unit type's card shows on this map (some maps trim them)."""
        return unit_abilities(unit_type)

    def on_trained(self, world, unit: Unit) -> None:
        """Runs once per unit a structure finished training."""

    def on_death(self, world, unit: Unit) -> None:
        """Runs once per unit that died this loop (after it left ``world.units``)."""
        if (
            self.ends_when_marines_dead
            and unit.owner == Owner.AGENT
            and unit.type is MARINE
            and not world.units_of(Owner.AGENT, MARINE)
        ):
            world.end_after_delay(sc_pb.Defeat)
