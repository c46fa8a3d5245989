"""The dispatch loop: hosts get work, their results go to the update rule (all that finished
together at once), and the hosts the rule names get new work at once, so fast hosts do more.

Weights travel only when a host lacks the version it is asked to play with, and then as a
delta where the host holds a base (``compression.DeltaSender``). An elastic run looks for
workers that joined every ``GROW_EVERY`` seconds and tells the rule how many hosts it has.
"""

from __future__ import annotations

import concurrent.futures
import queue
import time
from collections.abc import Callable

from ..compression import DeltaSender, payload_nbytes
from ..core import WorkOrder
from ..runtime.env_host import StaleWeights
from .placement import Placement
from .pool import EnvPool
from .recorder import Recorder
from .store import ParameterStore
from .supervisor import HostDropped
from .updates import UpdateRule

GROW_EVERY = 5.0  # seconds between an elastic run's looks for workers that joined


class Dispatcher:
    """Runs one training's work until ``done()``: ``give_work``, ``on_result``, ``grow``."""

    def __init__(
        self,
        pool: EnvPool,
        store: ParameterStore,
        recorder: Recorder,
        rule: UpdateRule,
        order: WorkOrder,
        sender: DeltaSender,
        done: Callable[[], bool],
        envs_max: int | None = None,
    ):
        self.pool, self.store, self.recorder, self.rule = pool, store, recorder, rule
        self.order, self.sender, self.done, self.envs_max = order, sender, done, envs_max
        self._versions_held: dict[int, int] = {}  # id(placement) -> its host's version
        self._pending: dict[concurrent.futures.Future, tuple[Placement, int]] = {}
        self._finished: queue.SimpleQueue[concurrent.futures.Future] = queue.SimpleQueue()
        self._hosts = len(pool.placements)
        self._looked = time.monotonic()  # the last look for workers that joined

    def run(self) -> None:
        """Give every host work, then pass each result to the rule until the run is done;
        work in flight then finishes before the hosts close."""
        for placement in self.pool.placements:
            self.give_work(placement)
        while self._pending and not self.done():
            finished = self._finished_together(timeout=GROW_EVERY if self.envs_max else None)
            if self.envs_max and time.monotonic() - self._looked >= GROW_EVERY:
                self.grow()
            self.on_results([(future, *self._pending.pop(future)) for future in finished])
            self.resize()
        for future in self._pending:
            future.result()

    def _finished_together(self, timeout: float | None) -> list[concurrent.futures.Future]:
        """The calls that finished, waiting up to ``timeout`` for the first. Finished
        calls queue themselves, so a wait costs the same with a thousand hosts as with
        one (``concurrent.futures.wait`` would visit every call in flight)."""
        try:
            finished = [self._finished.get(timeout=timeout)]
        except queue.Empty:
            return []
        while True:
            try:
                finished.append(self._finished.get_nowait())
            except queue.Empty:
                return finished

    def give_work(self, placement: Placement, whole: bool = False) -> None:
        """Ask ``placement``'s host for the rule's work on the newest weights: none when it
        holds them, else a delta from those it holds, or ``whole``."""
        if placement.released or self.done():  # its worker is retiring, or the run ends
            return
        version, weights = self.store.snapshot()
        key = id(placement)
        if whole:
            payload = self.sender.whole(key, version, weights)
        elif self._versions_held.get(key) == version:
            payload = None  # the host has them: send only the version
        else:
            payload = self.sender.encode(key, version, weights)
        self._versions_held[key] = version
        if payload is not None:
            self.recorder.sent(payload_nbytes(payload))
        order = self.order
        future = self.pool.submit(placement, lambda host: host.work(order, version, payload))
        self._pending[future] = (placement, version)
        future.add_done_callback(self._finished.put)

    def on_results(self, finished: list[tuple[concurrent.futures.Future, Placement, int]]) -> None:
        """Hand the hosts' finished work to the rule, all that arrived together at once, and
        give work to the hosts it names."""
        arrived = []
        for future, placement, version in finished:
            try:
                result = future.result()
            except HostDropped:  # its worker left or retires: the others carry on
                continue
            except StaleWeights:  # a host recreated since holds other weights, or none
                self.give_work(placement, whole=True)
                continue
            self.recorder.arrived(result.rollout)
            arrived.append((placement, result, version))
        if not arrived:
            return
        plays_ahead = self.rule.plays_ahead
        if plays_ahead:
            for placement, _, _ in arrived:
                self.give_work(placement)  # it plays while the client learns
        for ready in self.rule.on_results(arrived):
            if not (plays_ahead and any(ready is p for p, _, _ in arrived)):
                self.give_work(ready)

    def grow(self) -> None:
        """Start hosts on workers that joined, up to ``envs_max`` envs, and give them work."""
        assert self.envs_max is not None  # only an elastic run grows
        self._looked = time.monotonic()
        for placement in self.pool.grow(self.envs_max):
            self.give_work(placement)

    def resize(self) -> None:
        """Tell the rule when the run's number of hosts changed (grown, dropped, released)."""
        if len(self.pool.placements) != self._hosts:
            self._hosts = len(self.pool.placements)
            for ready in self.rule.resize(self._hosts):
                self.give_work(ready)
