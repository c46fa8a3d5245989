"""The ``sc2dask`` command line: train, evaluate, show the settings, run the emulator, demo.

The flags of every command, and which function runs it (``args.run``). Each setting of
``sc2dask/settings.py`` becomes a flag of ``train`` (the evaluate ones, of ``evaluate``)
through ``flags.py``, so a setting added there needs no line here.
"""

from __future__ import annotations

import argparse

from .. import settings
from .commands import demo, install_emulator, serve_emulator, show_config
from .evaluate import evaluate_agent
from .flags import add_setting_flags
from .train import train_agent


def parser() -> argparse.ArgumentParser:
    """Every command's flags; this module's first line is ``sc2dask --help``'s description."""
    top = argparse.ArgumentParser(prog="sc2dask", description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="command", required=True)
    _add_train(commands)
    _add_evaluate(commands)
    _add_config(commands)
    _add_emulator(commands)
    _add_demo(commands)
    return top


def _add_train(commands) -> None:
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


def _add_evaluate(commands) -> None:
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


def _add_config(commands) -> None:
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


def _add_emulator(commands) -> None:
    from ..game import DEFAULT_EMULATOR_DIR

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


def _add_demo(commands) -> None:
    play = commands.add_parser(
        "demo", help="play a mini-game with its scripted agent and print the scores"
    )
    play.add_argument("--map", default="MoveToBeacon")
    play.add_argument("--episodes", type=_positive_int, default=3)
    play.set_defaults(run=demo)


def _add_common(parser: argparse.ArgumentParser, cluster: bool = True) -> None:
    """The flags every command that reads settings takes; the cluster ones where it starts one."""
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


def _positive_int(text: str) -> int:
    """A count given as a flag; argparse's own one-line error where it is not one."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _port(text: str) -> int:
    """A TCP port given as a flag; argparse's own one-line error where it is not one."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(
            f"{value} is not a port: give 0 to 65535 (0: any free port)"
        )
    return value
