"""A recurrent policy's memory: carried from step to step and rollout to rollout in each
env, started afresh with each episode, and stored with the trajectory it began."""

import numpy as np
import pytest

import sc2dask
from sc2dask.agents.loading import agent_spec, build_agent
from sc2dask.game import EnvConfig
from sc2dask.runtime.rollout import play_batch
from sc2dask.runtime.slot import EnvSlot
from sc2dask.settings import AgentSettings, load

pytestmark = pytest.mark.usefixtures("sc2path")

AGENT = "tests.runtime.counting_agent:CountingAgent"


def _replay(trajectory) -> list[int]:
    """The counts a policy that remembers its episode's steps must have seen."""
    memory, seen = int(trajectory.initial_state["steps"]), []
    for terminal in trajectory.terminal:
        seen.append(memory)
        memory = 0 if terminal else memory + 1
    return seen


def test_memory_carries_across_rollouts_and_restarts_with_each_episode():
    # step_mul 120: a MoveToBeacon episode (1,920 game loops) is 16 agent steps.
    env = EnvConfig(screen=16, minimap=16, step_mul=120)
    settings = load(AgentSettings, {"screen": 16, "minimap": 16}, map_name="MoveToBeacon").values
    slots = [EnvSlot(env, seed=s) for s in (1, 2)]
    obs_spec = {k: tuple(v) for k, v in slots[0].ensure().observation_spec()[0].items()}
    policy = build_agent(agent_spec(AGENT, settings)).make_policy(obs_spec)
    seen: list[list[int]] = [[], []]
    original = policy.act

    def act(batch, rng, state):
        heads, behaviour, calls, after = original(batch, rng, state)
        for row, count in enumerate(behaviour["seen"]):
            seen[row].append(int(count))
        return heads, behaviour, calls, after

    policy.act = act
    rng = np.random.default_rng(0)
    try:
        rollouts = [play_batch(slots, policy, v, 6, rng) for v in range(4)]  # 24 steps each
    finally:
        for slot in slots:
            slot.close()
    for i in range(2):
        trajectories = [batch[i] for batch in rollouts]
        assert sum(t.terminal.sum() for t in trajectories) == 1  # one episode end in 24 steps
        assert [c for t in trajectories for c in _replay(t)] == seen[i]
        starts = [int(t.initial_state["steps"]) for t in trajectories]
        assert starts[:3] == [0, 6, 12]  # carried across rollouts, not reset at each
        assert seen[i][16] == 0  # the 17th step is a new episode's first


@pytest.mark.cluster
def test_a_recurrent_agent_trains_with_its_memory_on_a_cluster(client):
    """Central: trajectories carry their memory to the client's learner, which checks it."""
    run = sc2dask.train(
        client=client,
        agent_class=AGENT,
        map="MoveToBeacon",
        envs=2,
        rollout_steps=8,
        max_steps=400,
        checkpoint_every=0,
    )
    run.wait()
    starts = [row["memory_at_start"] for row in run.progress.history]
    assert run.progress.agent_steps >= 400
    assert max(starts) >= 8  # a rollout began where the one before it left the episode
