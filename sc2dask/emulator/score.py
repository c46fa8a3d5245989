"""The score a player earns, kept as the real game keeps it: ``score_details`` and, on a
melee map, the Melee score.

Each field follows its definition in s2client-proto's ``score.proto`` (the comment on the
field, quoted where it is kept); what a type is worth for making and for killing it is the
game data's ``ScoreMake`` and ``ScoreKill``, and its category its ``CostCategory``
(``gamedata.py`` names the file). Fields whose unit no source settles are listed on
docs/results/fullgame.md.
"""

from __future__ import annotations

import collections
import dataclasses

from .gamedata import UnitType

# score.proto's CategoryScoreDetails, in its order.
CATEGORIES = ("none", "army", "economy", "technology", "upgrade")
# "Estimated income of minerals over the next minute based on the players current
# income": read here from what was collected in the last game minute.
RATE_WINDOW_S = 60


def _by_category() -> dict[str, float]:
    return dict.fromkeys(CATEGORIES, 0.0)


@dataclasses.dataclass
class ScoreStats:
    """One player's running totals: what the game counts as things happen."""

    collected_minerals: float = 0.0
    collected_vespene: float = 0.0
    # "incremented by 50 the moment an scv is queued ... decremented by 50 if canceled"
    spent_minerals: float = 0.0
    spent_vespene: float = 0.0
    # "spent on completed units" / "structures": ScoreMake, as each one finishes
    total_value_units: float = 0.0
    total_value_structures: float = 0.0
    # the opponent's units and structures destroyed: ScoreKill
    killed_value_units: float = 0.0
    killed_value_structures: float = 0.0
    idle_production_time: float = 0.0  # game loops, summed over idle producers
    idle_worker_time: float = 0.0  # game loops, summed over idle workers
    damage_dealt: float = 0.0
    damage_taken: float = 0.0
    killed_minerals: dict[str, float] = dataclasses.field(default_factory=_by_category)
    killed_vespene: dict[str, float] = dataclasses.field(default_factory=_by_category)
    lost_minerals: dict[str, float] = dataclasses.field(default_factory=_by_category)
    lost_vespene: dict[str, float] = dataclasses.field(default_factory=_by_category)
    # "Sum of used minerals throughout the entire game ... never decremented"
    total_used_minerals: dict[str, float] = dataclasses.field(default_factory=_by_category)
    total_used_vespene: dict[str, float] = dataclasses.field(default_factory=_by_category)
    # (minerals, vespene) collected by the end of each of the last game seconds
    _collected: collections.deque = dataclasses.field(
        default_factory=lambda: collections.deque([(0.0, 0.0)], maxlen=RATE_WINDOW_S + 1)
    )

    def paid(self, unit_type: UnitType, refund: bool = False) -> None:
        """A unit queued or a structure placed (its cost given back on a cancel)."""
        sign = -1 if refund else 1
        self.spent_minerals += sign * unit_type.mineral_cost
        self.spent_vespene += sign * unit_type.vespene_cost

    def made(self, unit_type: UnitType) -> None:
        """A unit trained or a structure finished."""
        if unit_type.is_structure:
            self.total_value_structures += unit_type.score_make
        else:
            self.total_value_units += unit_type.score_make
        self.total_used_minerals[unit_type.category] += unit_type.mineral_cost
        self.total_used_vespene[unit_type.category] += unit_type.vespene_cost

    def killed(self, unit_type: UnitType) -> None:
        """The opponent's unit or structure this player destroyed."""
        if unit_type.is_structure:
            self.killed_value_structures += unit_type.score_kill
        else:
            self.killed_value_units += unit_type.score_kill
        self.killed_minerals[unit_type.category] += unit_type.mineral_cost
        self.killed_vespene[unit_type.category] += unit_type.vespene_cost

    def lost(self, unit_type: UnitType) -> None:
        """One of this player's own units or structures destroyed."""
        self.lost_minerals[unit_type.category] += unit_type.mineral_cost
        self.lost_vespene[unit_type.category] += unit_type.vespene_cost

    def second_passed(self) -> None:
        """Note what was collected by now; called once a game second."""
        self._collected.append((self.collected_minerals, self.collected_vespene))

    def collection_rate(self) -> tuple[float, float]:
        """Minerals and vespene a minute, at the pace of the last game minute (or of the
        game so far, in its first minute)."""
        (m0, v0), seconds = self._collected[0], len(self._collected) - 1
        if seconds == 0:
            return 0.0, 0.0
        per_minute = 60 / seconds
        return (
            (self.collected_minerals - m0) * per_minute,
            (self.collected_vespene - v0) * per_minute,
        )


def value(unit_type: UnitType) -> float:
    """What a unit or structure is worth: "Sum of minerals and vespene" spent on it."""
    return unit_type.mineral_cost + unit_type.vespene_cost


def in_production(units) -> list[UnitType]:
    """The units being trained now (the head of each queue once its clock runs)."""
    return [u.queue[0] for u in units if u.queue and u.train_loops is not None]


def melee_score(player, units) -> float:
    """The Melee score of ``player`` (a ``world.PlayerState``) owning ``units``.

    score.proto: "summation of in-progress and current units/buildings value + minerals +
    vespene"; the SC2LE paper (Vinyals et al. 2017, arXiv 1708.04782, section 3.3) reads
    it the same way: current resources plus the units and buildings alive and being
    built, so mining raises it, losses lower it, and training or building leave it as it
    was (what is paid comes back as value).
    """
    built = sum(value(u.type) for u in units) + sum(value(t) for t in in_production(units))
    return built + player.minerals + player.vespene
