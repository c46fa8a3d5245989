"""``A2CConfig``: every hyperparameter of the agent, importable without TensorFlow.

The client builds it before its cluster starts and sends it with every rollout; unpickling
it on a worker must not import TensorFlow, a slow import, in the worker's event loop.
"""

from __future__ import annotations

import dataclasses

from ..settings import AgentSettings


@dataclasses.dataclass(frozen=True)
class A2CConfig(AgentSettings):
    """Every hyperparameter of the agent: the user's ``AgentSettings`` (``sc2dask.agent``
    in sc2dask.yaml, where the defaults follow SC2LE and Reaver where they agree) plus the
    network's shape, which users rarely change.

    The policy term is PPO's clipped surrogate on pi/pi_behaviour: with fresh data the
    ratio is 1 and the gradient is exactly A2C's; with data from older weights (async
    hosts, or a batch reused for ``epochs`` passes, Schulman et al. 2017) the clip keeps
    each step inside a trust region.
    """

    # FullyConv network (its filters, kernels and dense_grid are settings: AgentSettings).
    one_hot_max: int = 32  # categorical layers with more categories are embedded
    dense_units: int = 256
    seed: int = 0  # weight initialisation
    # Optimiser.
    adam_epsilon: float = 1e-5
    max_grad_norm: float = 1.0  # global-norm clipping in apply_gradients

    @classmethod
    def from_settings(cls, agent: AgentSettings, seed: int = 0) -> A2CConfig:
        return cls(**dataclasses.asdict(agent), seed=seed)
