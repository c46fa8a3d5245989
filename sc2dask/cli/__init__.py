"""The ``sc2dask`` command line: train, evaluate, show the settings, run the emulator, demo.

Every setting of ``sc2dask/settings.py`` is a flag of ``train`` (and the evaluate ones of
``evaluate``); a flag left out means "from config". Long commands print the dashboard
links and a progress bar, and send Dask's and TensorFlow's logs to a file
(``--verbose``: to the terminal). Errors a user can cause exit 2 with one line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shlex
import signal
import statistics
import sys
import threading
from collections.abc import Sequence

from .. import settings
from ..errors import ConfigError, SC2DaskError
from .console import Console
from .flags import add_setting_flags, given

# --- train ---------------------------------------------------------------------------------


def train_agent(args: argparse.Namespace) -> int:
    """Train on a Dask cluster with a progress bar; Ctrl-C stops after a checkpoint."""
    from ..agents.loading import split_class_path
    from ..monitoring.telemetry import training_page_link
    from ..training.cluster import cluster_client
    from ..training.loop import train
    from ..training.run_settings import resolve_run

    use_config_file(args)
    agent_opts = given(args, args.agent_fields)
    # Every check before a cluster starts; train() makes the same ones.
    run_opts = resolve_run(
        given(args, args.train_fields), agent_opts, args.resume, origin="command line"
    ).train
    with (
        Console("train", args.verbose, quiet=args.json) as console,
        contextlib.ExitStack() as stack,
    ):
        with _children_ignore_sigint():
            client = stack.enter_context(
                cluster_client(
                    args.scheduler,
                    run_opts.envs or len(run_opts.sc2) or None,
                    security=_security(args),
                )
            )
        console.say(f"Dask dashboard: {client.dashboard_link}")
        page = training_page_link(client)
        console.say(
            f"Training page:  {page}"
            if page
            else "Training page:  none (start the scheduler with --preload sc2dask.dashboard)"
        )
        bar = TrainingBar(lambda: console.progress_bar(run_opts.max_steps))
        handle = train(
            client=client,
            resume=args.resume,
            agent_overrides=agent_opts,
            on_update=bar.show,
            **given(args, args.train_fields),
        )
        bar.training = handle
        budget = f"{handle.settings.max_steps} agent steps"
        if handle.settings.max_minutes is not None:
            budget += f" or {handle.settings.max_minutes:g} minutes, whichever comes first"
        console.say(
            f"Training {split_class_path(handle.agent_settings.agent_class)[1]} "
            f"on {handle.settings.map} "
            f"({handle.settings.mode} updates, "
            f"{handle.settings.envs or 'all'} envs, action set "
            f"{handle.agent_settings.action_set!r}) for {budget}; Ctrl-C stops after a "
            f"checkpoint"
        )
        try:
            summary = _wait_stopping_on_interrupt(handle, console)
        finally:
            bar.close(handle.progress)
    if args.json:
        console.result(json_line(summary))
    else:
        score = summary["mean_score_last_100"]
        games = (
            f"; won {summary['wins']}, drew {summary['draws']}, lost {summary['losses']} "
            f"(win rate over the last 100 games {summary['win_rate_last_100']:.0%})"
            if summary.get("wins", 0) + summary.get("draws", 0) + summary.get("losses", 0)
            else ""
        )
        console.say(
            f"Done: {summary['agent_steps']} agent steps, {summary['updates']} updates "
            f"in {summary['wall_s']:.0f} s; mean score over the last 100 episodes "
            f"{'(no episode ended)' if math.isnan(score) else f'{score:.2f}'}{games}; "
            f"restarts {summary['restarts']}"
        )
    return 0


class TrainingBar:
    """The progress bar of ``sc2dask train``: agent steps (and steps/s) against the total,
    with updates, episodes, the mean of the last 100 scores and env host restarts."""

    def __init__(self, make_bar):
        self._make_bar = make_bar  # called at the first update, so steps/s leaves out start-up
        self.bar = None
        self.training = None  # the Training, once started: its pool counts restarts

    def show(self, progress) -> None:
        if self.bar is None:
            self.bar = self._make_bar()
        self.bar.n = min(progress.agent_steps, self.bar.total)
        score = progress.mean_score_last_100
        won = progress.win_rate_last_100
        pool = self.training.pool if self.training is not None else None
        self.bar.set_postfix_str(
            f"updates {progress.updates}, episodes {progress.episodes}, score(100) "
            f"{'-' if math.isnan(score) else f'{score:.2f}'}"
            f"{'' if math.isnan(won) else f', won(100) {won:.0%}'}, host restarts "
            f"{pool.host_restarts if pool else 0}",
            refresh=False,
        )
        self.bar.refresh()

    def close(self, progress) -> None:
        if self.bar is not None:
            self.show(progress)
            self.bar.close()


@contextlib.contextmanager
def _children_ignore_sigint():
    """Processes started inside (a local cluster's workers, and the games they start)
    ignore SIGINT: a terminal's Ctrl-C goes to the whole process group, and only this
    process should act on it, by stopping the run cleanly. (Ctrl-C is ignored while
    the cluster starts, a few seconds.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _security(args: argparse.Namespace):
    """``distributed.Security`` from the --tls-* flags; None (dask's config) without them."""
    from ..training.cluster import tls_security

    files = {
        "--tls-ca-file": args.tls_ca_file,
        "--tls-cert": args.tls_cert,
        "--tls-key": args.tls_key,
    }
    if not any(files.values()):
        return None
    missing = [flag for flag, path in files.items() if not path]
    if missing:
        raise ConfigError(
            f"TLS needs all of --tls-ca-file, --tls-cert and --tls-key; "
            f"{' and '.join(missing)} missing."
        )
    for flag, path in files.items():
        if not os.path.isfile(path):
            raise ConfigError(
                f"{flag} {path}: no such file (a PEM file, as `dask scheduler {flag}` takes)."
            )
    return tls_security(*files.values())


def json_line(summary: dict) -> str:
    """``summary`` as strict JSON (NaN, e.g. a score before any episode ended, is null)."""
    return json.dumps(
        {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in summary.items()}
    )


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # Ctrl-C; `kill`, or a batch system's walltime


def _wait_stopping_on_interrupt(handle, console: Console) -> dict:
    """The run's summary; the first SIGINT or SIGTERM stops it cleanly (update in flight,
    checkpoint), a second one acts as it would have without sc2dask."""
    if threading.current_thread() is not threading.main_thread():
        return handle.wait()

    def stop(signum, frame):
        console.say(
            f"\n{signal.Signals(signum).name}: finishing the update in flight and checkpointing ..."
        )
        handle.stop()
        for number, handler in previous.items():
            signal.signal(number, handler)

    previous = {number: signal.signal(number, stop) for number in STOP_SIGNALS}
    try:
        while handle.running:
            handle.wait(timeout=0.5)
        return handle.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


# --- evaluate ------------------------------------------------------------------------------


def evaluate_agent(args: argparse.Namespace) -> int:
    """Score an agent over --episodes episodes on a Dask cluster; --json prints one object."""
    from ..game import EnvConfig
    from ..game.recording import check_layer
    from ..training.checkpoint import OWN_ENV_FIELDS, checkpoint_agent_path, checkpoint_env
    from ..training.cluster import cluster_client
    from ..training.evaluate import agent_env, evaluate
    from ..training.video import check_video_path

    use_config_file(args)
    loaded = settings.load(
        settings.EvaluateSettings, given(args, args.evaluate_fields), origin="command line"
    )
    opts = loaded.values
    if opts.video:  # before a cluster starts
        check_video_path(opts.video)
        check_layer(opts.video_layer)
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
    config.check(attached=bool(opts.sc2))  # before a cluster starts
    security = _security(args)
    with (
        Console("evaluate", args.verbose, quiet=args.json) as console,
        contextlib.ExitStack() as stack,
    ):
        with _children_ignore_sigint():
            client = stack.enter_context(
                cluster_client(
                    args.scheduler, opts.envs or len(opts.sc2) or None, security=security
                )
            )
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
        console.say(
            f"{result.map}: mean {result.mean:.2f} (std {result.std:.2f}, min "
            f"{result.min:g}, max {result.max:g}) over {result.episodes} episodes"
        )
        if result.outcomes:
            won = result.results
            console.say(f"won {won['wins']}, drew {won['draws']}, lost {won['losses']}")
        if result.video:
            console.say(f"one more episode (score {result.video_score:g}) is in {result.video}")
    return 0


_EVALUATE_FIELD = {"map_name": "map"}  # EnvConfig's name -> the setting's


# --- config show ---------------------------------------------------------------------------


def show_config(args: argparse.Namespace) -> int:
    """Print every setting in effect and where it came from (``--json``: one object)."""
    use_config_file(args)
    shown = {}
    map_name = args.map or settings.load(settings.TrainSettings).values.map  # with its defaults
    for name, cls in settings.SECTIONS.items():
        loaded = settings.load(cls, map_name=map_name if name in ("agent", "train") else None)
        shown[name] = {
            field: {"value": getattr(loaded.values, field), "from": origin}
            for field, origin in loaded.origins.items()
        }
    if args.json:
        print(json.dumps(shown))
        return 0
    for name, fields in shown.items():
        for field, entry in fields.items():
            key = f"sc2dask.{name}.{field.replace('_', '-')}"
            value = "null" if entry["value"] is None else entry["value"]
            print(f"{key:<36} {str(value):<16} {entry['from']}")
    return 0


def use_config_file(args: argparse.Namespace) -> None:
    if getattr(args, "config", None):
        settings.use_file(args.config)


# --- emulator and demo ---------------------------------------------------------------------


def install_emulator(args: argparse.Namespace) -> int:
    from ..game import install_emulator as install

    try:
        path = install(args.directory)
    except OSError as exc:  # an unwritable folder, or a real game's binary in the way
        raise ConfigError(
            f"Cannot install the emulator in {args.directory or 'the default folder'}"
            f": {exc.strerror or exc}. Give a writable folder that holds no "
            f"StarCraft II install."
        ) from None
    print(path)
    print(f"export SC2PATH={shlex.quote(str(path))}")
    return 0


def serve_emulator(args: argparse.Namespace) -> int:
    from ..emulator import server

    return server.main(["-listen", args.listen, "-port", str(args.port)])


def demo(args: argparse.Namespace) -> int:
    """Play ``args.map`` with its scripted agent: pysc2's, sc2dask's for the economy maps,
    or pysc2's random agent where there is none."""
    from ..game import find_game, load_agent_class, make_env, play_episode, scripted_agent_path

    print(find_game().summary)
    path = scripted_agent_path(args.map)
    agent = load_agent_class(path)()
    scores = []
    with make_env(args.map) as env:
        print(f"Playing {args.map} with {path}")
        agent.setup(env.observation_spec()[0], env.action_spec()[0])
        for episode in range(1, args.episodes + 1):
            scores.append(play_episode(env, agent))
            print(f"episode {episode}: score {scores[-1]:g}")
    print(f"mean score over {len(scores)} episodes: {statistics.fmean(scores):g}")
    return 0


# --- the parser ----------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(
            f"{value} is not a port: give 0 to 65535 (0: any free port)"
        )
    return value


def _add_common(parser: argparse.ArgumentParser, cluster: bool = True) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE.yaml",
        help="a YAML file of settings (shaped like sc2dask/sc2dask.yaml) "
        "layered over the dask config",
    )
    if cluster:
        parser.add_argument(
            "--scheduler",
            metavar="ADDRESS",
            help="a running dask scheduler (default: a local cluster)",
        )
        tls = parser.add_argument_group(
            "TLS (the files `dask scheduler` and `dask worker` take; with no --scheduler, "
            "the local cluster uses TLS too)"
        )
        tls.add_argument("--tls-ca-file", metavar="PEM", help="the CA that signed the certs")
        tls.add_argument("--tls-cert", metavar="PEM", help="this client's certificate")
        tls.add_argument("--tls-key", metavar="PEM", help="its private key")
        parser.add_argument("--json", action="store_true", help="end with one JSON object")
        parser.add_argument(
            "--verbose",
            action="store_true",
            help="Dask and TensorFlow logs on the terminal, not in a log file",
        )


