"""pysc2 agents by dotted path, and whole episodes played with them."""

from __future__ import annotations

import functools
import importlib
import inspect

from ..errors import ConfigError
from .scored_env import ScoredEnv

# Scripted agents by the map they solve: pysc2's (in its agents package) and ours.
SCRIPTED_AGENTS = {
    "MoveToBeacon": "scripted_agent.MoveToBeacon",
    "CollectMineralShards": "scripted_agent.CollectMineralShards",
    "DefeatRoaches": "scripted_agent.DefeatRoaches",
    "CollectMineralsAndGas": "sc2dask.game.scripted_agents.CollectMineralsAndGas",
    "BuildMarines": "sc2dask.game.scripted_agents.BuildMarines",
}


def load_agent_class(path: str):
    """``package.module.Class`` (or ``...Class:argument``) -> a callable making the agent.

    The optional ``:argument`` is passed to the class (a checkpoint folder for
    ``sc2dask.training.checkpoint.CheckpointAgent``). Errors name what is wrong.
    """
    path, _, argument = path.partition(":")
    module_name, _, class_name = path.rpartition(".")
    example = "pysc2_evolved.agents.scripted_agent.MoveToBeacon"
    try:
        agent_class = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(
            f"Cannot load agent {path!r} ({exc}); give a dotted path such as {example}"
        ) from None
    missing = [m for m in ("setup", "reset", "step") if not callable(getattr(agent_class, m, None))]
    if not isinstance(agent_class, type) or missing:
        raise ConfigError(
            f"{path!r} is not a pysc2 agent class (it has no "
            f"{', '.join(missing) or 'class'}); give a BaseAgent subclass "
            f"such as {example}"
        )
    try:
        inspect.signature(agent_class).bind(*([argument] if argument else []))
    except TypeError as exc:
        raise ConfigError(
            f"Agent {path!r} cannot be made with "
            f"{'the argument ' + repr(argument) if argument else 'no argument'} "
            f"({exc})."
        ) from None
    except ValueError:  # no signature to check (a builtin): let the worker try
        pass
    return functools.partial(agent_class, argument) if argument else agent_class


def plays_macros(path: str) -> bool:
    """Whether the agent at ``path`` needs an env that takes macro actions and raw calls
    (``EnvConfig(macro_actions=True)``): its class says so with ``macro_actions = True``,
    as ``TerranMacro`` and ``RandomMacro`` do."""
    agent_class = load_agent_class(path)
    agent_class = getattr(agent_class, "func", agent_class)  # Class:argument, a partial
    return bool(getattr(agent_class, "macro_actions", False))


def scripted_agent_path(map_name: str) -> str:
    """The scripted agent for ``map_name``, or pysc2's random agent where there is none."""
    from .pysc2lib import PACKAGE_NAME

    name = SCRIPTED_AGENTS.get(map_name, "random_agent.RandomAgent")
    return name if name.startswith("sc2dask.") else f"{PACKAGE_NAME}.agents.{name}"


def play_episode(env, agent, watch=None) -> float:
    """One whole episode of ``env`` with a set-up ``agent``; returns its score: the game's
    (``ScoredEnv.score``, the Blizzard score in a game for two), or the rewards' sum.

    ``watch(timestep, score)``, if given, sees every TimeStep and the score so far (a
    ``recording.EpisodeRecorder`` draws them).
    """
    agent.reset()
    timestep = env.reset()[0]
    paid = 0.0
    while True:
        score = env.score if isinstance(env, ScoredEnv) else paid
        if watch is not None:
            watch(timestep, score)
        if timestep.last():
            return float(score)
        timestep = env.step([agent.step(timestep)])[0]
        paid += timestep.reward
