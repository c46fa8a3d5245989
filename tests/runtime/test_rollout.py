"""A game that dies mid-rollout yields a truncated trajectory ending at the last good state."""

import concurrent.futures
import os
import signal

import numpy as np
import pytest

from sc2dask.agents.a2c import A2CConfig, Learner
from sc2dask.game import EnvConfig
from sc2dask.runtime.rollout import play_batch
from sc2dask.runtime.slot import EnvSlot

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
        rng = np.random.default_rng(3)
        (whole,) = play_batch([slot], learner.policy, version=0, n_steps=8, rng=rng)
        assert len(whole) == 8 and not whole.truncated
        # the acting policy's values reach the learner, one per step (Trajectory.extras)
        values = learner.policy.value({k: v[:-1] for k, v in whole.observations.items()})
        np.testing.assert_allclose(whole.extras["value"], values, rtol=1e-5, atol=1e-6)

        slot.env = _KillAfter(slot, 5)
        (cut,) = play_batch([slot], learner.policy, version=1, n_steps=8, rng=rng)
        assert cut.truncated and len(cut) == 5
        assert not cut.terminal.any()  # a crash is never an episode end
        assert all(len(v) == 6 for v in cut.observations.values())  # 5 steps + last good state
        assert cut.extras["value"].shape == (5,)
        assert slot.restarts == 1 and slot.env is None

        grads, metrics = learner.compute_gradients([whole, cut])
        assert all(np.isfinite(g).all() for g in grads)

        (after,) = play_batch([slot], learner.policy, version=2, n_steps=4, rng=rng)  # new game
        assert len(after) == 4 and not after.truncated
    finally:
        if slot.env is not None:
            slot.env.close()


@pytest.mark.parametrize("env_groups", [1, 2])
def test_a_batch_keeps_playing_the_envs_whose_game_did_not_crash(env_groups):
    """In lockstep, and in two groups taking turns (double buffering): the same steps."""
    config = A2CConfig(action_set="move", screen=16, minimap=16)
    slots = [EnvSlot(EnvConfig(screen=16, minimap=16), seed=s) for s in (5, 6, 7)]
    learner = Learner(
        config, {k: tuple(v) for k, v in slots[0].ensure().observation_spec()[0].items()}
    )
    rng = np.random.default_rng(0)
    try:
        with concurrent.futures.ThreadPoolExecutor(3) as threads:
            first = play_batch(slots, learner.policy, 0, 6, rng, threads, env_groups)
            assert [len(t) for t in first] == [6, 6, 6] and not any(t.truncated for t in first)
            # The batch continues from where each env was: no reset between rollouts.
            episodes_before = [s.episodes for s in slots]
            slots[1].env = _KillAfter(slots[1], 2)
            second = play_batch(slots, learner.policy, 1, 6, rng, threads, env_groups)
        assert second[1].truncated and len(second[1]) == 2 and slots[1].restarts == 1
        for t in (second[0], second[2]):
            assert len(t) == 6 and not t.truncated and t.version == 1
            assert all(len(v) == 7 for v in t.observations.values())
        assert [s.episodes for s in slots] == episodes_before  # 12 steps end no episode
        grads, _ = learner.compute_gradients([t for t in first + second])
        assert all(np.isfinite(g).all() for g in grads)
    finally:
        for slot in slots:
            slot.close()
