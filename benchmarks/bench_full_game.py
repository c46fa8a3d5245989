"""The full game: Simple64 against a built-in bot, trained with sc2dask's defaults for a
wall budget; win rate and score against agent steps and wall time, then games against
each bot level asked for.

    python benchmarks/bench_full_game.py --opponent bot:terran:very_easy --minutes 180
    nohup python benchmarks/bench_full_game.py --minutes 180 --json &

A run lives in ``benchmarks/results/fullgame/<opponent>-<action set>-<reward>/``: ``curve.csv.gz``,
``curve.png`` (copied to ``docs/results/img/fullgame/``), ``row.json`` and
``checkpoints/`` (not committed). Like ``bench_minigames.py`` it resumes from its last
checkpoint until the wall time reaches ``--minutes`` in all, and the row names the commit
of its last segment. The row goes on ``docs/results/fullgame.md`` between the markers. A
candidate (``--agent entropy-coef=0.01``, ``--train step-mul=32``) must be given its own
``--out`` and ``--page``; its row names what it changed.
Figures, not a test: run it with nothing else busy, or say what ran beside it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import time
from pathlib import Path

import candidates
import pages
from distributed import Client
from resumable import best_mean, train_within

from sc2dask.errors import ConfigError
from sc2dask.game import EnvConfig
from sc2dask.training import checkpoint
from sc2dask.training.cluster import local_cluster
from sc2dask.training.evaluate import evaluate
from sc2dask.training.run_settings import resolve_run

ROOT = Path(__file__).resolve().parents[1]
COMMIT = subprocess.run(  # the code this process runs: the commit when it started
    ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
).stdout.strip()
RESULTS = ROOT / "benchmarks/results/fullgame"
PAGE = ROOT / "docs/results/fullgame.md"
TABLE_START, TABLE_END = "<!-- bench_full_game: table -->", "<!-- bench_full_game: end -->"
COLUMNS = [
    "agent_steps", "wall_s", "win_rate_last_100", "mean_score_last_100", "episodes",
    "entropy", "value_loss", "practice_win_rate_last_100", "practice_level_last_100",
]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", default="Simple64")
    parser.add_argument("--opponent", default="bot:terran:very_easy")
    parser.add_argument("--minutes", type=float, default=180.0, help="wall budget in all")
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--mode", default="central")
    parser.add_argument("--games", type=int, default=8, help="evaluation games per bot")
    parser.add_argument(
        "--evaluate-against",
        default="very_easy,easy",
        help="bot difficulties to evaluate against after training (comma-separated)",
    )
    parser.add_argument(
        "--action-set", default=None, help="the agent's action set (default: the map's)"
    )
    parser.add_argument(
        "--reward",
        default=None,
        help="score | outcome | both | trade | material | value (default: the map's)",
    )
    candidates.add_flags(parser, "agent", "train")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--page", default=str(PAGE))
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    args = parser.parse_args()
    candidates.refuse_default_folders(parser, args, RESULTS, PAGE)
    race = args.opponent.split(":")[1] if args.opponent.count(":") == 2 else "terran"
    agent = candidates.overrides(parser, args, "agent")
    train = candidates.overrides(parser, args, "train")
    if {"map", "opponent", "envs", "mode", "reward", "agent_overrides"} & set(train):
        parser.error("--train takes settings other than map, opponent, envs, mode and reward")
    if args.action_set and "action_set" in agent:
        parser.error("give the action set once: --action-set or --agent action-set=, not both")
    agent |= {"action_set": args.action_set} if args.action_set else {}
    given = ({"reward": args.reward} if args.reward else {}) | train
    mine = {"map": args.map, "opponent": args.opponent, "envs": args.envs, "mode": args.mode}
    try:  # before the cluster starts
        run = resolve_run(mine | given, agent)
    except ConfigError as exc:
        parser.error(str(exc))
    action_set, reward = run.agent.action_set, run.train.reward
    folder = Path(args.out) / f"{args.opponent.replace(':', '_')}-{action_set}-{reward}"
    with (
        local_cluster(args.workers, -(-args.envs // args.workers)) as cluster,
        Client(cluster, direct_to_workers=True) as client,
    ):
        curve = train_within(
            client,
            folder,
            args.minutes,
            COLUMNS,
            f"{args.map} against {args.opponent}",
            map=args.map,
            opponent=args.opponent,
            envs=args.envs,
            mode=args.mode,
            agent_overrides=agent,
            **given,
        )
        if not curve:
            raise SystemExit(f"{folder}: no update finished within --minutes; give it longer")
        saved = str(folder / "checkpoints")
        env = checkpoint.checkpoint_env(saved)
        games = {}
        for level in filter(None, args.evaluate_against.split(",")):
            config = EnvConfig(**(env | {"opponent": f"bot:{race}:{level}"}))
            result = evaluate(
                checkpoint.checkpoint_agent_path(saved),
                episodes=args.games,
                client=client,
                config=config,
            )
            games[level] = result.results | {"mean_score": round(result.mean, 1)}
    plot(
        curve, folder / "curve.png", f"{args.map} against {args.opponent}", args.agent + args.train
    )
    row = {
        "map": args.map,
        "opponent": args.opponent,
        "action_set": action_set,
        "reward": reward,
        "final_win_rate_last_100": _round(curve[-1]["win_rate_last_100"]),
        "best_win_rate_last_100": _round(best_mean(curve, "win_rate_last_100")),
        "final_mean_score_last_100": _round(curve[-1]["mean_score_last_100"], 0),
        "games_trained": int(curve[-1]["episodes"]),
        "agent_steps": int(curve[-1]["agent_steps"]),
        "wall_minutes": round(curve[-1]["wall_s"] / 60, 1),
        "evaluation": games,
        "agent_overrides": args.agent,  # a candidate's settings; [] for the defaults
        "train_overrides": args.train,
        "envs": args.envs,
        "cores": os.cpu_count(),
        "mode": args.mode,
        "commit": COMMIT,
        "date": time.strftime("%Y-%m-%d"),
    }
    (folder / "row.json").write_text(json.dumps(row, indent=1) + "\n")
    docs = Path(args.page).parent / "img/fullgame"
    docs.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(folder / "curve.png", docs / f"{folder.name}.png")
    write_table(Path(args.out), Path(args.page))
    print(json.dumps(row) if args.json else f"{folder}: {row}")
    return 0


def _round(value: float, digits: int = 2):
    return None if math.isnan(value) else round(value, digits)


def plot(rows: list[dict], out: Path, title: str, candidate: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 6), sharex="col", sharey="row")
    steps = [r["agent_steps"] for r in rows]
    minutes = [r["wall_s"] / 60 for r in rows]
    for row, key, label in (
        (0, "win_rate_last_100", "win rate, last 100 games"),
        (1, "mean_score_last_100", "score, last 100 games"),
    ):
        values = [r[key] for r in rows]
        axes[row][0].plot(steps, values, label="against the opponent")
        axes[row][1].plot(minutes, values)
        practice = [float(r.get("practice_win_rate_last_100", math.nan)) for r in rows]
        if key == "win_rate_last_100" and not all(math.isnan(v) for v in practice):
            axes[row][0].plot(steps, practice, label="against easier bots (easier-games)")
            axes[row][1].plot(minutes, practice)
            axes[row][0].legend(loc="upper left", fontsize="small")
        axes[row][0].set_ylabel(label)
        for ax in axes[row]:
            ax.grid(alpha=0.3)
    axes[1][0].set_xlabel("agent steps")
    axes[1][1].set_xlabel("wall time (min)")
    settings = f"the defaults with {', '.join(candidate)}" if candidate else "sc2dask's defaults"
    fig.suptitle(f"{title} on the emulator, {settings} ({time.strftime('%Y-%m-%d')})")
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def write_table(out: Path, page: Path) -> None:
    """One row per run (opponent, action set and reward; each run's ``row.json``), between
    the markers."""
    header = [
        "opponent", "action set (and candidate)", "reward", "win rate (last 100)", "best", "score (last 100)", "games", "agent steps",
        "wall", "evaluation: W-D-L by bot", "envs, cores, mode", "commit", "curve",
    ]  # fmt: skip
    lines = [pages.row(header), pages.row(["---"] * len(header))]
    for path in sorted(out.glob("*/row.json")):
        r = json.loads(path.read_text())
        games = ", ".join(
            f"{level} {g['wins']}-{g['draws']}-{g['losses']}"
            for level, g in r["evaluation"].items()
        )
        lines.append(
            pages.row(
                [
                    r["opponent"],
                    " ".join(
                        [
                            r["action_set"],
                            *r.get("agent_overrides", []),
                            *r.get("train_overrides", []),
                        ]
                    ),
                    r["reward"],
                    f"**{r['final_win_rate_last_100']}**",
                    str(r["best_win_rate_last_100"]),
                    str(r["final_mean_score_last_100"]),
                    f"{r['games_trained']:,}",
                    f"{r['agent_steps']:,}",
                    f"{r['wall_minutes']:g} min",
                    games,
                    f"{r['envs']}, {r['cores']}, {r['mode']}",
                    r["commit"],
                    f"[curve](img/fullgame/{path.parent.name}.png)",
                ]
            )
        )
    pages.put_between(page, TABLE_START, TABLE_END, lines)


if __name__ == "__main__":
    main()
