"""RandomMacro that fingerprints each game it plays: a hash of every raw unit it saw, step
by step, kept in a list of the class's (the games are played in this process)."""

from __future__ import annotations

import hashlib

from sc2dask.game.scripted_agents import RandomMacro


class FingerprintingRandomMacro(RandomMacro):
    games: list = []  # one running hash a game, in the order they were played

    def reset(self):
        super().reset()
        type(self).games.append(hashlib.sha1())

    def step(self, obs):
        type(self).games[-1].update(obs.observation["raw_units"].tobytes())
        return super().step(obs)
