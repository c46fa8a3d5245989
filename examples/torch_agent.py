"""A PyTorch agent: FullyConv's shape in ``torch.nn``, learned by A2C.

    pip install -e '.[torch]'
    sc2dask train --agent-class examples.torch_agent:Agent --map MoveToBeacon

It is written against sc2dask's agent interface only (``sc2dask.core``: Agent, Policy,
Learner) and its documented spaces (``sc2dask.agents``: ObservationEncoder, ActionSet), so
a run with it never imports TensorFlow, on the client or on the hosts. Weights, gradients
and Adam's moments cross the network as numpy arrays in ``module.parameters()``'s order.

The network is FullyConv's (``sc2dask/agents/fullyconv.py``): the screen's categorical
layers one-hot (an embedding for unit_type's thousands), numeric ones log-scaled, two
convolutions; a 1x1 convolution gives each screen point's logit, and strided convolutions
down to a coarse grid, then a dense layer, give the function, the other argument heads
and the value. It plays action sets whose spatial
arguments are screen points (``move``, ``combat``, ``economy``). FullyConv's one-hot
inputs matter: with every layer embedded and the state pooled to the grid it learnt
nothing on MoveToBeacon (docs/agents.md).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from sc2dask.agents import ObservationEncoder
from sc2dask.core import NonFiniteGradients

SPATIAL = ("screen", "screen2")  # heads that choose a screen point
ONE_HOT_MAX = 32  # categories up to which a layer is one-hot, as in FullyConv


@dataclasses.dataclass(frozen=True)
class TorchA2CConfig:
    """Fields named like sc2dask's agent settings take the run's values."""

    action_set: str = "move"
    screen: int = 32
    minimap: int = 32
    screen_layers: tuple[str, ...] = ("player_relative", "selected")
    minimap_layers: tuple[str, ...] = ()
    conv_filters: tuple[int, ...] = (16, 32)
    conv_kernels: tuple[int, ...] = (5, 3)
    dense_grid: int = 8
    learning_rate: float = 7e-4
    entropy_coef: float = 1e-3
    value_coef: float = 0.5
    gamma: float = 0.99
    # not settings: these defaults stay
    dense_units: int = 256
    embedding: int = 8  # channels of each embedded layer (over ONE_HOT_MAX categories)
    max_grad_norm: float = 1.0
    seed: int = 0
    # torch's threads in each process: a node's env hosts and the client share its cores,
    # and torch's default (one a core, each process) oversubscribes them
    threads: int = 1


class Network(nn.Module):
    """Screen layers in, per-head logits and the value out."""

    def __init__(self, config: TorchA2CConfig, encoder: ObservationEncoder):
        super().__init__()
        if not encoder.screen_layers:
            raise ValueError("examples.torch_agent reads the screen: give it screen layers")
        heads = encoder.action_set.heads
        if "minimap" in heads:
            raise ValueError("examples.torch_agent chooses screen points, not minimap ones")
        self.layers = encoder.screen_layers
        self.embeddings = nn.ModuleDict(
            {
                layer.name: nn.Embedding(layer.scale, config.embedding)
                for layer in self.layers
                if _embedded(layer)
            }
        )
        channels = sum(_channels(layer, config.embedding) for layer in self.layers)
        convs = []
        for filters, kernel in zip(config.conv_filters, config.conv_kernels, strict=True):
            convs += [nn.Conv2d(channels, filters, kernel, padding="same"), nn.ReLU()]
            channels = filters
        self.tower = nn.Sequential(*convs)
        self.points = nn.Conv2d(channels, len([h for h in heads if h in SPATIAL]), 1)
        shrink, side = [], config.screen  # FullyConv's strided 3x3 convs down to the grid
        while side > config.dense_grid:
            shrink += [nn.Conv2d(channels, channels, 3, stride=2, padding=1), nn.ReLU()]
            side = (side + 1) // 2
        self.shrink = nn.Sequential(*shrink)
        self.dense = nn.Linear(channels * side**2, config.dense_units)
        self.choices = nn.ModuleDict(
            {h: nn.Linear(config.dense_units, n) for h, n in heads.items() if h not in SPATIAL}
        )
        self.value = nn.Linear(config.dense_units, 1)
        self.head_names = list(heads)
        with torch.no_grad():  # logits start near 0: every choice, every point alike
            for layer in (self.points, *self.choices.values()):
                for name, weights in layer.named_parameters():
                    if name == "weight":
                        weights.mul_(0.01)
                    else:
                        weights.zero_()

    def forward(self, screen: torch.Tensor, available: torch.Tensor):
        """[B, layers, H, W] layer values and [B, functions] bool -> ({head: [B, n] log
        pi}, [B] value); functions the game does not allow get log pi = -inf."""
        planes = []
        for i, layer in enumerate(self.layers):
            values = screen[:, i].long().clamp(0, layer.scale - 1)
            if _embedded(layer):
                planes.append(self.embeddings[layer.name](values).permute(0, 3, 1, 2))
            elif layer.categorical and layer.scale > 2:
                planes.append(F.one_hot(values, layer.scale).permute(0, 3, 1, 2).float())
            elif layer.categorical:
                planes.append(values.float().unsqueeze(1))
            else:
                scaled = torch.log1p(values.float()) / float(np.log1p(layer.scale))
                planes.append(scaled.unsqueeze(1))
        x = self.tower(torch.cat(planes, 1))
        points = self.points(x).flatten(2)  # [B, spatial heads, H*W]
        hidden = F.relu(self.dense(self.shrink(x).flatten(1)))
        logits = {}
        for head in self.head_names:
            if head in SPATIAL:
                logits[head] = points[:, SPATIAL.index(head)]
            else:
                logits[head] = self.choices[head](hidden)
        logits["function"] = logits["function"].masked_fill(~available, float("-inf"))
        log_pi = {h: F.log_softmax(v, -1) for h, v in logits.items()}
        return log_pi, self.value(hidden).squeeze(-1)


def _embedded(layer) -> bool:
    """Categorical layers of many categories (unit_type) get a learned embedding."""
    return layer.categorical and layer.scale > ONE_HOT_MAX


def _channels(layer, embedding: int) -> int:
    """The input channels a layer becomes: FullyConv's encoding (``fullyconv.py``)."""
    if _embedded(layer):
        return embedding
    return layer.scale if layer.categorical and layer.scale > 2 else 1


