"""What the A2C agent's tests share: a small config, envs sized for it, an observation
spec without a game, and a rollout by hand."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from sc2dask.agents.a2c import A2CConfig
from sc2dask.agents.spaces import agent_interface_format
from sc2dask.core import Trajectory
from sc2dask.game import make_env

MOVE_16 = A2CConfig(action_set="move", screen=16, minimap=16)


def _env(config, seed=1, map_name="MoveToBeacon"):
    return make_env(
        map_name, agent_interface_format=agent_interface_format(config), random_seed=seed
    )


def _obs_spec(screen, minimap):
    """An observation spec like SC2Env's, for model-only tests (no game needed)."""
    (sx, sy), (mx, my) = [(s, s) if isinstance(s, int) else s for s in (screen, minimap)]
    return {
        "feature_screen": (27, sy, sx),
        "feature_minimap": (11, my, mx),
        "player": (11,),
        "available_actions": (0,),
    }


def _play(env, policy, n_steps, rng, timestep=None, version=0):
    """n steps of one env with ``policy``: (trajectory, last timestep)."""
    timestep = timestep or env.reset()[0]
    observations = [policy.encoder.encode(timestep.observation)]
    steps, rewards, terminal, log_probs = [], [], [], []
    for _ in range(n_steps):
        batch = {k: v[None] for k, v in observations[-1].items()}
        chosen, behaviour, calls, _ = policy.act(batch, rng)
        timestep = env.step(calls)[0]
        steps.append({k: v[0] for k, v in chosen.items()})
        log_probs.append(behaviour["log_prob"][0])
        rewards.append(timestep.reward)
        terminal.append(timestep.last())
        if timestep.last():
            timestep = env.reset()[0]
        observations.append(policy.encoder.encode(timestep.observation))
    return Trajectory.from_steps(
        observations, steps, rewards, terminal, version, log_probs=log_probs
    ), timestep
