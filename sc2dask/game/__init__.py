"""The game side of sc2dask: which StarCraft II to play, making envs, and pysc2 agents.

pysc2 itself is imported in one place, ``pysc2lib``; the rest of sc2dask takes its
modules from there.
"""

from .agents import load_agent_class, play_episode, plays_macros, scripted_agent_path
from .envs import GAME_FAILURES, EnvConfig, check_map, game_seed, make_env
from .install import DEFAULT_EMULATOR_DIR, GameInstall, find_game, install_emulator

__all__ = [
    "DEFAULT_EMULATOR_DIR",
    "GAME_FAILURES",
    "EnvConfig",
    "GameInstall",
    "check_map",
    "find_game",
    "game_seed",
    "install_emulator",
    "load_agent_class",
    "make_env",
    "play_episode",
    "plays_macros",
    "scripted_agent_path",
]
