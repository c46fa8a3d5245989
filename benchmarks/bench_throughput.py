"""Env steps/s of four ways to run n pysc2 envs, and the per-step cost of sc2dask's Dask layer.

(a) For each env count (``--envs``, default 2 4) every setup plays ``--episodes`` whole
MoveToBeacon episodes per env (32x32 screen/minimap, step_mul 8, a pysc2 ``RandomAgent``
per env, 240 agent steps an episode on the emulator), so the work is equal:

  loop     one process stepping its envs round-robin;
  threads  one thread per env in one process (pysc2's ``bin/agent --parallel``);
  lockstep one subprocess per env behind Pipes, all stepped together each step
           (baselines' ``SubprocVecEnv``; the agents live in the main process);
  sc2dask  ``EnvHost`` actors via ``EnvPool`` on a ``LocalCluster``, timed around
           ``EnvPool.evaluate`` (steps = episodes x 240).

It prints agent steps/s per setup, the ratio of sc2dask to the best peer, and the
startup of each setup (making the envs, and the cluster, until every env has played one
untimed warm-up episode), which the steps/s exclude.

(b) The same episodes of one ``EnvHost`` with n envs played in the client process
(``asyncio.run(host.evaluate(...))``) and through Dask (``EnvPool`` on a one-worker
``LocalCluster``): ms per agent step of each, their difference, and the round trip of a
no-op actor call. Prints figures; it asserts nothing.
Run: ``python benchmarks/bench_throughput.py [--envs 2 4 8] [--episodes N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import multiprocessing
import os
import time

import numpy as np
from distributed import Client

from sc2dask.game import EnvConfig, find_game
from sc2dask.game.pysc2lib import PACKAGE_NAME, random_agent
from sc2dask.runtime.env_host import EnvHost
from sc2dask.settings import TrainSettings, load
from sc2dask.training.cluster import cluster_client, local_cluster
from sc2dask.training.pool import EnvPool

CONFIG = EnvConfig("MoveToBeacon", screen=32, minimap=32, step_mul=8)
AGENT = f"{PACKAGE_NAME}.agents.random_agent.RandomAgent"
EPISODE_STEPS = 240  # MoveToBeacon: 120 game s x 16 loops / step_mul 8 (checked by `loop`)


def new_agent(env):
    agent = random_agent.RandomAgent()
    agent.setup(env.observation_spec()[0], env.action_spec()[0])
    return agent


def play_episode(env, agent) -> int:
    """One whole episode, reset included, as ``EnvHost.evaluate`` plays it; its agent steps."""
    agent.reset()
    timestep, steps = env.reset()[0], 0
    while not timestep.last():
        timestep = env.step([agent.step(timestep)])[0]
        steps += 1
    return steps


# --- 1. one process, round-robin ------------------------------------------------------------


def round_robin(envs, agents, episodes: int) -> int:
    """Each env one step in turn until each has played ``episodes`` episodes; the steps."""
    left = [episodes] * len(envs)
    timesteps = []
    for env, agent in zip(envs, agents):
        agent.reset()
        timesteps.append(env.reset()[0])
    steps = 0
    while any(left):
        for i, (env, agent) in enumerate(zip(envs, agents)):
            if not left[i]:
                continue
            timesteps[i] = env.step([agent.step(timesteps[i])])[0]
            steps += 1
            if timesteps[i].last():
                left[i] -= 1
                if left[i]:
                    agent.reset()
                    timesteps[i] = env.reset()[0]
    return steps


def bench_loop(n_envs: int, episodes: int):
    start = time.perf_counter()
    envs = []
    try:
        for i in range(n_envs):
            envs.append(CONFIG.make(seed=i))
        agents = [new_agent(env) for env in envs]
        round_robin(envs, agents, 1)
        startup = time.perf_counter() - start
        start = time.perf_counter()
        steps = round_robin(envs, agents, episodes)
        return steps, time.perf_counter() - start, startup
    finally:
        for env in envs:
            env.close()


# --- 2. one thread per env (pysc2 --parallel) -------------------------------------------------


def bench_threads(n_envs: int, episodes: int):
    start = time.perf_counter()
    envs, agents = [None] * n_envs, [None] * n_envs

    def make(i):  # as pysc2's run_thread, each thread makes its own env
        envs[i] = CONFIG.make(seed=i)
        agents[i] = new_agent(envs[i])
        play_episode(envs[i], agents[i])

    def play(i):
        return sum(play_episode(envs[i], agents[i]) for _ in range(episodes))

    try:
        with concurrent.futures.ThreadPoolExecutor(n_envs) as threads:
            list(threads.map(make, range(n_envs)))
            startup = time.perf_counter() - start
            start = time.perf_counter()
            steps = sum(threads.map(play, range(n_envs)))
        return steps, time.perf_counter() - start, startup
    finally:
        for env in envs:
            if env is not None:
                env.close()


# --- 3. lockstep subprocess pool (baselines SubprocVecEnv) ------------------------------------


def _lockstep_worker(remote, seed: int) -> None:
    """One env in its own process: ``step`` returns (done, TimeStep), resetting on done."""
    env = CONFIG.make(seed=seed)
    try:
        remote.send((env.observation_spec()[0], env.action_spec()[0]))
        while True:
            command, action = remote.recv()
            if command == "reset":
                remote.send(env.reset()[0])
            elif command == "step":
                timestep = env.step([action])[0]
                done = timestep.last()
                remote.send((done, env.reset()[0] if done else timestep))
            else:
                break
    except (EOFError, KeyboardInterrupt):
        pass
    finally:
        env.close()
        remote.close()


class LockstepEnvs:
    """``SubprocVecEnv`` in miniature: every step waits for all envs, so the slowest sets the pace."""

    def __init__(self, n_envs: int):
        ctx = multiprocessing.get_context("spawn")
        pipes = [ctx.Pipe() for _ in range(n_envs)]
        self.remotes = [parent for parent, _ in pipes]
        self.procs = [
            ctx.Process(target=_lockstep_worker, args=(child, i), daemon=True)
            for i, (_, child) in enumerate(pipes)
        ]
        try:
            for proc in self.procs:
                proc.start()
            for _, child in pipes:
                child.close()
            self.specs = [remote.recv() for remote in self.remotes]
        except BaseException:
            self.close()
            raise

    def reset(self):
        for remote in self.remotes:
            remote.send(("reset", None))
        return [remote.recv() for remote in self.remotes]

    def step(self, actions):
        for remote, action in zip(self.remotes, actions):
            remote.send(("step", action))
        return [remote.recv() for remote in self.remotes]

    def close(self) -> None:
        for remote in self.remotes:
            try:
                remote.send(("close", None))
            except (OSError, ValueError):
                pass
        for proc in self.procs:
            if proc.pid is None:
                continue
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def lockstep_episodes(vec: LockstepEnvs, agents, timesteps, episodes: int):
    """Step all envs together until each has played ``episodes`` more; (steps, timesteps)."""
    left, steps = [episodes] * len(agents), 0
    while any(left):
        results = vec.step([agent.step(ts) for agent, ts in zip(agents, timesteps)])
        timesteps = [ts for _, ts in results]
        for i, (done, _) in enumerate(results):
            steps += bool(left[i])  # episodes are equally long, so no env idles in practice
            if done:
                left[i] = max(left[i] - 1, 0)
                agents[i].reset()
    return steps, timesteps


def bench_lockstep(n_envs: int, episodes: int):
    start = time.perf_counter()
    with LockstepEnvs(n_envs) as vec:
        agents = []
        for obs_spec, action_spec in vec.specs:
            agents.append(random_agent.RandomAgent())
            agents[-1].setup(obs_spec, action_spec)
            agents[-1].reset()
        _, timesteps = lockstep_episodes(vec, agents, vec.reset(), 1)  # ends reset, as baselines
        startup = time.perf_counter() - start
        start = time.perf_counter()
        steps, _ = lockstep_episodes(vec, agents, timesteps, episodes)
        return steps, time.perf_counter() - start, startup


# --- 4. sc2dask ---------------------------------------------------------------------------


def bench_sc2dask(n_envs: int, episodes: int):
    start = time.perf_counter()
    with cluster_client(None, n_envs) as client, EnvPool(client, CONFIG, n_envs=n_envs) as pool:
        pool.evaluate(AGENT, n_envs)  # one warm-up episode per env starts the games
        startup = time.perf_counter() - start
        start = time.perf_counter()
        scores = pool.evaluate(AGENT, n_envs * episodes)
        return len(scores) * EPISODE_STEPS, time.perf_counter() - start, startup


# --- (b) the distributed layer ----------------------------------------------------------------


def host_in_process(n_envs: int, episodes: int) -> float:
    """Seconds per agent step of one EnvHost in this process, one call per episode round."""
    host = EnvHost(CONFIG, n_envs)
    try:
        asyncio.run(host.evaluate(AGENT, n_envs))  # warm-up: starts the games
        start, steps = time.perf_counter(), 0
        for _ in range(episodes):
            steps += len(asyncio.run(host.evaluate(AGENT, n_envs))) * EPISODE_STEPS
        return (time.perf_counter() - start) / steps
    finally:
        host.close()


def host_through_dask(n_envs: int, episodes: int, calls: int = 200):
    """The same through EnvPool on a one-worker cluster; also a no-op actor call's seconds."""
    with (
        local_cluster(1, n_envs) as cluster,
        Client(cluster, direct_to_workers=True) as client,
        EnvPool(client, CONFIG, n_envs=n_envs) as pool,
    ):
        pool.evaluate(AGENT, n_envs)
        start, steps = time.perf_counter(), 0
        for _ in range(episodes):
            steps += len(pool.evaluate(AGENT, n_envs)) * EPISODE_STEPS
        per_step = (time.perf_counter() - start) / steps
        placement = pool.placements[0]
        pool.call(placement, lambda host: host.stats())
        start = time.perf_counter()
        for _ in range(calls):
            pool.call(placement, lambda host: host.stats())
        return per_step, (time.perf_counter() - start) / calls


