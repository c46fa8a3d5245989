"""Random play on the emulator against SC2LE's band, every map on one axis: where each
map's mean (± one standard error) falls, with the band scaled to [0, 1].

    python benchmarks/plot_fidelity.py --out docs/results/img/fidelity_random.png \
        benchmarks/results/fidelity.txt benchmarks/results/fidelity_fair_seats.txt

Reads the tables ``bench_fidelity.py`` prints; a map in a later file replaces the same
map of an earlier one (the newer measurement).
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from pages import finish_rows  # noqa: E402

HEADER = re.compile(r"Random play \((\d+) episodes a map")
ROW = re.compile(r"^(\w+)\s+(-?[\d.]+) ±\s*([\d.]+)\s+\S+\s+\S+\s+(-?[\d.]+)-(-?[\d.]+)\s")


def read_tables(paths: list[Path]) -> dict[str, tuple[float, float, float, float]]:
    """map -> (mean, standard error, band low, band high), the last file's where repeated."""
    maps: dict[str, tuple[float, float, float, float]] = {}
    for path in paths:
        episodes = None
        for line in path.read_text().splitlines():
            if header := HEADER.search(line):
                episodes = int(header.group(1))
            elif (row := ROW.match(line)) and episodes:
                mean, sd, low, high = (float(v) for v in row.groups()[1:])
                maps[row.group(1)] = (mean, sd / math.sqrt(episodes), low, high)
    return maps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    maps = read_tables(args.tables)
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(maps) + 1.2))
    ax.axvspan(0, 1, color="tab:green", alpha=0.15, label="SC2LE's band")
    for y, (mean, error, low, high) in enumerate(maps.values()):
        width = high - low
        ax.errorbar((mean - low) / width, y, xerr=error / width, fmt="o", color="tab:blue")
    xlabel = "random play's mean ± 1 standard error, in SC2LE's band (0: its low end, 1: high)"
    finish_rows(fig, ax, list(maps), xlabel, args.out)


if __name__ == "__main__":
    main()
