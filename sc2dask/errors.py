"""Errors a user can cause, each with a message that names the problem and the fix."""


class SC2DaskError(Exception):
    """Base class for every error sc2dask raises on purpose."""


class UnknownMapError(SC2DaskError, ValueError):
    """A map name that the game (real or emulated) cannot play."""


class GameNotFoundError(SC2DaskError, FileNotFoundError):
    """No StarCraft II install (real or emulated) where one was required."""


class GameFailedError(SC2DaskError, RuntimeError):
    """A game that fails every time it is started again: not a crash to ride out, but a
    broken install, a full disk or a bad map on that node."""


class ConfigError(SC2DaskError, ValueError):
    """A bad setting: unknown config key, bad value, or an agent path that does not load."""


class NoCapacityError(SC2DaskError, RuntimeError):
    """The cluster has no room for SC2 environments."""


class SchedulerUnreachableError(SC2DaskError, ConnectionError):
    """The Dask scheduler address does not answer."""


class CheckpointError(SC2DaskError, OSError):
    """A checkpoint that is missing, incomplete or corrupt."""


class EndpointUnreachableError(SC2DaskError, ConnectionError):
    """A running game given by address (``--sc2 HOST:PORT``) does not answer."""


class HostError(SC2DaskError, RuntimeError):
    """An error raised in an env host whose own type cannot cross the network (its pickle
    does not load again), carried to the client as its type's name and message."""
