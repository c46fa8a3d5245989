"""The training page and the sc2dask_ metrics, on a real LocalCluster during real training."""

import json
import subprocess
import sys
import urllib.request

import pytest
from bokeh.client import pull_session
from distributed import Client
from prometheus_client.parser import text_string_to_metric_families

from sc2dask import train
from sc2dask.monitoring.telemetry import PAGE, TRAINING_TOPIC, TrainingPublisher, training_page_link
from tests.waiting import wait_until

pytestmark = [pytest.mark.usefixtures("sc2path"), pytest.mark.cluster]
TINY = dict(action_set="move", screen=16, minimap=16)
INDIVIDUAL = [
    "individual-sc2dask-training",
    "individual-sc2dask-score",
    "individual-sc2dask-steps",
    "individual-sc2dask-version",
    "individual-sc2dask-bytes",
    "individual-sc2dask-instances",
]


def dashboard(client) -> str:
    """The dashboard's base address (``dashboard_link`` ends in /status)."""
    return client.dashboard_link.rsplit("/", 1)[0]


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, response.read().decode()


def scrape(client) -> dict[str, list]:
    """``/metrics`` of the scheduler: sc2dask metric name -> [(labels, value)]."""
    status, text = get(dashboard(client) + "/metrics")
    assert status == 200
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith("sc2dask_"):
                out.setdefault(sample.name, []).append((sample.labels, sample.value))
    return out


def value(metrics: dict, name: str) -> float:
    ((labels, number),) = metrics[name]
    return number


def page_data(url: str) -> dict[str, dict]:
    """The training page's data sources, as a Bokeh client session (a browser's view) sees them."""
    session = pull_session(url=url)
    try:
        doc = session.document
        return {
            name: dict(doc.get_model_by_name(name).data)
            for name in ("sc2dask-rows", "sc2dask-episodes", "sc2dask-workers", "sc2dask-instances")
        }
    finally:
        session.close()


def test_the_page_and_metrics_follow_a_training_run(client):
    handle = train(client=client, envs=2, max_steps=20_000, agent_overrides=TINY)
    try:
        url = training_page_link(client)
        assert url == dashboard(client) + "/" + PAGE

        wait_until(
            lambda: handle.progress.episodes >= 2 or not handle.running,
            timeout=300,
            what="two episodes",
        )

        def live():
            data = page_data(url)
            return (
                data
                if (
                    len(data["sc2dask-rows"]["agent_steps"]) >= 5
                    and data["sc2dask-episodes"]["score"]
                    and len(data["sc2dask-instances"]["sc2_pid"]) == 2
                )
                else None
            )

        data = wait_until(live, what="rows, episodes and both SC2 instances on the page")
        rows = data["sc2dask-rows"]
        assert rows["agent_steps"] == sorted(rows["agent_steps"]) and rows["agent_steps"][0] > 0
        assert rows["version"][-1] >= 1 and max(rows["bytes_per_update"]) > 0
        assert all(step > 0 for step in rows["steps_per_s"][1:])
        instances = data["sc2dask-instances"]
        assert sorted(instances["map"]) == ["MoveToBeacon"] * 2
        assert len(set(instances["worker"])) == 2  # one env per worker
        assert all(pid > 0 for pid in instances["sc2_pid"])
        assert all(mb > 10 for mb in instances["rss_mb"])  # an emulator is a Python process
        assert sorted(data["sc2dask-workers"]["instances"]) == [1, 1]

        later = wait_until(
            lambda: (
                (d := page_data(url))
                and d["sc2dask-rows"]["agent_steps"][-1] > rows["agent_steps"][-1]
                and d
            ),
            what="the page to show new updates",
        )
        assert later["sc2dask-rows"]["update"][-1] > rows["update"][-1]

        metrics = wait_until(
            lambda: (
                (m := scrape(client)).get("sc2dask_env_steps_per_second")
                and all(v > 0 for _, v in m["sc2dask_env_steps_per_second"])
                and m
            ),
            what="both workers' env steps/s on /metrics",
        )
        assert {labels["worker"] for labels, _ in metrics["sc2dask_sc2_instances"]} == set(
            instances["worker"]
        )
        assert sum(v for _, v in metrics["sc2dask_sc2_instances"]) == 2
        assert all(v > 2**20 for _, v in metrics["sc2dask_sc2_rss_bytes"])
        assert 0 < value(metrics, "sc2dask_agent_steps_total") <= 20_000
        assert value(metrics, "sc2dask_agent_steps_per_second") > 0
        assert value(metrics, "sc2dask_parameter_version") >= 1
        # central mode with overlap: a host's batch is as stale as the updates made while
        # it played, its own last one and every rollout the other host finished meanwhile
        # (CI once saw 3), so the bound that always holds is the updates made so far
        staleness = value(metrics, "sc2dask_gradient_staleness")
        assert staleness == int(staleness)
        assert 0 <= staleness <= value(metrics, "sc2dask_parameter_version")
        assert value(metrics, "sc2dask_bytes_moved_total") > 0
        ((labels, _),) = metrics["sc2dask_training_info"]
        assert labels["map"] == "MoveToBeacon" and labels["mode"] == "central"
    finally:
        handle.stop()
        summary = handle.wait(timeout=300)
    metrics = scrape(client)  # the last rows are flushed when the run ends
    assert value(metrics, "sc2dask_agent_steps_total") == summary["agent_steps"]
    assert value(metrics, "sc2dask_gradient_staleness") == handle.progress.history[-1]["staleness"]
    assert value(metrics, "sc2dask_updates_total") == summary["updates"]
    assert value(metrics, "sc2dask_episodes_total") == summary["episodes"]
    assert value(metrics, "sc2dask_parameter_version") == summary["version"]
    assert value(metrics, "sc2dask_episode_score") == pytest.approx(summary["mean_score_last_100"])
    wait_until(
        lambda: "sc2dask_sc2_instances" not in scrape(client),
        timeout=30,
        what="closed hosts to leave the instance metrics",
    )


