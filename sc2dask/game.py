"""Which StarCraft II sc2dask plays: the real game when installed, else the emulator.

pysc2 finds the game through ``$SC2PATH`` (default ``~/StarCraftII``). When no real install
is there we lay out an emulator install (``sc2dask.emulator.install``) and point
``SC2PATH`` at it, so ``sc2_env.SC2Env(map_name=...)`` works unchanged either way.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import Literal

from .emulator.install import EXECUTABLE, install, is_emulator_install, is_emulator_launcher
from .emulator.maps import SCENARIOS
from .errors import GameNotFoundError, UnknownMapError
from .pysc2 import features, maps, sc2_env

log = logging.getLogger(__name__)

DEFAULT_GAME_DIR = "~/StarCraftII"  # pysc2's Linux default when SC2PATH is unset.
DEFAULT_EMULATOR_DIR = "~/.cache/sc2dask/StarCraftII"


@dataclasses.dataclass(frozen=True)
class GameInstall:
    """A StarCraft II install that pysc2 will launch, and a sentence saying why this one."""

    path: Path
    kind: Literal["real", "emulator"]
    summary: str = dataclasses.field(default="", compare=False)


def find_game() -> GameInstall:
    """Choose the game, set ``SC2PATH`` for pysc2 and return the choice.

    Raises:
      GameNotFoundError: ``SC2PATH`` is set but holds neither the game nor the emulator.
    """
    sc2path = os.environ.get("SC2PATH")
    candidate = Path(sc2path or DEFAULT_GAME_DIR).expanduser()
    if _has_real_binary(candidate):
        game = GameInstall(candidate, "real", f"Using StarCraft II at {candidate}")
    elif is_emulator_install(candidate):  # e.g. from `sc2dask emulator install`.
        game = GameInstall(install(candidate), "emulator",
                           f"Using the sc2dask emulator at {candidate}")
    elif sc2path:
        found = "does not exist" if not candidate.exists() else (
            f"holds no game binary ({EXECUTABLE.parent.parent}/Base*/SC2_x64)")
        raise GameNotFoundError(
            f"SC2PATH={sc2path} {found}. Unset SC2PATH to play the mini-games on the "
            f"sc2dask emulator, or point it at your StarCraft II install.")
    else:
        emulator_dir = os.environ.get("SC2DASK_EMULATOR_DIR", DEFAULT_EMULATOR_DIR)
        path = install(emulator_dir)
        game = GameInstall(path, "emulator", f"Using the sc2dask emulator at {path} "
                                             f"(no StarCraft II install found at {candidate})")
    os.environ["SC2PATH"] = str(game.path)
    log.info(game.summary)
    return game


def check_map(map_name: str) -> GameInstall:
    """The game that will play ``map_name``; UnknownMapError if none can."""
    try:
        maps.get(map_name)
    except maps.lib.NoMapError:
        raise UnknownMapError(
            f"Unknown map {map_name!r}. pysc2 knows: {', '.join(sorted(maps.get_maps()))}."
        ) from None
    game = find_game()
    if game.kind == "emulator" and map_name not in SCENARIOS:
        raise UnknownMapError(
            f"The sc2dask emulator cannot play {map_name!r}; it plays "
            f"{', '.join(SCENARIOS)}. Install StarCraft II and set SC2PATH for other maps.")
    return game


def make_env(map_name: str, **sc2env_kwargs) -> sc2_env.SC2Env:
    """An ``SC2Env`` for ``map_name`` on the game :func:`find_game` picks.

    Defaults: one Terran agent, 64x64 feature screen and minimap, ``step_mul=8``; any
    ``SC2Env`` keyword overrides them.

    Raises:
      UnknownMapError: pysc2 does not know ``map_name``, or the emulator cannot play it.
    """
    check_map(map_name)
    sc2env_kwargs.setdefault("players", [sc2_env.Agent(sc2_env.Race.terran)])
    sc2env_kwargs.setdefault("agent_interface_format", features.AgentInterfaceFormat(
        feature_dimensions=features.Dimensions(screen=64, minimap=64)))
    sc2env_kwargs.setdefault("step_mul", 8)
    return sc2_env.SC2Env(map_name=map_name, **sc2env_kwargs)


def _has_real_binary(directory: Path) -> bool:
    versions = directory / "Versions"
    return any(not is_emulator_launcher(path) for path in versions.glob("Base*/SC2_x64"))
