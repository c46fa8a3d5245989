"""``EnvPool``: the client's view of a run's environments, spread over Dask workers.

It places one ``EnvHost`` actor per worker, filling each worker's SC2 capacity and
never exceeding it (``placement.py``), calls them, and keeps them alive: an actor lost
with its worker is recreated on a live worker (``supervisor.py``, the Nanny's replacement
included) and its work is redone. Restarts of hosts and of games inside hosts are counted.

A run either launches its games or attaches to games already running (``--sc2
HOST:PORT,...`` and each worker's own ``sc2dask.worker.sc2``): one env per game, hosted by
the worker on the game's machine where there is one (``plan_attached``).

Work is asked of a host as a function of its actor proxy (``lambda host: host.stats()``),
so every call names the ``EnvHost`` method it makes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

from distributed.comm import get_address_host

from ..core import EpisodeResult
from ..game import EnvConfig, game_seed
from ..game.recording import Recording
from ..settings import parse_endpoint
from .cluster import check_workers, require_capacity, sc2_capacity, worker_games
from .placement import Placement, plan_attached, plan_placements, share_episodes
from .supervisor import ACTOR_LOST, START_TIMEOUT, HostDropped, HostSupervisor, is_lost

log = logging.getLogger(__name__)

MAX_TRIES = 5
MAX_THREADS = 256  # hosts starting, or calls being made again after a host was lost
Request = Callable[[Any], Any]  # an EnvHost actor proxy -> the future of one of its calls


class EnvPool:
    """Env hosts on the cluster behind ``client``; ``n_envs`` defaults to all capacity.

    An ``elastic`` pool ``grow``s onto workers that join, and drops (HostDropped) a host
    whose worker left when no other worker has room for it, while other hosts remain.
    """

    def __init__(
        self,
        client,
        config: EnvConfig,
        n_envs: int | None = None,
        seed: int = 0,
        call_timeout: float = 600.0,
        tf_threads: int | None = None,
        sc2: tuple[str, ...] = (),  # running games (HOST:PORT) to attach to
        elastic: bool = False,
    ):
        self.client, self.config = client, config
        if not client.direct_to_workers:
            log.warning(
                "this Dask client reaches the workers through the scheduler, so every env "
                "call and its gradients pass through it too; make the client with "
                "Client(..., direct_to_workers=True)"
            )
        self.call_timeout = call_timeout
        self.elastic, self.seed = elastic, seed
        self.supervisor = HostSupervisor(client, config, call_timeout, tf_threads, self._room)
        own_games = worker_games(client)
        if sc2 or any(own_games.values()):
            check_workers(client)
            self.placements = plan_attached(own_games, tuple(sc2), n_envs, seed)
        else:
            capacity = require_capacity(client, n_envs)
            self.placements = plan_placements(capacity, n_envs or sum(capacity.values()), seed)
        self._threads = concurrent.futures.ThreadPoolExecutor(MAX_THREADS)
        self._starts: list[Callable[[], None]] = []  # calls waiting for the event loop
        self._starts_lock = threading.Lock()
        self._starts_scheduled = False
        for future in [self._threads.submit(self.supervisor.start, p) for p in self.placements]:
            future.result()

    @property
    def host_restarts(self) -> int:
        """Hosts recreated after their worker was lost."""
        return self.supervisor.restarts

    @property
    def n_envs(self) -> int:
        """Envs of the hosts the run has now (an elastic pool grows and shrinks)."""
        return sum(p.n_envs for p in self.placements)

    # --- growing and shrinking ---------------------------------------------------------

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
                self.supervisor.start(placement, timeout=START_TIMEOUT)
            except ACTOR_LOST as exc:  # that worker went again; the next look retries
                log.warning("no env host on %s (%r)", placement.worker, exc)
                continue
            self.placements.append(placement)
            started.append(placement)
            log.info(
                "env host of %d envs added on %s (%d envs now)",
                placement.n_envs,
                placement.worker,
                self.n_envs,
            )
        return started

    def release(self, workers) -> list[Placement]:
        """Close the hosts on ``workers`` for good and let go of their actors, so that dask
        can retire those workers (it will not retire a worker holding an actor). Their
        work in flight ends with HostDropped; nothing of it is counted."""
        released = [p for p in self.placements if p.worker in set(workers)]
        for placement in released:
            placement.released = True
            self.placements.remove(placement)
            self.supervisor.close(placement)
            placement.host = None  # the actor goes once no call holds it
            log.info(
                "env host of %d envs on %s released (%d envs remain)",
                placement.n_envs,
                placement.worker,
                self.n_envs,
            )
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
                return {
                    w: placement.n_envs
                    for w, own in games.items()
                    if set(placement.endpoints) <= set(own)
                }
            host = parse_endpoint(placement.endpoints[0])[0]
            near = {w for w in games if get_address_host(w) == host}
            return {w: placement.n_envs for w in (near or games)}
        return self._free_capacity(excluding=placement)

    def _free_capacity(self, excluding: Placement | None = None) -> dict[str, int]:
        """Each live worker's SC2 capacity less the envs of this pool's hosts on it (but
        ``excluding``'s, the host being placed again)."""
        used: dict[str, int] = {}
        for p in self.placements:
            if p is not excluding:
                used[p.worker] = used.get(p.worker, 0) + p.n_envs
        return {w: n - used.get(w, 0) for w, n in sc2_capacity(self.client).items()}

    def call(self, placement: Placement, request: Request, tries: int = MAX_TRIES):
        """``request(host).result()`` on ``placement``'s host, redone on a new host if the
        old one is lost.

        A call that loses ``tries`` hosts in a row is not a lost worker but a failing
        call, and its error is raised.
        """
        for attempt in range(tries):
            if placement.released:
                raise _released(placement)
            try:
                return request(placement.host).result(timeout=self.call_timeout)
            except ACTOR_LOST as exc:
                self._recover(placement, exc, last=attempt == tries - 1)

    def _recover(self, placement: Placement, exc: BaseException, last: bool) -> None:
        """After ``exc`` from ``placement``'s host: a new host for it, or ``exc`` (or
        HostDropped) raised where the call should not be made again."""
        if placement.released:
            raise _released(placement) from exc
        if last or not self.lost(placement, exc):
            raise exc
        self._replace(placement, exc)

    def lost(self, placement: Placement, exc: BaseException) -> bool:
        """Whether ``exc`` from ``placement``'s host means the host is gone (``is_lost``)."""
        return is_lost(exc, lambda: self.supervisor.worker_alive(placement))

    def _replace(self, placement: Placement, reason: BaseException) -> None:
        """A new host for ``placement``; an elastic pool with other hosts drops it instead
        when no worker has room."""

        def others_carry_on() -> bool:
            return self.elastic and any(p is not placement for p in self.placements)

        try:
            self.supervisor.replace(placement, reason, can_drop=others_carry_on)
        except HostDropped:
            self.placements.remove(placement)
            log.warning(
                "env host of %d envs dropped: %s left and no worker has room (%d envs remain)",
                placement.n_envs,
                placement.worker,
                self.n_envs,
            )
            raise

    def submit(self, placement: Placement, request: Request) -> concurrent.futures.Future:
        """``call`` without waiting: a Future of the host's answer, which
        ``concurrent.futures.as_completed`` and ``wait`` gather. The layer a training loop
        of your own stands on, as ``sc2dask.train``'s does (``training/dispatch.py``).

        The call goes out and its answer comes back on the client's event loop, so a
        thousand hosts need no thread each; only a call whose host is lost moves to a
        thread, where ``call`` finds it a new host and makes it again."""
        answer: concurrent.futures.Future = concurrent.futures.Future()

        def failed(exc: BaseException) -> None:
            if not isinstance(exc, ACTOR_LOST):
                answer.set_exception(exc)
                return
            try:
                self._threads.submit(self._call_again, placement, request, exc, answer)
            except RuntimeError:  # the pool is closing: no more retries
                answer.set_exception(exc)

        def finished(attempt: asyncio.Future) -> None:
            if answer.cancelled():
                return
            if attempt.cancelled():  # the client's loop is closing
                answer.cancel()
            elif (exc := attempt.exception()) is not None:
                failed(exc)
            else:
                answer.set_result(attempt.result())

        def start() -> None:  # on the client's event loop
            if answer.cancelled():
                return
            if placement.released:
                answer.set_exception(_released(placement))
                return
            try:
                reply = asyncio.wait_for(_awaited(request(placement.host)), self.call_timeout)
                asyncio.ensure_future(reply).add_done_callback(finished)
            except Exception as exc:  # the proxy itself refused: its worker is gone
                failed(exc)

        self._on_loop(start)
        return answer

    def _on_loop(self, start: Callable[[], None]) -> None:
        """Run ``start`` on the client's event loop. Each hand-over wakes the loop with a
        write to its pipe, so the calls a thread submits before the loop gets to them share
        one wake-up: an update that gives work to many hosts pays once."""
        with self._starts_lock:
            self._starts.append(start)
            if self._starts_scheduled:
                return
            self._starts_scheduled = True
        try:
            self.client.loop.add_callback(self._run_starts)
        except BaseException:  # no loop to run them (the client closed): say so each time
            with self._starts_lock:
                self._starts.remove(start)
                self._starts_scheduled = False
            raise

    def _run_starts(self) -> None:
        with self._starts_lock:
            starts, self._starts = self._starts, []
            self._starts_scheduled = False
        for start in starts:
            try:
                start()
            except Exception:  # one call's fault must not strand the calls after it
                log.exception("an env call could not start")

    def _call_again(
        self,
        placement: Placement,
        request: Request,
        first: BaseException,
        answer: concurrent.futures.Future,
    ) -> None:
        """``submit``'s call after its host was lost, on a thread: ``call``'s retries."""
        try:
            self._recover(placement, first, last=False)
            answer.set_result(self.call(placement, request, MAX_TRIES - 1))
        except BaseException as exc:
            answer.set_exception(exc)

    def map(self, request_for: Callable[[Placement], Request]) -> Iterator[tuple[Placement, Any]]:
        """``call`` every host at once, with ``request_for(placement)``; yields
        (placement, result) as they finish."""
        futures = {self.submit(p, request_for(p)): p for p in self.placements}
        for future in concurrent.futures.as_completed(futures):
            yield futures[future], future.result()

    # --- work ------------------------------------------------------------------------------

    def evaluate(self, agent_path: str, episodes: int) -> list[EpisodeResult]:
        """``episodes`` episodes of a pysc2 agent class, spread over all envs."""
        shares = {
            id(p): n for p, n in zip(self.placements, share_episodes(self.placements, episodes))
        }
        scores: list[EpisodeResult] = []
        for _, result in self.map(lambda p: lambda host: host.evaluate(agent_path, shares[id(p)])):
            scores.extend(result)
        return scores

    def record(self, agent_path: str, layer: str) -> Recording:
        """One episode of a pysc2 agent class on the first host, drawn frame by frame."""
        return self.call(self.placements[0], lambda host: host.record(agent_path, layer))

    def stats(self) -> dict:
        """Per-host env counters and the restart totals (hosts recreated, games restarted)."""
        hosts = [
            dict(worker=p.worker, **r) for p, r in self.map(lambda p: lambda host: host.stats())
        ]
        game_restarts = sum(env["restarts"] for h in hosts for env in h["envs"])
        return {
            "hosts": hosts,
            "host_restarts": self.host_restarts,
            "game_restarts": game_restarts,
            "restarts": self.host_restarts + game_restarts,
        }

    def close(self) -> None:
        """Close every host's games, all at once, so that a thousand hosts, or a few
        whose workers are gone (each waited for up to ``supervisor.CLOSE_TIMEOUT``), do
        not close one after another."""
        concurrent.futures.wait(
            [self._threads.submit(self.supervisor.close, p) for p in self.placements]
        )
        self._threads.shutdown(wait=False)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


async def _awaited(reply):
    """A Dask actor's answer (its ``ActorFuture``) as a coroutine, for ``wait_for``."""
    return await reply


def _released(placement: Placement) -> HostDropped:
    return HostDropped(f"the host on {placement.worker} was released")
