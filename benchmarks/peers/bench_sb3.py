"""Side by side with Stable-Baselines3: the same emulated MoveToBeacon, envs, cores and
wall budget.

Stable-Baselines3 trains its PPO (PyTorch) with ``--envs`` envs in a ``SubprocVecEnv``, the
learner in the driver, on ``side_by_side.peer_gym``'s one-hot MoveToBeacon, with the
convolutional encoder RLlib had in ``bench_rllib.py`` (SB3's NatureCNN needs 36 pixels or
more a side). The harness (``side_by_side.py``) runs each side in turn and prints, side by
side: agent steps/s with learning, time and steps to the target or the score at the
budget, peak memory of the process tree, start-up time and CPU seconds per role. The
curves go to ``benchmarks/results/peers_sb3.{png,csv}``; the last line is one JSON object.

Needs the ``peers`` extra (``pip install -e '.[peers]'``); it installs nothing. Figures,
not a test: run it with nothing else busy.

    python benchmarks/peers/bench_sb3.py --minutes 10 --json
"""

from __future__ import annotations

import sys
import time
from collections import deque

from side_by_side import main, peer_gym

# Differences that remain, printed with the figures.
DIFFERENCES = [
    "policy: sc2dask's FullyConv picks the function and the screen point with separate "
    "heads (the point from a 1x1 conv over the screen); SB3's ActorCriticCnnPolicy has one "
    "categorical over 2 + 32*32 actions from a dense layer over its conv encoder",
    "unavailable actions: sc2dask masks them; SB3's PPO has no mask (sb3-contrib's "
    "MaskablePPO has), so the env plays no_op for Move_screen before the army is selected",
    "algorithm: sc2dask A2C with a PPO clip, one pass per batch, on-policy per host; "
    "SB3 PPO with its minibatch epochs (settings in SB3_TRAINING)",
    "envs: sc2dask's hosts play their envs in 2 Dask worker processes; SB3's SubprocVecEnv "
    "runs one process per env and steps them in lockstep",
]
# As RLlib's in bench_rllib.py: a 1024-sample batch, 4 epochs of 256-sample minibatches.
SB3_TRAINING = {
    "learning_rate": 3e-4,
    "n_epochs": 4,
    "batch_size": 256,
    "gamma": 0.99,
    "ent_coef": 0.001,
}
CONV = [(16, 5, 1), (32, 3, 2), (32, 3, 2)]  # filters, kernel, stride: as RLLIB_MODEL
DENSE = 256


def train_sb3(args, started: float) -> list[dict]:
    import gymnasium as gym
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from stable_baselines3.common.vec_env import SubprocVecEnv, VecMonitor

    class Encoder(BaseFeaturesExtractor):
        """RLlib's conv encoder of ``bench_rllib.RLLIB_MODEL`` on the [H, W, C] one-hot."""

        def __init__(self, space: gym.spaces.Box):
            super().__init__(space, DENSE)
            layers, channels = [], space.shape[-1]
            for filters, kernel, stride in CONV:
                layers += [
                    torch.nn.Conv2d(channels, filters, kernel, stride, padding=kernel // 2),
                    torch.nn.ReLU(),
                ]
                channels = filters
            self.convs = torch.nn.Sequential(*layers, torch.nn.Flatten())
            with torch.no_grad():
                size = self.convs(torch.zeros(1, space.shape[-1], *space.shape[:2])).shape[1]
            self.dense = torch.nn.Sequential(torch.nn.Linear(size, DENSE), torch.nn.ReLU())

        def forward(self, image):
            return self.dense(self.convs(image.permute(0, 3, 1, 2)))

    class Progress(BaseCallback):
        """One curve row per rollout: the mean of the last 100 episodes' scores."""

        def __init__(self):
            super().__init__()
            self.rows: list[dict] = []
            self.scores: deque[float] = deque(maxlen=100)
            self.episodes = 0
            self.done = False

        def _on_step(self) -> bool:
            """False (stop) at the first step after a rollout that asked for the end."""
            if self.done:
                return False
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.scores.append(float(info["episode"]["r"]))
                    self.episodes += 1
            return True

        def _on_rollout_end(self) -> None:
            mean = sum(self.scores) / len(self.scores) if self.scores else float("nan")
            self.rows.append(
                {
                    "wall_s": time.monotonic() - started,
                    "agent_steps": self.num_timesteps,
                    "episodes": self.episodes,
                    "mean_score_last_100": mean,
                }
            )
            reached = self.episodes >= 20 and mean >= args.target
            self.done = reached or self.rows[-1]["wall_s"] >= args.minutes * 60

    torch.set_num_threads(1)  # the envs' processes have the other core
    envs = VecMonitor(
        SubprocVecEnv(
            [lambda i=i: peer_gym({"seed": 100 * i}) for i in range(args.envs)],
            start_method="spawn",
        )
    )
    model = PPO(
        "CnnPolicy",
        envs,
        n_steps=1024 // args.envs,
        policy_kwargs={
            "features_extractor_class": Encoder,
            "normalize_images": False,
            "net_arch": [],
        },
        seed=0,
        device="cpu",
        **SB3_TRAINING,
    )
    progress = Progress()
    try:
        model.learn(total_timesteps=10**9, callback=progress)
    finally:
        envs.close()
    return progress.rows


if __name__ == "__main__":
    sys.exit(main("sb3", train_sb3, DIFFERENCES, __file__))
