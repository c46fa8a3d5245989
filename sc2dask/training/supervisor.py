"""Starting, replacing and closing env hosts, and telling a lost host from failed work.

A host is lost when its worker dies or stops answering: the client sees that as one of a
few error *types* from dask (``is_lost``). sc2dask's own errors are the work's, and any
other error is a lost host only if its worker has left the cluster.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from collections.abc import Callable

from distributed.comm.core import CommClosedError

from ..errors import SC2DaskError
from ..game import EnvConfig, game_seed
from ..runtime.env_host import EnvHost
from ..runtime.slot import SlotClosed
from .cluster import sc2_capacity
from .placement import Placement

log = logging.getLogger(__name__)

# How a lost actor may show up on the client: the proxy's call fails, or its future times
# out. The same types are also what a host's own work can raise; ``is_lost`` tells.
ACTOR_LOST = (RuntimeError, OSError, TimeoutError, concurrent.futures.TimeoutError)
# The host was closed under its work (its worker is closing), or its connection went.
GONE = (CommClosedError, ConnectionError, TimeoutError, concurrent.futures.TimeoutError, SlotClosed)
START_TIMEOUT = 60.0  # seconds for a replacement host to start before another look
LOST_GRACE = 10.0  # seconds before the lost host's own worker is tried again
CLOSE_TIMEOUT = 30.0  # seconds for a slow host being replaced to close its games


class HostDropped(RuntimeError):
    """An elastic run lost a host whose worker left for good, with no room for it
    elsewhere: the run carries on with the others."""


def is_lost(exc: BaseException, worker_alive: Callable[[], bool]) -> bool:
    """Whether ``exc`` from a host's call means the host is gone (its worker died, or it
    passed call-timeout) rather than that its work failed.

    Dask's actor proxy raises a bare ``OSError`` (no subclass) when it cannot reach the
    actor's worker, and the scheduler may list that worker for a moment still; every
    OSError the work itself can raise is a subclass (FileNotFoundError, ConnectionError...).
    """
    if isinstance(exc, SC2DaskError):
        return False
    if isinstance(exc, GONE) or type(exc) is OSError:
        return True
    return not worker_alive()


class HostSupervisor:
    """Starts each placement's ``EnvHost`` actor, recreates a lost one on a live worker
    with room, and closes hosts; ``room`` says how many envs each worker could take."""

    def __init__(
        self,
        client,
        config: EnvConfig,
        call_timeout: float,
        tf_threads: int | None,
        room: Callable[[Placement], dict[str, int]],
    ):
        self.client, self.config = client, config
        self.call_timeout, self.tf_threads = call_timeout, tf_threads
        self._room = room
        self.restarts = 0  # hosts recreated

    def start(self, placement: Placement, timeout: float | None = None) -> None:
        future = self.client.submit(
            EnvHost,
            self.config,
            placement.n_envs,
            placement.seed,
            self.tf_threads,
            placement.endpoints,
            actor=True,
            workers=[placement.worker],
            allow_other_workers=False,
            pure=False,
        )
        try:
            placement.host = future.result(timeout=timeout or self.call_timeout)
        except ACTOR_LOST:
            future.cancel()  # else it waits for its worker for ever
            raise

    def worker_alive(self, placement: Placement) -> bool:
        return placement.worker in sc2_capacity(self.client)

    def replace(
        self,
        placement: Placement,
        reason: BaseException,
        can_drop: Callable[[], bool],
        deadline: float = 120.0,
    ) -> None:
        """Recreate a lost host on the live worker with the most room.

        The scheduler may still list the lost worker for a moment after it died, so it is
        tried last, and each try is bounded by ``START_TIMEOUT``: an actor submitted to a
        worker that is gone would otherwise wait for it for ever. HostDropped when
        ``can_drop()`` (an elastic run with other hosts) and no worker has room.
        """
        log.warning("env host on %s lost (%r); recreating it", placement.worker, reason)
        if self.worker_alive(placement):  # slow, not dead: stop its games
            self.close(placement, timeout=CLOSE_TIMEOUT)  # before new ones take its room
        self.restarts += 1
        placement.seed = game_seed(placement.seed, self.restarts)  # new games
        lost, started = placement.worker, time.monotonic()
        stop = started + deadline
        while True:
            free = self._room(placement)
            fits = [w for w, n in free.items() if n >= placement.n_envs]
            if fits == [lost] and time.monotonic() < started + LOST_GRACE:
                fits = []  # most likely it died: give its restart a moment to register
            if fits:
                placement.worker = max(fits, key=lambda w: (w != lost, free[w]))
                try:
                    return self.start(placement, timeout=START_TIMEOUT)
                except ACTOR_LOST as exc:  # that worker went too; look again
                    reason = exc
            if not fits and can_drop() and time.monotonic() > started + LOST_GRACE:
                raise HostDropped(f"{lost} left and no worker has room") from reason
            if time.monotonic() > stop:
                raise RuntimeError(
                    f"no live worker can host {placement.n_envs} envs after "
                    f"losing {placement.worker}: {reason!r}"
                )
            time.sleep(0.5)  # a Nanny restarts a killed worker within about a second

    @staticmethod
    def close(placement: Placement, timeout: float = CLOSE_TIMEOUT) -> None:
        """Close a host's games, best effort: its worker may be gone already."""
        if placement.host is None:
            return
        try:
            placement.host.close().result(timeout=timeout)
        except Exception:  # noqa: BLE001 - the worker may be gone already
            log.debug("env host on %s did not close", placement.worker, exc_info=True)
