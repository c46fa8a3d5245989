"""Side by side with RLlib: the same emulated MoveToBeacon, envs, cores and wall budget.

RLlib trains its PPO on the new API stack (PyTorch) with ``--envs`` envs on 2 env runners,
the learner in the driver, on ``side_by_side.peer_gym``'s one-hot MoveToBeacon. The harness
(``side_by_side.py``) runs each side in turn and prints, side by side: agent steps/s with
learning (from the first update), time and steps to the target or the score at the budget,
peak memory of the whole process tree, start-up time (start to first update), and CPU
seconds per role (learner, env hosts or runners, games, scheduler or Ray's own processes).
The curves go to ``benchmarks/results/peers_rllib.{png,csv}``; the last line is one JSON
object.

Needs the ``peers`` extra (``pip install -e '.[peers]'``); it installs nothing. Figures,
not a test: run it with nothing else busy.

    python benchmarks/peers/bench_rllib.py --minutes 10 --json
"""

from __future__ import annotations

import os
import sys
import time

from side_by_side import main, peer_gym

# Differences that remain, printed with the figures.
DIFFERENCES = [
    "policy: sc2dask's FullyConv picks the function and the screen point with separate "
    "heads (the point from a 1x1 conv over the screen); RLlib's default catalog has one "
    "categorical over 2 + 32*32 actions from a dense layer over its conv encoder",
    "unavailable actions: sc2dask masks them; RLlib has no mask, so the env plays "
    "no_op for Move_screen before the army is selected",
    "algorithm: sc2dask A2C with a PPO clip, one pass per batch, on-policy per host; "
    "RLlib PPO with its minibatch epochs (settings in RLLIB_TRAINING)",
    "network size: sc2dask's MoveToBeacon defaults (16 and 16 filters at full resolution, "
    "a 4x4 dense grid: about 6 M multiply-adds per sample) against RLlib's encoder in "
    "RLLIB_MODEL (16 filters at full resolution, then two strided convs: about 4.7 M)",
]
RLLIB_TRAINING = {
    "lr": 3e-4,
    "train_batch_size_per_learner": 1024,
    "minibatch_size": 256,
    "num_epochs": 4,
    "gamma": 0.99,
    "entropy_coeff": 0.001,
}
RLLIB_MODEL = {
    "conv_filters": [[16, [5, 5], 1], [32, [3, 3], 2], [32, [3, 3], 2]],
    "head_fcnet_hiddens": [256],
}


def train_rllib(args, started: float) -> list[dict]:
    # RLlib imports TensorFlow whenever it is installed (sc2dask needs it), and TensorFlow
    # and PyTorch in one process crash on their two copies of LLVM. This side is PyTorch.
    os.environ["RLLIB_TEST_NO_TF_IMPORT"] = "1"
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.tune.registry import register_env

    ray.init(
        num_cpus=os.cpu_count(),
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"RLLIB_TEST_NO_TF_IMPORT": "1"}},
    )
    register_env("MoveToBeaconGym", peer_gym)
    runners = 2
    config = (
        PPOConfig()
        .environment("MoveToBeaconGym")
        .env_runners(
            num_env_runners=runners,
            num_envs_per_env_runner=-(-args.envs // runners),
            num_cpus_per_env_runner=0,
        )
        .learners(num_learners=0)
        .training(**RLLIB_TRAINING)
        .rl_module(model_config=DefaultModelConfig(**RLLIB_MODEL))
    )
    algo = config.build_algo()
    rows, episodes, window = [], 0, []  # window: (episodes, mean return) per iteration
    try:
        while True:
            result = algo.train()
            runner = result.get("env_runners", {})
            ended = int(runner.get("num_episodes", 0) or 0)
            episodes += ended
            if ended:  # RLlib's mean is this iteration's episodes': make it the last 100's
                window.append((ended, float(runner["episode_return_mean"])))
                while sum(n for n, _ in window) - window[0][0] >= 100:
                    window.pop(0)
            mean = (
                sum(n * m for n, m in window) / sum(n for n, _ in window)
                if window
                else float("nan")
            )
            rows.append(
                {
                    "wall_s": time.monotonic() - started,
                    "agent_steps": int(runner.get("num_env_steps_sampled_lifetime", 0)),
                    "episodes": episodes,
                    "mean_score_last_100": mean,
                }
            )
            if rows[-1]["wall_s"] >= args.minutes * 60 or (
                episodes >= 20 and rows[-1]["mean_score_last_100"] >= args.target
            ):
                break
    finally:
        algo.stop()
        ray.shutdown()
    return rows


if __name__ == "__main__":
    sys.exit(main("rllib", train_rllib, DIFFERENCES, __file__))
