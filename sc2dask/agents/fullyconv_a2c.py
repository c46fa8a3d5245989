"""FullyConv A2C (SC2LE's agent, with a PPO clip for stale data) as an ``Agent``.

This module imports no TensorFlow: a run checks its agent class before its cluster
starts, and the network and learner (``a2c.py``) load only where they are built.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from .config import A2CConfig


class FullyConvA2C:
    """The default ``agent-class``: ``sc2dask.agents.fullyconv_a2c:FullyConvA2C``."""

    Config = A2CConfig

    def __init__(self, config: A2CConfig):
        self.config = config
        # TensorFlow is slow to import: start now, while a run's cluster starts.
        threading.Thread(target=_import_quietly, name="sc2dask-import", daemon=True).start()

    def make_policy(self, obs_spec: Mapping[str, tuple]):
        from .a2c import Policy

        return Policy(self.config, obs_spec)

    def make_learner(self, obs_spec: Mapping[str, tuple]):
        from .a2c import Learner

        return Learner(self.config, obs_spec)


def _import_quietly() -> None:
    """Import the network ahead of need; a failure is left for the import that needs it,
    which reports it where the user sees it."""
    try:
        from . import a2c  # noqa: F401
    except Exception:  # see the docstring
        pass