def test_pages_answer_and_are_listed_in_the_more_menu(client):
    base = dashboard(client)
    status, html = get(f"{base}/{PAGE}")
    assert status == 200 and 'id="myTopnav"' in html and "Bokeh" in html  # the Dask look
    for name in INDIVIDUAL:
        assert get(f"{base}/{name}")[0] == 200
    status, listed = get(f"{base}/individual-plots.json")
    assert set(f"/{name}" for name in INDIVIDUAL) <= set(json.loads(listed).values())
    status, html = get(f"{base}/status")  # the "More..." menu of every page
    for name in INDIVIDUAL:
        assert f'href="{name}"' in html


def test_malformed_events_are_ignored(client):
    client.log_event(TRAINING_TOPIC, {"rows": "not a run"})
    publisher = TrainingPublisher(client, {"map": "MoveToBeacon", "mode": "async"})
    publisher.publish(
        {
            "update": 1,
            "agent_steps": 64,
            "wall_s": 0.5,
            "version": 1,
            "staleness": 2,
            "mean_score_last_100": 3.0,
            "episodes": 1,
            "bytes_moved": 4096,
            "note": "text is dropped",
        },
        [3.0],
    )
    publisher.flush()
    metrics = wait_until(
        lambda: (m := scrape(client)).get("sc2dask_agent_steps_total") == [({}, 64)] and m,
        timeout=10,
        what="the published row",
    )
    assert value(metrics, "sc2dask_gradient_staleness") == 2
    assert value(metrics, "sc2dask_episode_score_last") == 3.0


def test_dask_scheduler_command_line_preload(tmp_path):
    scheduler_file = tmp_path / "scheduler.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dask",
            "scheduler",
            "--preload",
            "sc2dask.dashboard",
            "--port",
            "0",
            "--dashboard-address",
            ":0",
            "--scheduler-file",
            str(scheduler_file),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(scheduler_file.exists, timeout=60, what="the scheduler file")
        with Client(scheduler_file=str(scheduler_file), timeout=30) as client:
            assert training_page_link(client) == dashboard(client) + "/" + PAGE
            assert get(f"{dashboard(client)}/{PAGE}")[0] == 200
            publisher = TrainingPublisher(client, {"map": "DefeatRoaches", "mode": "sync"})
            publisher.publish(
                {
                    "update": 7,
                    "agent_steps": 700,
                    "wall_s": 2.0,
                    "version": 7,
                    "staleness": 0,
                    "mean_score_last_100": 1.5,
                    "episodes": 3,
                    "bytes_moved": 10,
                },
                [],
            )
            publisher.flush()
            metrics = wait_until(
                lambda: (m := scrape(client)).get("sc2dask_updates_total") and m,
                timeout=10,
                what="the published row",
            )
            assert value(metrics, "sc2dask_updates_total") == 7
            ((labels, _),) = metrics["sc2dask_training_info"]
            assert labels["map"] == "DefeatRoaches"
    finally:
        process.terminate()
        process.wait(timeout=30)