class TorchPolicy:
    """Samples every head; an argument's log pi counts only where the function takes it."""

    def __init__(self, config: TorchA2CConfig, obs_spec):
        torch.set_num_threads(config.threads)
        torch.manual_seed(config.seed)  # every process builds the same initial weights
        self.obs_spec = {k: tuple(v) for k, v in obs_spec.items()}
        self.encoder = ObservationEncoder(self.obs_spec, config)
        self.actions = self.encoder.action_set
        self.network = Network(config, self.encoder)
        # [functions, heads]: the function head always counts, an argument head where used
        self.used = torch.from_numpy(
            np.c_[np.ones(len(self.actions.uses), bool), self.actions.uses]
        )

    def evaluate(self, batch):
        """({head: [B, n] log pi}, [B] values) of a batch of encoded observations."""
        return self.network(torch.as_tensor(batch["screen"]), torch.as_tensor(batch["available"]))

    def log_prob_and_entropy(self, log_pi, actions):
        """log pi of ``actions`` [B], and the entropy of the heads they used [B]."""
        used = self.used[torch.as_tensor(actions["function"]).long()].float()
        chosen, entropy = [], []
        for i, (head, lp) in enumerate(log_pi.items()):
            taken = torch.as_tensor(actions[head]).long().unsqueeze(1)
            chosen.append(lp.gather(1, taken).squeeze(1) * used[:, i])
            finite = lp.masked_fill(~lp.isfinite(), 0.0)  # a -inf's gradient would be NaN
            entropy.append(
                -(finite.exp() * finite).masked_fill(lp.isinf(), 0.0).sum(1) * used[:, i]
            )
        return torch.stack(chosen).sum(0), torch.stack(entropy).sum(0)

    def initial_state(self, batch_size: int) -> dict:
        return {}  # no memory: each step sees only its observation

    def act(self, batch, rng: np.random.Generator, state: dict):
        with torch.no_grad():
            log_pi, values = self.evaluate(batch)
            heads = {}
            for head, lp in log_pi.items():  # Gumbel-max: a sample drawn from the run's rng
                noisy = lp.numpy() + rng.gumbel(size=lp.shape)
                heads[head] = np.argmax(noisy, 1).astype(np.int32)
            log_prob, _ = self.log_prob_and_entropy(log_pi, heads)
        outputs = {"log_prob": log_prob.numpy(), "value": values.numpy()}
        return heads, outputs, self.actions.function_calls(heads), {}

    def get_weights(self) -> list[np.ndarray]:
        return [p.detach().numpy().copy() for p in self.network.parameters()]

    def set_weights(self, weights) -> None:
        with torch.no_grad():
            for p, w in zip(self.network.parameters(), weights, strict=True):
                p.copy_(torch.from_numpy(np.asarray(w)))

    def head_weights(self) -> list[bool]:
        """The output layers (choices, points, value): what layered sync sends every update."""
        net = self.network
        outputs = {id(p) for m in (net.choices, net.points, net.value) for p in m.parameters()}
        return [id(p) in outputs for p in self.network.parameters()]


