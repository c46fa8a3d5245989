"""Lay out a StarCraft II-like install whose "game binary" is the emulator.

pysc2's Linux run config only needs ``$SC2PATH/Versions/Base*/SC2_x64`` (an executable it
launches with the game's flags) and ``$SC2PATH/Maps/<map path>``. Pointing ``SC2PATH`` at
the directory laid out here makes unmodified pysc2 play against the emulator.

The folder may be shared by several nodes (a home directory on NFS) whose Pythons live in
different places, so ``SC2_x64`` is the same small script everywhere and runs
``Launchers/<host>.sh``, which each node writes for its own Python.
"""

from __future__ import annotations

import os
import shlex
import shutil
import site
import socket
import sys
import tempfile
from pathlib import Path

from .gamedata import BASE_BUILD

EXECUTABLE = Path("Versions", f"Base{BASE_BUILD:05d}", "SC2_x64")
LAUNCHERS = Path("Launchers")  # one script per host: Launchers/<hostname>.sh
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
    binary = root / EXECUTABLE
    if binary.exists() and not is_emulator_launcher(binary):
        raise FileExistsError(
            f"{binary} is a StarCraft II binary, not the emulator's "
            f"launcher; it is left as it is. Install the emulator into "
            f"another folder."
        )
    for sub in ("Replays", "Libs", "Maps", EXECUTABLE.parent, LAUNCHERS):
        (root / sub).mkdir(parents=True, exist_ok=True)
    _write_script(root / LAUNCHERS / f"{socket.gethostname()}.sh", _host_launcher_script())
    _write_script(binary, _launcher_script())
    _link_maps(root / "Maps" / "mini_games", Path(maps_dir).expanduser().absolute() / "mini_games")
    _write_melee_maps(root / "Maps" / "Melee")
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
    """``SC2_x64``: the same on every node; it runs this node's launcher."""
    return (
        "\n".join(
            [
                "#!/bin/sh",
                f"{MARKER}: stands in for the StarCraft II binary (see sc2dask/emulator/install.py).",
                # The process that started the game, read by this first shell: by the time the
                # host's launcher runs, it may have died and left the game to init.
                'SC2DASK_GAME_PARENT="$PPID"; export SC2DASK_GAME_PARENT',
                'launcher="$(dirname "$0")/../../Launchers/$(uname -n).sh"',
                'if [ ! -x "$launcher" ]; then',
                '  echo "sc2dask emulator: no launcher for host $(uname -n) at $launcher;'
                " run 'sc2dask emulator install' on this host\" >&2",
                "  exit 1",
                "fi",
                'exec "$launcher" "$@"',
            ]
        )
        + "\n"
    )


def _host_launcher_script() -> str:
    """``Launchers/<host>.sh``: this node's Python and, for a checkout, its source."""
    lines = ["#!/bin/sh", f"{MARKER} for host {socket.gethostname()}."]
    if str(_SOURCE_ROOT) not in site.getsitepackages():  # A source checkout.
        lines.append(
            f"export PYTHONPATH={shlex.quote(str(_SOURCE_ROOT))}${{PYTHONPATH:+:$PYTHONPATH}}"
        )
    # Quiet: a training run starts a game per env, and each would print its address. A game
    # whose owner died (a killed Dask worker) exits instead of running on, orphaned.
    lines.append(
        f"exec {shlex.quote(sys.executable)} -m sc2dask.emulator -quiet "
        f'-exitWithParent "${{SC2DASK_GAME_PARENT:-$PPID}}" "$@"'
    )
    return "\n".join(lines) + "\n"


def _write_script(path: Path, script: str) -> None:
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


# pysc2 reads a melee map's file and sends its bytes with create_game; Blizzard's files
# are not ours to ship, so the emulator's install holds a small file of its own per map,
# which says what it is. The emulator plays a map by its name.
MELEE_MAP_TEXT = "sc2dask emulator: an emulated {name}, not Blizzard's map file\n"


def _write_melee_maps(folder: Path) -> None:
    from .maps import MELEE_MAPS

    folder.mkdir(parents=True, exist_ok=True)
    for name in MELEE_MAPS:
        path = folder / f"{name}.SC2Map"
        text = MELEE_MAP_TEXT.format(name=name)
        try:
            if path.read_text() == text:
                continue
        except (OSError, UnicodeDecodeError):
            pass
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)


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