SETUPS = {
    "loop": bench_loop,
    "threads": bench_threads,
    "lockstep": bench_lockstep,
    "sc2dask": bench_sc2dask,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--episodes", type=int, default=3, help="timed episodes per env")
    args = parser.parse_args()
    np.random.seed(0)
    print(
        find_game().summary,
        f"| {os.cpu_count()} cores, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}",
    )

    results = {}  # (setup, envs) -> (steps, seconds, startup seconds)
    for n_envs in args.envs:
        for name, bench in SETUPS.items():
            print(f"... {name}, {n_envs} envs", flush=True)
            results[name, n_envs] = bench(n_envs, args.episodes)
    print("... in-process EnvHost vs EnvPool", flush=True)
    n_b = min(args.envs)
    local = host_in_process(n_b, args.episodes)
    remote, noop_call = host_through_dask(n_b, args.episodes)

    print(
        f"\n(a) MoveToBeacon 32x32, step_mul 8, pysc2 RandomAgent per env, {args.episodes} "
        f"timed episodes per env; agent steps/s, all envs together (startup in brackets, s)"
    )
    print(
        f"{'envs':>4} " + " ".join(f"{name:>17}" for name in SETUPS) + f" {'sc2dask/best peer':>18}"
    )
    for n_envs in args.envs:
        cells = [
            f"{steps / secs:8.0f} ({startup:5.1f}s)"
            for steps, secs, startup in (results[name, n_envs] for name in SETUPS)
        ]
        rate = {name: results[name, n_envs][0] / results[name, n_envs][1] for name in SETUPS}
        best = max((name for name in SETUPS if name != "sc2dask"), key=rate.get)
        print(
            f"{n_envs:>4} "
            + " ".join(f"{cell:>17}" for cell in cells)
            + f" {rate['sc2dask'] / rate[best]:>11.2f}x {best}"
        )
    measured = results["loop", args.envs[0]][0] / (args.envs[0] * args.episodes)
    print(
        f"steps per episode: {measured:.0f} counted in `loop`; sc2dask's figure assumes "
        f"{EPISODE_STEPS} (EnvHost.evaluate returns scores, not steps)."
    )
    print(
        "Startup = making the envs (and for sc2dask the LocalCluster, client and EnvPool) "
        "until every env has\nplayed one untimed warm-up episode; steps/s exclude it. "
        "sc2dask uses cluster_client's layout:\nmin(cores, envs, 4) workers, one EnvHost "
        "each, its envs in threads."
    )

    ms = 1e3
    rollout_steps = load(TrainSettings).values.rollout_steps
    print(
        f"\n(b) one EnvHost with {n_b} envs, {args.episodes} evaluate calls of one episode per "
        f"env ({n_b * EPISODE_STEPS} agent steps each)"
    )
    print(f"  in process (asyncio.run):         {local * ms:7.3f} ms per agent step")
    print(f"  through Dask (EnvPool, 1 worker): {remote * ms:7.3f} ms per agent step")
    print(
        f"  difference:                       {(remote - local) * ms:+7.3f} ms per agent step "
        f"({remote / local - 1:+.1%})"
    )
    print(
        f"  no-op actor call (stats) round trip: {noop_call * ms:.2f} ms = "
        f"{noop_call * ms / (n_b * EPISODE_STEPS):.4f} ms per step at {n_b * EPISODE_STEPS} "
        f"steps a call, {noop_call * ms / (n_b * rollout_steps):.3f} ms at training's "
        f"rollout-steps {rollout_steps} x {n_b} envs"
    )


if __name__ == "__main__":
    main()
