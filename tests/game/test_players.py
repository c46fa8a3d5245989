"""Players and reward: ``race``, ``opponent = bot:RACE:DIFFICULTY`` and ``reward`` go to pysc2
as its ``players`` list and score index; a map and players that do not fit are refused
before a game starts, naming the fix."""

import typing

import pytest

from sc2dask import settings
from sc2dask.core import Ended
from sc2dask.errors import ConfigError, UnknownMapError
from sc2dask.game import EnvConfig
from sc2dask.game.players import check_emulated_players, check_players, pysc2_players
from sc2dask.game.pysc2lib import sc2_env
from sc2dask.training.recorder import Progress, Recorder

pytestmark = pytest.mark.unit


def test_the_settings_name_the_races_and_difficulties_pysc2_has():
    assert set(typing.get_args(settings.Race)) == {race.name for race in sc2_env.Race}
    assert settings.DIFFICULTIES == tuple(d.name for d in sc2_env.Difficulty)


def test_an_opponent_becomes_pysc2s_bot():
    agent, bot = pysc2_players("terran", "bot:zerg:medium")
    assert agent.race == [sc2_env.Race.terran]
    assert bot.race == [sc2_env.Race.zerg] and bot.difficulty == sc2_env.Difficulty.medium
    assert len(pysc2_players("protoss", None)) == 1


@pytest.mark.parametrize(
    "text, message",
    [
        ("bot:terran", "give bot:RACE:DIFFICULTY"),
        ("human:terran:easy", "give bot:RACE:DIFFICULTY"),
        ("bot:elf:easy", "RACE is one of terran, zerg, protoss, random"),
        ("bot:terran:impossible", "DIFFICULTY one of very_easy, easy"),
    ],
)
def test_a_bad_opponent_names_the_choices(text, message):
    with pytest.raises(ConfigError, match=message):
        settings.parse_opponent(text)


def test_opponent_is_read_in_any_case_and_none_means_none():
    assert settings.parse_opponent("Bot:Terran:VERY_EASY") == "bot:terran:very_easy"
    assert settings.parse_opponent("none") is None


@pytest.mark.parametrize(
    "map_name, opponent, reward, message",
    [
        ("Simple64", None, "score", "Simple64 is a map for 2 players: give the agent an opponent"),
        ("MoveToBeacon", "bot:terran:easy", "score", "MoveToBeacon has one player"),
        ("MoveToBeacon", None, "outcome", "no opponent to win or lose against"),
        ("MoveToBeacon", None, "both", "use --reward score"),
        ("MoveToBeacon", None, "trade", "use --reward score"),
        ("MoveToBeacon", None, "material", "use --reward score"),
    ],
)
def test_players_that_do_not_fit_the_map_are_refused(map_name, opponent, reward, message):
    with pytest.raises(ConfigError, match=message):
        check_players(map_name, "terran", opponent, reward)


def test_a_map_pysc2_does_not_know_is_refused():
    with pytest.raises(UnknownMapError, match="Unknown map 'Simple65'"):
        check_players("Simple65", "terran", "bot:terran:easy", "outcome")


def test_the_emulator_refuses_races_and_bot_levels_it_does_not_play_on_a_melee_map():
    with pytest.raises(ConfigError, match="plays terran only, not zerg"):
        check_emulated_players("Simple64", "zerg", "bot:terran:easy")
    with pytest.raises(ConfigError, match="not protoss"):
        check_emulated_players("Simple64", "terran", "bot:protoss:easy")
    check_emulated_players("Simple64", "terran", "bot:terran:medium")
    check_emulated_players("MoveToBeacon", "zerg", None)  # a mini-game brings its own units
    with pytest.raises(ConfigError, match="no cheat_insane bot; its bots play very_easy, easy"):
        check_emulated_players("Simple64", "terran", "bot:terran:cheat_insane")


def test_the_emulator_plays_simple64_and_names_the_maps_it_cannot(sc2path):
    EnvConfig("Simple64", opponent="bot:terran:very_easy", reward="outcome").check()
    with pytest.raises(UnknownMapError, match="emulator cannot play 'Flat64'"):
        EnvConfig("Flat64", opponent="bot:terran:very_easy", reward="outcome").check()


def test_the_win_rate_counts_the_last_100_games():
    progress = Progress()
    recorder = Recorder(progress, 0.0, lambda: 0, lambda: None, 0)
    recorder.record(1, {"steps": 10}, Ended([5.0, 6.0, 7.0], [1, 0, -1]), 0)
    assert progress.win_rate_last_100 == pytest.approx(1 / 3)
    assert (progress.wins, progress.draws, progress.losses) == (1, 1, 1)
    recorder.record(1, {"steps": 10}, Ended([1.0] * 100, [1] * 100), 0)
    assert progress.win_rate_last_100 == 1.0 and progress.wins == 101
    assert progress.history[-1]["win_rate_last_100"] == 1.0
    assert Progress().win_rate_last_100 != Progress().win_rate_last_100  # NaN: no game yet
