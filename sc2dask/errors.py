"""Errors a user can cause, each with a message that names the problem and the fix."""


class SC2DaskError(Exception):
    """Base class for every error sc2dask raises on purpose."""


class UnknownMapError(SC2DaskError, ValueError):
    """A map name that the game (real or emulated) cannot play."""


class GameNotFoundError(SC2DaskError, FileNotFoundError):
    """No StarCraft II install (real or emulated) where one was required."""


class UnsupportedRequestError(SC2DaskError):
    """A request the emulator deliberately does not implement (e.g. RGB rendering)."""
