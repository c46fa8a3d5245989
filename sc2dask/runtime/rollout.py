"""Playing n steps of one environment with the policy: the unit of work of an env host."""

from __future__ import annotations

from ..core import Trajectory
from ..game import GAME_FAILURES
from .slot import EnvSlot


def play_steps(slot: EnvSlot, policy, version: int, n_steps: int) -> Trajectory | None:
    """Up to ``n_steps`` steps of ``slot``'s env with ``policy``, as one ``Trajectory``.

    Episodes that end inside are reset in place (``terminal`` marks the step). If the
    game crashes, the trajectory stops at the last good state and is marked
    ``truncated`` so the learner bootstraps it; the slot restarts its game. Returns
    None when the crash left no step to learn from.
    """
    encoded, actions, log_probs, rewards, terminal, scores = [], [], [], [], [], []
    try:
        timestep = slot.current()
        for _ in range(n_steps):
            observation = policy.encoder.encode(timestep.observation)
            heads, behaviour, calls = policy.act({k: v[None] for k, v in observation.items()},
                                                 slot.rng)
            encoded.append(observation)
            actions.append({head: int(index[0]) for head, index in heads.items()})
            log_probs.append(float(behaviour["log_prob"][0]))
            step = slot.step(calls[0])
            rewards.append(step.reward)
            terminal.append(step.terminal)
            if step.score is not None:
                scores.append(step.score)
            timestep = slot.current()
        encoded.append(policy.encoder.encode(timestep.observation))
        return Trajectory.from_steps(encoded, actions, rewards, terminal, version,
                                     episode_scores=scores, log_probs=log_probs)
    except GAME_FAILURES as exc:
        slot.crashed(exc)
        done = len(rewards)  # an action whose step failed is dropped; its state is kept
        if done == 0:
            return None
        if len(encoded) == done:  # the crash hit the reset after an episode end, which
            encoded.append(encoded[-1])  # needs no bootstrap state: any will do
        return Trajectory.from_steps(encoded[:done + 1], actions[:done], rewards, terminal,
                                     version, truncated=True, episode_scores=scores,
                                     log_probs=log_probs[:done])
