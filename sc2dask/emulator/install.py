"""Lay out a StarCraft II-like install whose "game binary" is the emulator.

pysc2's Linux run config only needs ``$SC2PATH/Versions/Base*/SC2_x64`` (an executable it
launches with the game's flags) and ``$SC2PATH/Maps/<map path>``. Pointing ``SC2PATH`` at
the directory laid out here makes unmodified pysc2 play against the emulator.
"""

from __future__ import annotations

import os
import shlex
import shutil
import site
import sys
import tempfile
from pathlib import Path

from .gamedata import BASE_BUILD

EXECUTABLE = Path("Versions", f"Base{BASE_BUILD:05d}", "SC2_x64")
MARKER = "# sc2dask emulator launcher"
# The package root that holds ``sc2dask``; the launcher puts it on PYTHONPATH so the
# emulator runs from the same source as the process that installed it.
_SOURCE_ROOT = Path(__file__).resolve().parents[2]


def install(directory: str | os.PathLike, maps_dir: str | os.PathLike) -> Path:
    """Create or refresh the emulator install at ``directory`` and return its absolute path.

    ``maps_dir`` is pysc2's maps folder (the one holding ``mini_games/``); the install's
    ``Maps/mini_games`` points at it. Idempotent and safe to run concurrently (e.g. from
    several Dask workers): files are replaced atomically, and only when they differ from
    what this Python would write.
    """
    root = Path(directory).expanduser().absolute()
    for sub in ("Replays", "Libs", "Maps", EXECUTABLE.parent):
        (root / sub).mkdir(parents=True, exist_ok=True)
    _write_launcher(root / EXECUTABLE)
    _link_maps(root / "Maps" / "mini_games",
               Path(maps_dir).expanduser().absolute() / "mini_games")
    return root


def is_emulator_install(directory: str | os.PathLike) -> bool:
    """Whether ``directory`` holds a launcher written by :func:`install`."""
    versions = Path(directory).expanduser() / "Versions"
    return any(is_emulator_launcher(path) for path in versions.glob("Base*/SC2_x64"))


def is_emulator_launcher(path: str | os.PathLike) -> bool:
    """Whether ``path`` is our launcher script rather than a real game binary."""
    try:
        with open(path, "rb") as f:
            head = f.read(512)  # A real binary is large; its first bytes are enough.
    except OSError:
        return False
    return head.startswith(b"#!") and MARKER.encode() in head


def _launcher_script() -> str:
    lines = [
        "#!/bin/sh",
        f"{MARKER}: stands in for the StarCraft II binary (see sc2dask/emulator/install.py).",
    ]
    if str(_SOURCE_ROOT) not in site.getsitepackages():  # A source checkout.
        lines.append(
            f"export PYTHONPATH={shlex.quote(str(_SOURCE_ROOT))}${{PYTHONPATH:+:$PYTHONPATH}}")
    # Quiet: a training run starts a game per env, and each would print its address. A game
    # whose owner died (a killed Dask worker) exits instead of running on, orphaned.
    lines.append(f'exec {shlex.quote(sys.executable)} -m sc2dask.emulator -quiet '
                 f'-exitWithParent "$PPID" "$@"')
    return "\n".join(lines) + "\n"


def _write_launcher(path: Path) -> None:
    script = _launcher_script()
    try:
        if path.read_text() == script and os.access(path, os.X_OK):
            return
    except (OSError, UnicodeDecodeError):
        pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".SC2_x64.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(script)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _link_maps(link: Path, target: Path) -> None:
    """Point ``link`` at pysc2's shipped maps; copy them where symlinks are not allowed."""
    if link.is_symlink():
        if Path(os.readlink(link)) == target:
            return
    elif link.is_dir():  # An earlier copy: add what is missing.
        for src in target.glob("*.SC2Map"):
            if not (link / src.name).exists():
                shutil.copy2(src, link / src.name)
        return
    tmp = link.with_name(f".mini_games.{os.getpid()}")
    try:
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(target, target_is_directory=True)
        os.replace(tmp, link)  # Atomically re-points a stale link.
    except OSError:
        tmp.unlink(missing_ok=True)
        shutil.copytree(target, link, dirs_exist_ok=True)
