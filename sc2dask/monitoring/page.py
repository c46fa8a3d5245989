"""The training page of the Dask dashboard, and ``sc2dask_`` metrics on ``/metrics``.

A scheduler preload (``sc2dask.local_cluster()`` adds it to the clusters it starts)::

    dask scheduler --preload sc2dask.dashboard

Importing it adds Bokeh applications to the dashboard (the scheduler builds its Bokeh
server from ``distributed.dashboard.scheduler.applications`` after importing preloads):

- ``/sc2dask``: the training page, with the dashboard's navigation bar;
- ``/individual-sc2dask-training``: the same page bare, listed in "More..." and in
  ``/individual-plots.json`` (which the JupyterLab Dask extension reads);
- one ``/individual-sc2dask-*`` page per plot.

``dask_setup`` installs the ``TrainingMonitor`` that collects the runs' events and
points the Prometheus collector at it.
"""

from __future__ import annotations

import html
import itertools
import math

from bokeh.layouts import column, row
from bokeh.models import (
    ColumnDataSource,
    DataTable,
    Div,
    FactorRange,
    LinearAxis,
    NumberFormatter,
    NumeralTickFormatter,
    Range1d,
    TableColumn,
)
from bokeh.plotting import figure
from distributed.dashboard.components import DashboardComponent, add_periodic_callback
from distributed.dashboard.components.scheduler import BOKEH_THEME, env
from distributed.dashboard.scheduler import applications
from distributed.utils import log_errors

from . import metrics
from .monitor import ROW_COLUMNS, TrainingMonitor
from .telemetry import MONITOR_NAME, PAGE

UPDATE_MS = 500
PLOT_HEIGHT = 260
INSTANCE_COLUMNS = (
    "worker",
    "env",
    "map",
    "sc2_pid",
    "episodes",
    "restarts",
    "steps",
    "cpu_percent",
    "rss_mb",
)
WORKER_COLUMNS = ("worker", "instances", "steps", "steps_per_s", "restarts")


class TrainingSources(DashboardComponent):
    """The page's data, refreshed from the scheduler's ``TrainingMonitor``.

    Rows and episodes are streamed (only what is new crosses the websocket); the small
    per-worker and per-instance tables are replaced when they change.
    """

    def __init__(self, monitor: TrainingMonitor | None):
        self.monitor = monitor
        self.rows = ColumnDataSource({c: [] for c in ROW_COLUMNS}, name="sc2dask-rows")
        self.episodes = ColumnDataSource({"agent_steps": [], "score": []}, name="sc2dask-episodes")
        self.workers = ColumnDataSource({c: [] for c in WORKER_COLUMNS}, name="sc2dask-workers")
        self.instances = ColumnDataSource(
            {c: [] for c in INSTANCE_COLUMNS}, name="sc2dask-instances"
        )
        self.summary = Div(text="", sizing_mode="stretch_width", name="sc2dask-summary")
        self.worker_ranges: list[FactorRange] = []  # categorical axes listing the workers
        self._generation = 0
        self._rows_taken = self._episodes_taken = 0
        self.update()

    def update(self) -> None:
        monitor = self.monitor
        if monitor is None:
            self.summary.text = (
                "<b>No sc2dask monitor on this scheduler.</b> Start it with "
                "<code>dask scheduler --preload sc2dask.dashboard</code>."
            )
            return
        if monitor.generation != self._generation:  # a new run: start over
            self._generation = monitor.generation
            self._rows_taken = self._episodes_taken = 0
            self.rows.data = {c: [] for c in ROW_COLUMNS}
            self.episodes.data = {"agent_steps": [], "score": []}
        new = _tail(monitor.rows, monitor.rows_received - self._rows_taken)
        if new:
            self.rows.stream(
                {c: [r[c] for r in new] for c in ROW_COLUMNS}, rollover=monitor.history
            )
            self._rows_taken = monitor.rows_received
        new = _tail(monitor.episodes, monitor.episodes_received - self._episodes_taken)
        if new:
            self.episodes.stream(
                {"agent_steps": [s for s, _ in new], "score": [x for _, x in new]},
                rollover=monitor.history,
            )
            self._episodes_taken = monitor.episodes_received
        self._update_tables(monitor)
        self.summary.text = _summary_html(monitor)

    def _update_tables(self, monitor: TrainingMonitor) -> None:
        workers = monitor.by_worker()
        data = {"worker": list(workers)} | {
            c: [w[c] for w in workers.values()] for c in WORKER_COLUMNS[1:]
        }
        if data != dict(self.workers.data):
            self.workers.data = data
            for factor_range in self.worker_ranges:
                factor_range.factors = list(workers) or [""]
        instances = monitor.instances()
        data = {c: [_cell(i, c) for i in instances] for c in INSTANCE_COLUMNS}
        if data != dict(self.instances.data):
            self.instances.data = data


