"""Games against easier bots mixed into a run, as TStarBot1 drew each episode's opponent
from several levels: against a bot that untrained play never beats, the outcome pays -1
every game and says nothing of what would win; against the levels below, some games are
won from the start, and what wins them is learnt.

``EasierGames`` draws, before each game, the bot of the next game: with probability
``share`` a level below the run's opponent (uniformly), else the opponent itself. Its
``practice`` says whether the game now played is one of those; a run counts only the
others in its scores, outcomes and win rate, so the curve stays the one against the
opponent named.
"""

from __future__ import annotations

import numpy as np

from .pysc2lib import base_env_wrapper, sc2_env

LEVELS = tuple(sc2_env.Difficulty)  # pysc2's, easiest first (VeryEasy = 1)


def levels_below(opponent: str, playable=None) -> list[str]:
    """The bot levels easier than ``opponent``'s (``bot:RACE:LEVEL``), by pysc2's name,
    among ``playable`` names where given (the emulator's levels)."""
    level = sc2_env.Difficulty[opponent.split(":")[2]]
    below = [d.name for d in LEVELS if d.value < level.value]
    return [name for name in below if playable is None or name in playable]


class EasierGames(base_env_wrapper.BaseEnvWrapper):
    """Each game's bot drawn as the module says, from ``seed`` (a run plays the same mix
    again). pysc2 creates every game of a map for two from its ``players`` list
    (``SC2Env._create_join``), so the draw replaces the bot there before each reset."""

    def __init__(self, env, opponent: str, below: list[str], share: float, seed: int):
        super().__init__(env)
        self._race = sc2_env.Race[opponent.split(":")[1]]
        self._opponent = sc2_env.Difficulty[opponent.split(":")[2]]
        self._below = [sc2_env.Difficulty[name] for name in below]
        self._share = share if self._below else 0.0
        self._rng = np.random.default_rng(seed)
        self.practice = False
        self._games = 0

    def reset(self, *args, **kwargs):
        # The first game was made with the env, against the opponent; the next ones are
        # made as they start, from the players list (pysc2's reset restarts from its 2nd).
        self.practice = bool(self._games and self._rng.random() < self._share)
        self._games += 1
        level = self._below[self._rng.integers(len(self._below))] if self.practice else None
        game = self._env
        while isinstance(game, base_env_wrapper.BaseEnvWrapper):
            game = game._env
        # SC2Env has no setter for its players; it reads the list as it creates each game.
        game._players[1] = sc2_env.Bot(self._race, level or self._opponent)  # noqa: SLF001
        return self._env.reset(*args, **kwargs)
