"""What learning adds to an env host's CPU per agent step, measured in one process.

One host's envs (``--envs``, MoveToBeacon with its map defaults, 32x32, step_mul 8) play
``--steps`` steps each, three ways, twice over in turn:

  random      pysc2 steps with a random move each, no network (what `evaluate` pays);
  policy      ``play_batch``, the host's rollout: encode, one forward pass per step for
              all envs, sampling, recording;
  no forward  the same rollout with the forward pass replaced by fixed outputs.

Then the forward pass alone, back to back and with a 2 ms pause after each call (an env
step's wait), as CPU per call of each thread: a network that waits between calls costs
more than the same calls back to back (TensorFlow's thread parks and must be woken, and
the caches go cold), so timing it alone understates what it costs in a host.

Prints figures; asserts nothing. Run it with nothing else busy:

    python benchmarks/bench_host_step.py [--envs 2] [--steps 480]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import time

import numpy as np


def process_cpu() -> float:
    times = os.times()
    return times.user + times.system


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each of this process's threads, by name (summed over same names)."""
    ticks = os.sysconf("SC_CLK_TCK")
    totals: dict[str, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/self/task/{tid}/comm") as comm:
                name = comm.read().strip()
        except FileNotFoundError:  # the thread ended
            continue
        totals[name] = totals.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    return totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=2, help="envs of the host")
    parser.add_argument("--steps", type=int, default=480, help="agent steps per env per way")
    args = parser.parse_args()

    from absl import flags

    flags.FLAGS(["bench_host_step"])
    from sc2dask.agents.a2c import A2CConfig, Learner, set_tf_threads
    from sc2dask.game import EnvConfig, find_game
    from sc2dask.game.pysc2lib import actions
    from sc2dask.runtime.rollout import play_batch
    from sc2dask.runtime.slot import EnvSlot
    from sc2dask.settings import AgentSettings, load

    set_tf_threads(1)  # what a one-thread worker's preload gives each host
    print(find_game().summary, f"| {os.cpu_count()} cores")
    slots = [EnvSlot(EnvConfig("MoveToBeacon"), 100 + i) for i in range(args.envs)]
    spec = slots[0].ensure().observation_spec()[0]
    policy = Learner(
        A2CConfig.from_settings(load(AgentSettings, map_name="MoveToBeacon").values), spec
    ).policy
    threads = concurrent.futures.ThreadPoolExecutor(args.envs)
    rng = np.random.default_rng(0)
    rollout_steps = 16

    def random_moves():
        def step(i):
            available = slots[i].current().observation["available_actions"]
            if actions.FUNCTIONS.Move_screen.id in available:
                target = [int(v) for v in rng.integers(0, 32, 2)]
                slots[i].step(actions.FUNCTIONS.Move_screen("now", target))
            else:
                slots[i].step(actions.FUNCTIONS.select_army("select"))

        for _ in range(args.steps):
            list(threads.map(step, range(args.envs)))

    def rollouts():
        for _ in range(args.steps // rollout_steps):
            play_batch(slots, policy, 0, rollout_steps, rng, threads)

    real_forward = policy.forward
    observations = [slot.current().observation for slot in slots]
    inputs = policy._inputs(policy.encoder.encode_batch(observations))
    fixed = real_forward(inputs)

    def rollouts_without_forward():
        policy.forward = lambda inputs: fixed
        try:
            rollouts()
        finally:
            policy.forward = real_forward

    ways = {"random": random_moves, "policy": rollouts, "no forward": rollouts_without_forward}
    rollouts()  # warm-up: traces the forward pass, starts every game
    cpu_ms = {name: [] for name in ways}
    for _ in range(2):
        for name, play in ways.items():
            start = process_cpu()
            play()
            cpu_ms[name].append(1e3 * (process_cpu() - start) / (args.steps * args.envs))
    print(
        f"\nhost CPU per agent step ({args.envs} envs, {args.steps} steps each, two rounds; "
        f"the games' own CPU is not counted)"
    )
    for name, figures in cpu_ms.items():
        print(
            f"  {name:10s} {np.mean(figures):5.2f} ms  ({', '.join(f'{f:.2f}' for f in figures)})"
        )
    print(
        f"  learning adds {np.mean(cpu_ms['policy']) - np.mean(cpu_ms['random']):.2f} ms a "
        f"step, of which the forward pass "
        f"{np.mean(cpu_ms['policy']) - np.mean(cpu_ms['no forward']):.2f} ms"
    )

    calls = 500
    print(f"\nthe forward pass alone, batch of {args.envs}, {calls} calls: CPU per call by thread")
    for pause in (0.0, 0.002):
        before, wall = thread_cpu(), time.perf_counter()
        for _ in range(calls):
            policy.forward(inputs)
            if pause:
                time.sleep(pause)
        wall = (time.perf_counter() - wall) / calls - pause
        after = thread_cpu()
        spent = {name: 1e3 * (after[name] - before.get(name, 0.0)) / calls for name in after}
        shown = "  ".join(f"{name} {ms:.2f}" for name, ms in spent.items() if ms >= 0.01)
        print(
            f"  {'back to back' if not pause else f'{pause * 1e3:.0f} ms pause after each':22s}"
            f" {sum(spent.values()):5.2f} ms CPU ({shown}), {wall * 1e3:.2f} ms wall"
        )
    for slot in slots:
        slot.close()


if __name__ == "__main__":
    main()