def _tail(items, n: int) -> list:
    n = min(n, len(items))
    return list(itertools.islice(items, len(items) - n, None)) if n > 0 else []


def _cell(instance: dict, column: str):
    if column == "rss_mb":
        rss = instance.get("rss_bytes")
        return math.nan if rss is None else rss / 2**20
    value = instance.get(column)
    return math.nan if value is None else value


def _summary_html(monitor: TrainingMonitor) -> str:
    run, last = monitor.run, monitor.latest
    if run is None or last is None:
        return "<b>No sc2dask training has reported to this scheduler yet.</b>"
    # Event strings come from any client of the scheduler: text, never markup.
    map_name, mode, run_id = (html.escape(str(run[k])) for k in ("map", "mode", "id"))
    return (
        f"<b>{map_name}</b>, {mode} updates (run {run_id}): "
        f"{last['agent_steps']:,.0f} agent steps, {last['update']:,.0f} updates, "
        f"{last['episodes']:,.0f} episodes, mean score (last 100) "
        f"{_number(last['mean_score_last_100'], '.2f')}{_win_rate(last)}, "
        f"weights v{last['version']:.0f}, "
        f"{_number(last['steps_per_s'], ',.0f')} steps/s"
    )


def _win_rate(row: dict) -> str:
    """ ", win rate (last 100 games) 45 %" in a game for two; nothing on a mini-game."""
    rate = row.get("win_rate_last_100", math.nan)
    return "" if math.isnan(rate) else f", win rate (last 100 games) {rate:.0%}"


def _number(value: float, spec: str) -> str:
    return "–" if math.isnan(value) else format(value, spec)


# --- plots: each takes the sources and returns a Bokeh model --------------------------------


def _figure(title: str, x_label: str, **kwargs):
    fig = figure(
        title=title,
        height=PLOT_HEIGHT,
        sizing_mode="stretch_width",
        tools="pan,wheel_zoom,box_zoom,reset,save,hover",
        toolbar_location="above",
        x_axis_label=x_label,
        **kwargs,
    )
    return fig


def score_plot(sources: TrainingSources):
    fig = _figure("Episode score", "agent steps", name="sc2dask-score")
    fig.scatter(
        "agent_steps", "score", source=sources.episodes, size=4, alpha=0.4, legend_label="episode"
    )
    fig.line(
        "agent_steps",
        "mean_score_last_100",
        source=sources.rows,
        line_width=2,
        color="firebrick",
        legend_label="mean of last 100",
    )
    fig.legend.location = "top_left"
    return fig


def steps_plot(sources: TrainingSources):
    fig = _figure(
        "Env steps/s, all workers", "seconds since the run started", name="sc2dask-steps-rate"
    )
    fig.line("wall_s", "steps_per_s", source=sources.rows, line_width=2)
    return fig


def worker_steps_plot(sources: TrainingSources):
    workers = FactorRange(factors=[""])
    sources.worker_ranges.append(workers)
    fig = _figure("Env steps/s per worker", "steps/s", y_range=workers, name="sc2dask-worker-steps")
    fig.hbar(y="worker", right="steps_per_s", height=0.6, source=sources.workers)
    return fig


