"""Scaling: time to score and agent steps/s against node count, on the miniature cluster.

For each N of ``--nodes`` it builds N namespaced nodes (``tools/minicluster.py``), each
capped at ``--cpu`` cores for its worker and its ``--envs-per-node`` games, and trains
``--map`` (MoveToBeacon) with sc2dask's defaults for it in ``--mode`` from a client capped at
``--client-cpu`` cores (its own cgroup, in the root namespace) until the mean score (or,
``--metric win_rate`` on a map for two against ``--opponent``, the win rate) of the last
100 episodes reaches ``--target`` or ``--minutes`` pass. The quotas are the same
for every N, so N nodes have N times the env CPU and the same client.

Per N it reports agent steps/s with learning, minutes to the target (or the score at the
budget), bytes per update each way, the client's and each node's CPU use against their
quotas, and the time the client spent throttled. Then speedup and efficiency against the
first N, and, from the per-update costs measured, where it stops scaling and why, with a
paper extrapolation to 16 and 64 nodes. The curves go to ``--out`` (PNG and CSV); the last
line is one JSON object with a list per figure, in the order of ``--nodes``. Figures, not
a test: run it as root, with nothing else busy.

One node at a small quota takes hours to learn. ``--reference-cpu`` trains it at a larger
quota instead and reads its time at ``--cpu`` from a short run there (see
``reference_at_quota``).

    sudo python benchmarks/bench_scaling.py --nodes 1,2,4 --mode sync --minutes 6 --json
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import typing
from pathlib import Path

import psutil

from sc2dask.settings import Compression, Mode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from minicluster import MiniCluster, MiniClusterUnavailable, node_name  # noqa: E402
from resumable import open_text  # noqa: E402

WINDOW = 100  # episodes in the mean a common score is read from
METRICS = {"score": "mean_score_last_100", "win_rate": "win_rate_last_100"}  # --metric
CSV_COLUMNS = [
    "nodes",
    "agent_steps",
    "wall_s",
    "mean_score_last_100",
    "win_rate_last_100",
    "episodes",
    "update",
    "bytes_to_hosts",
    "bytes_from_hosts",
    "staleness",
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="1,2,4", help="node counts, comma-separated")
    parser.add_argument("--map", default="MoveToBeacon", help="trained with its defaults")
    parser.add_argument("--opponent", help="a map for two: bot:RACE:DIFFICULTY")
    parser.add_argument(
        "--metric",
        choices=list(METRICS),
        default="score",
        help="what --target and the curves measure: the mean score or the win rate "
        "(a map for two) of the last 100 episodes",
    )
    parser.add_argument("--mode", choices=typing.get_args(Mode), default="sync")
    parser.add_argument("--compression", choices=typing.get_args(Compression), default="none")
    parser.add_argument("--minutes", type=float, default=6.0, help="wall budget per N")
    parser.add_argument("--target", type=float, default=25.0)
    parser.add_argument("--cpu", type=float, default=0.35, help="cores per node")
    parser.add_argument("--client-cpu", type=float, default=0.5, help="cores of the client")
    parser.add_argument("--envs-per-node", type=int, default=2)
    parser.add_argument("--rate", default="1gbit")
    parser.add_argument("--delay", default="0.2ms")
    parser.add_argument(
        "--out",
        default=None,
        help="curve PNG (default benchmarks/results/scaling_<mode>[_<compression>].png)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="sc2dask.train.seed of every run (default: the setting's)",
    )
    parser.add_argument(
        "--reference-cpu",
        type=float,
        help="train the one-node run to the target at these cores instead of --cpu, then "
        "one node at --cpu for --reference-minutes: one node's learning is the same at any "
        "quota (checked update by update), so its time to the target at --cpu is its steps "
        "to it over its steps/s there, in a fraction of the wall time",
    )
    parser.add_argument("--reference-minutes", type=float, default=5.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--run-one", metavar="SCHEDULER", help=argparse.SUPPRESS)
    parser.add_argument("--envs", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--history", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_one:
        return run_one(args)
    try:
        nodes = [int(n) for n in args.nodes.split(",")]
    except ValueError:
        parser.error(f"--nodes takes whole numbers, e.g. 1,2,4; not {args.nodes!r}")
    if args.reference_cpu is not None and nodes[0] != 1:
        parser.error("--reference-cpu stands in for one node: give --nodes starting at 1")
    suffix = args.mode + ("" if args.compression == "none" else f"_{args.compression}")
    out = Path(args.out or ROOT / f"benchmarks/results/scaling_{suffix}.png")
    out.parent.mkdir(parents=True, exist_ok=True)
    results, history = [], []
    try:
        for n in nodes:
            one_by_reference = n == 1 and args.reference_cpu is not None
            result, rows = reference_at_quota(args) if one_by_reference else measure(n, args)
            results.append(result)
            history.extend(rows)
            print(f"N={n}: {format_result(result)}", flush=True)
    except MiniClusterUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with open_text(out.with_suffix(".csv.gz"), "w") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(history)
    plot(history, results, out, args)
    figures = summarise(results, args, history)
    for line in explain(figures, args):
        print(line)
    print(f"curves: {out} and {out.with_suffix('.csv.gz')}")
    if args.json:
        print(json.dumps(_finite(figures)))
    return 0


def reference_at_quota(args) -> tuple[dict, list[dict]]:
    """One node at ``--cpu``, its time to the target read from a run at ``--reference-cpu``.

    With one host, learning does not depend on timing: every update waits for its one
    gradient, so the curve against steps is the same at any quota (as the async and sync
    one-node runs of a seed showed, update by update). The reference reaches the target
    quickly; a short run at the quota gives the steps/s, and its updates are checked
    against the reference's before its curve is put on the quota's clock."""
    reference, reference_rows = measure(1, args, cpu=args.reference_cpu)
    result, rows = measure(1, args, minutes=args.reference_minutes, target=float("inf"))
    compared, mismatch = same_learning(reference_rows, rows)
    result.update(
        reference_cpu=args.reference_cpu,
        reference_agent_steps_per_s=reference["agent_steps_per_s"],
        reference_updates_compared=compared,
        reference_first_mismatch=mismatch,
    )
    if mismatch is not None:  # not the same learning: the quota run's own figures only
        return result, rows
    steps = reference["steps_to_target"]
    rescaled = on_quota_clock(reference_rows, rows, result["agent_steps_per_s"])
    reached = steps and next(row for row in rescaled if row["agent_steps"] >= steps)
    result.update(
        steps_to_target=steps,
        minutes_to_target=reached and round(reached["wall_s"] / 60, 2),
        score_at_end=reference["score_at_end"],
        minutes=round(rescaled[-1]["wall_s"] / 60, 2),
        agent_steps=reference["agent_steps"],
        updates=reference["updates"],
    )
    return result, rescaled


LEARNING_COLUMNS = ("update", "agent_steps", "episodes", "mean_score_last_100")


def same_learning(reference: list[dict], rows: list[dict]) -> tuple[int, int | None]:
    """How many of ``rows``' updates the reference has too, and the first of them that
    differs in steps, episodes or score (None: the same learning)."""
    by_update = {row["update"]: row for row in reference}
    compared = 0
    for row in rows:
        other = by_update.get(row["update"])
        if other is None:
            continue
        compared += 1
        if not all(_same(row[k], other[k]) for k in LEARNING_COLUMNS):
            return compared, row["update"]
    return compared, None


def _same(a, b) -> bool:
    """Equal, counting NaN as NaN (the mean score before the first episode ends)."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


