"""sc2dask: train StarCraft II (pysc2) agents across a Dask cluster.

Where no StarCraft II install exists, sc2dask plays the pysc2 mini-games on its own
emulator (``sc2dask.emulator``), which speaks the real SC2 API to unmodified pysc2.
"""

from .errors import GameNotFoundError, SC2DaskError, UnknownMapError

__version__ = "0.1.0"
__all__ = ["SC2DaskError", "UnknownMapError", "GameNotFoundError", "__version__"]
