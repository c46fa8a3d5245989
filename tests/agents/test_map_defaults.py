"""Each map's defaults (``sc2dask.maps`` in sc2dask.yaml) build a valid agent for the
observation spec expected before any game starts, and that agent plays a few steps of its
map on the emulator: a default that names a layer the
map lacks, a function it never allows, or sizes that do not fit fails here, not an hour
into a benchmark."""

from __future__ import annotations

import numpy as np
import pytest

from sc2dask.agents.loading import build_agent
from sc2dask.agents.spaces import expected_obs_spec
from sc2dask.emulator.maps import EMULATED_MAPS
from sc2dask.training.run_settings import resolve_run

pytestmark = pytest.mark.usefixtures("sc2path")

OPPONENT = {"Simple64": "bot:terran:very_easy"}


@pytest.mark.parametrize("map_name", sorted(EMULATED_MAPS))
def test_the_maps_defaults_build_an_agent_that_plays_its_map(map_name):
    run = resolve_run({"map": map_name, "opponent": OPPONENT.get(map_name)})
    agent = build_agent(run.agent_spec)
    rng = np.random.default_rng(0)
    with run.env_config.make(seed=1) as env:
        spec = {k: tuple(v) for k, v in env.observation_spec()[0].items()}
        # what an agent's parts were checked against before any cluster started
        assert {k: tuple(v) for k, v in expected_obs_spec(run.agent).items()} == spec
        policy = agent.make_policy(spec)
        state = policy.initial_state(1)
        timestep = env.reset()[0]
        allowed = np.zeros(len(policy.action_set.function_ids), bool)
        for _ in range(8):
            batch = policy.encoder.encode_batch([timestep.observation])
            heads, behaviour, calls, state = policy.act(batch, rng, state)
            assert np.isfinite(behaviour["log_prob"]).all()
            allowed |= batch["available"][0]
            timestep = env.step(calls)[0]
    # the set fits the map: the game allows more of it than no_op
    assert allowed.sum() >= 2, policy.action_set.function_ids
    assert timestep.observation.game_loop[0] >= 8 * run.env_config.step_mul
