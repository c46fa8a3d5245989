"""The reward a run pays, and each episode's score and outcome, over any pysc2 env.

pysc2 pays one of two rewards: the change of a score, or the game's outcome (``score_index
-1``). A run on a map for two wants both known whatever it pays: the outcome for the win
rate, the Blizzard score for the curve. So two-player games are made with the outcome as
pysc2's reward, and this wrapper reads the score from the observation
(``score_cumulative[0]``, which is also what the mini-games pay) and pays what the run's
``reward`` setting asks. On a one-player mini-game it passes pysc2's reward through.

On a melee map the Blizzard score is the game's Melee score, on the real game and on
the emulator alike: the player's bank plus the value of its units and structures,
standing or being built. Mining raises it, losses lower it, and building or training
leaves it as it was, since what is paid comes back as value; it grows with a game's
length, so a policy paid by it alone gains by keeping a lost game going.

``trade`` pays for fights: the value (minerals and gas) of what the player destroyed less
what it lost, read from ``score_by_category``. A fight's trade is paid within seconds of
the choice that started it, and losing an army piecemeal is paid for as it happens, where
the outcome reaches it only hundreds of steps later. Against a bot the player cannot beat
it pays owning little, since what is lost is what was built: trained that way against
Hard, a policy stopped building (docs/results/fullgame.md).

``material`` pays what the player owns and what it destroyed: the Melee score plus the
killed value of units and structures (``score.proto``'s ``killed_value_units`` and
``killed_value_structures``, the game data's ``ScoreKill``). Mining and kills raise it,
losses lower it, building leaves it as it was. Where ``trade`` pays owning little against
a bot too strong to fight, this pays the economy too; where ``both`` pays a lost game
kept going, this also pays ending a won game, since destroying the enemy's structures is
paid for.

``value`` pays what the player makes and what it destroys: ``score.proto``'s
``total_value_units`` and ``total_value_structures`` (the game data's ``ScoreMake`` of
each one finished, never lowered by a loss) plus the killed value. Where ``material``
counts the bank, so that against a bot too strong to beat a policy that stops spending
loses least (trained that way against Hard, it chose ``no_op`` at over 90 % of its steps),
this pays nothing for minerals kept and something for each one spent; what is lost is
paid for through the outcome alone.
"""

from __future__ import annotations

from .pysc2lib import base_env_wrapper, features

_MELEE_SCORE = features.ScoreCumulative.score
_KILLED_VALUE = (
    features.ScoreCumulative.killed_value_units,
    features.ScoreCumulative.killed_value_structures,
)
_MADE_VALUE = (
    features.ScoreCumulative.total_value_units,
    features.ScoreCumulative.total_value_structures,
)
_KILLED = (features.ScoreByCategory.killed_minerals, features.ScoreByCategory.killed_vespene)
_LOST = (features.ScoreByCategory.lost_minerals, features.ScoreByCategory.lost_vespene)


class ScoredEnv(base_env_wrapper.BaseEnvWrapper):
    """``score``: the episode's score so far (its change since the first step);
    ``outcome``: +1, 0 or -1 once a game for two has ended, else None."""

    def __init__(
        self, env, two_players: bool, reward: str = "score", score_scale: float = 1.0, mix=None
    ):
        super().__init__(env)
        self._mix = mix  # an EasierGames under this wrapper, if the run mixes in easier bots
        self.two_players, self.reward, self.score_scale = two_players, reward, score_scale
        self.score = 0.0
        self.outcome: int | None = None
        self._first_score = 0.0
        self._paid_value = 0.0  # trade, material, value: what the reward pays the change of

    @property
    def practice(self) -> bool:
        """Whether this game is against an easier bot than the run's opponent
        (``EasierGames``): a run leaves it out of its scores and win rate."""
        return bool(self._mix is not None and self._mix.practice)

    @property
    def practice_level(self) -> int:
        """The easier bot's level (pysc2's ``Difficulty``, VeryEasy 1) in such a game, else 0."""
        return int(self._mix.level) if self.practice else 0

    @property
    def game_pid(self) -> int | None:
        """The pid of the game this env launched (None for an attached one)."""
        env = self._env
        while isinstance(env, base_env_wrapper.BaseEnvWrapper):  # e.g. a MacroEnv
            env = env._env
        procs = getattr(env, "_sc2_procs", None) or []  # pysc2 has no public accessor
        return procs[0].pid if procs else None

    def reset(self, *args, **kwargs):
        timesteps = self._env.reset(*args, **kwargs)
        self._first_score = _blizzard_score(timesteps[0])
        if self.reward in _VALUES:
            self._paid_value = _VALUES[self.reward](timesteps[0])
        self.score, self.outcome = 0.0, None
        return timesteps

    def step(self, actions, *args, **kwargs):
        timesteps = self._env.step(actions, *args, **kwargs)
        timestep = timesteps[0]
        if not self.two_players:
            self.score += timestep.reward
            return timesteps
        score = _blizzard_score(timestep) - self._first_score
        change, self.score = score - self.score, score
        outcome = int(timestep.reward) if timestep.last() else 0  # pysc2 pays the outcome
        if timestep.last():
            self.outcome = outcome
        if self.reward in _VALUES:
            value = _VALUES[self.reward](timestep)
            paid = outcome + self.score_scale * (value - self._paid_value)
            self._paid_value = value
        else:
            paid = {
                "score": change,
                "outcome": outcome,
                "both": outcome + self.score_scale * change,
            }[self.reward]
        return (timestep._replace(reward=paid), *timesteps[1:])


def _blizzard_score(timestep) -> float:
    return float(timestep.observation["score_cumulative"][0])


def _trade(timestep) -> float:
    """The value the player has destroyed less the value it has lost, all categories."""
    by_category = timestep.observation["score_by_category"]
    return float(sum(by_category[row].sum() for row in _KILLED)) - float(
        sum(by_category[row].sum() for row in _LOST)
    )


def _material(timestep) -> float:
    """The Melee score plus the value the player has destroyed (``material``)."""
    cumulative = timestep.observation["score_cumulative"]
    return float(cumulative[_MELEE_SCORE]) + float(sum(cumulative[i] for i in _KILLED_VALUE))


def _value(timestep) -> float:
    """The value of what the player made plus the value it has destroyed (``value``)."""
    cumulative = timestep.observation["score_cumulative"]
    return float(sum(cumulative[i] for i in _MADE_VALUE + _KILLED_VALUE))


# The rewards that pay outcome + score-scale x the change of one of these.
_VALUES = {"trade": _trade, "material": _material, "value": _value}
