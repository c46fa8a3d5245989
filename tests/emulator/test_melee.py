"""Simple64 on the emulator: unmodified pysc2 plays whole melee games against the emulated
built-in bots, with two players in game_info, and a race the emulator has no rules for
refused by name."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sc2dask.game import pysc2lib
from sc2dask.game.pysc2lib import random_agent, remote_controller, sc2_env
from sc2dask.game.scored_env import ScoredEnv
from sc2dask.game.scripted_agents import TerranMacro
from tests.pysc2_helpers import make_env, play

pytestmark = pytest.mark.usefixtures("sc2path")


def _against(difficulty, race=sc2_env.Race.terran, agent_race=sc2_env.Race.terran):
    return [sc2_env.Agent(agent_race), sc2_env.Bot(race, sc2_env.Difficulty[difficulty])]


def test_game_info_has_both_players_and_the_opponents_start():
    with make_env("Simple64", players=_against("easy"), random_seed=1) as env:
        env.reset()
        info = env._controllers[0].game_info()  # noqa: SLF001 - pysc2 keeps no public copy
    players = {p.player_id: p for p in info.player_info}
    assert set(players) == {1, 2}
    assert players[2].difficulty == sc2_env.Difficulty.easy
    (start,) = info.start_raw.start_locations
    assert (start.x, start.y) != (0, 0)
    assert (info.start_raw.map_size.x, info.start_raw.map_size.y) == (64, 64)


@pytest.mark.slow
def test_the_random_agent_loses_to_the_very_easy_bot():
    with make_env("Simple64", players=_against("very_easy"), random_seed=3, score_index=-1) as env:
        ((outcome, steps, last),) = play(env, random_agent.RandomAgent(), episodes=1)
    assert outcome == -1, (steps, last.observation.game_loop)
    assert 0 < last.observation.game_loop < 30 * 60 * 16  # before the time limit


@pytest.mark.slow
@pytest.mark.parametrize("reward", ["trade", "material"])
def test_the_scripted_macro_agent_beats_the_very_easy_bot_and_is_paid_its_fights(reward):
    """A whole game's pay: the win's +1, and the value destroyed less the value lost
    (``trade``) or the Melee score's change plus the value destroyed (``material``), paid
    as it happens."""
    with make_env(
        "Simple64", raw=True, players=_against("very_easy"), random_seed=5, score_index=-1
    ) as game:
        env = ScoredEnv(game, two_players=True, reward=reward, score_scale=0.001)
        ((paid, _, last),) = play(env, TerranMacro(), episodes=1)
    assert env.outcome == 1, last.observation.game_loop
    by_category = last.observation["score_by_category"]
    destroyed, lost = by_category["killed_minerals"].sum(), by_category["lost_minerals"].sum()
    assert destroyed > 400 and lost > 0  # the enemy's command center at least, and a fight
    if reward == "trade":
        assert paid == pytest.approx(1 + 0.001 * (destroyed - lost))
    else:
        cumulative = last.observation["score_cumulative"]
        killed = cumulative["killed_value_units"] + cumulative["killed_value_structures"]
        assert killed >= destroyed  # ScoreKill: a Terran type's kill value is its cost
        # A game starts at a Melee score of 1,050 (docs/results/fullgame.md) and no kills.
        assert paid == pytest.approx(1 + 0.001 * (cumulative["score"] + killed - 1050))


def test_the_value_reward_pays_what_is_made_and_nothing_for_the_bank():
    """``value``: score-scale x the change of the value made and destroyed. Three game
    minutes of the scripted macro agent build depots, a barracks and SCVs: the pay is their
    ScoreMake (a depot's 100, a barracks' 150, an SCV's 50), while the bank it mined is paid
    nothing."""
    fields = ("total_value_units", "total_value_structures") + (
        "killed_value_units",
        "killed_value_structures",
    )
    with make_env(
        "Simple64", raw=True, players=_against("very_easy"), random_seed=5, score_index=-1,
        game_steps_per_episode=16 * 60 * 3,
    ) as game:  # fmt: skip
        env = ScoredEnv(game, two_players=True, reward="value", score_scale=0.001)
        agent = TerranMacro()
        agent.setup(env.observation_spec()[0], env.action_spec()[0])
        agent.reset()
        timestep = env.reset()[0]
        first = timestep.observation["score_cumulative"]
        paid = 0.0
        while not timestep.last():
            timestep = env.step([agent.step(timestep)])[0]
            paid += timestep.reward
    last = timestep.observation["score_cumulative"]
    made = sum(float(last[f]) - float(first[f]) for f in fields)
    assert last["total_value_structures"] - first["total_value_structures"] >= 100 + 150
    assert last["total_value_units"] > first["total_value_units"]
    assert last["collected_minerals"] - first["collected_minerals"] > 500  # mined, unpaid
    assert paid == pytest.approx(0.001 * made)  # a game cut short: no outcome


def test_a_seed_replays_the_same_game():
    loops = []
    for _ in range(2):
        with make_env(
            "Simple64", raw=True, players=_against("easy"), random_seed=9, score_index=-1,
            game_steps_per_episode=16 * 60 * 3,
        ) as env:  # fmt: skip
            (result,) = play(env, TerranMacro(), episodes=1)
        units = sorted((u.unit_type, u.x, u.y) for u in result[2].observation.raw_units)
        loops.append((result[2].observation.game_loop[0], units))
    assert loops[0] == loops[1]


@pytest.mark.parametrize(
    "players, message",
    [
        (_against("easy", race=sc2_env.Race.zerg), "bots play Terran only, not Zerg"),
        (
            _against("harder"),
            "has no Harder bot; it has VeryEasy, Easy, Medium, MediumHard, Hard",
        ),
        (_against("easy", agent_race=sc2_env.Race.protoss), "plays Terran only on Simple64"),
    ],
)
def test_a_player_the_emulator_cannot_play_is_refused_by_name(players, message):
    with pytest.raises(remote_controller.RequestError, match=message):
        with make_env("Simple64", players=players) as env:
            env.reset()


# pysc2's own tests that need a melee map and that one connection can play.
UPSTREAM = [
    "debug_test.py::TestDebug::test_multi_player",
    "versions_test.py::TestVersions::test_versions_create_game",
    "obs_spec_test.py::TestObservationSpec::test_observation_matches_obs_spec",
]


@pytest.mark.slow
def test_pysc2s_own_melee_tests_pass_unmodified(sc2path, tmp_path):
    tests = Path(pysc2lib.MAPS_DIR).parent / "tests"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", os.devnull, "-p", "no:cacheprovider",
         "-o", "markers=sc2", "--rootdir", str(tmp_path), "-q",
         *[f"{tests / test}" for test in UPSTREAM]],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "SC2PATH": str(sc2path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    assert f"{len(UPSTREAM)} passed" in done.stdout


def test_a_barracks_takes_a_marines_build_time_to_train_one():
    from sc2dask.emulator import economy
    from sc2dask.emulator import gamedata as gd
    from sc2dask.emulator.maps.simple64 import Simple64
    from sc2dask.emulator.units import Owner
    from sc2dask.emulator.world import World

    world = World(Simple64(), 0)
    barracks = world.spawn(gd.BARRACKS, Owner.AGENT, 30.5, 40.5)
    assert economy.train(world, [barracks], gd.MARINE) == 1  # Success
    marines = lambda: len(world.units_of(Owner.AGENT, gd.MARINE))  # noqa: E731
    world.step(gd.MARINE.build_loops - 1)
    assert marines() == 0 and gd.MARINE.build_loops >= 16 * 17
    world.step(2)
    assert marines() == 1