def parser() -> argparse.ArgumentParser:
    from ..game import DEFAULT_EMULATOR_DIR

    top = argparse.ArgumentParser(prog="sc2dask", description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="command", required=True)

    tr = commands.add_parser(
        "train",
        help="train FullyConv A2C on a Dask cluster",
        description="Train FullyConv A2C on a Dask cluster. Flags left "
        "out come from config, or from the map's own "
        "defaults (`sc2dask config show --map NAME`).",
    )
    _add_common(tr)
    tr.add_argument("--resume", action="store_true", help="continue from --checkpoint-dir")
    tr.set_defaults(
        run=train_agent,
        train_fields=add_setting_flags(tr, settings.TrainSettings),
        agent_fields=add_setting_flags(tr, settings.AgentSettings),
    )

    ev = commands.add_parser("evaluate", help="score an agent over N episodes on a Dask cluster")
    source = ev.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="a folder written by sc2dask train (its map and sizes are used unless given)",
    )
    source.add_argument(
        "--agent",
        metavar="dotted.path.AgentClass",
        help="a pysc2 BaseAgent subclass, e.g. pysc2_evolved.agents.scripted_agent.MoveToBeacon",
    )
    _add_common(ev)
    ev.set_defaults(
        run=evaluate_agent, evaluate_fields=add_setting_flags(ev, settings.EvaluateSettings)
    )

    cfg = commands.add_parser("config", help="the settings in effect")
    cfg_commands = cfg.add_subparsers(dest="config_command", required=True)
    show = cfg_commands.add_parser(
        "show", help="print every setting, its value and where it came from"
    )
    _add_common(show, cluster=False)
    show.add_argument("--json", action="store_true", help="one JSON object")
    show.add_argument(
        "--map",
        help="the settings a run on MAP gets, with the map's own "
        "defaults (default: sc2dask.train.map)",
    )
    show.set_defaults(run=show_config)

    emulator = commands.add_parser("emulator", help="the headless StarCraft II API emulator")
    emulator_commands = emulator.add_subparsers(dest="emulator_command", required=True)
    inst = emulator_commands.add_parser(
        "install", help="lay out an emulator install that pysc2 finds through SC2PATH"
    )
    inst.add_argument(
        "directory",
        nargs="?",
        help=f"where to install (default: $SC2DASK_EMULATOR_DIR or {DEFAULT_EMULATOR_DIR})",
    )
    inst.set_defaults(run=install_emulator)
    serve = emulator_commands.add_parser(
        "serve", help="run one emulated game at ws://LISTEN:PORT/sc2api until it quits"
    )
    serve.add_argument("--listen", default="127.0.0.1")
    serve.add_argument("--port", type=_port, default=5000)
    serve.set_defaults(run=serve_emulator)

    play = commands.add_parser(
        "demo", help="play a mini-game with its scripted agent and print the scores"
    )
    play.add_argument("--map", default="MoveToBeacon")
    play.add_argument("--episodes", type=_positive_int, default=3)
    play.set_defaults(run=demo)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    # An agent class names a module as `python -m` would find it: from this folder too.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return args.run(args)
    except SC2DaskError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