def on_quota_clock(reference: list[dict], rows: list[dict], steps_per_s: float) -> list[dict]:
    """The reference curve at the quota's pace: the quota run's own rows, then each later
    reference row at the quota run's last time plus its further steps over ``steps_per_s``."""
    last = rows[-1]
    later = [
        {**row, "wall_s": last["wall_s"] + (row["agent_steps"] - last["agent_steps"]) / steps_per_s}
        for row in reference
        if row["update"] > last["update"]
    ]
    return rows + later


def measure(
    n: int,
    args,
    cpu: float | None = None,
    minutes: float | None = None,
    target: float | None = None,
) -> tuple[dict, list[dict]]:
    """One training run on ``n`` nodes: its summary and figures, and its curve. ``cpu``,
    ``minutes`` and ``target`` stand in for the arguments' own."""
    envs = n * args.envs_per_node
    with (
        tempfile.TemporaryDirectory(prefix="sc2dask-scaling-") as tmp,
        MiniCluster(
            nodes=n,
            cpu=args.cpu if cpu is None else cpu,
            rate=args.rate,
            delay=args.delay,
            sc2=args.envs_per_node,
            logs=tmp,
        ) as cluster,
    ):
        history = Path(tmp) / "history.json"
        command = [
            sys.executable,
            __file__,
            "--run-one",
            cluster.scheduler_address,
            "--envs",
            str(envs),
            "--map",
            args.map,
            *([] if args.opponent is None else ["--opponent", args.opponent]),
            "--metric",
            args.metric,
            "--mode",
            args.mode,
            "--compression",
            args.compression,
            "--minutes",
            str(args.minutes if minutes is None else minutes),
            "--target",
            str(args.target if target is None else target),
            "--history",
            str(history),
            *([] if args.seed is None else ["--seed", str(args.seed)]),
        ]
        command = cluster.in_group("client", args.client_cpu, command)  # makes its cgroup
        groups = ["sc2dmc-client", "sc2dmc-scheduler", *(node_name(i) for i in range(n))]
        started = {g: cluster.cpu_seconds(g) for g in groups}
        began = time.monotonic()
        with RssSampler(cluster, n) as memory:
            done = subprocess.run(command, capture_output=True, text=True)
        wall = time.monotonic() - began
        if done.returncode != 0:
            raise RuntimeError(f"the run on {n} nodes failed:\n{done.stderr[-4000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        used = {g: (cluster.cpu_seconds(g) - started[g]) / wall for g in groups}
        result.update(
            nodes=n,
            envs=envs,
            delay_applied=cluster.delay_applied,
            client_cpu_cores=round(used["sc2dmc-client"], 3),
            scheduler_cpu_cores=round(used["sc2dmc-scheduler"], 3),
            node_cpu_cores=round(sum(used[node_name(i)] for i in range(n)) / n, 3),
            node_cpu_ms_per_step=node_cost(
                [used[node_name(i)] for i in range(n)], result["agent_steps_per_s"]
            ),
            client_throttled_s=round(cluster.throttled_seconds("sc2dmc-client"), 1),
            node_rss_mb_max=round(max(memory.peak) / 2**20),
            nodes_rss_gb_total=round(sum(memory.peak) / 2**30, 2),
        )
        rows = [{**row, "nodes": n} for row in json.loads(history.read_text())]
    return result, rows


def node_cost(cores: list[float], agent_steps_per_s: float) -> list[float]:
    """Each node's CPU per agent step (ms): its cores over its share of the steps (every
    node hosts as many envs)."""
    share = agent_steps_per_s / len(cores)
    return [round(1e3 * c / share, 2) if share else float("nan") for c in cores]


class RssSampler:
    """The peak resident memory of each node's processes (worker, Nanny, games), sampled
    every few seconds while a run lasts: 16 TensorFlow workers must fit the machine."""

    def __init__(self, cluster, n: int, every: float = 5.0):
        self.cluster, self.every = cluster, every
        self.peak = [0] * n
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _sample(self):
        while not self._stop.wait(self.every):
            for i in range(len(self.peak)):
                rss = 0
                for pid in self.cluster.cgroup_pids(i):
                    with contextlib.suppress(psutil.Error):
                        rss += psutil.Process(pid).memory_info().rss
                self.peak[i] = max(self.peak[i], rss)


def run_one(args) -> int:
    """In the client's cgroup: train until the target or the budget; one JSON line."""
    from distributed import Client

    import sc2dask

    budget = args.minutes * 60
    from sc2dask.training.cluster import sc2_capacity

    with Client(args.run_one, timeout=60, direct_to_workers=True) as client:
        deadline = time.monotonic() + 180
        while sum(sc2_capacity(client).values()) < args.envs:  # every node's worker
            if time.monotonic() > deadline:
                raise TimeoutError(f"the cluster never offered {args.envs} SC2 slots")
            time.sleep(0.5)
        run = sc2dask.train(
            client=client,
            map=args.map,
            opponent=args.opponent,
            envs=args.envs,
            mode=args.mode,
            compression=args.compression,
            max_steps=10**9,
            checkpoint_every=0,
            seed=args.seed,
        )
        reached = None
        while run.running:
            p = run.progress
            value = getattr(p, METRICS[args.metric])
            if reached is None and p.episodes >= 20 and value >= args.target:
                reached = p.history[-1]
                run.stop()
            elif p.history and p.history[-1]["wall_s"] >= budget:
                run.stop()
            time.sleep(0.5)
        summary = run.wait()
    history = run.progress.history
    Path(args.history).write_text(
        json.dumps([{k: row.get(k) for k in CSV_COLUMNS if k != "nodes"} for row in history])
    )
    first, last = history[0], history[-1]  # from the first update: start-up left out
    steps_per_s = (last["agent_steps"] - first["agent_steps"]) / max(
        1e-9, last["wall_s"] - first["wall_s"]
    )
    print(
        json.dumps(
            {
                "agent_steps_per_s": round(steps_per_s, 1),
                "minutes_to_target": reached and round(reached["wall_s"] / 60, 2),
                "steps_to_target": reached and reached["agent_steps"],
                "score_at_end": round(summary[METRICS[args.metric]], 2),
                "minutes": round(last["wall_s"] / 60, 2),
                "agent_steps": summary["agent_steps"],
                "updates": summary["updates"],
                "bytes_to_hosts_per_update": round(
                    summary["bytes_to_hosts"] / max(1, summary["updates"])
                ),
                "bytes_from_hosts_per_update": round(
                    summary["bytes_from_hosts"] / max(1, summary["updates"])
                ),
                "learner_samples_per_s": summary["learner_samples_per_s"],
                "dropped_stale": summary["dropped_stale_gradients"],
                "restarts": summary["restarts"],
                "updates_per_s": round(
                    (last["update"] - first["update"])
                    / max(1e-9, last["wall_s"] - first["wall_s"]),
                    2,
                ),
            }
        )
    )
    return 0


def _train_setting(name: str):
    """A train setting as the runs see it (sc2dask.yaml under DASK_SC2DASK__TRAIN__*)."""
    from sc2dask.settings import TrainSettings, load

    return getattr(load(TrainSettings).values, name)


def _finite(value):
    """NaN (a figure a mode has none of) as null, so the line is strict JSON."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def efficiency(speedups: list[float], results: list[dict]) -> list[float]:
    """Each speedup against the first run, per node added: 1 is linear."""
    return [round(s * results[0]["nodes"] / r["nodes"], 3) for s, r in zip(speedups, results)]


def common_score_figures(history: list[dict], results: list[dict], key: str) -> dict:
    """Time to the best mean that every run reached, from the curves: time to a score where
    the target was out of reach of some run in its budget. Only full windows of 100
    episodes count: the mean of the first few episodes is mostly luck."""
    curves = {r["nodes"]: [row for row in history if row["nodes"] == r["nodes"]] for r in results}

    def best(rows):
        return max(
            (row[key] for row in rows if (row.get("episodes") or 0) >= WINDOW),
            default=float("nan"),
        )

    common = min(best(rows) for rows in curves.values())
    if common != common:  # a run with fewer than WINDOW episodes
        return {}
    minutes = [
        next(
            row["wall_s"] / 60
            for row in curves[r["nodes"]]
            if (row.get("episodes") or 0) >= WINDOW and row[key] >= common
        )
        for r in results
    ]
    speedup = [minutes[0] / m for m in minutes]
    return {
        "common_score": round(common, 2),
        "minutes_to_common_score": [round(m, 2) for m in minutes],
        "efficiency_time_to_common_score": efficiency(speedup, results),
    }


def summarise(results: list[dict], args, history: list[dict] | None = None) -> dict:
    """Lists keyed by figure, in the order of the node counts, with speedup and efficiency
    against the first count (in steps/s and, where every run reached it, time to target)."""
    base = results[0]
    figures = {key: [r.get(key) for r in results] for key in results[0]}
    figures["speedup_steps_per_s"] = [
        round(r["agent_steps_per_s"] / base["agent_steps_per_s"], 3) for r in results
    ]
    figures["efficiency_steps_per_s"] = efficiency(figures["speedup_steps_per_s"], results)
    if all(r["minutes_to_target"] for r in results):
        figures["speedup_time_to_target"] = [
            round(base["minutes_to_target"] / r["minutes_to_target"], 3) for r in results
        ]
        figures["efficiency_time_to_target"] = efficiency(
            figures["speedup_time_to_target"], results
        )
    figures.update(common_score_figures(history or [], results, METRICS[args.metric]))
    figures.update(
        map=args.map,
        mode=args.mode,
        compression=args.compression,
        sync_lr_scaling=_train_setting("sync_lr_scaling") if args.mode == "sync" else None,
        seed=_train_setting("seed") if args.seed is None else args.seed,
        cpu_per_node=args.cpu,
        client_cpu=args.client_cpu,
        envs_per_node=args.envs_per_node,
        minutes_budget=args.minutes,
        target=args.target,
    )
    return figures


def explain(figures: dict, args) -> list[str]:
    """Where scaling stops, from the measured per-update costs, and a paper extrapolation.

    Per update the client spends ``client_cpu_cores / updates_per_s`` core-seconds; the
    client can give ``client_cpu`` cores, so updates per second cannot pass
    ``client_cpu / cost``. Bytes per update over the link bound it too. Extrapolating
    assumes the per-node cost stays flat and the client's cost grows with the gradients
    (sync: one per node per update) or trajectories it takes in.
    """
    lines = []
    if "common_score" in figures:
        lines.append(
            f"time to {figures['common_score']} (the best mean every run reached): "
            f"{figures['minutes_to_common_score']} min; efficiency against "
            f"{figures['nodes'][0]} node(s): {figures['efficiency_time_to_common_score']}"
        )
    lines += efficiency_parts(figures)
    n, sps = figures["nodes"], figures["agent_steps_per_s"]
    ups, client = figures["updates_per_s"], figures["client_cpu_cores"]
    bytes_in, bytes_out = (
        figures["bytes_from_hosts_per_update"],
        figures["bytes_to_hosts_per_update"],
    )
    rate_bps = _bits_per_s(args.rate)
    per_node_sps = sps[0] / n[0]
    client_s_per_step = client[-1] / sps[-1]  # client core-seconds per agent step, at most N
    node_s_per_step = figures["node_cpu_cores"][-1] * n[-1] / sps[-1]
    lines.append(
        f"per agent step: client {client_s_per_step * 1e3:.2f} ms of CPU, a node "
        f"{node_s_per_step * 1e3:.2f} ms; link {args.rate}: "
        f"{(bytes_in[-1] + bytes_out[-1]) / max(1, sps[-1] / ups[-1]):.0f} B per step"
    )
    client_cap = args.client_cpu / client_s_per_step
    link_cap = rate_bps / 8 / max(1e-9, (bytes_in[-1] + bytes_out[-1]) / (sps[-1] / ups[-1]))
    lines.append(
        f"ceilings: the client's {args.client_cpu} cores allow {client_cap:.0f} steps/s; "
        f"a client NIC at the nodes' {args.rate} allows {link_cap:.0f} steps/s (it "
        f"carries every node's traffic; here the client's side is not shaped); "
        f"each node gives {per_node_sps:.0f} steps/s"
    )
    interval = 1 / max(1e-9, ups[-1])
    inbound_s = bytes_in[-1] * 8 / rate_bps
    lines.append(
        f"at {n[-1]} nodes the client takes in {bytes_in[-1] / 1e6:.2f} MB per update: "
        f"{inbound_s * 1e3:.1f} ms of its link, {100 * inbound_s / interval:.1f} % of "
        f"the {interval * 1e3:.0f} ms between updates; a tree reduction on the workers "
        f"(one gradient in per update) would save at most "
        f"{inbound_s * (n[-1] - 1) / n[-1] * 1e3:.1f} ms of it"
    )
    for nodes in (16, 64):
        ideal = per_node_sps * nodes
        lines.append(
            f"on paper, {nodes} nodes: ideal {ideal:.0f} steps/s, capped at "
            f"{min(ideal, client_cap, link_cap):.0f} by "
            f"{_limit(ideal, client_cap, link_cap)}"
        )
    return lines


def efficiency_parts(figures: dict) -> list[str]:
    """Each run's time-to-target efficiency as the product of its parts, to say where it
    was lost: steps/s against linear, the first run's steps to the target over this run's
    (a larger batch or staler data costs steps), and the rest (start-up, waits)."""
    if "efficiency_time_to_target" not in figures:
        return []
    lines = []
    first_steps = figures["steps_to_target"][0]
    for i, nodes in enumerate(figures["nodes"][1:], start=1):
        total = figures["efficiency_time_to_target"][i]
        pace = figures["efficiency_steps_per_s"][i]
        steps = first_steps / figures["steps_to_target"][i]
        lines.append(
            f"at {nodes} nodes: efficiency {total:.3f} = steps/s {pace:.3f} of linear x "
            f"steps to the target {steps:.3f} of {figures['nodes'][0]} node(s)' x the rest "
            f"{total / (pace * steps):.3f} (start-up, waits)"
        )
    return lines


def _limit(ideal: float, client_cap: float, link_cap: float) -> str:
    if ideal <= min(client_cap, link_cap):
        return "nothing yet (the nodes)"
    return "the client's CPU" if client_cap <= link_cap else "the client's link"


def _bits_per_s(rate: str) -> float:
    units = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "bit": 1.0}
    for unit, scale in units.items():
        if rate.lower().endswith(unit):
            return float(rate[: -len(unit)]) * scale
    return float(rate)


def format_result(r: dict) -> str:
    target = (
        f"target at {r['minutes_to_target']} min ({r['steps_to_target']} steps)"
        if r["minutes_to_target"]
        else f"score {r['score_at_end']} at {r['minutes']} min"
    )
    return (
        f"{r['agent_steps_per_s']} steps/s, {target}, {r['updates']} updates, "
        f"{r['bytes_to_hosts_per_update']} B out / {r['bytes_from_hosts_per_update']} B in "
        f"per update, client {r['client_cpu_cores']} cores (throttled "
        f"{r['client_throttled_s']} s), nodes {r['node_cpu_cores']} cores each, "
        f"CPU per agent step on each node {r['node_cpu_ms_per_step']} ms, "
        f"memory at most {r['node_rss_mb_max']} MB a node, {r['nodes_rss_gb_total']} GB in all"
        + reference_verdict(r)
    )


def reference_verdict(r: dict) -> str:
    """What the one-node reference check found, so that a failed check is read, not missed."""
    if "reference_cpu" not in r:
        return ""
    if r["reference_first_mismatch"] is not None:
        return (
            f"; REFERENCE CHECK FAILED at update {r['reference_first_mismatch']} "
            f"(the run at {r['reference_cpu']} cores learned differently): "
            "these are the quota run's own figures"
        )
    return (
        f"; time read from a run at {r['reference_cpu']} cores, "
        f"same at all {r['reference_updates_compared']} updates compared"
    )


def plot(history: list[dict], results: list[dict], out: Path, args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for r in results:
        rows = [row for row in history if row["nodes"] == r["nodes"]]
        left.plot(
            [row["wall_s"] / 60 for row in rows],
            [row[METRICS[args.metric]] for row in rows],
            label=f"{r['nodes']} nodes",
        )
    left.axhline(args.target, color="grey", linestyle="--", linewidth=0.8)
    left.set_xlabel("wall time (min)")
    left.set_ylabel(METRICS[args.metric].replace("_", " "))
    left.legend()
    nodes = [r["nodes"] for r in results]
    sps = [r["agent_steps_per_s"] for r in results]
    right.plot(nodes, sps, marker="o", label="measured")
    right.plot(
        nodes, [sps[0] * n / nodes[0] for n in nodes], linestyle="--", color="grey", label="linear"
    )
    right.set_xlabel("nodes")
    right.set_ylabel("agent steps/s with learning")
    right.legend()
    for ax in (left, right):
        ax.grid(alpha=0.3)
    rule = f", sync-lr-scaling {_train_setting('sync_lr_scaling')}" if args.mode == "sync" else ""
    fig.suptitle(
        f"sc2dask {args.map}, {args.mode} (compression {args.compression}{rule}) on the "
        f"miniature cluster: "
        f"{args.cpu} cores and {args.envs_per_node} envs per node, client "
        f"{args.client_cpu} cores ({time.strftime('%Y-%m-%d')})",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    if os.geteuid() != 0 and "--run-one" not in sys.argv:
        print(
            "error: the miniature cluster needs root (network namespaces, tc and cgroups)",
            file=sys.stderr,
        )
        sys.exit(2)
    sys.exit(main())
