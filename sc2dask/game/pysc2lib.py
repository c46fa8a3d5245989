"""The one place sc2dask imports pysc2.

We prefer ``pysc2_evolved`` (the maintained fork that works on Python 3.11+ and
protobuf 7) and fall back to upstream ``pysc2`` where it imports, so that the
rest of the code never cares which one is installed.
"""

import importlib
import logging
import os

# pysc2 imports pygame (which greets on stdout) and pysc2-evolved logs a warning at
# import time; neither is news to our users.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
logging.disable(logging.WARNING)
try:
    try:
        _root = importlib.import_module("pysc2_evolved")
    except ImportError:  # pragma: no cover - depends on the user's install
        _root = importlib.import_module("pysc2")
    PACKAGE_NAME = _root.__name__

    def _sub(name):
        return importlib.import_module(f"{PACKAGE_NAME}.{name}")

    actions = _sub("lib.actions")
    features = _sub("lib.features")
    point = _sub("lib.point")
    units = _sub("lib.units")
    sc2_env = _sub("env.sc2_env")
    base_env_wrapper = _sub("env.base_env_wrapper")
    run_loop = _sub("env.run_loop")
    maps = _sub("maps")
    run_configs = _sub("run_configs")
    base_agent = _sub("agents.base_agent")
    random_agent = _sub("agents.random_agent")
    scripted_agent = _sub("agents.scripted_agent")
    remote_controller = _sub("lib.remote_controller")
    protocol = _sub("lib.protocol")
finally:
    logging.disable(logging.NOTSET)

MAPS_DIR = os.path.join(os.path.dirname(_root.__file__), "maps")

__all__ = [
    "PACKAGE_NAME",
    "MAPS_DIR",
    "actions",
    "features",
    "point",
    "units",
    "sc2_env",
    "base_env_wrapper",
    "run_loop",
    "maps",
    "run_configs",
    "base_agent",
    "random_agent",
    "scripted_agent",
    "remote_controller",
    "protocol",
]
