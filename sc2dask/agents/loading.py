"""Agents by dotted path: ``agent-class`` names a class that follows ``sc2dask.core.Agent``.

The client checks the class before any cluster starts, and sends an ``AgentSpec`` (the
path and the config's fields: plain data) with the work; each worker imports the class
and builds its own policy and learner from the spec, off its event loop.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from ..core import Agent, AgentSpec
from ..errors import ConfigError
from ..settings import AgentSettings, load
from .protocol import check_agent_class, check_layered_sync, check_learner

EXAMPLE = "examples.custom_agent:Agent"
REQUIRED = ("make_policy", "make_learner")


def split_class_path(path: str) -> tuple[str, str]:
    """(module, class) of ``module:Class`` or ``module.Class``."""
    module_name, colon, class_name = path.partition(":")
    if not colon:
        module_name, _, class_name = path.rpartition(".")
    return module_name, class_name


def load_agent_class(path: str) -> type[Agent]:
    """The class ``path`` names (``module:Class`` or ``module.Class``), checked to be an
    agent; ConfigError names what is missing and how to fix it."""
    module_name, class_name = split_class_path(path)
    if not module_name or not class_name:
        raise ConfigError(f"agent-class {path!r} is not module:Class; give one such as {EXAMPLE}.")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"agent-class {path!r}: cannot import {module_name!r} ({exc}); put it on the "
            f"Python path (run from its folder, or install it), e.g. {EXAMPLE}."
        ) from None
    agent_class = getattr(module, class_name, None)
    if not isinstance(agent_class, type):
        raise ConfigError(
            f"agent-class {path!r}: {module_name!r} has no class {class_name!r}; name a class "
            f"that follows sc2dask.core.Agent, e.g. {EXAMPLE}."
        )
    missing = [name for name in REQUIRED if not callable(getattr(agent_class, name, None))]
    config = getattr(agent_class, "Config", None)
    if not (isinstance(config, type) and dataclasses.is_dataclass(config)):
        missing.insert(0, "Config (a dataclass of its hyperparameters)")
    if missing:
        raise ConfigError(
            f"agent-class {path!r} is not an agent: it has no {', '.join(missing)}; "
            f"follow sc2dask.core.Agent (see {EXAMPLE})."
        )
    check_agent_class(agent_class, path)
    return agent_class


def agent_spec(
    path: str | None = None,
    settings: Any = None,
    seed: int = 0,
    map_name: str | None = None,
    **overrides: Any,
) -> AgentSpec:
    """The spec of agent ``path`` (default: ``settings``' agent-class) for a run: its
    config's fields named like a field of the agent ``settings`` take their values,
    ``seed`` the run's seed, the others keep their defaults.

    Without ``settings``, they are loaded (``sc2dask.agent`` config, ``map_name``'s
    defaults, ``overrides`` on top), as a notebook's own loop wants them.
    """
    if settings is None:
        settings = load(AgentSettings, overrides, map_name=map_name).values
    path = path or settings.agent_class
    agent_class = load_agent_class(path)
    given = dataclasses.asdict(settings) | {"seed": seed}
    fields = {f.name for f in dataclasses.fields(agent_class.Config)}
    config = agent_class.Config(**{k: v for k, v in given.items() if k in fields})
    return AgentSpec(path, dataclasses.asdict(config))


def build_agent(spec: AgentSpec) -> Agent:
    """The agent of ``spec``, made in this process."""
    agent_class = load_agent_class(spec.class_path)
    return agent_class(agent_class.Config(**spec.config))


def check_agent_parts(spec: AgentSpec, obs_spec, layered_sync: int) -> None:
    """Build the agent's learner and policy as a run's client will, and check that they
    take every call sc2dask makes: a misfit method is one ConfigError before a cluster
    starts, not a traceback after (``check_learner``, ``check_layered_sync``)."""
    learner = build_agent(spec).make_learner(obs_spec)
    check_learner(learner, spec.class_path)
    check_layered_sync(learner.policy, spec.class_path, layered_sync)
