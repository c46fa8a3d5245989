"""A recurrent agent for tests: the custom example agent whose memory counts the steps of
its episode so far. The policy reports the count it acted with (``behaviour["seen"]``);
the learner refuses a trajectory that did not bring its memory, and reports the memory
trajectories began with (``memory_at_start``), which stays 0 if rollouts lose it."""

from __future__ import annotations

import numpy as np

from examples.custom_agent import Agent, LinearPolicy, Reinforce


class CountingPolicy(LinearPolicy):
    def initial_state(self, batch_size: int) -> dict:
        return {"steps": np.zeros(batch_size, np.int64)}

    def act(self, batch, rng, state):
        heads, behaviour, calls, _ = super().act(batch, rng, {})
        behaviour["seen"] = state["steps"].copy()
        return heads, behaviour, calls, {"steps": state["steps"] + 1}


class CountingLearner(Reinforce):
    def compute_gradients(self, trajectories):
        for t in trajectories:
            if set(t.initial_state) != {"steps"} or np.ndim(t.initial_state["steps"]) != 0:
                raise ValueError(f"a trajectory began with memory {t.initial_state!r}")
        grads, metrics = super().compute_gradients(trajectories)
        starts = [int(t.initial_state["steps"]) for t in trajectories]
        return grads, {**metrics, "memory_at_start": float(np.mean(starts))}


class CountingAgent(Agent):
    def make_policy(self, obs_spec) -> CountingPolicy:
        return CountingPolicy(self.config, obs_spec)

    def make_learner(self, obs_spec) -> CountingLearner:
        return CountingLearner(self.config, self.make_policy(obs_spec))
