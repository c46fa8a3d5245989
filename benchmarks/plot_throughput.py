"""One run of ``bench_training_throughput.py`` as bars: each row's agent steps/s in every
round, env-only play first, so that training's share of the env's pace is seen at once.

    python benchmarks/plot_throughput.py benchmarks/results/training_throughput.txt \
        --run 9 --out docs/results/img/training_throughput.png
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from pages import finish_rows  # noqa: E402

ROW = re.compile(r"^\s+(.+?)\s+\d+ steps\s+[\d.]+ s\s+([\d.]+) agent steps/s")


def read_run(path: Path, run: int) -> dict[str, list[float]]:
    """Row label -> agent steps/s of each round, for the lines under ``# run RUN``."""
    rows: dict[str, list[float]] = {}
    inside = False
    for line in path.read_text().splitlines():
        if line.startswith("# run "):
            inside = line.strip() == f"# run {run}"
        elif inside and (match := ROW.match(line)):
            rows.setdefault(match.group(1), []).append(float(match.group(2)))
    if not rows:
        raise SystemExit(f"{path} has no rows under '# run {run}'")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--run", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = read_run(args.results, args.run)
    rounds = max(len(v) for v in rows.values())
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(rows) + 1.2))
    height = 0.8 / rounds
    for r in range(rounds):
        values = [v[r] if r < len(v) else 0.0 for v in rows.values()]
        offsets = [i + (r - (rounds - 1) / 2) * height for i in range(len(rows))]
        ax.barh(offsets, values, height=height, label=f"round {r + 1}")
    finish_rows(fig, ax, list(rows), "agent steps/s (start-up included)", args.out)


if __name__ == "__main__":
    main()
