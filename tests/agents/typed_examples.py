"""mypy (./run-tests.sh's static checks) holds the examples' agents to ``sc2dask.core``'s
protocols: an example whose policy or learner drifts from them fails there, not in a
user's first run. Never run; only type-checked."""

from __future__ import annotations

from examples import custom_agent, torch_agent
from sc2dask import core


def agents(
    linear: custom_agent.ReinforceConfig, torch: torch_agent.TorchA2CConfig
) -> list[core.Agent]:
    return [custom_agent.Agent(linear), torch_agent.Agent(torch)]


def policies(
    linear: custom_agent.LinearPolicy, torch: torch_agent.TorchPolicy
) -> list[core.Policy]:
    return [linear, torch]


def learners(linear: custom_agent.Reinforce, torch: torch_agent.A2C) -> list[core.Learner]:
    return [linear, torch]
