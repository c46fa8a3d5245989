"""The short commands: the settings in effect, the emulator, and a demo with no cluster.

None of them starts a cluster or a console, so they print straight to the terminal.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics

from .. import settings
from ..errors import ConfigError
from .common import use_config_file


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


def install_emulator(args: argparse.Namespace) -> int:
    """Lay out an emulator install and print the SC2PATH line that points pysc2 at it."""
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
    """One emulated game left running, as `SC2 -listen -port` is, for --sc2 to attach to."""
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
