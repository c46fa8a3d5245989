"""Playing n steps of one environment with the policy: the unit of work of an env host."""

from __future__ import annotations

from .agents.a2c import make_trajectory
from .core import Trajectory


def play_steps(slot, policy, version: int, n_steps: int) -> Trajectory | None:
    """Up to ``n_steps`` steps of ``slot``'s env with ``policy``, as one ``Trajectory``.

    Episodes that end inside are reset in place (``terminal`` marks the step). If the
    game crashes, the trajectory stops at the last good state and is marked
    ``truncated`` so the learner bootstraps it; the slot restarts its game. Returns
    None when the crash left no step to learn from.
    """
    from .env_host import game_failures
    encoded, actions, log_probs, rewards, terminal, scores = [], [], [], [], [], []
    try:
        env = slot.ensure()
        timestep = slot.timestep or slot.reset()
        for _ in range(n_steps):
            observation = policy.encoder.encode(timestep.observation)
            heads, behaviour, calls = policy.act({k: v[None] for k, v in observation.items()},
                                                 slot.rng)
            encoded.append(observation)
            actions.append({head: int(index[0]) for head, index in heads.items()})
            log_probs.append(float(behaviour["log_prob"][0]))
            timestep = env.step([calls[0]])[0]
            slot.score += timestep.reward
            rewards.append(timestep.reward)
            terminal.append(timestep.last())
            if timestep.last():
                scores.append(float(slot.score))
                slot.episodes += 1
                timestep = slot.reset()
        slot.timestep = timestep
        encoded.append(policy.encoder.encode(timestep.observation))
        return make_trajectory(encoded, actions, rewards, terminal, version,
                               episode_scores=scores, log_probs=log_probs)
    except game_failures() as exc:
        slot.crashed(exc)
        done = len(rewards)  # an action whose step failed is dropped; its state is kept
        if done == 0:
            return None
        if len(encoded) == done:  # the crash hit the reset after an episode end, which
            encoded.append(encoded[-1])  # needs no bootstrap state: any will do
        return make_trajectory(encoded[:done + 1], actions[:done], rewards, terminal, version,
                               truncated=True, episode_scores=scores,
                               log_probs=log_probs[:done])
