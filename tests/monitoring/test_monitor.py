"""The scheduler's TrainingMonitor and the page's text, fed events as any client could send."""

import pytest

from sc2dask.monitoring.monitor import TrainingMonitor
from sc2dask.monitoring.page import _summary_html
from sc2dask.monitoring.telemetry import HOSTS_TOPIC, TRAINING_TOPIC

pytestmark = pytest.mark.unit

ROW = {
    "update": 1,
    "agent_steps": 64,
    "wall_s": 0.5,
    "version": 1,
    "staleness": 0,
    "mean_score_last_100": 3.0,
    "episodes": 1,
    "bytes_moved": 4096,
}


def test_event_strings_reach_the_page_as_text_not_markup():
    monitor = TrainingMonitor()
    monitor.log_event(
        TRAINING_TOPIC,
        {
            "run": {"id": "<b>1</b>", "map": "<script>x()</script>", "mode": "sync&"},
            "rows": [ROW],
            "ended": [],
        },
    )
    text = _summary_html(monitor)
    assert "<script>" not in text and "&lt;script&gt;x()&lt;/script&gt;" in text
    assert "sync&amp;" in text and "&lt;b&gt;1&lt;/b&gt;" in text


def _host(monitor, name, steps=10):
    monitor.log_event(
        HOSTS_TOPIC,
        {
            "host": name,
            "worker": f"tcp://{name}:1",
            "pid": 1,
            "time": 1.0,
            "envs": [{"steps": steps, "restarts": 0}],
        },
    )


def test_hosts_gone_silent_are_forgotten_as_news_arrives_even_with_no_page_open():
    monitor = TrainingMonitor()
    for i in range(50):
        _host(monitor, f"old{i}")
    for stats in monitor.hosts.values():
        stats["received"] -= 3600  # an hour without news
    _host(monitor, "new")
    assert list(monitor.hosts) == ["new"]
