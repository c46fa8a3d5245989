"""A complete small agent: a linear policy over one-hot feature layers, learned by REINFORCE.

    sc2dask train --agent-class examples.custom_agent:Agent --map MoveToBeacon

It uses only sc2dask's agent interface (``sc2dask.core``: Agent, Policy, Learner) and its
observation encoder, and no TensorFlow: any array library works. A screen point's logit is
a weighted sum of the one-hot layer values there (a 1x1 convolution), so the policy can
learn "click where the beacon is"; every other choice is a learned bias.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sc2dask.agents import ObservationEncoder
from sc2dask.core import NonFiniteGradients

SPATIAL = ("screen", "screen2")  # heads whose logits come from the screen's layers


@dataclasses.dataclass(frozen=True)
class ReinforceConfig:
    """Fields named like sc2dask's agent settings take the run's values."""

    action_set: str = "move"
    screen: int = 32
    minimap: int = 32
    screen_layers: tuple[str, ...] = ("player_relative",)
    minimap_layers: tuple[str, ...] = ()
    gamma: float = 0.99
    step_size: float = 0.05  # not a setting: this default stays


class LinearPolicy:
    def __init__(self, config: ReinforceConfig, obs_spec):
        self.obs_spec = {k: tuple(v) for k, v in obs_spec.items()}
        self.encoder = ObservationEncoder(self.obs_spec, config)
        self.actions = self.encoder.action_set
        self.scales = [layer.scale for layer in self.encoder.screen_layers]
        # per head: a weight per one-hot channel (screen points) or a bias per choice
        sizes = {h: sum(self.scales) if h in SPATIAL else n for h, n in self.actions.heads.items()}
        self.weights = [np.zeros(n, np.float32) for n in sizes.values()]

    def features(self, screen: np.ndarray) -> np.ndarray:
        """[B, layers, H, W] layer values -> [B, channels, H*W] one-hot."""
        planes = [np.eye(s)[np.clip(screen[:, i], 0, s - 1)] for i, s in enumerate(self.scales)]
        return np.concatenate(planes, -1).reshape(len(screen), -1, sum(self.scales)).swapaxes(1, 2)

    def log_probs(self, batch) -> dict[str, np.ndarray]:
        """log pi of every choice of every head, [B, n]; unavailable functions -inf."""
        x = self.features(batch["screen"])
        out = {}
        for head, w in zip(self.actions.heads, self.weights):
            logits = np.einsum("c,bcp->bp", w, x) if head in SPATIAL else np.tile(w, (len(x), 1))
            if head == "function":
                logits = np.where(batch["available"], logits, -np.inf)
            top = logits.max(axis=1, keepdims=True)
            out[head] = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
        return out

    def initial_state(self, batch_size: int) -> dict:
        return {}  # no memory: each step sees only its observation

    def act(self, batch, rng: np.random.Generator, state: dict):
        log_pi = self.log_probs(batch)
        heads = {h: np.argmax(lp + rng.gumbel(size=lp.shape), 1) for h, lp in log_pi.items()}
        used = np.c_[np.ones(len(heads["function"]), bool), self.actions.uses[heads["function"]]]
        chosen = np.stack([lp[np.arange(len(lp)), heads[h]] for h, lp in log_pi.items()], 1)
        log_prob = np.where(used, chosen, 0.0).sum(axis=1).astype(np.float32)
        behaviour = {"value": np.zeros_like(log_prob), "log_prob": log_prob}
        return heads, behaviour, self.actions.function_calls(heads), {}

    def get_weights(self):
        return [w.copy() for w in self.weights]

    def set_weights(self, weights):
        self.weights = [np.array(w, np.float32) for w in weights]

    def head_weights(self):
        return [True] * len(self.weights)  # all small: layered sync sends them all


class Reinforce:
    """REINFORCE with the batch's mean return as its baseline, and plain gradient steps."""

    def __init__(self, config: ReinforceConfig, policy: LinearPolicy):
        self.config, self.policy = config, policy

    def prepare(self, gradients: bool = True, apply: bool = True) -> None:
        pass  # nothing to build ahead

    def compute_gradients(self, trajectories):
        returns = [self._returns(t) for t in trajectories]
        baseline = float(np.mean(np.concatenate(returns)))
        grads = [np.zeros_like(w) for w in self.policy.weights]
        for t, g in zip(trajectories, returns):
            batch = {k: v[:-1] for k, v in t.observations.items()}
            x = self.policy.features(batch["screen"])
            used = np.c_[np.ones(len(t)), self.policy.actions.uses[t.actions["function"]]]
            for i, (head, lp) in enumerate(self.policy.log_probs(batch).items()):
                delta = -np.exp(lp)  # d log pi(a) / d logits = onehot(a) - pi
                delta[np.arange(len(t)), t.actions[head]] += 1.0
                delta *= ((g - baseline) * used[:, i])[:, None]
                ascent = np.einsum("bp,bcp->c", delta, x) if head in SPATIAL else delta.sum(0)
                grads[i] -= ascent  # the loss descends: minus the return's gradient
        steps = sum(len(t) for t in trajectories)
        return [g / steps for g in grads], {"mean_return": baseline}

    def _returns(self, t) -> np.ndarray:
        out, running = np.zeros(len(t), np.float32), 0.0
        for i in reversed(range(len(t))):
            running = t.rewards[i] + self.config.gamma * running * (not t.terminal[i])
            out[i] = running
        return out

    def apply_gradients(self, grads, lr_scale: float = 1.0) -> None:
        if not all(np.isfinite(g).all() for g in grads):
            raise NonFiniteGradients("a gradient has NaN or inf")
        step = self.config.step_size * lr_scale
        self.policy.weights = [w - step * g for w, g in zip(self.policy.weights, grads)]

    def get_weights(self):
        return self.policy.get_weights()

    def set_weights(self, weights):
        self.policy.set_weights(weights)

    def get_optimizer_state(self):
        return []  # plain gradient steps keep none

    def set_optimizer_state(self, state):
        pass


class Agent:
    """What ``--agent-class`` names: the factory of the policy and the learner."""

    Config: type = ReinforceConfig

    def __init__(self, config: ReinforceConfig):
        self.config = config

    def make_policy(self, obs_spec) -> LinearPolicy:
        return LinearPolicy(self.config, obs_spec)

    def make_learner(self, obs_spec) -> Reinforce:
        return Reinforce(self.config, self.make_policy(obs_spec))
