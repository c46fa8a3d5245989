"""mypy (./run-tests.sh's static checks) holds the examples' agents, and the minimal agent
written from the docs alone, to ``sc2dask.core``'s protocols: an agent whose policy or
learner drifts from them fails there, not in a user's first run. Never run; only
type-checked."""

from __future__ import annotations

from examples import custom_agent, torch_agent
from sc2dask import core
from tests.agents import minimal_agent


def agents(
    linear: custom_agent.ReinforceConfig,
    torch: torch_agent.TorchA2CConfig,
    minimal: minimal_agent.Config,
) -> list[core.Agent]:
    return [custom_agent.Agent(linear), torch_agent.Agent(torch), minimal_agent.Agent(minimal)]


def policies(
    linear: custom_agent.LinearPolicy,
    torch: torch_agent.TorchPolicy,
    minimal: minimal_agent.BiasPolicy,
) -> list[core.Policy]:
    return [linear, torch, minimal]


def optional_parts(
    linear: custom_agent.LinearPolicy,
    torch: torch_agent.TorchPolicy,
    learner: custom_agent.Reinforce,
) -> tuple[list[core.SplitsHeads], core.PreparesAhead]:
    return [linear, torch], learner


def learners(
    linear: custom_agent.Reinforce, torch: torch_agent.A2C, minimal: minimal_agent.Reinforce
) -> list[core.Learner]:
    return [linear, torch, minimal]
