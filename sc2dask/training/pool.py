"""``EnvPool``: the client's view of a run's environments, spread over Dask workers.

It places one ``EnvHost`` actor per worker, filling each worker's SC2 capacity and
never exceeding it, and supervises them: an actor lost with its worker is recreated on
a live worker (the Nanny's replacement included) and its work is redone. Restarts of
hosts and of games inside hosts are counted.

A run either launches its games or attaches to games already running (``--sc2
HOST:PORT,...`` and each worker's own ``sc2dask.worker.sc2``): one env per game, hosted by
the worker on the game's machine where there is one (``plan_attached``).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import gc
import logging
import time

from distributed.comm import get_address_host
from distributed.comm.core import CommClosedError

from ..errors import NoCapacityError, SC2DaskError
from ..game import EnvConfig, game_seed
from ..runtime.env_host import EnvHost
from ..runtime.slot import SlotClosed
from ..settings import parse_endpoint
from .cluster import check_workers, require_capacity, sc2_capacity, worker_games

log = logging.getLogger(__name__)

# How a lost actor may show up on the client: the proxy's call fails, or its future times
# out. The same types are also what a host's own work can raise; ``EnvPool.lost`` tells.
ACTOR_LOST = (RuntimeError, OSError, TimeoutError, concurrent.futures.TimeoutError)
GONE = (CommClosedError, ConnectionError, TimeoutError, concurrent.futures.TimeoutError,
        SlotClosed)  # the host was closed under its work: its worker is closing
# What dask's actor proxy raises, a plain OSError, when it cannot reach the actor's worker:
# its connection closed or was refused (the worker died). The scheduler may list that
# worker for a moment still, so this, like GONE, is a lost host whatever it lists.
UNREACHABLE = "Unable to contact Actor's worker"
MAX_TRIES = 5
START_TIMEOUT = 60.0  # seconds for a replacement host to start before another look
LOST_GRACE = 10.0  # seconds before the lost host's own worker is tried again
CLOSE_TIMEOUT = 30.0  # seconds for a slow host being replaced to close its games


@dataclasses.dataclass
class Placement:
    """Where one env host runs, how many envs it owns, and its actor proxy once started."""

    worker: str
    n_envs: int
    seed: int
    host: object = None  # the dask Actor proxy
    endpoints: tuple[str, ...] = ()  # attached: the running game of each env
    pinned: bool = False  # attached to a worker's own games: only a worker listing them
    released: bool = False  # closed on purpose (its worker retires): never replaced


def plan_placements(capacity: dict[str, int], n_envs: int, seed: int = 0) -> list[Placement]:
    """``n_envs`` envs on the fewest workers: the roomiest first, each filled to its capacity.

    Fewer hosts means fewer actor calls per rollout and larger batches per host.
    """
    placements, remaining = [], n_envs
    for i, (worker, slots) in enumerate(sorted(capacity.items(), key=lambda kv: -kv[1])):
        if remaining == 0:
            break
        take = min(slots, remaining)
        placements.append(Placement(worker, take, game_seed(seed, i)))
        remaining -= take
    return placements


def plan_attached(own_games: dict[str, list[str]], endpoints: tuple[str, ...],
                  n_envs: int | None = None, seed: int = 0) -> list[Placement]:
    """One env per running game: each worker's own games (``own_games``, from its
    ``sc2dask.worker.sc2``) on it, and each of ``endpoints`` on a worker of the same
    machine if there is one, else on the worker with the fewest envs so far.

    ``n_envs`` None takes every game; fewer takes the first ones.
    """
    if not own_games:
        raise NoCapacityError("No Dask worker is connected to host the envs of the running "
                              "games; start one with `dask worker SCHEDULER --preload "
                              "sc2dask.worker`.")
    assigned = {worker: [(game, True) for game in games] for worker, games in
                own_games.items()}
    for endpoint in endpoints:
        host = parse_endpoint(endpoint)[0]
        near = [w for w in assigned if get_address_host(w) == host] or list(assigned)
        assigned[min(near, key=lambda w: len(assigned[w]))].append((endpoint, False))
    total = sum(len(games) for games in assigned.values())
    if n_envs is not None and n_envs > total:
        raise NoCapacityError(
            f"{n_envs} environments wanted but {total} running games were given (--sc2 and "
            f"the workers' sc2dask.worker.sc2); start more games or ask for fewer envs.")
    remaining, placements = total if n_envs is None else n_envs, []
    for worker, games in assigned.items():
        # pinned and free games on one worker become two hosts, so each can be replaced
        for pinned in (True, False):
            mine = [game for game, own in games if own is pinned][:remaining]
            if mine:
                placements.append(Placement(worker, len(mine), game_seed(seed, len(placements)),
                                            endpoints=tuple(mine), pinned=pinned))
                remaining -= len(mine)
    return placements


def share_episodes(placements: list[Placement], episodes: int) -> list[int]:
    """``episodes`` split over ``placements`` in proportion to their envs, as evenly as whole
    episodes allow (the remainder goes one each to the first hosts)."""
    total = sum(p.n_envs for p in placements)
    shares = [episodes * p.n_envs // total for p in placements]
    for i in range(episodes - sum(shares)):
        shares[i] += 1
    return shares


class HostDropped(RuntimeError):
    """An elastic run lost a host whose worker left for good, with no room for it
    elsewhere: the run carries on with the others."""


class EnvPool:
    """Env hosts on the cluster behind ``client``; ``n_envs`` defaults to all capacity.

    An ``elastic`` pool ``grow``s onto workers that join, and drops (HostDropped) a host
    whose worker left when no other worker has room for it, while other hosts remain.
    """

    def __init__(self, client, config: EnvConfig, n_envs: int | None = None, seed: int = 0,
                 call_timeout: float = 600.0, tf_threads: int | None = None,
                 sc2: tuple[str, ...] = (),  # running games (HOST:PORT) to attach to
                 elastic: bool = False):
        self.client, self.config = client, config
        self.call_timeout = call_timeout
        self.elastic, self.seed = elastic, seed
        self.tf_threads = tf_threads
        self.host_restarts = 0
        own_games = worker_games(client)
        if sc2 or any(own_games.values()):
            check_workers(client)
            self.placements = plan_attached(own_games, tuple(sc2), n_envs, seed)
        else:
            capacity = require_capacity(client, n_envs)
            self.placements = plan_placements(capacity, n_envs or sum(capacity.values()), seed)
        self._threads = concurrent.futures.ThreadPoolExecutor(max(4, len(self.placements)))
        for future in [self._threads.submit(self._start, p) for p in self.placements]:
            future.result()

    @property
    def n_envs(self) -> int:
        """Envs of the hosts the run has now (an elastic pool grows and shrinks)."""
        return sum(p.n_envs for p in self.placements)

    # --- placement and supervision -------------------------------------------------------

    def _start(self, placement: Placement, timeout: float | None = None) -> None:
        future = self.client.submit(
            EnvHost, self.config, placement.n_envs, placement.seed, self.tf_threads,
            placement.endpoints, actor=True, workers=[placement.worker],
            allow_other_workers=False, pure=False)
        try:
            placement.host = future.result(timeout=timeout or self.call_timeout)
        except ACTOR_LOST:
            future.cancel()  # else it waits for its worker for ever
            raise

    def _replace(self, placement: Placement, reason: BaseException, deadline: float = 120.0):
        """Recreate a lost host on the live worker with the most free SC2 capacity.

        The scheduler may still list the lost worker for a moment after it died, so it is
        tried last, and each try is bounded by ``START_TIMEOUT``: an actor submitted to a
        worker that is gone would otherwise wait for it for ever.
        """
        log.warning("env host on %s lost (%r); recreating it", placement.worker, reason)
        if placement.worker in sc2_capacity(self.client):  # slow, not dead: stop its games
            self._close_host(placement, timeout=CLOSE_TIMEOUT)  # before new ones take its room
        self.host_restarts += 1
        placement.seed = game_seed(placement.seed, self.host_restarts)  # new games
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
                    return self._start(placement, timeout=START_TIMEOUT)
                except ACTOR_LOST as exc:  # that worker went too; look again
                    reason = exc
            others = [p for p in self.placements if p is not placement]
            if (self.elastic and others and not fits
                    and time.monotonic() > started + LOST_GRACE):
                self.placements.remove(placement)
                log.warning("env host of %d envs dropped: %s left and no worker has room "
                            "(%d envs remain)", placement.n_envs, lost, self.n_envs)
                raise HostDropped(f"{lost} left; {self.n_envs} envs remain") from reason
            if time.monotonic() > stop:
                raise RuntimeError(f"no live worker can host {placement.n_envs} envs after "
                                   f"losing {placement.worker}: {reason!r}")
            time.sleep(0.5)  # a Nanny restarts a killed worker within about a second

    def grow(self, target: int) -> list[Placement]:
        """Start hosts on free SC2 capacity (workers that joined, or room left over) until
        the pool has ``target`` envs or no room is left; returns the new placements.
        A run on running games (``sc2``) keeps its games."""
        if self.n_envs >= target or any(p.endpoints for p in self.placements):
            return []
        free = {w: n for w, n in self._free_capacity().items() if n > 0}
        wanted = min(target - self.n_envs, sum(free.values()))
        if wanted <= 0:
            return []
        started = []
        seed = game_seed(self.seed, len(self.placements), self.host_restarts)
        for placement in plan_placements(free, wanted, seed):
            try:
                self._start(placement, timeout=START_TIMEOUT)
            except ACTOR_LOST as exc:  # that worker went again; the next look retries
                log.warning("no env host on %s (%r)", placement.worker, exc)
                continue
            self.placements.append(placement)
            started.append(placement)
            log.info("env host of %d envs added on %s (%d envs now)", placement.n_envs,
                     placement.worker, self.n_envs)
        return started

    def release(self, workers) -> list[Placement]:
        """Close the hosts on ``workers`` for good and let go of their actors, so that dask
        can retire those workers (it will not retire a worker holding an actor). Their
        work in flight ends with HostDropped; nothing of it is counted."""
        released = [p for p in self.placements if p.worker in set(workers)]
        for placement in released:
            placement.released = True
            self.placements.remove(placement)
            self._close_host(placement, timeout=CLOSE_TIMEOUT)
            placement.host = None  # the actor goes once no call holds it
            log.info("env host of %d envs on %s released (%d envs remain)",
                     placement.n_envs, placement.worker, self.n_envs)
        # The proxy's finished calls keep it in reference cycles (their closures), which
        # only the cyclic collector frees; until then the client still holds the actor.
        gc.collect()
        return released

    def _room(self, placement: Placement) -> dict[str, int]:
        """How many of ``placement``'s envs each live worker could host now: its free SC2
        capacity, or, for attached games, any worker (the games are not the worker's),
        except that a worker's own games go only to a worker that lists them."""
        if placement.endpoints:
            games = worker_games(self.client)
            if placement.pinned:
                return {w: placement.n_envs for w, own in games.items()
                        if set(placement.endpoints) <= set(own)}
            host = parse_endpoint(placement.endpoints[0])[0]
            near = {w for w in games if get_address_host(w) == host}
            return {w: placement.n_envs for w in (near or games)}
        return self._free_capacity(excluding=placement)

    def _free_capacity(self, excluding: Placement | None = None) -> dict[str, int]:
        """Each live worker's SC2 capacity less the envs of this pool's hosts on it (but
        ``excluding``'s, the host being placed again)."""
        used = {}
        for p in self.placements:
            if p is not excluding:
                used[p.worker] = used.get(p.worker, 0) + p.n_envs
        return {w: n - used.get(w, 0) for w, n in sc2_capacity(self.client).items()}

    def call(self, placement: Placement, method: str, *args, **kwargs):
        """``host.method(*args, **kwargs)``, redone on a new host if the old one is lost.

        A call that loses ``MAX_TRIES`` hosts in a row is not a lost worker but a
        failing call, and its error is raised.
        """
        for attempt in range(MAX_TRIES):
            if placement.released:
                raise HostDropped(f"the host on {placement.worker} was released")
            try:
                return getattr(placement.host, method)(*args, **kwargs).result(
                    timeout=self.call_timeout)
            except ACTOR_LOST as exc:
                if placement.released:
                    raise HostDropped(f"the host on {placement.worker} was released") from exc
                if attempt == MAX_TRIES - 1 or not self.lost(placement, exc):
                    raise
                self._replace(placement, exc)

    def lost(self, placement: Placement, exc: BaseException) -> bool:
        """Whether ``exc`` from ``placement``'s host means the host is gone (its worker
        died, or it passed call-timeout) rather than that its work failed.

        sc2dask's own errors are the work's; a closed connection, an unreachable worker
        (``UNREACHABLE``) or a timeout is a lost host; any other error is a lost host only
        if its worker has left the cluster.
        """
        if isinstance(exc, SC2DaskError):
            return False
        if isinstance(exc, GONE) or (type(exc) is OSError and exc.args == (UNREACHABLE,)):
            return True
        return placement.worker not in sc2_capacity(self.client)

    def map(self, method: str, args_for):
        """Call ``method`` on every host at once; yields (placement, result) as they finish."""
        futures = {self._threads.submit(self.call, p, method, *args_for(p)): p
                   for p in self.placements}
        for future in concurrent.futures.as_completed(futures):
            yield futures[future], future.result()

    # --- work ------------------------------------------------------------------------------

    def evaluate(self, agent_path: str, episodes: int) -> list[float]:
        """Scores of ``episodes`` episodes of a pysc2 agent class, spread over all envs."""
        shares = {id(p): n for p, n in zip(self.placements, share_episodes(self.placements,
                                                                            episodes))}
        scores = []
        for _, result in self.map("evaluate", lambda p: (agent_path, shares[id(p)])):
            scores.extend(result)
        return scores

    def stats(self) -> dict:
        """Per-host env counters and the restart totals (hosts recreated, games restarted)."""
        hosts = [dict(worker=p.worker, **r) for p, r in self.map("stats", lambda p: ())]
        game_restarts = sum(env["restarts"] for h in hosts for env in h["envs"])
        return {"hosts": hosts, "host_restarts": self.host_restarts,
                "game_restarts": game_restarts,
                "restarts": self.host_restarts + game_restarts}

    def close(self) -> None:
        for p in self.placements:
            self._close_host(p, timeout=CLOSE_TIMEOUT)
        self._threads.shutdown(wait=False)

    @staticmethod
    def _close_host(placement: Placement, timeout: float) -> None:
        """Close a host's games, best effort: its worker may be gone already."""
        if placement.host is None:
            return
        try:
            placement.host.close().result(timeout=timeout)
        except Exception:  # noqa: BLE001 - the worker may be gone already
            log.debug("env host on %s did not close", placement.worker, exc_info=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
