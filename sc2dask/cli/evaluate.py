"""``sc2dask evaluate``: an agent's score over N episodes on a Dask cluster.

Every check a user's input can fail (the video's path and layer, the agent, the game's
settings) is made before a cluster starts, so a typo costs a second, not a cluster's start.
A checkpoint is evaluated on what it was trained on unless a flag or the config says
otherwise.
"""

from __future__ import annotations

import argparse
import contextlib

from .. import settings
from .common import json_line, open_client, security_from_flags, use_config_file
from .console import Console
from .flags import given


def evaluate_agent(args: argparse.Namespace) -> int:
    """Score an agent over --episodes episodes on a Dask cluster; --json prints one object."""
    from ..training.evaluate import evaluate

    use_config_file(args)
    loaded = settings.load(
        settings.EvaluateSettings, given(args, args.evaluate_fields), origin="command line"
    )
    opts = loaded.values
    _check_video(opts)
    agent, config = _agent_and_env(args, loaded)
    security = security_from_flags(args)
    with (
        Console("evaluate", args.verbose, quiet=args.json) as console,
        contextlib.ExitStack() as stack,
    ):
        client = open_client(stack, args.scheduler, opts.envs or len(opts.sc2) or None, security)
        console.say(
            f"Evaluating {args.checkpoint or agent} on {config.map_name}: "
            f"{opts.episodes} episodes ..."
        )
        result = evaluate(
            agent,
            episodes=opts.episodes,
            envs=opts.envs,
            client=client,
            config=config,
            sc2=opts.sc2,
            video=opts.video,
            video_layer=opts.video_layer,
            seed=opts.seed,
        )
    if args.json:
        console.result(json_line(result.summary()))
    else:
        _say_result(console, result)
    return 0


def _check_video(opts) -> None:
    """A --video that could not be written fails now, not after every episode was played."""
    from ..game.recording import check_layer
    from ..training.video import check_video_path

    if opts.video:
        check_video_path(opts.video)
        check_layer(opts.video_layer)


def _agent_and_env(args: argparse.Namespace, loaded):
    """The agent (a checkpoint's, or --agent's class path) and the checked game it plays.

    A checkpoint brings what it was trained on where no setting was given, and always the
    actions it plays and the observations it reads; an agent class, whether it plays macros.
    """
    from ..game import EnvConfig
    from ..training.checkpoint import OWN_ENV_FIELDS, checkpoint_agent_path, checkpoint_env
    from ..training.evaluate import agent_env

    opts = loaded.values
    env = {
        "map_name": opts.map,
        "screen": opts.screen,
        "minimap": opts.minimap,
        "step_mul": opts.step_mul,
        "race": opts.race,
        "opponent": opts.opponent,
    }
    if args.checkpoint:
        agent = checkpoint_agent_path(args.checkpoint)
        trained = checkpoint_env(args.checkpoint)  # what it was trained on, unless told
        env.update(
            {
                k: v
                for k, v in trained.items()
                # the actions it plays are its own: no setting chooses them
                if k in OWN_ENV_FIELDS
                or loaded.origins[_EVALUATE_FIELD.get(k, k)] == settings.DEFAULT_ORIGIN
            }
        )
    else:
        agent = args.agent
        env.update(agent_env(agent))  # ConfigError: no such agent
    config = EnvConfig(**env)
    config.check(attached=bool(opts.sc2))
    return agent, config


_EVALUATE_FIELD = {"map_name": "map"}  # EnvConfig's name -> the setting's


def _say_result(console: Console, result) -> None:
    """The score's line; games won and lost where the map has outcomes; the clip's file."""
    console.say(
        f"{result.map}: mean {result.mean:.2f} (std {result.std:.2f}, min "
        f"{result.min:g}, max {result.max:g}) over {result.episodes} episodes"
    )
    if result.outcomes:
        won = result.results
        console.say(f"won {won['wins']}, drew {won['draws']}, lost {won['losses']}")
    if result.video:
        console.say(f"one more episode (score {result.video_score:g}) is in {result.video}")
