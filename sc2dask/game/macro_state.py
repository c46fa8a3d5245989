"""The few numbers a policy over macros decides on: what it owns, what it sees of the
enemy, its bank and supply, and the time.

A macro chooses an intention ("build a depot", "attack"), not a place, so the policy
needs no picture of the map: TStarBot1 and Thought-SC2 decide on such counts alone. Read
from the raw units and the player's scalars, the same on the real game as on the
emulator, with no feature layers rendered.
"""

from __future__ import annotations

import numpy as np

from .macros import BUILD_BARRACKS, BUILD_DEPOT, ENEMY, STRUCTURES, Board

GAME_LOOPS_PER_MINUTE = 22.4 * 60  # "faster" speed, pysc2's and the ladder's
DISTANCE_SCALE = 64.0  # raw units' distances are divided by this (Simple64's raw side)

# Counts enter as log1p(count): a tenth marine matters less than the first.
NAMES = (
    "scvs",
    "idle_scvs",
    "scvs_building",
    "marines",
    "idle_marines",
    "depots",
    "depots_building",
    "barracks",
    "barracks_building",
    "idle_barracks",
    "command_center",
    "command_center_busy",
    "minerals",
    "supply_left",
    "supply_cap",
    "enemy_units_seen",
    "enemy_structures_seen",
    "enemies_near_home",
    "army_from_home",  # mean distance of the marines from the command center / 64
    "game_minutes",  # / 30: a game the bots play to the end lasts under half an hour
)


def macro_state(observation, board: Board | None = None) -> np.ndarray:
    """[len(NAMES)] float32: one observation's numbers, named by ``NAMES`` (``board``: its
    board, where the caller has read it already)."""
    board = board or Board.read(observation)
    player = observation["player"]
    hall = board.hall
    enemies = [u for u in board.raw if u.alliance == ENEMY]
    enemy_structures = sum(u.unit_type in STRUCTURES for u in enemies)
    building = sum(u.order_id_0 in (BUILD_DEPOT, BUILD_BARRACKS) for u in board.scvs)
    finished = [d for d in board.depots if d.build_progress == 100]
    barracks = [b for b in board.barracks if b.build_progress == 100]
    counts = (
        len(board.scvs),
        sum(u.order_length == 0 for u in board.scvs),
        building,
        len(board.marines),
        sum(u.order_length == 0 for u in board.marines),
        len(finished),
        len(board.depots) - len(finished),
        len(barracks),
        len(board.barracks) - len(barracks),
        len(board.idle_barracks()),
        hall is not None,
        hall is not None and hall.order_length > 0,
        board.minerals,
        max(board.supply_left, 0),
        int(player.food_cap),
        len(enemies) - enemy_structures,
        enemy_structures,
        len(board.enemies_near()),
    )
    if hall is not None and board.marines:
        away = np.mean([board.from_home(u) ** 0.5 for u in board.marines]) / DISTANCE_SCALE
    else:
        away = 0.0
    minutes = float(observation["game_loop"][0]) / GAME_LOOPS_PER_MINUTE
    return np.array([*np.log1p(np.array(counts, np.float32)), away, minutes / 30], np.float32)