def version_plot(sources: TrainingSources):
    fig = _figure("Parameter version and gradient staleness", "agent steps", name="sc2dask-version")
    fig.line("agent_steps", "version", source=sources.rows, line_width=2, legend_label="version")
    fig.extra_y_ranges = {"staleness": Range1d(0, 8)}
    fig.add_layout(LinearAxis(y_range_name="staleness", axis_label="staleness"), "right")
    fig.scatter(
        "agent_steps",
        "staleness",
        source=sources.rows,
        y_range_name="staleness",
        size=3,
        color="darkorange",
        legend_label="staleness",
    )
    fig.legend.location = "top_left"
    return fig


def bytes_plot(sources: TrainingSources):
    fig = _figure("Bytes moved per update", "update", name="sc2dask-bytes")
    fig.line("update", "bytes_per_update", source=sources.rows, line_width=2)
    fig.yaxis.formatter = NumeralTickFormatter(format="0.0 b")
    return fig


def instances_table(sources: TrainingSources):
    count = {"formatter": NumberFormatter(format="0,0")}
    one_decimal = {"formatter": NumberFormatter(format="0.0")}
    columns = [
        TableColumn(field=field, title=title, width=width, **formatter)
        for field, title, width, formatter in [
            ("worker", "worker", 170, {}),
            ("env", "env", 35, {}),
            ("map", "map", 110, {}),
            ("sc2_pid", "pid", 60, {}),
            ("episodes", "episodes", 60, count),
            ("restarts", "restarts", 60, count),
            ("steps", "steps", 60, count),
            ("cpu_percent", "CPU %", 55, one_decimal),
            ("rss_mb", "RSS MiB", 65, one_decimal),
        ]
    ]
    return column(
        Div(text="<b>SC2 instances</b>"),
        DataTable(
            source=sources.instances,
            columns=columns,
            index_position=None,
            height=200,
            sizing_mode="stretch_width",
            name="sc2dask-instances-table",
        ),
        sizing_mode="stretch_width",
    )


def training_layout(sources: TrainingSources):
    return column(
        row(score_plot(sources), steps_plot(sources), sizing_mode="stretch_width"),
        row(version_plot(sources), worker_steps_plot(sources), sizing_mode="stretch_width"),
        row(bytes_plot(sources), instances_table(sources), sizing_mode="stretch_width"),
        sizing_mode="stretch_width",
    )


def training_doc(*parts, navigation: bool = False):
    """A Bokeh document function ``(scheduler, extra, doc)`` showing ``parts``."""

    @log_errors
    def make_doc(scheduler, extra, doc):
        sources = TrainingSources(scheduler.plugins.get(MONITOR_NAME))
        doc.add_root(
            column(
                sources.summary,
                *(part(sources) for part in parts),
                sizing_mode="stretch_width",
                name="sc2dask-training",
            )
        )
        add_periodic_callback(doc, sources, UPDATE_MS)
        doc.title = "Dask: SC2 training"
        doc.theme = BOKEH_THEME
        if navigation:
            doc.template = env.get_template("simple.html")
            doc.template_variables.update(extra)

    return make_doc


PAGES = {
    f"/{PAGE}": training_doc(training_layout, navigation=True),
    "/individual-sc2dask-training": training_doc(training_layout),
    "/individual-sc2dask-score": training_doc(score_plot),
    "/individual-sc2dask-steps": training_doc(steps_plot, worker_steps_plot),
    "/individual-sc2dask-version": training_doc(version_plot),
    "/individual-sc2dask-bytes": training_doc(bytes_plot),
    "/individual-sc2dask-instances": training_doc(instances_table),
}
applications.update(PAGES)


def dask_setup(scheduler) -> None:
    """Collect sc2dask events on this scheduler and export them on ``/metrics``."""
    if MONITOR_NAME not in scheduler.plugins:
        scheduler.add_plugin(TrainingMonitor())
    metrics.follow(scheduler.plugins[MONITOR_NAME])


def dask_teardown(scheduler) -> None:
    if metrics.COLLECTOR.monitor is scheduler.plugins.get(MONITOR_NAME):
        metrics.follow(None)
