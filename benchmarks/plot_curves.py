"""Several runs' curves on one plot, against agent steps and against wall time: agents or
settings side by side, as a results page shows them.

    python benchmarks/plot_curves.py --out docs/results/img/x.png --title "..." \
        FullyConv=benchmarks/results/.../curve.csv.gz Relational=.../curve.csv.gz

Each curve is a benchmark's ``curve.csv`` (plain or gzipped) with ``agent_steps``,
``wall_s`` and the column plotted (``--column``, the mean score of the last 100 episodes
unless given). ``--level LABEL=VALUE`` draws a level to read the curves against, such as
untrained play's, as a dashed line.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from resumable import curve_up_to  # noqa: E402


def read_curve(path: Path, column: str) -> tuple[list[float], list[float], list[float]]:
    """(agent steps, wall minutes, values) of the rows where ``column`` has a value."""
    if not path.exists():
        raise SystemExit(f"{path}: no such curve")
    rows = [r for r in curve_up_to(path, math.inf) if not math.isnan(r[column])]
    return (
        [r["agent_steps"] for r in rows],
        [r["wall_s"] / 60 for r in rows],
        [r[column] for r in rows],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("curves", nargs="+", metavar="LABEL=CURVE.csv[.gz]")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--title", default="")
    parser.add_argument("--column", default="mean_score_last_100")
    parser.add_argument("--level", action="append", default=[], metavar="LABEL=VALUE")
    args = parser.parse_args()
    fig, (by_steps, by_time) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for item in args.curves:
        label, _, path = item.partition("=")
        if not path:
            parser.error(f"{item!r}: give each curve as LABEL=PATH")
        steps, minutes, values = read_curve(Path(path), args.column)
        by_steps.plot(steps, values, label=label)
        by_time.plot(minutes, values, label=label)
    for item in args.level:
        label, _, value = item.partition("=")
        try:
            level = float(value)
        except ValueError:
            parser.error(f"{item!r}: give each level as LABEL=NUMBER")
        for ax in (by_steps, by_time):
            ax.axhline(level, linestyle="--", color="grey", linewidth=1)
        by_time.annotate(label, (0, level), xytext=(2, 2), textcoords="offset points",
                         fontsize="small", color="grey")  # fmt: skip
    by_steps.set_xlabel("agent steps")
    by_time.set_xlabel("wall minutes")
    by_steps.set_ylabel(args.column.replace("_", " "))
    by_steps.legend()
    fig.suptitle(args.title)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90)


if __name__ == "__main__":
    main()
