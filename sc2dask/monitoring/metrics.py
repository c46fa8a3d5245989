"""Prometheus metrics of sc2dask training, served on the scheduler's ``/metrics``.

Distributed serves the process-global ``prometheus_client`` registry there, so one
collector registered in the scheduler's process is enough. Like distributed's own
collectors it is registered once per process and follows the latest scheduler's
monitor (tests start several schedulers in one process, one after another).
"""

from __future__ import annotations

import math

from prometheus_client import REGISTRY
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
from prometheus_client.registry import Collector

PREFIX = "sc2dask"


class TrainingCollector(Collector):
    """Reads a ``TrainingMonitor`` at each scrape; nothing is kept twice."""

    def __init__(self):
        self.monitor = None

    def describe(self):
        return []  # the names depend on the monitor's state; nothing to check at register

    def collect(self):
        monitor = self.monitor
        if monitor is None:
            return
        yield from self._training(monitor)
        yield from self._instances(monitor)

    def _training(self, monitor):
        row = monitor.latest
        if row is None:
            return
        run = monitor.run
        yield InfoMetricFamily(
            f"{PREFIX}_training",
            "The current training run",
            value={"run": run["id"], "map": run["map"], "mode": run["mode"]},
        )
        counters = {
            "agent_steps": "Agent steps played in the current run",
            "update": "Parameter updates applied in the current run",
            "episodes": "Episodes finished in the current run",
            "bytes_moved": "Bytes of weights, trajectories and gradients moved",
        }
        for key, help_text in counters.items():
            name = "updates" if key == "update" else key
            yield CounterMetricFamily(f"{PREFIX}_{name}", help_text, value=_finite(row[key]))
        gauges = {
            "episode_score": ("Mean score of the last 100 episodes", row["mean_score_last_100"]),
            "win_rate": (
                "Wins over the last 100 games against an opponent (NaN on a one-player map)",
                row["win_rate_last_100"],
            ),
            "episode_score_last": (
                "Score of the latest episode",
                monitor.episodes[-1][1] if monitor.episodes else math.nan,
            ),
            "parameter_version": ("Version of the parameter store's weights", row["version"]),
            "gradient_staleness": (
                "Versions between the weights a gradient was computed "
                "with and the store's, at the latest update",
                row["staleness"],
            ),
            "agent_steps_per_second": (
                "Agent steps per second over the last few seconds",
                row["steps_per_s"],
            ),
            "bytes_per_update": ("Bytes moved for the latest update", row["bytes_per_update"]),
        }
        for name, (help_text, value) in gauges.items():
            yield GaugeMetricFamily(f"{PREFIX}_{name}", help_text, value=value)

    def _instances(self, monitor):
        workers = monitor.by_worker()
        per_worker = {
            "sc2_instances": (GaugeMetricFamily, "SC2 (or emulator) instances", "instances"),
            "env_steps": (CounterMetricFamily, "Env steps played on the worker", "steps"),
            "env_steps_per_second": (
                GaugeMetricFamily,
                "Env steps per second on the worker",
                "steps_per_s",
            ),
            "sc2_restarts": (
                CounterMetricFamily,
                "Crashed games restarted on the worker",
                "restarts",
            ),
        }
        for name, (family, help_text, key) in per_worker.items():
            metric = family(f"{PREFIX}_{name}", help_text, labels=["worker"])
            for worker, stats in workers.items():
                metric.add_metric([worker], stats[key])
            yield metric
        cpu = GaugeMetricFamily(
            f"{PREFIX}_sc2_cpu_percent",
            "CPU of each game process, % of one core",
            labels=["worker", "env"],
        )
        rss = GaugeMetricFamily(
            f"{PREFIX}_sc2_rss_bytes",
            "Resident memory of each game process",
            labels=["worker", "env"],
        )
        for instance in monitor.instances():
            labels = [instance["worker"], str(instance["env"])]
            if instance.get("cpu_percent") is not None:
                cpu.add_metric(labels, instance["cpu_percent"])
            if instance.get("rss_bytes") is not None:
                rss.add_metric(labels, instance["rss_bytes"])
        yield cpu
        yield rss


def _finite(value: float) -> float:
    return value if math.isfinite(value) else 0.0


COLLECTOR = TrainingCollector()
_registered = False


def follow(monitor) -> None:
    """Export ``monitor``'s state on this process's ``/metrics`` (None: stop)."""
    global _registered
    COLLECTOR.monitor = monitor
    if not _registered:
        REGISTRY.register(COLLECTOR)
        _registered = True
