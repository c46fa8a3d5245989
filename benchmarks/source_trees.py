"""Running sc2dask from another source tree: a commit in a git worktree, side by side.

Shared by the benchmarks that compare this checkout with an older commit. Each tree's
processes import its own code (``PYTHONPATH``) and lay out their own emulator install,
whose launcher points at that tree.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def checked_out(commit: str, scratch: Path):
    """``commit`` in a temporary git worktree under ``scratch``, removed afterwards."""
    path = scratch / f"tree-{commit}"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), commit],
        check=True,
        capture_output=True,
    )
    try:
        yield path
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
            capture_output=True,
        )


def environment(source: Path, scratch: Path, name: str) -> dict[str, str]:
    """The environment for a process running sc2dask from ``source``: no sc2dask settings
    or SC2PATH of the caller's, and an emulator install of its own under ``scratch``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_SC2DASK")}
    env.pop("SC2PATH", None)
    env.update(
        PYTHONPATH=str(source),
        SC2DASK_EMULATOR_DIR=str(scratch / name / "sc2"),
        SC2DASK_LOG_DIR=str(scratch / name),
    )
    return env
