"""Learner and policy speed: ms per sample for a gradient, ms per batched action, by
precision, feature layers and TensorFlow threads. Prints figures; asserts nothing.

    python benchmarks/bench_learner.py --threads 1,2 --json

The inputs are random screens of the real encoded shapes (32x32 unless ``--screen``), in
batches the training loop makes: ``--trajectories`` of ``--rollout-steps`` steps for a
gradient, one observation per env (``--envs``) for an action. Each figure is the median
of ``--repeats`` timed calls after a warm-up (which traces the tf.functions). Run it with
nothing else busy, or time the process's CPU with ``--clock cpu`` (what a client's CPU
quota pays, and less disturbed by other work); on a GPU machine it measures the GPU
(TensorFlow picks it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import statistics
import time

import numpy as np

# Which feature layers and network shape: the map's own defaults (sc2dask.maps in
# sc2dask.yaml), or the section's defaults that every other map reads (with the minimap
# tower and FullyConv's filters).
FEATURES = ("map's layers", "package's layers")
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", default="MoveToBeacon")
    parser.add_argument("--threads", default="1,2", help="TensorFlow threads, comma-separated")
    parser.add_argument("--precisions", default=",".join(PRECISIONS))
    parser.add_argument("--screen", type=int, default=32)
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--rollout-steps", type=int, default=16)
    parser.add_argument(
        "--trajectories", type=int, default=4, help="per gradient (central mode: 1 a rollout)"
    )
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    args = parser.parse_args()
    if args.trajectories < 1:
        parser.error(f"--trajectories {args.trajectories}: give at least 1 per gradient")
    rows = []
    for threads in [int(t) for t in args.threads.split(",")]:
        for features in FEATURES:
            for precision in args.precisions.split(","):
                # One process per case: TensorFlow fixes its thread pools at the first op.
                with multiprocessing.get_context("spawn").Pool(1) as pool:
                    row = pool.apply(measure, (args, threads, features, precision))
                rows.append(row)
                print(
                    f"{threads} thread(s)  {features:18s}  {precision:15s}  "
                    f"gradient {row['gradient_ms_per_sample']:6.2f} ms/sample "
                    f"({row['learner_samples_per_s']:6.0f} samples/s)  apply "
                    f"{row['apply_ms']:5.1f} ms  act {row['act_ms_per_batch']:5.2f} ms per "
                    f"batch of {args.envs}  weights: load {row['load_weights_ms']:4.2f} ms, "
                    f"read {row['read_weights_ms']:4.2f} ms  ({row['params']} weights)",
                    flush=True,
                )
    if args.json:
        print(json.dumps({"map": args.map, "screen": args.screen, "rows": rows}))


def measure(args, threads: int, features: str, precision: str) -> dict:
    from sc2dask.agents.a2c import A2CConfig, Learner, set_tf_threads
    from sc2dask.core import Trajectory
    from sc2dask.settings import AgentSettings, load

    set_tf_threads(threads)
    agent = load(
        AgentSettings,
        {"screen": args.screen, "minimap": args.screen, "precision": precision},
        map_name=args.map,
    ).values
    if features == "package's layers":
        package = load(AgentSettings).values  # the section's defaults, not the map's
        agent = dataclasses.replace(
            agent,
            screen_layers=package.screen_layers,
            minimap_layers=package.minimap_layers,
            conv_filters=package.conv_filters,
            dense_grid=package.dense_grid,
        )
    learner = Learner(
        A2CConfig.from_settings(agent),
        {
            "feature_screen": (27, args.screen, args.screen),
            "feature_minimap": (11, args.screen, args.screen),
            "player": (11,),
            "available_actions": (573,),
        },
    )
    spec, heads = learner.policy.encoder.spec(), learner.policy.action_set.heads
    rng = np.random.default_rng(0)
    steps = args.rollout_steps

    def trajectory():
        observations = {
            k: rng.integers(0, 3, (steps + 1, *s.shape)).astype(s.dtype) for k, s in spec.items()
        }
        observations["available"][:] = True
        return Trajectory(
            observations=observations,
            actions={h: rng.integers(0, n, steps).astype(np.int32) for h, n in heads.items()},
            rewards=rng.random(steps).astype(np.float32),
            terminal=np.zeros(steps, bool),
            version=0,
        )

    batch = [trajectory() for _ in range(args.trajectories)]
    observations = {k: v[: args.envs] for k, v in batch[0].observations.items()}
    grads, _ = learner.compute_gradients(batch)
    clock = {"wall": time.perf_counter, "cpu": time.process_time}[args.clock]
    gradient = median_time(lambda: learner.compute_gradients(batch), args.repeats, clock)
    apply = median_time(lambda: learner.apply_gradients(grads), args.repeats, clock)
    act = median_time(lambda: learner.policy.act(observations, rng), args.repeats * 4, clock)
    weights = learner.get_weights()  # what a host loads before each rollout
    load = median_time(lambda: learner.set_weights(weights), args.repeats * 4, clock)
    read = median_time(learner.get_weights, args.repeats * 4, clock)
    samples = args.trajectories * steps
    return {
        "threads": threads,
        "features": features,
        "precision": precision,
        "params": int(sum(np.prod(v.shape) for v in learner.model.trainable_variables)),
        "gradient_ms_per_sample": 1000 * gradient / samples,
        "learner_samples_per_s": samples / (gradient + apply),
        "apply_ms": 1000 * apply,
        "act_ms_per_batch": 1000 * act,
        "load_weights_ms": 1000 * load,
        "read_weights_ms": 1000 * read,
    }


def median_time(call, repeats: int, clock) -> float:
    """The median of ``repeats`` calls on ``clock``: one slow call (a collection, a busy
    neighbour) moves a mean, not a median."""
    call()  # warm-up: traces the tf.function
    times = []
    for _ in range(repeats):
        start = clock()
        call()
        times.append(clock() - start)
    return statistics.median(times)


if __name__ == "__main__":
    main()
