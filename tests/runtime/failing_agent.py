"""A pysc2 agent whose first step raises an error that cannot cross the network: it holds a
lock, which does not pickle."""

from __future__ import annotations

import threading

from sc2dask.game.pysc2lib import base_agent


class LockedError(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.lock = threading.Lock()


class RaisesLockedError(base_agent.BaseAgent):
    def step(self, obs):
        super().step(obs)
        raise LockedError("this agent cannot go on")
