"""An agent written only from ``sc2dask.core``'s protocols and the docs (docs/agents.md and
the API reference's spaces), leaving out everything they call optional: no ``prepare``,
no ``head_weights``, no "value" in ``act``'s outputs. Its one output besides ``log_prob``
is an extra of its own, "entropy" (the function head's), which its learner requires in
every trajectory, so a run fails if per-step extras do not reach the learner
(tests/cli/test_agent_class.py).

The policy is a learned bias per choice of each head (it ignores what it sees), learnt by
REINFORCE: the least an agent can be and still learn."""

from __future__ import annotations

import dataclasses

import numpy as np

from sc2dask.agents import ObservationEncoder


@dataclasses.dataclass(frozen=True)
class Config:
    """Fields named like sc2dask's agent settings take the run's values."""

    action_set: str = "move"
    screen: int = 32
    minimap: int = 32
    screen_layers: tuple[str, ...] = ("player_relative",)
    minimap_layers: tuple[str, ...] = ()
    step_size: float = 0.1  # plain gradient steps on the biases (not a setting)


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    top = logits.max(axis=-1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))


class BiasPolicy:
    """A learned bias for each choice of each head; unavailable functions masked out."""

    def __init__(self, config: Config, obs_spec):
        self.obs_spec = dict(obs_spec)
        self.encoder = ObservationEncoder(obs_spec, config)
        self.actions = self.encoder.action_set
        self.biases = [np.zeros(n, np.float32) for n in self.actions.heads.values()]

    def log_pi(self, available: np.ndarray) -> dict[str, np.ndarray]:
        """[B, n] log-probabilities of every choice of each head; unavailable functions -inf."""
        out = {}
        for head, bias in zip(self.actions.heads, self.biases):
            logits = np.tile(bias, (len(available), 1))
            if head == "function":
                logits = np.where(available, logits, -np.inf)
            out[head] = _log_softmax(logits)
        return out

    def initial_state(self, batch_size: int) -> dict:
        return {}

    def act(self, batch, rng, state):
        log_pi = self.log_pi(batch["available"])
        chosen = {
            h: np.argmax(lp + rng.gumbel(size=lp.shape), 1).astype(np.int32)
            for h, lp in log_pi.items()
        }
        rows = np.arange(len(batch["available"]))
        taken = np.c_[np.ones(len(rows), bool), self.actions.uses[chosen["function"]]]
        picked = np.stack([lp[rows, chosen[h]] for h, lp in log_pi.items()], 1)
        probs = np.exp(log_pi["function"])
        entropy = -(probs * np.where(probs > 0, log_pi["function"], 0.0)).sum(1)
        outputs = {
            "log_prob": np.where(taken, picked, 0.0).sum(1).astype(np.float32),
            "entropy": entropy.astype(np.float32),
        }
        return chosen, outputs, self.actions.function_calls(chosen), {}

    def get_weights(self):
        return [b.copy() for b in self.biases]

    def set_weights(self, weights):
        self.biases = [np.array(w, np.float32) for w in weights]


class Reinforce:
    """REINFORCE on each episode's return within the rollout, no baseline."""

    def __init__(self, config: Config, policy: BiasPolicy):
        self.config, self.policy = config, policy

    def compute_gradients(self, trajectories):
        grads = [np.zeros_like(b) for b in self.policy.biases]
        steps, entropies = 0, []
        for t in trajectories:
            entropy = t.extras.get("entropy")
            if entropy is None or entropy.shape != (len(t),):
                raise ValueError(f"the acting policy's entropy did not arrive: {t.extras}")
            entropies.append(entropy)
            returns = _returns(t.rewards, t.terminal)
            log_pi = self.policy.log_pi(t.observations["available"][:-1])
            taken = np.c_[np.ones(len(t)), self.policy.actions.uses[t.actions["function"]]]
            for i, (head, lp) in enumerate(log_pi.items()):
                ascent = -np.exp(lp)  # d log pi(a) / d logits = onehot(a) - pi
                ascent[np.arange(len(t)), t.actions[head]] += 1.0
                grads[i] -= (ascent * (returns * taken[:, i])[:, None]).sum(0)
            steps += len(t)
        acting_entropy = float(np.concatenate(entropies).mean()) if entropies else 0.0
        return [g / max(steps, 1) for g in grads], {"acting_entropy": acting_entropy}

    def apply_gradients(self, grads, lr_scale: float = 1.0) -> None:
        step = self.config.step_size * lr_scale
        self.policy.biases = [b - step * g for b, g in zip(self.policy.biases, grads)]

    def get_weights(self):
        return self.policy.get_weights()

    def set_weights(self, weights):
        self.policy.set_weights(weights)

    def get_optimizer_state(self):
        return []

    def set_optimizer_state(self, state):
        pass


def _returns(rewards: np.ndarray, terminal: np.ndarray) -> np.ndarray:
    """Undiscounted rewards to the episode's end, or to the rollout's where it goes on."""
    out, running = np.zeros(len(rewards), np.float32), 0.0
    for i in reversed(range(len(rewards))):
        running = rewards[i] + (0.0 if terminal[i] else running)
        out[i] = running
    return out


class Agent:
    """What ``--agent-class`` names: the factory of the policy and the learner."""

    Config: type = Config

    def __init__(self, config: Config):
        self.config = config

    def make_policy(self, obs_spec) -> BiasPolicy:
        return BiasPolicy(self.config, obs_spec)

    def make_learner(self, obs_spec) -> Reinforce:
        return Reinforce(self.config, self.make_policy(obs_spec))
