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

from ..emulator import install as emulator_install
from ..errors import GameNotFoundError
from .pysc2lib import MAPS_DIR

log = logging.getLogger(__name__)

DEFAULT_GAME_DIR = "~/StarCraftII"  # pysc2's Linux default when SC2PATH is unset.
DEFAULT_EMULATOR_DIR = "~/.cache/sc2dask/StarCraftII"


@dataclasses.dataclass(frozen=True)
class GameInstall:
    """A StarCraft II install that pysc2 will launch, and a sentence saying why this one."""

    path: Path
    kind: Literal["real", "emulator"]
    summary: str = dataclasses.field(default="", compare=False)


def install_emulator(directory: str | os.PathLike | None = None) -> Path:
    """Lay out (or refresh) an emulator install that pysc2 finds through ``SC2PATH``.

    ``directory`` defaults to ``$SC2DASK_EMULATOR_DIR`` or ``~/.cache/sc2dask/StarCraftII``.
    """
    directory = directory or os.environ.get("SC2DASK_EMULATOR_DIR", DEFAULT_EMULATOR_DIR)
    return emulator_install.install(directory, MAPS_DIR)


def find_game() -> GameInstall:
    """Choose the game, set ``SC2PATH`` for pysc2 and return the choice.

    Raises:
      GameNotFoundError: ``SC2PATH`` is set but holds neither the game nor the emulator.
    """
    sc2path = os.environ.get("SC2PATH")
    candidate = Path(sc2path or DEFAULT_GAME_DIR).expanduser()
    if _has_real_binary(candidate):
        game = GameInstall(candidate, "real", f"Using StarCraft II at {candidate}")
    elif emulator_install.is_emulator_install(candidate):  # `sc2dask emulator install`
        game = GameInstall(
            install_emulator(candidate), "emulator", f"Using the sc2dask emulator at {candidate}"
        )
    elif sc2path:
        found = (
            "does not exist"
            if not candidate.exists()
            else (
                f"holds no game binary ({emulator_install.EXECUTABLE.parent.parent}/Base*/SC2_x64)"
            )
        )
        raise GameNotFoundError(
            f"SC2PATH={sc2path} {found}. Unset SC2PATH to play the mini-games on the "
            f"sc2dask emulator, or point it at your StarCraft II install."
        )
    else:
        path = install_emulator()
        game = GameInstall(
            path,
            "emulator",
            f"Using the sc2dask emulator at {path} (no StarCraft II install found at {candidate})",
        )
    os.environ["SC2PATH"] = str(game.path)
    log.info(game.summary)
    return game


def _has_real_binary(directory: Path) -> bool:
    versions = directory / "Versions"
    return any(
        not emulator_install.is_emulator_launcher(path) for path in versions.glob("Base*/SC2_x64")
    )
