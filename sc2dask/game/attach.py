"""Envs on games that are already running: ``StarCraft II -listen HOST -port PORT``.

This is how the seed paper deploys: each node starts its games, and the trainer connects
pysc2's ``RemoteController`` to their ports. ``AttachedSC2Env`` is pysc2's ``SC2Env``
with those two differences only: it connects instead of launching, and closing it drops
the connection instead of quitting the game, so the game stays up for the next one (a
restarted env, another run). ``sc2dask emulator serve`` is such a game.
"""

from __future__ import annotations

import socket
import time

from ..errors import EndpointUnreachableError
from ..settings import parse_endpoint
from .pysc2lib import remote_controller, sc2_env

# A game given by address must answer this soon at the start: a wrong address or a game
# not started yet is said at once, not after pysc2's two minutes.
FIRST_CONNECT_TIMEOUT = 15.0
# Once a game has answered, a lost one is waited for this long per try (it may be
# restarting: the real game takes tens of seconds to start).
RECONNECT_TIMEOUT = 120.0
PROBE_INTERVAL = 0.5


def wait_for_game(endpoint: str, timeout: float) -> None:
    """Return once ``endpoint`` accepts connections; ConnectError after ``timeout`` s.

    pysc2's own retry waits up to its timeout for *each* try on an address that drops
    packets, so the wait is done here, with short tries.
    """
    host, port = parse_endpoint(endpoint)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=min(2.0, timeout)):
                return
        except OSError as exc:
            if time.monotonic() + PROBE_INTERVAL > deadline:
                raise remote_controller.ConnectError(f"{endpoint}: {exc.strerror or exc}") from None
            time.sleep(PROBE_INTERVAL)


class AttachedSC2Env(sc2_env.SC2Env):
    """pysc2's ``SC2Env`` on a running game at ``endpoint`` (one agent)."""

    def __init__(self, endpoint: str, connect_timeout: float = RECONNECT_TIMEOUT, **kwargs):
        self._endpoint, self._connect_timeout = endpoint, connect_timeout
        super().__init__(**kwargs)

    def _launch_game(self):  # SC2Env's hook: connect where it would launch
        wait_for_game(self._endpoint, self._connect_timeout)
        host, port = parse_endpoint(self._endpoint)
        self._ports, self._sc2_procs = [], []
        self._controllers = [remote_controller.RemoteController(host, port)]

    def close(self):
        """Drop the connection and leave the game running (SC2Env's would quit it)."""
        for controller in getattr(self, "_controllers", None) or []:
            controller.close()
        self._controllers = None
        super().close()


def attach_env(endpoint: str, first: bool, **sc2env_kwargs) -> AttachedSC2Env:
    """An env on the game at ``endpoint``. The ``first`` connection of an env fails fast,
    with EndpointUnreachableError naming the address; a reconnection waits for the game to
    come back and fails with pysc2's ConnectError, a game failure the env counts."""
    try:
        return AttachedSC2Env(
            endpoint, FIRST_CONNECT_TIMEOUT if first else RECONNECT_TIMEOUT, **sc2env_kwargs
        )
    except remote_controller.ConnectError as exc:
        if not first:
            raise
        raise EndpointUnreachableError(
            f"No StarCraft II answers at {endpoint} ({str(exc).split(': ', 1)[-1]}, after "
            f"{FIRST_CONNECT_TIMEOUT:g} s, from {socket.gethostname()}). Start the game "
            f"there (`StarCraft II -listen HOST -port PORT`, or `sc2dask emulator serve "
            f"--listen HOST --port PORT`), or leave the address out of --sc2."
        ) from None
