"""The mini-games table: each map trained with its defaults for a wall budget, its curve, a
clip of the trained agent, and one row of the table on ``docs/results/minigames.md``.

    python benchmarks/bench_minigames.py --maps all --minutes 60 --envs 4 --json
    nohup python benchmarks/bench_minigames.py --maps DefeatRoaches --minutes 30 &

A map's run lives in ``benchmarks/results/minigames/<map>/``: ``curve.csv.gz`` and
``curve.png``, ``row.json`` (its row of the table), ``clip.gif`` (both copied to
``docs/results/img/minigames/``), and ``checkpoints/`` (not committed). Runs are resumable: the same command again (or after a kill) continues from
the last checkpoint until the map's wall time reaches ``--minutes`` in all, and a map whose
budget is spent is only tabled again. So a table may gather runs of several sessions; each
row names the commit of its last segment. Figures, not a test: run it with nothing else
busy, or say what ran beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import candidates
import pages
from distributed import Client
from resumable import best_mean, train_within

from sc2dask.emulator.maps import SCENARIOS
from sc2dask.errors import ConfigError
from sc2dask.game import EnvConfig
from sc2dask.training import checkpoint
from sc2dask.training.cluster import local_cluster
from sc2dask.training.evaluate import evaluate
from sc2dask.training.run_settings import resolve_run

ROOT = Path(__file__).resolve().parents[1]
# The code this process runs: the commit when it started (later commits do not reach it).
COMMIT = subprocess.run(
    ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
).stdout.strip()
RESULTS = ROOT / "benchmarks/results/minigames"
PAGE = ROOT / "docs/results/minigames.md"
TABLE_START, TABLE_END = "<!-- bench_minigames: table -->", "<!-- bench_minigames: end -->"
# Published anchors (../shared/docs/baselines.md): SC2LE random, FullyConv, Relational DRL,
# StarCraft GrandMaster, and Reaver's A2C (score, samples, hours).
ANCHORS = {
    "MoveToBeacon": (1, 26, 27, 28, "26.3 (0.56M, 0.5 h)"),
    "CollectMineralShards": (17, 103, 196, 177, "102.8 (75M, 50 h)"),
    "FindAndDefeatZerglings": (4, 45, 62, 61, "22.1 (30M, 20 h)"),
    "DefeatRoaches": (1, 100, 303, 215, "72.5 (173M, 150 h)"),
    "DefeatZerglingsAndBanelings": (23, 62, 736, 727, "56.8 (10M, 15 h)"),
    "CollectMineralsAndGas": (12, 3978, 5055, 7566, "2,267 (17M, 10 h)"),
    "BuildMarines": ("<1", 3, 123, 133, "—"),
}
COLUMNS = ["agent_steps", "wall_s", "mean_score_last_100", "episodes", "entropy", "value_loss"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maps", default="all", help="comma-separated, or all")
    parser.add_argument("--minutes", type=float, default=60.0, help="wall budget per map")
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--mode", default="central")
    parser.add_argument("--episodes", type=int, default=10, help="evaluation episodes")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--page", default=str(PAGE), help="the docs page the table goes on")
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    candidates.add_flags(parser, "agent", "train")
    args = parser.parse_args()
    candidates.refuse_default_folders(parser, args, RESULTS, PAGE)
    args.agent_overrides = candidates.overrides(parser, args, "agent")
    args.train_overrides = candidates.overrides(parser, args, "train")
    if {"map", "envs", "mode", "client", "agent_overrides"} & set(args.train_overrides):
        parser.error("--train takes settings other than map, envs and mode (their own flags)")
    maps = list(SCENARIOS) if args.maps == "all" else args.maps.split(",")
    unknown = sorted(set(maps) - set(SCENARIOS))
    if unknown:
        parser.error(f"unknown maps {unknown}; choose from {', '.join(SCENARIOS)}")
    for name in maps:  # bad candidate values fail here, before the cluster starts
        try:
            resolve_run(
                {"map": name, "envs": args.envs, "mode": args.mode, **args.train_overrides},
                args.agent_overrides,
            )
        except ConfigError as exc:
            parser.error(f"{name}: {exc}")
    rows = {}
    with (
        local_cluster(args.workers, -(-args.envs // args.workers)) as cluster,
        Client(cluster, direct_to_workers=True) as client,
    ):
        for name in maps:
            rows[name] = train_map(client, name, Path(args.out) / name, args)
    write_table(Path(args.out), Path(args.page))
    if args.json:
        print(json.dumps(rows))
    return 0


def train_map(client, name: str, folder: Path, args) -> dict:
    """Train ``name`` until its wall time reaches the budget, then evaluate and clip it."""
    curve = train_within(
        client,
        folder,
        args.minutes,
        COLUMNS,
        name,
        map=name,
        envs=args.envs,
        mode=args.mode,
        agent_overrides=args.agent_overrides,
        **args.train_overrides,
    )
    saved = folder / "checkpoints"
    plot(curve, folder / "curve.png", name, args.agent + args.train)
    agent = checkpoint.checkpoint_agent_path(str(saved))
    result = evaluate(
        agent,
        episodes=args.episodes,
        client=client,
        config=EnvConfig(**checkpoint.checkpoint_env(str(saved))),
        video=str(folder / "clip.gif"),
    )
    state = checkpoint.load(saved)[2]
    row = {
        "map": name,
        "final_mean_last_100": round(curve[-1]["mean_score_last_100"], 2),
        "best_mean_last_100": round(best_mean(curve, "mean_score_last_100"), 2),
        "evaluation_mean": round(result.mean, 2),
        "evaluation_episodes": result.episodes,
        "agent_steps": curve[-1]["agent_steps"],
        "wall_minutes": round(curve[-1]["wall_s"] / 60, 1),
        "envs": args.envs,
        "cores": os.cpu_count(),
        "mode": args.mode,
        "agent_class": state["agent_class"],
        "agent_overrides": args.agent,  # a candidate's settings; [] for the defaults
        "train_overrides": args.train,
        "commit": COMMIT,
        "date": time.strftime("%Y-%m-%d"),
    }
    (folder / "row.json").write_text(json.dumps(row, indent=1) + "\n")
    docs = Path(args.page).parent / "img/minigames"  # the page shows them: mkdocs serves docs/
    docs.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(folder / "curve.png", docs / f"{name}.png")
    shutil.copyfile(folder / "clip.gif", docs / f"{name}.gif")
    print(json.dumps(row), flush=True)
    return row


def plot(rows: list[dict], out: Path, name: str, candidate: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5), sharey=True)
    score = [r["mean_score_last_100"] for r in rows]
    left.plot([r["agent_steps"] for r in rows], score)
    right.plot([r["wall_s"] / 60 for r in rows], score)
    random, fullyconv = ANCHORS[name][:2]
    for ax in (left, right):
        ax.axhline(fullyconv, color="grey", linestyle="--", linewidth=0.8, label="SC2LE FullyConv")
        if isinstance(random, (int, float)):
            ax.axhline(random, color="grey", linestyle=":", linewidth=0.8, label="SC2LE random")
        ax.grid(alpha=0.3)
    left.legend(fontsize=8)
    left.set_xlabel("agent steps")
    left.set_ylabel("mean score, last 100 episodes")
    right.set_xlabel("wall time (min)")
    settings = f"the defaults with {', '.join(candidate)}" if candidate else "sc2dask's defaults"
    fig.suptitle(f"{name} on the emulator, {settings} ({time.strftime('%Y-%m-%d')})")
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def write_table(out: Path, page: Path) -> None:
    """The table between the page's markers, one row per map that has a ``row.json``."""
    header = [
        "map", "final mean (last 100)", "best mean", "evaluation (episodes)", "agent steps",
        "wall", "envs, cores, mode", "agent", "commit", "random", "FullyConv", "Relational",
        "GrandMaster", "Reaver A2C", "curve, clip",
    ]  # fmt: skip
    lines = [pages.row(header), pages.row(["---"] * len(header))]
    for name in SCENARIOS:
        anchors = [f"{v:,}" if isinstance(v, int) else str(v) for v in ANCHORS[name]]
        path = out / name / "row.json"
        if not path.exists():
            lines.append(pages.row([name, "not trained yet", *[""] * 7, *anchors, ""]))
            continue
        r = json.loads(path.read_text())
        img = f"img/minigames/{name}"
        cells = [
            name,
            f"**{r['final_mean_last_100']:g}**",
            f"{r['best_mean_last_100']:g}",
            f"{r['evaluation_mean']:g} ({r['evaluation_episodes']})",
            f"{r['agent_steps']:,}",
            f"{r['wall_minutes']:g} min",
            f"{r['envs']}, {r['cores']}, {r['mode']}",
            r["agent_class"].rpartition(":")[2],
            r["commit"],
            *anchors,
            f"[curve]({img}.png), [clip]({img}.gif)",
        ]
        lines.append(pages.row(cells))
    pages.put_between(page, TABLE_START, TABLE_END, lines)


if __name__ == "__main__":
    main()