class A2C:
    """Advantage actor-critic on n-step returns, one Adam step per batch."""

    def __init__(self, config: TorchA2CConfig, policy: TorchPolicy):
        self.config, self.policy = config, policy
        self.parameters = list(policy.network.parameters())
        self.optimizer = torch.optim.Adam(self.parameters, lr=config.learning_rate, eps=1e-5)

    def compute_gradients(self, trajectories):
        losses, metrics = [], {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0}
        steps = sum(len(t) for t in trajectories)
        for t in trajectories:
            log_pi, values = self.policy.evaluate(t.observations)  # T + 1 states
            log_prob, entropy = self.policy.log_prob_and_entropy(
                {h: lp[:-1] for h, lp in log_pi.items()}, t.actions
            )
            ends = np.asarray(t.terminal, bool).copy()
            ends[-1] &= not t.truncated  # cut short by a crash: bootstrap, as a2c.py does
            bootstrap = 0.0 if ends[-1] else float(values[-1].detach())
            values = values[:-1]
            returns = torch.from_numpy(self._returns(t.rewards, ends, bootstrap))
            advantage = (returns - values).detach()
            policy_loss = -(log_prob * advantage).sum()
            value_loss = 0.5 * ((returns - values) ** 2).sum()
            losses.append(
                policy_loss
                + self.config.value_coef * value_loss
                - self.config.entropy_coef * entropy.sum()
            )
            for key, total in zip(metrics, (policy_loss, value_loss, entropy.sum())):
                metrics[key] += float(total.detach()) / steps
        self.optimizer.zero_grad()
        (torch.stack(losses).sum() / steps).backward()
        grads = [p.grad.numpy().copy() for p in self.parameters]
        if not all(np.isfinite(g).all() for g in grads):
            raise NonFiniteGradients("a gradient has NaN or inf")
        return grads, metrics

    def _returns(self, rewards, ends, bootstrap: float) -> np.ndarray:
        out, running = np.zeros(len(rewards), np.float32), bootstrap
        for i in reversed(range(len(rewards))):
            running = rewards[i] + self.config.gamma * running * (not ends[i])
            out[i] = running
        return out

    def apply_gradients(self, grads, lr_scale: float = 1.0) -> None:
        if not all(np.isfinite(g).all() for g in grads):
            raise NonFiniteGradients("a gradient has NaN or inf")
        for p, g in zip(self.parameters, grads, strict=True):
            p.grad = torch.from_numpy(np.array(g, np.float32))
        nn.utils.clip_grad_norm_(self.parameters, self.config.max_grad_norm)
        for group in self.optimizer.param_groups:
            group["lr"] = self.config.learning_rate * lr_scale
        self.optimizer.step()

    def get_weights(self):
        return self.policy.get_weights()

    def set_weights(self, weights):
        self.policy.set_weights(weights)

    def get_optimizer_state(self) -> list[np.ndarray]:
        """Adam's step count and two moments per weight; [] before the first step."""
        if any(p not in self.optimizer.state for p in self.parameters):
            return []
        state = [self.optimizer.state[p] for p in self.parameters]
        out = [np.array([float(state[0]["step"])], np.float32)]
        for s in state:
            out += [s["exp_avg"].numpy().copy(), s["exp_avg_sq"].numpy().copy()]
        return out

    def set_optimizer_state(self, state) -> None:
        if not len(state):
            return
        step = torch.tensor(float(state[0][0]))
        for i, p in enumerate(self.parameters):
            self.optimizer.state[p] = {
                "step": step.clone(),
                "exp_avg": torch.from_numpy(np.array(state[1 + 2 * i], np.float32)),
                "exp_avg_sq": torch.from_numpy(np.array(state[2 + 2 * i], np.float32)),
            }


class Agent:
    """What ``--agent-class`` names: the factory of the policy and the learner."""

    Config: type = TorchA2CConfig

    def __init__(self, config: TorchA2CConfig):
        self.config = config

    def make_policy(self, obs_spec) -> TorchPolicy:
        return TorchPolicy(self.config, obs_spec)

    def make_learner(self, obs_spec) -> A2C:
        return A2C(self.config, self.make_policy(obs_spec))
