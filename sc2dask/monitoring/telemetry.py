"""Publishing what a training run does to the scheduler, where the training page reads it.

Two streams of Dask events (``log_event``), each throttled so that the cost stays at a
few small messages per second whatever the step rate:

- ``TRAINING_TOPIC``, from the client's training loop: the history rows of the updates
  since the last message, and the scores of the episodes they ended.
- ``HOSTS_TOPIC``, from each env host after a rollout: its per-env counters and the CPU
  and memory of each game process.

The scheduler side (``sc2dask.monitoring.monitor``, installed by ``sc2dask.dashboard``) turns them
into the training page and the ``sc2dask_`` Prometheus metrics.
"""

from __future__ import annotations

import logging
import math
import numbers
import time
import uuid

import psutil

log = logging.getLogger(__name__)

TRAINING_TOPIC = "sc2dask-train"
HOSTS_TOPIC = "sc2dask-hosts"
TRAINING_INTERVAL = 0.5  # seconds between messages of a training run, at most
HOST_INTERVAL = 1.0  # seconds between messages of one env host, at most
PAGE = "sc2dask"  # the training page, beside the dashboard's /status
MONITOR_NAME = "sc2dask-training-monitor"  # the scheduler plugin that collects the events


def plain_numbers(row: dict) -> dict:
    """The numeric entries of ``row`` as Python ints and floats (msgpack takes no numpy)."""
    out = {}
    for key, value in row.items():
        if isinstance(value, bool):
            out[key] = int(value)
        elif isinstance(value, numbers.Integral):
            out[key] = int(value)
        elif isinstance(value, numbers.Real):
            out[key] = float(value)
    return out


class TrainingPublisher:
    """Sends a run's update rows to the scheduler, batched to one message per interval.

    Telemetry never stops training: a failed send is logged once and dropped.
    """

    def __init__(self, client, settings: dict, interval: float = TRAINING_INTERVAL):
        self.client = client
        self.interval = interval
        self.run = {
            "id": uuid.uuid4().hex[:12],
            "map": str(settings.get("map")),
            "mode": str(settings.get("mode")),
            "envs": settings.get("envs"),
            "max_steps": settings.get("max_steps"),
            "started": time.time(),
        }
        self._rows: list[dict] = []
        self._ended: list[list[float]] = []  # [agent_steps, score] of each ended episode
        self._last_sent = -math.inf
        self._warned = False

    def publish(self, row: dict, scores) -> None:
        """Queue one update's history row and the scores of the episodes it ended."""
        row = plain_numbers(row)
        self._rows.append(row)
        self._ended.extend([row.get("agent_steps", 0), float(s)] for s in scores)
        if time.monotonic() - self._last_sent >= self.interval:
            self.flush()

    def flush(self) -> None:
        if not self._rows:
            return
        message = {"run": self.run, "rows": self._rows, "ended": self._ended}
        self._rows, self._ended = [], []
        self._last_sent = time.monotonic()
        try:
            self.client.log_event(TRAINING_TOPIC, message)
        except Exception as exc:  # noqa: BLE001 - a closing or lost scheduler
            if not self._warned:
                log.warning("training telemetry not sent (%r); training goes on", exc)
                self._warned = True


class HostReporter:
    """Counts an env host's steps and publishes its per-env stats after rollouts.

    Runs inside the ``EnvHost`` actor; outside a Dask worker it counts but sends nothing.
    """

    def __init__(self, n_envs: int, interval: float = HOST_INTERVAL):
        self.id = uuid.uuid4().hex[:12]
        self.interval = interval
        self.steps = [0] * n_envs
        self._processes: dict[int, psutil.Process] = {}
        self._last_sent = -math.inf

    def after_rollout(self, host, trajectories) -> None:
        for i, trajectory in enumerate(trajectories):
            if trajectory is not None:
                self.steps[i] += len(trajectory)
        if time.monotonic() - self._last_sent >= self.interval:
            self._last_sent = time.monotonic()
            self._send({**self.snapshot(host), "time": time.time()})

    def closed(self) -> None:
        """Tell the page this host's games are gone."""
        self._send({"closed": True, "time": time.time()})

    def snapshot(self, host) -> dict:
        stats = host.stats()
        for env, steps in zip(stats["envs"], self.steps):
            env["steps"] = steps
            env.update(self._usage(env["sc2_pid"]))
        return stats

    def _usage(self, pid: int | None) -> dict:
        """CPU (% of one core since the last call) and RSS of the game process ``pid``."""
        if pid is None:
            return {"cpu_percent": None, "rss_bytes": None}
        try:
            process = self._processes.get(pid)
            if process is None:
                process = self._processes[pid] = psutil.Process(pid)
            with process.oneshot():
                return {
                    "cpu_percent": process.cpu_percent(None),
                    "rss_bytes": process.memory_info().rss,
                }
        except psutil.Error:  # the game just exited; its slot restarts it
            self._processes.pop(pid, None)
            return {"cpu_percent": None, "rss_bytes": None}

    def _send(self, message: dict) -> None:
        from distributed import get_worker

        try:
            worker = get_worker()
        except ValueError:  # not on a Dask worker (a host built directly, in a test)
            return
        worker.log_event(HOSTS_TOPIC, {**message, "host": self.id, "worker": worker.address})


def training_page_link(client) -> str | None:
    """The training page's address, or None when the scheduler lacks the sc2dask monitor."""
    link = client.dashboard_link
    if not link:
        return None
    try:
        has_monitor = client.run_on_scheduler(_has_monitor)
    except Exception:  # noqa: BLE001 - an old or locked-down scheduler
        return None
    return link.rsplit("/", 1)[0] + "/" + PAGE if has_monitor else None


def _has_monitor(dask_scheduler=None) -> bool:
    return MONITOR_NAME in dask_scheduler.plugins
