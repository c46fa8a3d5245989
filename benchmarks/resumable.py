"""A training run for a wall budget that survives kills, for the long benchmarks.

``train_within`` trains until the run's wall time reaches the budget in all: run the same
command again after a kill (or in the next session) and it resumes from the last
checkpoint, drops the curve rows past it, and trains only the time left. The curve (one
row per update, ``columns`` of the run's history) is kept in ``curve.csv.gz`` beside the
checkpoints, rewritten atomically as often as checkpoints are made: gzipped, as every
curve under benchmarks/results is (a plain CSV of a long run is megabytes).
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import math
import os
import threading
from pathlib import Path

import sc2dask
from sc2dask.training import checkpoint
from sc2dask.training.run_settings import resolve_run

CHECKPOINT_EVERY = 50  # updates: at most this much training is lost to a kill
CURVE = "curve.csv.gz"


def train_within(
    client, folder: Path, minutes: float, columns: list[str], label: str, **settings
) -> list[dict]:
    """The whole curve of the run in ``folder``, after training what is left of its
    ``minutes`` with ``settings`` (``sc2dask.train``'s keywords)."""
    folder.mkdir(parents=True, exist_ok=True)
    saved = folder / "checkpoints"
    resume = (saved / checkpoint.LATEST).exists()
    state = checkpoint.load(saved)[2] if resume else {"agent_steps": 0}
    if resume:
        refuse_other_settings(saved, state, settings)
    steps = int(state["agent_steps"])
    curve = curve_up_to(folder / CURVE, steps)
    spent = curve[-1]["wall_s"] if curve else 0.0
    left = minutes * 60 - spent
    if left > 5:
        print(f"{label}: {f'resuming at {round(spent)} s' if resume else 'starting'}", flush=True)
        curve += _segment(client, folder, curve, left, spent, resume, columns, label, settings)
        write_curve(folder / CURVE, curve, columns)
    return curve


def _segment(client, folder, before, seconds, offset, resume, columns, label, settings):
    """Rows of one training segment of at most ``seconds``, their wall time after ``offset``.
    The curve so far is rewritten as often as checkpoints are made, so that a kill loses
    no more of it than of the training (a resume drops the rows past its checkpoint)."""
    rows: list[dict] = []
    saved = folder / "checkpoints"

    def record(progress):
        row = progress.history[-1]
        rows.append({k: row.get(k, math.nan) for k in columns} | {"wall_s": offset + row["wall_s"]})
        if len(rows) % CHECKPOINT_EVERY == 0:
            write_curve(folder / CURVE, before + rows, columns)
        if len(rows) % 200 == 0:
            print(
                f"{label}: {row['agent_steps']:>9} steps {rows[-1]['wall_s'] / 60:6.1f} min  "
                + "  ".join(f"{k} {rows[-1][k]:.3g}" for k in columns[2:4]),
                flush=True,
            )

    run = sc2dask.train(
        client=client,
        max_steps=10**12,
        checkpoint_dir=str(saved),
        checkpoint_every=CHECKPOINT_EVERY,
        resume=resume,
        on_update=record,
        **settings,
    )
    timer = threading.Timer(seconds, run.stop)
    timer.start()
    try:
        run.wait()
    finally:
        timer.cancel()
    return rows


def refuse_other_settings(saved: Path, state: dict, settings: dict) -> None:
    """A resumed run must train what its first segment did: a candidate resumed without its
    flag, or the defaults after one of them changed, would make one curve of two runs.
    ``state``: the checkpoint's."""
    overrides = {k: v for k, v in settings.items() if k != "agent_overrides"}
    run = resolve_run(overrides, settings.get("agent_overrides"))
    now = {"agent_class": run.agent_spec.class_path, **run.agent_spec.config}
    then = checkpoint.network_differences(state, run.agent_spec, names=run.agent_spec.config)
    env_now = dataclasses.asdict(run.env_config)
    for name, value in checkpoint.checkpoint_env(saved).items():
        if name in env_now and _plain(value) != _plain(env_now[name]):
            then[name], now[name] = value, env_now[name]
    if then:
        changed = "; ".join(f"{k} {then[k]!r} then, {now[k]!r} now" for k in sorted(then))
        raise SystemExit(
            f"{saved.parent}: its checkpoint was trained with other settings ({changed}). "
            "Resume it with the flags it was started with (its run.txt names them), or give "
            "this run its own --out."
        )


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def curve_up_to(path: Path, steps: int) -> list[dict]:
    """The curve so far, without rows past the checkpoint a resumed run starts from (a
    run begun before curves were gzipped has a plain ``curve.csv``)."""
    path = next((p for p in (path, path.with_suffix("")) if p.exists()), path)
    if not path.exists():
        return []
    with open_text(path, "r") as f:
        rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]
    return [r for r in rows if r["agent_steps"] <= steps]


def write_curve(path: Path, rows: list[dict], columns: list[str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open_text(tmp, "w", gzipped=path.suffix == ".gz") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="nan")  # a column added since
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)
    path.with_suffix("").unlink(missing_ok=True)  # the plain CSV it replaces, if any


def open_text(path: Path, mode: str, gzipped: bool | None = None):
    """A CSV file for reading or writing, gzipped where its name ends in .gz."""
    if gzipped if gzipped is not None else path.suffix == ".gz":
        return gzip.open(path, mode + "t", newline="")
    return open(path, mode, newline="")


def best_mean(curve: list[dict], key: str) -> float:
    """The best ``key`` (a mean over 100 episodes) once 100 ended; of fewer before that."""
    rows = [r for r in curve if r["episodes"] >= 100] or curve
    return max((r[key] for r in rows if not math.isnan(r[key])), default=math.nan)
