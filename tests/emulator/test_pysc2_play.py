"""Unmodified pysc2 (SC2Env, its scripted and random agents) playing against the emulator process."""

import numpy as np
import pytest

from sc2dask.emulator.maps import SCENARIOS
from sc2dask.game.pysc2lib import random_agent, scripted_agent
from tests.pysc2_helpers import make_env, play

pytestmark = pytest.mark.usefixtures("sc2path")


@pytest.mark.parametrize(
    "map_name, agent, interface, minimum",
    [
        ("MoveToBeacon", "MoveToBeacon", {}, 18),
        ("CollectMineralShards", "CollectMineralShards", {}, 40),
        ("CollectMineralShards", "CollectMineralShardsFeatureUnits", {"feature_units": True}, 40),
        ("CollectMineralShards", "CollectMineralShardsRaw", {"raw": True}, 40),
        ("DefeatRoaches", "DefeatRoaches", {}, 10),
        ("DefeatRoaches", "DefeatRoachesRaw", {"raw": True}, 10),
    ],
)
def test_scripted_agents_earn_points(map_name, agent, interface, minimum):
    with make_env(map_name, random_seed=7, **interface) as env:
        results = play(env, getattr(scripted_agent, agent)(), episodes=2)
    scores = [score for score, _, _ in results]
    assert np.mean(scores) >= minimum, scores


def test_random_agent_scores_far_below_scripted_on_move_to_beacon():
    np.random.seed(0)
    with make_env("MoveToBeacon", screen=32, minimap=32, random_seed=3) as env:
        random_scores = [s for s, _, _ in play(env, random_agent.RandomAgent(), episodes=3)]
        scripted_scores = [s for s, _, _ in play(env, scripted_agent.MoveToBeacon(), episodes=2)]
    assert np.mean(random_scores) < 5 <= 20 <= np.mean(scripted_scores), (
        random_scores,
        scripted_scores,
    )


ECONOMY_MAPS = ("CollectMineralsAndGas", "BuildMarines")


# The economy maps' episodes are 1,800 (BuildMarines) and 840 steps: whole ones are
# played at the default 32x32 only; at the other sizes this many steps check the shapes
# (a minute and a half of the suite less; the episode length does not depend on the size).
ECONOMY_SHAPE_STEPS = 300


@pytest.mark.parametrize(
    "map_name, screen, minimap",
    [
        *[(m, s, mm) for m in sorted(SCENARIOS) for s, mm in [(64, 64), ((48, 32), 24), (16, 16)]],
        *[(m, 32, 32) for m in ECONOMY_MAPS],
    ],
)  # the economy maps at the default 32x32 too
def test_random_agent_plays_whole_episodes(map_name, screen, minimap):
    """Every observation matches the spec; an episode lasts the map's time limit unless all
    marines died (checked on whole episodes: the economy maps' only at 32x32)."""
    whole = map_name not in ECONOMY_MAPS or (screen, minimap) == (32, 32)
    np.random.seed(1)
    limit = SCENARIOS[map_name].time_limit_loops
    with make_env(
        map_name, screen=screen, minimap=minimap, feature_units=True, random_seed=11
    ) as env:
        spec = env.observation_spec()[0]
        agent = random_agent.RandomAgent()
        agent.setup(spec, env.action_spec()[0])
        timestep = env.reset()[0]
        loops = []
        while True:
            for name in ("feature_screen", "feature_minimap"):
                assert timestep.observation[name].shape == spec[name], name
            loops.append(int(timestep.observation.game_loop[0]))
            if timestep.last() or (not whole and len(loops) > ECONOMY_SHAPE_STEPS):
                break
            timestep = env.step([agent.step(timestep)])[0]
    assert loops[0] == 0
    assert all(b - a == 8 for a, b in zip(loops[:-2], loops[1:-1]))
    if not whole:
        return
    if loops[-1] != limit:  # ended early: only when every marine is dead, 32 loops later
        assert SCENARIOS[map_name].ends_when_marines_dead and loops[-1] < limit
        assert timestep.observation.player[8] == 0  # army_count


@pytest.mark.parametrize(
    "map_name, steps", [("MoveToBeacon", 240), ("FindAndDefeatZerglings", 360)]
)
def test_episode_length_matches_the_time_limit(map_name, steps):
    with make_env(map_name, screen=16, minimap=16, random_seed=2) as env:
        ((_, agent_steps, last),) = play(env, _Idle(), episodes=1)
    assert agent_steps == steps
    assert last.observation.game_loop[0] == steps * 8


@pytest.mark.parametrize("step_mul", [1, 3, 16])
def test_step_mul_advances_the_game_loop_exactly(step_mul):
    from sc2dask.game.pysc2lib import actions

    with make_env("MoveToBeacon", screen=16, minimap=16, random_seed=2) as env:
        before = env.reset()[0].observation.game_loop[0]
        after = env.step([actions.FUNCTIONS.no_op()], step_mul=step_mul)[0].observation.game_loop[0]
    assert after - before == step_mul


def _trajectory(seed, steps=120):
    np.random.seed(4)
    frames = []
    with make_env(
        "CollectMineralShards", screen=32, minimap=32, feature_units=True, random_seed=seed
    ) as env:
        agent = random_agent.RandomAgent()
        agent.setup(env.observation_spec()[0], env.action_spec()[0])
        timestep = env.reset()[0]
        for _ in range(steps):
            frames.append(
                (
                    timestep.observation.feature_screen.copy(),
                    np.array(timestep.observation.feature_units),
                    timestep.reward,
                )
            )
            timestep = env.step([agent.step(timestep)])[0]
    return frames


def test_same_seed_and_actions_give_the_same_observations():
    first, second, other = _trajectory(5), _trajectory(5), _trajectory(6)
    for (a, ra, wa), (b, rb, wb) in zip(first, second):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(ra, rb)
        assert wa == wb
    assert any(not np.array_equal(a[1], c[1]) for a, c in zip(first, other))


class _Idle:
    """An agent that only sends no_op, to run the clock out."""

    def setup(self, obs_spec, action_spec):
        pass

    def reset(self):
        pass

    def step(self, timestep):
        from sc2dask.game.pysc2lib import actions

        return actions.FUNCTIONS.no_op()
