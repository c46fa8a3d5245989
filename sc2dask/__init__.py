"""sc2dask: train StarCraft II (pysc2) agents across a Dask cluster.

Where no StarCraft II install exists, sc2dask plays the pysc2 mini-games on its own
emulator (``sc2dask.emulator``), which speaks the real SC2 API to unmodified pysc2.

The names below load on first use, so ``python -m sc2dask.emulator`` (the game
process) never imports the training code, Dask or TensorFlow.
"""

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "train": "sc2dask.training.loop",
    "evaluate": "sc2dask.training.evaluate",
    "local_cluster": "sc2dask.training.cluster",
    "SC2Adaptive": "sc2dask.training.elastic",
    "EnvConfig": "sc2dask.game",
    "EnvPool": "sc2dask.training.pool",
    "Work": "sc2dask.core",
    "WorkOrder": "sc2dask.core",
    "agent_spec": "sc2dask.agents.loading",
    "build_agent": "sc2dask.agents.loading",
    "upload_agent_code": "sc2dask.training.code_upload",
    "TrainSettings": "sc2dask.settings",
    "AgentSettings": "sc2dask.settings",
    "EvaluateSettings": "sc2dask.settings",
    "SC2DaskError": "sc2dask.errors",
    "UnknownMapError": "sc2dask.errors",
    "GameNotFoundError": "sc2dask.errors",
    "ConfigError": "sc2dask.errors",
    "NoCapacityError": "sc2dask.errors",
    "SchedulerUnreachableError": "sc2dask.errors",
    "CheckpointError": "sc2dask.errors",
    "EndpointUnreachableError": "sc2dask.errors",
}
__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sc2dask' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_EXPORTS])
