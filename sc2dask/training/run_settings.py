"""The one place that loads and checks a run's settings, before any cluster starts.

``sc2dask train`` and ``sc2dask.train()`` both call ``resolve_run``: settings that must agree
with each other, the map, and a checkpoint to resume from are checked once, the same way,
and a bad run fails in a second rather than after its cluster started.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from typing import Any

from ..agents.loading import agent_spec
from ..agents.spaces import reads_feature_layers, uses_macros
from ..core import AgentSpec
from ..errors import ConfigError
from ..game import EnvConfig
from ..settings import DEFAULT_ORIGIN, AgentSettings, TrainSettings, is_default, load
from . import checkpoint


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """A run's checked settings, and where each training setting came from."""

    train: TrainSettings
    agent: AgentSettings
    origins: Mapping[str, str]
    agent_spec: AgentSpec  # the agent class and its config, checked
    env_config: EnvConfig  # the envs: map, sizes, players and reward, checked


def resolve_run(
    overrides: Mapping[str, Any] | None = None,
    agent_overrides: Mapping[str, Any] | None = None,
    resume: bool = False,
    origin: str = "keyword argument",
) -> RunSettings:
    """The settings of ``sc2dask.train`` and ``sc2dask.agent`` config with ``overrides`` on
    top (agent settings may be among them), checked; ConfigError names what is wrong."""
    overrides = dict(overrides or {})
    agent_overrides = split_overrides(overrides, dict(agent_overrides or {}))
    # The map picks its own training defaults (a melee map's reward), so it is read first.
    the_map = load(TrainSettings, overrides, origin=origin).values.map
    loaded = load(TrainSettings, overrides, origin=origin, map_name=the_map)
    opts = loaded.values
    agent = load(AgentSettings, agent_overrides, origin=origin, map_name=opts.map).values
    check_settings(opts, agent, loaded.origins)
    spec = agent_spec(agent.agent_class, agent, seed=opts.seed)  # ConfigError: not an agent
    if resume and not opts.checkpoint_dir:
        raise ConfigError(
            "Resuming continues a run from its checkpoint-dir; give the folder "
            "the run wrote (--checkpoint-dir, checkpoint_dir=, or "
            "sc2dask.train.checkpoint-dir)."
        )
    if resume:  # a missing or corrupt checkpoint, or one of another network
        check_resumable(opts.checkpoint_dir, spec)
    env = EnvConfig(
        opts.map,
        screen=agent.screen,
        minimap=agent.minimap,
        step_mul=opts.step_mul,
        race=opts.race,
        opponent=opts.opponent,
        reward=opts.reward,
        score_scale=opts.score_scale,
        macro_actions=uses_macros(agent.action_set),
        feature_layers=reads_feature_layers(agent),
        easier_games=opts.easier_games,
        climb=opts.climb,
    )
    env.check(attached=bool(opts.sc2))
    return RunSettings(opts, agent, loaded.origins, spec, env)


def check_settings(
    opts: TrainSettings, agent: AgentSettings, origins: Mapping[str, str] | None = None
) -> None:
    """What one setting cannot check alone: settings that must agree.

    ``origins`` (``settings.load``'s) tells a value the user gave from a default, which
    another mode leaves unused: sync-lr-scaling's default applies to sync mode only.
    """
    from ..agents.spaces import ACTION_SETS  # no TensorFlow

    if agent.action_set not in ACTION_SETS:
        raise ConfigError(
            f"sc2dask.agent.action-set {agent.action_set!r} is not one of "
            f"{', '.join(ACTION_SETS)} (sc2dask/agents/spaces.py)."
        )
    if uses_macros(agent.action_set) and opts.race != "terran":
        raise ConfigError(
            f"Action set {agent.action_set!r} is Terran's macros (sc2dask/game/macros.py); "
            f"play --race terran with it, or choose another action set for {opts.race}."
        )
    if opts.envs_max is not None and opts.envs is not None and opts.envs_max < opts.envs:
        raise ConfigError(
            f"sc2dask.train.envs-max ({opts.envs_max}) is below envs "
            f"({opts.envs}); it is how far an elastic run grows, so give at "
            f"least envs, or leave it unset for a fixed number of envs."
        )
    given_scaling = not is_default((origins or {}).get("sync_lr_scaling", DEFAULT_ORIGIN))
    if given_scaling and opts.sync_lr_scaling != "none" and opts.mode != "sync":
        raise ConfigError(
            f"sync-lr-scaling={opts.sync_lr_scaling!r} scales the rate of "
            f"updates that average several hosts' gradients, which only "
            f"mode='sync' makes; set mode='sync', or leave sync-lr-scaling unset."
        )
    if opts.async_combine != "none" and opts.mode != "async":
        raise ConfigError(
            f"async-combine={opts.async_combine!r} combines gradients that reach the "
            f"client together in mode='async'; set mode='async', or async-combine=none."
        )
    if opts.climb and opts.opponent and opts.easier_games == 0:
        raise ConfigError(
            "climb orders the games against easier bots, and this run plays none; give "
            "--easier-games SHARE (above 0), or --no-climb."
        )
    if agent.kickstart > 0 and not uses_macros(agent.action_set):
        raise ConfigError(
            f"kickstart={agent.kickstart} learns the scripted TerranMacro's choices among the "
            f"macros; play --action-set macro with it, or set kickstart=0."
        )
    if agent.epochs > 1 and opts.mode != "central":
        raise ConfigError(
            f"epochs={agent.epochs} reuses each batch on the client, so it "
            f"needs mode='central' (in {opts.mode!r} mode workers send one "
            f"gradient per rollout); set epochs=1 or mode='central'."
        )


def check_resumable(directory, agent: AgentSpec) -> None:
    """ConfigError, before any cluster starts, when this run's network would not fit the
    checkpoint's weights; it names the settings that give the checkpoint's network."""
    _, _, state = checkpoint.load(directory)
    differences = checkpoint.network_differences(state, agent)
    if differences:

        def flag(name, value):
            if isinstance(value, tuple):
                value = ",".join(map(str, value)) or "''"  # no minimap layers: ''
            return f"--{name.replace('_', '-')} {value}"

        raise ConfigError(
            f"The checkpoint in {str(directory)!r} has another network than this run's "
            f"settings give ({', '.join(k.replace('_', '-') for k in differences)}); "
            f"resume with its settings: "
            f"{' '.join(flag(k, v) for k, v in differences.items())}."
        )


def split_overrides(overrides: dict, agent_overrides: dict) -> dict:
    """Move agent settings from ``overrides`` to ``agent_overrides``; an unknown name, or one
    given twice, is a ConfigError (with the closest name of either section)."""
    train_fields = {f.name for f in dataclasses.fields(TrainSettings)}
    agent_fields = {f.name for f in dataclasses.fields(AgentSettings)}
    for key in list(overrides):
        name = key.replace("-", "_")
        if name in agent_fields:
            if name in {k.replace("-", "_") for k in agent_overrides}:
                raise ConfigError(
                    f"{key!r} is given both as a keyword and in agent_overrides; give it once."
                )
            agent_overrides[name] = overrides.pop(key)
        elif name not in train_fields:
            known = sorted(train_fields | agent_fields)
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"Unknown setting {key!r} (not in sc2dask.train or "
                f"sc2dask.agent).{hint} See `sc2dask config show`."
            )
    return agent_overrides
