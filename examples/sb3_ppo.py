"""Stable-Baselines3's PPO on sc2dask's Gymnasium MoveToBeacon, as a user of any RL library
would train it: ``gymnasium.make`` and the library's own defaults.

    pip install -e '.[peers]'        # Stable-Baselines3 and PyTorch
    python examples/sb3_ppo.py --steps 200000

The env's observation is a ``Dict`` of feature layers, which SB3's ``MultiInputPolicy``
reads as it is; its action is one ``Discrete`` index (``SC2GymEnv.function_call`` says which
pysc2 call it stands for). PPO has no action mask, so an unavailable action plays no_op;
``info["action_mask"]`` is there for a library that masks (sb3-contrib's MaskablePPO).
``benchmarks/peers/bench_sb3.py`` measures a tuned setup of the same against sc2dask.
"""

from __future__ import annotations

import argparse
from typing import Any

import gymnasium
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.monitor import Monitor

import sc2dask.gym

ENV_KWARGS: dict[str, Any] = {  # what MoveToBeacon needs: the marine, the beacon, a move at a point
    "screen": 16,
    "minimap": 16,
    "action_set": "move",
    "screen_layers": ("player_relative", "selected"),
    "minimap_layers": (),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="agent steps to train")
    parser.add_argument("--envs", type=int, default=4)
    args = parser.parse_args()

    env_id = sc2dask.gym.env_id("MoveToBeacon")
    envs = make_vec_env(env_id, n_envs=args.envs, seed=0, env_kwargs=ENV_KWARGS)
    model = PPO("MultiInputPolicy", envs, n_steps=256, ent_coef=0.01, seed=0, verbose=1)
    model.learn(total_timesteps=args.steps)
    envs.close()

    with Monitor(gymnasium.make(env_id, **ENV_KWARGS)) as env:
        mean, std = evaluate_policy(model, env, n_eval_episodes=10)
    print(f"MoveToBeacon after {args.steps} steps: mean score {mean:.1f} +- {std:.1f}")


if __name__ == "__main__":
    main()
