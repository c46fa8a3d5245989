"""Evaluation episodes are distinct games: each game of an env gets its own seed, and so
do an agent's random choices, derived from the run's seed (so a run stays reproducible)."""

import asyncio

import pytest

from sc2dask.game import EnvConfig
from sc2dask.runtime.env_host import EnvHost
from tests.runtime.fingerprinting_agent import FingerprintingRandomMacro

AGENT = "tests.runtime.fingerprinting_agent.FingerprintingRandomMacro"


def _fingerprints(seed: int, episodes: int) -> list[str]:
    FingerprintingRandomMacro.games.clear()
    config = EnvConfig(
        "Simple64", opponent="bot:terran:hard", reward="outcome", macro_actions=True, step_mul=32
    )
    host = EnvHost(config, n_envs=1, seed=seed)
    try:
        asyncio.run(host.evaluate(AGENT, episodes))
    finally:
        host.close()
    return [game.hexdigest() for game in FingerprintingRandomMacro.games]


@pytest.mark.slow
@pytest.mark.usefixtures("sc2path")
def test_an_envs_episodes_are_distinct_games_and_a_seed_plays_them_again():
    games = _fingerprints(seed=7, episodes=2)
    assert len(games) == 2 and games[0] != games[1]
    assert _fingerprints(seed=7, episodes=1) == games[:1]
