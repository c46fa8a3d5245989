"""Easier games mixed into a run (``easier-games``): each game's bot drawn from the levels
below the opponent's, or the opponent itself, reproducibly; the run counts only the
opponent's games."""

import pytest
from s2clientprotocol import debug_pb2

from sc2dask.core import Ended
from sc2dask.game import EnvConfig
from sc2dask.game.easier_games import PASS_GAMES, PASS_WINS, EasierGames, levels_below
from sc2dask.game.macros import MacroCall
from sc2dask.game.pysc2lib import sc2_env
from sc2dask.runtime.rollout import _Record
from sc2dask.runtime.slot import Step
from sc2dask.training.recorder import Progress, Recorder

HARD = sc2_env.Difficulty.hard


@pytest.mark.unit
def test_the_levels_below_are_the_easier_ones_in_pysc2s_order():
    assert levels_below("bot:terran:medium") == ["very_easy", "easy"]
    assert levels_below("bot:terran:very_easy") == []


@pytest.mark.usefixtures("sc2path")
def test_each_game_draws_its_bot_and_says_whether_it_is_practice():
    config = EnvConfig(
        "Simple64",
        opponent="bot:terran:hard",
        reward="outcome",
        macro_actions=True,
        feature_layers=False,
        easier_games=0.5,
    )
    drawn = []
    for _ in range(2):  # the same seed draws the same bots
        with config.make(seed=2) as env:  # a seed whose first draw would be an easier game
            game = env
            while not hasattr(game, "game_info"):
                game = game._env
            levels = []
            for _ in range(8):
                env.reset()
                difficulty = game.game_info[0].player_info[1].difficulty
                assert env.practice == (difficulty != HARD)
                assert env.practice_level == (difficulty if env.practice else 0)
                assert difficulty <= HARD
                levels.append(difficulty)
            drawn.append(levels)
    assert drawn[0] == drawn[1]
    assert drawn[0][0] == HARD  # the game made with the env is against the opponent
    assert HARD in drawn[0] and min(drawn[0]) < HARD, drawn[0]  # Hard and lower levels


def _inside(env, kind):
    while not isinstance(env, kind):
        env = env._env
    return env


@pytest.mark.usefixtures("sc2path")
def test_climbing_plays_the_lowest_level_not_yet_passed():
    """Games ended at once through the protocol (``DebugEndGame``): a level is passed at
    8 wins in its last 10 games there, so three losses after seven wins keep it until
    they leave the window (a count of wins since the start would pass at the 11th); a
    game against the opponent counts for no level."""
    config = EnvConfig(
        "Simple64",
        opponent="bot:terran:medium",
        reward="outcome",
        macro_actions=True,
        feature_layers=False,
        easier_games=0.9,
        climb=True,
    )
    lost = {8, 9, 10}  # the 8th to 10th practice games
    played = []  # (level, won) of the practice games
    with config.make(seed=4) as env:
        mix, game = _inside(env, EasierGames), _inside(env, sc2_env.SC2Env)
        while len(played) < 2 * PASS_GAMES:
            env.reset()
            level = game.game_info[0].player_info[1].difficulty
            assert env.practice == (level != sc2_env.Difficulty.medium)
            won = not env.practice or len(played) + 1 not in lost
            end = debug_pb2.DebugEndGame.DeclareVictory if won else debug_pb2.DebugEndGame.Surrender
            game._controllers[0].debug(
                [debug_pb2.DebugCommand(end_game=debug_pb2.DebugEndGame(end_result=end))]
            )
            assert env.step([MacroCall(0)])[0].last() and env.outcome == (1 if won else -1)
            if env.practice:
                played.append((level, won))
    levels = [level for level, _ in played]
    very_easy = levels.count(sc2_env.Difficulty.very_easy)
    assert levels[:very_easy] == [sc2_env.Difficulty.very_easy] * very_easy
    assert very_easy == 7 + 3 + PASS_WINS  # the three losses left the window first
    assert set(levels[very_easy:]) == {sc2_env.Difficulty.easy} and mix.passed == 1


@pytest.mark.unit
def test_a_practice_game_is_learnt_from_but_not_counted():
    record = _Record()
    record.stepped(Step(-1.0, True, 900.0, -1, practice=2))
    record.stepped(Step(1.0, True, 5000.0, 1))
    assert record.rewards == [-1.0, 1.0]  # both paid
    assert record.outcomes == [1] and record.scores == [5000.0]  # one counted
    assert record.practice == [(2, -1)]  # and the other apart, with its bot's level


@pytest.mark.unit
def test_the_run_reports_the_practice_games_win_rate_apart():
    progress = Progress()
    recorder = Recorder(progress, 0.0, lambda: 0, lambda: None, 0)
    practice = [(1, 1), (2, 1), (2, -1), (3, 1)]
    recorder.record(1, {"steps": 10.0}, Ended([120.0], [-1], practice), 0)
    assert progress.win_rate_last_100 == 0.0 and progress.episodes == 1
    assert progress.practice_win_rate_last_100 == 0.75
    assert progress.history[-1]["practice_win_rate_last_100"] == 0.75
    assert progress.history[-1]["practice_level_last_100"] == 2.0
