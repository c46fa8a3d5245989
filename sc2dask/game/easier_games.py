"""Games against easier bots mixed into a run, as TStarBot1 drew each episode's opponent
from several levels: against a bot that untrained play never beats, the outcome pays -1
every game and says nothing of what would win; against the levels below, some games are
won from the start, and what wins them is learnt.

``EasierGames`` draws, before each game, the bot of the next game: with probability
``share`` a level below the run's opponent (uniformly), else the opponent itself. Its
``practice`` says whether the game now played is one of those; a run counts only the
others in its scores, outcomes and win rate, so the curve stays the one against the
opponent named.

With ``climb`` the easier game is not drawn uniformly: it is against the lowest level the
env has not yet passed, a level being passed once the env won ``PASS_WINS`` of its last
``PASS_GAMES`` games there; once every level below is passed, every game is against the
opponent. It is the curriculum of Pang et al. 2019 (easy to hard), kept by each env over
its own games, so nothing is sent between hosts and the client; an env made again (after
a crashed game, on a new host, in a resumed run) climbs again from VeryEasy, whose games
untrained play wins.
"""

from __future__ import annotations

import logging

import numpy as np

from .pysc2lib import base_env_wrapper, sc2_env

LEVELS = tuple(sc2_env.Difficulty)  # pysc2's, easiest first (VeryEasy = 1)
log = logging.getLogger(__name__)
PASS_GAMES, PASS_WINS = 10, 8  # climb: a level is passed at 8 wins in its last 10 games


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

    def __init__(
        self, env, opponent: str, below: list[str], share: float, seed: int, climb: bool = False
    ):
        super().__init__(env)
        self._race = sc2_env.Race[opponent.split(":")[1]]
        self._opponent = sc2_env.Difficulty[opponent.split(":")[2]]
        self._below = [sc2_env.Difficulty[name] for name in below]
        self._share = share if self._below else 0.0
        self._rng = np.random.default_rng(seed)
        self._climb = climb
        self.passed = 0  # climb: the levels below passed so far, easiest first
        self._there: list[bool] = []  # climb: whether each game at the level in play was won
        self.level: sc2_env.Difficulty | None = None  # the easier bot of a practice game
        self._games = 0

    @property
    def practice(self) -> bool:
        """Whether the game now played is against an easier bot."""
        return self.level is not None

    def reset(self, *args, **kwargs):
        # The first game was made with the env, against the opponent; the next ones are
        # made as they start, from the players list (pysc2's reset restarts from its 2nd).
        levels = self._below[self.passed :] if self._climb else self._below
        practice = bool(self._games and levels and self._rng.random() < self._share)
        self._games += 1
        self.level = None
        if practice:
            self.level = levels[0] if self._climb else levels[self._rng.integers(len(levels))]
        game = self._env
        while isinstance(game, base_env_wrapper.BaseEnvWrapper):
            game = game._env
        # SC2Env has no setter for its players; it reads the list as it creates each game.
        game._players[1] = sc2_env.Bot(self._race, self.level or self._opponent)  # noqa: SLF001
        return self._env.reset(*args, **kwargs)

    def step(self, *args, **kwargs):
        timesteps = self._env.step(*args, **kwargs)
        if self._climb and self.practice and timesteps[0].last():
            # pysc2 pays a game for two its outcome (the env is made with score_index -1).
            self._there = [*self._there, timesteps[0].reward > 0][-PASS_GAMES:]
            if sum(self._there) >= PASS_WINS:
                self.passed, self._there = self.passed + 1, []
                after = self._below[self.passed :] or [self._opponent]
                log.info(
                    "Easier games: %s passed after %d games; now %s",
                    self._below[self.passed - 1].name,
                    self._games,
                    after[0].name,
                )
        return timesteps
