"""``TrainingMonitor``: the scheduler's live picture of sc2dask training, built from events.

A ``SchedulerPlugin`` that receives every event logged on the scheduler and keeps those
of ``sc2dask.monitoring.telemetry``: the rows of the latest training run (with the rates derived
from them) and the latest stats of each live env host. The training page and the
Prometheus collector read it; both run on the scheduler's event loop, as it does.
"""

from __future__ import annotations

import collections
import logging
import math
import time

from distributed.diagnostics.plugin import SchedulerPlugin

from .telemetry import HOSTS_TOPIC, MONITOR_NAME, TRAINING_TOPIC

log = logging.getLogger(__name__)

HISTORY = 20_000  # rows and episodes kept per run
RATE_WINDOW = 5.0  # seconds of rows that the steps/s rate averages over
HOST_STALE_AFTER = 60.0  # seconds without news after which a host counts as gone
ROW_COLUMNS = (
    "update",
    "agent_steps",
    "wall_s",
    "version",
    "staleness",
    "mean_score_last_100",
    "win_rate_last_100",  # games for two; NaN otherwise
    "episodes",
    "bytes_moved",
    "bytes_per_update",
    "steps_per_s",
)


class TrainingMonitor(SchedulerPlugin):
    """Training rows and env host stats, from the ``sc2dask-*`` event topics."""

    name = MONITOR_NAME

    def __init__(self, history: int = HISTORY):
        self.history = history
        self.run: dict | None = None  # the latest run's description
        self.generation = 0  # counts runs, so readers know when to start over
        self.rows: collections.deque = collections.deque(maxlen=history)
        self.rows_received = 0  # in this run; readers stream the rows past their count
        self.episodes: collections.deque = collections.deque(maxlen=history)  # (steps, score)
        self.episodes_received = 0
        self.hosts: dict[str, dict] = {}  # host id -> its latest stats
        self._window: collections.deque = collections.deque()  # (wall_s, agent_steps)

    # --- events ----------------------------------------------------------------------------

    def log_event(self, topic, msg) -> None:
        try:
            if topic == TRAINING_TOPIC:
                self._on_training(msg)
            elif topic == HOSTS_TOPIC:
                self._on_host(msg)
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("ignoring a malformed %s event (%r): %.200r", topic, exc, msg)

    def _on_training(self, msg: dict) -> None:
        run = msg["run"]
        if self.run is None or run["id"] != self.run["id"]:
            self._start_run(run)
        for row in msg["rows"]:
            self._add_row(row)
        for steps, score in msg["ended"]:
            self.episodes.append((float(steps), float(score)))
            self.episodes_received += 1

    def _start_run(self, run: dict) -> None:
        self.run = dict(run)
        self.generation += 1
        self.rows.clear()
        self.episodes.clear()
        self._window.clear()
        self.rows_received = self.episodes_received = 0

    def _add_row(self, row: dict) -> None:
        wall, steps = float(row["wall_s"]), float(row["agent_steps"])
        previous = self.rows[-1] if self.rows else None
        bytes_moved = float(row.get("bytes_moved", math.nan))
        self._window.append((wall, steps))
        while len(self._window) > 2 and wall - self._window[1][0] >= RATE_WINDOW:
            self._window.popleft()
        first_wall, first_steps = self._window[0]
        row = {key: float(row.get(key, math.nan)) for key in ROW_COLUMNS} | {
            "bytes_per_update": bytes_moved - (previous["bytes_moved"] if previous else 0.0),
            "steps_per_s": (
                (steps - first_steps) / (wall - first_wall) if wall > first_wall else math.nan
            ),
        }
        self.rows.append(row)
        self.rows_received += 1

    def _on_host(self, msg: dict) -> None:
        host = msg["host"]
        if msg.get("closed"):
            self.hosts.pop(host, None)
            return
        steps = sum(int(env["steps"]) for env in msg["envs"])
        previous = self.hosts.get(host)
        rate = math.nan
        if previous is not None and msg["time"] > previous["time"]:
            rate = (steps - previous["steps"]) / (msg["time"] - previous["time"])
        self.hosts[host] = {
            "worker": msg["worker"],
            "pid": msg["pid"],
            "time": msg["time"],
            "received": time.time(),
            "steps": steps,
            "steps_per_s": rate,
            "envs": msg["envs"],
        }
        self._forget_stale_hosts()  # here too: with no page open, nothing else reads them

    # --- reading -----------------------------------------------------------------------------

    @property
    def latest(self) -> dict | None:
        """The latest row of the current run (None before any)."""
        return self.rows[-1] if self.rows else None

    def live_hosts(self) -> list[dict]:
        """Hosts heard from within ``HOST_STALE_AFTER`` seconds, by worker address."""
        self._forget_stale_hosts()
        return sorted(self.hosts.values(), key=lambda s: s["worker"])

    def _forget_stale_hosts(self) -> None:
        now = time.time()
        for host in [h for h, s in self.hosts.items() if now - s["received"] > HOST_STALE_AFTER]:
            del self.hosts[host]

    def instances(self) -> list[dict]:
        """One entry per SC2 (or emulator) instance of the live hosts."""
        return [
            {"worker": host["worker"], "env": i, **env}
            for host in self.live_hosts()
            for i, env in enumerate(host["envs"])
        ]

    def by_worker(self) -> dict[str, dict]:
        """Per worker: instances, env steps, env steps/s, game restarts."""
        out: dict[str, dict] = {}
        for host in self.live_hosts():
            w = out.setdefault(
                host["worker"], {"instances": 0, "steps": 0, "steps_per_s": 0.0, "restarts": 0}
            )
            w["instances"] += len(host["envs"])
            w["steps"] += host["steps"]
            w["restarts"] += sum(int(env["restarts"]) for env in host["envs"])
            if not math.isnan(host["steps_per_s"]):
                w["steps_per_s"] += host["steps_per_s"]
        return out
