"""FullyConv A2C (SC2LE's agent, with a PPO clip for stale data) as an ``Agent``.

This module imports no TensorFlow: a run checks its agent class before its cluster
starts, and the network and learner (``a2c.py``) load only where they are built.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from .config import A2CConfig


class FullyConvA2C:
    """The default ``agent-class``: ``sc2dask.agents.fullyconv_a2c:FullyConvA2C``.

    An A2C agent with another network overrides ``Config`` and ``network``
    (``relational_a2c.py``), and ``learner_class`` if it unrolls a memory."""

    Config = A2CConfig

    def __init__(self, config: A2CConfig):
        self.config = config
        # TensorFlow is slow to import: start now, while a run's cluster starts. Not a
        # daemon: a process that ends mid-import (a run refused at once) would abort
        # in TensorFlow's C++ teardown instead of exiting with its own status.
        threading.Thread(target=self._import_quietly, name="sc2dask-import").start()

    def network(self):
        """The model builder ``a2c.Policy`` calls; imported here, where it is built."""
        from .fullyconv import build_fullyconv

        return build_fullyconv

    def learner_class(self):
        """The learner class (its ``policy_class`` acts); imported here, where it is built.
        A network with a memory brings its own (``fullyconv_lstm_a2c.py``)."""
        from .a2c import Learner

        return Learner

    def make_policy(self, obs_spec: Mapping[str, tuple]):
        return self.learner_class().policy_class(self.config, obs_spec, self.network())

    def make_learner(self, obs_spec: Mapping[str, tuple]):
        return self.learner_class()(self.config, obs_spec, self.network())

    def _import_quietly(self) -> None:
        """Import the network and learner ahead of need; a failure is left for the import
        that needs it, which reports it where the user sees it."""
        try:
            from . import a2c  # noqa: F401

            self.network()
        except Exception:  # see the docstring
            pass
