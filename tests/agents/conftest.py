"""A MoveToBeacon env and a learner sized for it, shared by a module's tests."""

import pytest

from sc2dask.agents.a2c import Learner
from tests.agents.a2c_helpers import MOVE_16, _env


@pytest.fixture(scope="module")
def beacon_env():
    env = _env(MOVE_16)
    yield env
    env.close()


@pytest.fixture(scope="module")
def learner(beacon_env):
    return Learner(MOVE_16, beacon_env.observation_spec()[0])
