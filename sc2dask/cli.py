"""The ``sc2dask`` command line: set up or run the emulator, and play a demo."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
from collections.abc import Sequence

from .emulator import server
from .emulator.install import install
from .errors import SC2DaskError
from .game import DEFAULT_EMULATOR_DIR, find_game, make_env
from .pysc2 import random_agent, scripted_agent

# pysc2's scripted agents, by the map they solve.
SCRIPTED_AGENTS = {
    "MoveToBeacon": scripted_agent.MoveToBeacon,
    "CollectMineralShards": scripted_agent.CollectMineralShards,
    "DefeatRoaches": scripted_agent.DefeatRoaches,
}


def install_emulator(args: argparse.Namespace) -> int:
    path = install(args.directory or os.environ.get("SC2DASK_EMULATOR_DIR", DEFAULT_EMULATOR_DIR))
    print(path)
    print(f"export SC2PATH={shlex.quote(str(path))}")
    return 0


def serve_emulator(args: argparse.Namespace) -> int:
    return server.main(["-listen", args.listen, "-port", str(args.port)])


def demo(args: argparse.Namespace) -> int:
    """Play ``args.map`` with pysc2's scripted agent (random where there is none)."""
    game = find_game()
    print(game.summary)
    agent = SCRIPTED_AGENTS.get(args.map, random_agent.RandomAgent)()
    scores = []
    with make_env(args.map) as env:
        print(f"Playing {args.map} with {type(agent).__module__}.{type(agent).__name__}")
        agent.setup(env.observation_spec()[0], env.action_spec()[0])
        for episode in range(1, args.episodes + 1):
            timestep = env.reset()[0]
            agent.reset()
            score = 0.0
            while True:
                action = agent.step(timestep)
                if timestep.last():
                    break
                timestep = env.step([action])[0]
                score += timestep.reward
            scores.append(score)
            print(f"episode {episode}: score {score:g}")
    print(f"mean score over {len(scores)} episodes: {statistics.fmean(scores):g}")
    return 0


def evaluate_agent(args: argparse.Namespace) -> int:
    """Score an agent over --episodes episodes on a Dask cluster; --json prints one object."""
    from .evaluate import evaluate
    if args.checkpoint:
        from .checkpoint import checkpoint_agent_path
        agent = checkpoint_agent_path(args.checkpoint)
    else:
        agent = args.agent
    if not args.json:
        print(f"Evaluating {agent} on {args.map}: {args.episodes} episodes ...", flush=True)
    result = evaluate(agent, args.map, args.episodes, envs=args.envs, scheduler=args.scheduler)
    if args.json:
        print(json.dumps(result.summary()))
    else:
        print(f"{result.map}: mean {result.mean:.2f} (std {result.std:.2f}, min {result.min:g}, "
              f"max {result.max:g}) over {result.episodes} episodes")
    return 0


def train_agent(args: argparse.Namespace) -> int:
    """Train on a Dask cluster, printing the dashboard address and the score as it improves."""
    from .cluster import cluster_client
    from .train import train
    from .game import check_map
    check_map(args.map)
    with cluster_client(args.scheduler, args.envs) as client:
        say = (lambda *a, **k: None) if args.json else print
        say(f"Dask dashboard: {client.dashboard_link}", flush=True)
        from .telemetry import training_page_link
        page = training_page_link(client)
        say(f"Training page:  {page}" if page else "Training page:  none (start the scheduler "
            "with --preload sc2dask.dashboard)", flush=True)
        say(f"Training FullyConv A2C on {args.map} ({args.mode} updates, {args.envs or 'all'} "
            f"envs) for {args.max_steps} agent steps ...", flush=True)
        every = max(1, args.max_steps // 20)  # about twenty progress lines
        marks = {"next": every}

        def report(progress):
            if progress.agent_steps >= marks["next"]:
                marks["next"] += every
                say(f"  {progress.agent_steps:>8} steps  {progress.updates:>6} updates  "
                    f"mean score (last 100 episodes) {progress.mean_score_last_100:6.2f}  "
                    f"{progress.episodes} episodes", flush=True)

        handle = train(client=client, mode=args.mode, max_steps=args.max_steps, envs=args.envs,
                       map=args.map, checkpoint_dir=args.checkpoint_dir, resume=args.resume,
                       on_update=report)
        try:
            summary = handle.wait()
        except KeyboardInterrupt:
            handle.stop()
            summary = handle.wait()
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"Done: {summary['agent_steps']} agent steps, {summary['updates']} updates in "
              f"{summary['wall_s']:.0f} s; mean score over the last 100 episodes "
              f"{summary['mean_score_last_100']:.2f}; restarts {summary['restarts']}")
    return 0


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="sc2dask", description=__doc__)
    commands = top.add_subparsers(dest="command", required=True)

    emulator = commands.add_parser("emulator", help="the headless StarCraft II API emulator")
    emulator_commands = emulator.add_subparsers(dest="emulator_command", required=True)
    inst = emulator_commands.add_parser(
        "install", help="lay out an emulator install that pysc2 finds through SC2PATH")
    inst.add_argument("directory", nargs="?",
                      help=f"where to install (default: $SC2DASK_EMULATOR_DIR or "
                           f"{DEFAULT_EMULATOR_DIR})")
    inst.set_defaults(run=install_emulator)
    serve = emulator_commands.add_parser(
        "serve", help="run one emulated game at ws://LISTEN:PORT/sc2api until it quits")
    serve.add_argument("--listen", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=5000)
    serve.set_defaults(run=serve_emulator)

    play = commands.add_parser(
        "demo", help="play a mini-game with pysc2's scripted agent and print the scores")
    play.add_argument("--map", default="MoveToBeacon")
    play.add_argument("--episodes", type=_positive_int, default=3)
    play.set_defaults(run=demo)
    tr = commands.add_parser("train", help="train FullyConv A2C on a Dask cluster")
    tr.add_argument("--map", required=True)
    tr.add_argument("--envs", type=_positive_int, required=True)
    tr.add_argument("--max-steps", type=_positive_int, required=True, help="agent steps in all")
    tr.add_argument("--scheduler", metavar="ADDRESS", help="a running dask scheduler (default: "
                                                           "a local cluster)")
    tr.add_argument("--mode", choices=("sync", "async", "central"), default="central")
    tr.add_argument("--checkpoint-dir", metavar="DIR")
    tr.add_argument("--resume", action="store_true", help="continue from --checkpoint-dir")
    tr.add_argument("--json", action="store_true", help="end with one JSON object")
    tr.set_defaults(run=train_agent)

    ev = commands.add_parser("evaluate", help="score an agent over N episodes on a Dask cluster")
    ev.add_argument("--map", required=True)
    source = ev.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint", metavar="DIR", help="a directory written by sc2dask train")
    source.add_argument("--agent", metavar="dotted.path.AgentClass",
                        help="a pysc2 BaseAgent subclass, e.g. "
                             "pysc2_evolved.agents.scripted_agent.MoveToBeacon")
    ev.add_argument("--episodes", type=_positive_int, required=True)
    ev.add_argument("--envs", type=_positive_int, help="environments (default: all SC2 capacity)")
    ev.add_argument("--scheduler", metavar="ADDRESS", help="a running dask scheduler (default: "
                                                           "a local cluster)")
    ev.add_argument("--json", action="store_true", help="end with one JSON object")
    ev.set_defaults(run=evaluate_agent)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except SC2DaskError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
