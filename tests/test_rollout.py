"""A game that dies mid-rollout yields a truncated trajectory ending at the last good state."""

import os
import signal

import numpy as np
import pytest

from sc2dask.agents.a2c import A2CConfig, Learner
from sc2dask.game import EnvConfig
from sc2dask.runtime.slot import EnvSlot
from sc2dask.runtime.rollout import play_steps

pytestmark = pytest.mark.usefixtures("sc2path")


class _KillAfter:
    """Passes steps through to the real env, and kills its game after ``n`` of them."""

    def __init__(self, slot, n):
        self.slot, self.n, self.env = slot, n, slot.env

    def __getattr__(self, name):
        return getattr(self.env, name)

    def step(self, actions):
        if self.n == 0:
            os.kill(self.slot.pid(), signal.SIGKILL)
            os.waitpid(self.slot.pid(), 0)
        self.n -= 1
        return self.env.step(actions)


def test_crash_mid_rollout_truncates_and_bootstraps_not_terminates():
    config = A2CConfig(action_set="move", screen=16, minimap=16)
    slot = EnvSlot(EnvConfig(screen=16, minimap=16), seed=3)
    learner = Learner(config, {k: tuple(v) for k, v in slot.ensure().observation_spec()[0].items()})
    try:
        whole = play_steps(slot, learner.policy, version=0, n_steps=8)
        assert len(whole) == 8 and not whole.truncated

        slot.env = _KillAfter(slot, 5)
        cut = play_steps(slot, learner.policy, version=1, n_steps=8)
        assert cut.truncated and len(cut) == 5
        assert not cut.terminal.any()  # a crash is never an episode end
        assert all(len(v) == 6 for v in cut.observations.values())  # 5 steps + last good state
        assert slot.restarts == 1 and slot.env is None

        grads, metrics = learner.compute_gradients([whole, cut])
        assert all(np.isfinite(g).all() for g in grads)

        after = play_steps(slot, learner.policy, version=2, n_steps=4)  # a new game
        assert len(after) == 4 and not after.truncated
    finally:
        if slot.env is not None:
            slot.env.close()
