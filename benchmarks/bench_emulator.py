"""Agent steps/s of pysc2's SC2Env against the emulator, and where the time goes.

Plays MoveToBeacon with pysc2's random agent at step_mul 8 and prints, per resolution:
end-to-end agent steps/s; then an instrumented run split into time waiting on the
game (server work plus websocket transport) and time in pysc2's client (observation
and action transforms, the agent); and the server's own work per step measured by
replaying the same request pattern into an in-process ``Session``. Prints figures; it
asserts nothing. Run: ``python benchmarks/bench_emulator.py [--steps N]``.
"""

from __future__ import annotations

import argparse
import importlib
import time

import numpy as np
from s2clientprotocol import common_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from sc2dask.game import find_game
from sc2dask.game.pysc2lib import PACKAGE_NAME, features, random_agent, sc2_env

stopwatch = importlib.import_module(PACKAGE_NAME + ".lib.stopwatch").sw


def make_env(res):
    aif = sc2_env.AgentInterfaceFormat(
        feature_dimensions=features.Dimensions(screen=res, minimap=res)
    )
    return sc2_env.SC2Env(
        map_name="MoveToBeacon",
        players=[sc2_env.Agent(sc2_env.Race.terran)],
        agent_interface_format=aif,
        step_mul=8,
        random_seed=1,
    )


def run_steps(env, agent, steps):
    timestep = env.reset()[0]
    start = time.perf_counter()
    for _ in range(steps):
        timestep = env.step([agent.step(timestep)])[0]
        if timestep.last():
            timestep = env.reset()[0]
    return time.perf_counter() - start


def client_split(env, agent, steps):
    """Seconds per step waiting on the game vs. in pysc2's transforms and the agent."""
    stopwatch.enable()
    stopwatch.times.clear()
    elapsed = run_steps(env, agent, steps)
    stopwatch.disable()
    waiting = sum(
        v.sum
        for k, v in stopwatch.times.items()
        if k.count(".") == 1
        and k.split(".")[1] in ("observe", "actions", "step")
        and k.startswith("step_env")
    )
    return elapsed / steps, waiting / steps


def server_work(res, steps):
    """Seconds per agent step the emulator itself spends (action + step(8) + observation)."""
    from sc2dask.emulator.session import Session

    session = Session()
    options = sc_pb.InterfaceOptions(score=True)
    fl = options.feature_layer
    fl.width, fl.resolution.x, fl.resolution.y = 24, res, res
    fl.minimap_resolution.x = fl.minimap_resolution.y = res
    session.handle(
        sc_pb.Request(
            create_game=sc_pb.RequestCreateGame(
                local_map=sc_pb.LocalMap(map_path="mini_games/MoveToBeacon.SC2Map"),
                player_setup=[sc_pb.PlayerSetup(type=sc_pb.Participant)],
                random_seed=1,
            )
        ).SerializeToString()
    )
    session.handle(
        sc_pb.Request(
            join_game=sc_pb.RequestJoinGame(race=common_pb2.Terran, options=options)
        ).SerializeToString()
    )
    rng = np.random.default_rng(0)
    step = sc_pb.Request(step=sc_pb.RequestStep(count=8)).SerializeToString()
    observe = sc_pb.Request(observation=sc_pb.RequestObservation()).SerializeToString()
    restart = sc_pb.Request(restart_game=sc_pb.RequestRestartGame()).SerializeToString()
    actions = []
    for _ in range(64):  # a random Move_screen each step, like an exploring agent
        action = sc_pb.Action()
        cmd = action.action_feature_layer.unit_command
        cmd.ability_id = 3794
        cmd.target_screen_coord.x, cmd.target_screen_coord.y = rng.integers(0, res, 2)
        actions.append(
            sc_pb.Request(action=sc_pb.RequestAction(actions=[action])).SerializeToString()
        )
    start = time.perf_counter()
    for i in range(steps):
        session.handle(actions[i % 64])
        session.handle(step)
        session.handle(observe)
        if session.status == sc_pb.ended:
            session.handle(restart)
    return (time.perf_counter() - start) / steps


def client_floor(env, agent, steps):
    """Seconds per step pysc2 needs with an instant game: transform_obs, agent, transform_action.

    Uses a real observation from the emulator and pysc2's own ``Features`` for this env.
    """
    controller = env._controllers[0]  # noqa: SLF001 - pysc2 offers no public handle
    feats = env._features[0]  # noqa: SLF001
    env.reset()
    raw = controller.observe()
    start = time.perf_counter()
    for _ in range(steps):
        obs = feats.transform_obs(raw)
        timestep = sc2_env.environment.TimeStep(sc2_env.environment.StepType.MID, 0.0, 1.0, obs)
        feats.transform_action(raw.observation, agent.step(timestep))
    return (time.perf_counter() - start) / steps


def _env_process(res, steps, results):
    from absl import flags

    flags.FLAGS(["bench"])
    np.random.seed(0)
    with make_env(res) as env:
        agent = random_agent.RandomAgent()
        agent.setup(env.observation_spec()[0], env.action_spec()[0])
        run_steps(env, agent, 100)
        results.put(steps / run_steps(env, agent, steps))


def concurrent_rate(res, envs, steps):
    """Total agent steps/s of ``envs`` SC2Env+emulator pairs, each in its own process."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    procs = [ctx.Process(target=_env_process, args=(res, steps, results)) for _ in range(envs)]
    for proc in procs:
        proc.start()
    rates = [results.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join()
    return sum(rates)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    from absl import flags

    flags.FLAGS(["bench"])
    print(find_game().summary)
    rows = []
    for res in (64, 32):
        np.random.seed(0)
        with make_env(res) as env:
            agent = random_agent.RandomAgent()
            agent.setup(env.observation_spec()[0], env.action_spec()[0])
            run_steps(env, agent, 200)  # warm up
            rate = args.steps / run_steps(env, agent, args.steps)
            per_step, waiting = client_split(env, agent, args.steps // 2)
            floor = client_floor(env, agent, args.steps)
        server = server_work(res, args.steps)
        rows.append((res, rate, per_step, waiting, server, floor))
    print(f"\nMoveToBeacon, pysc2 random agent, step_mul 8, {args.steps} agent steps per figure")
    print(
        f"{'screen/minimap':>14} {'steps/s':>9} | per step (instrumented): {'total':>8} "
        f"{'server':>8} {'transport':>9} {'pysc2+agent':>11}"
    )
    for res, rate, per_step, waiting, server, _floor in rows:
        ms = lambda s: f"{s * 1e3:7.3f}ms"  # noqa: E731
        print(
            f"{f'{res}x{res}':>14} {rate:9.0f} | {'':24}{ms(per_step):>8} {ms(server):>8} "
            f"{ms(max(waiting - server, 0.0)):>9} {ms(per_step - waiting):>11}"
        )
    print(
        "\nserver = the emulator's own work (action + step(8) + observation), replayed in process;"
        "\ntransport = time pysc2 waits on the game minus that (websocket, protobuf parse);"
        "\npysc2+agent = pysc2's observation/action transforms and the agent."
    )
    print("\nWhole machine: total agent steps/s with several env processes at once (64x64):")
    single = rows[0][1]
    for envs in (2, 4):
        total = concurrent_rate(64, envs, args.steps // 2)
        print(f"{envs:>3} envs: {total:6.0f} steps/s in total, {total / single:.2f}x one env")
    print(
        "\npysc2's own ceiling (transform_obs + random agent + transform_action, no game, "
        "uninstrumented):"
    )
    for res, rate, _, _, _, floor in rows:
        print(
            f"{f'{res}x{res}':>14} {floor * 1e3:7.3f}ms per step = at most {1 / floor:6.0f} "
            f"steps/s; end to end reaches {rate / (1 / floor):.0%} of it"
        )


if __name__ == "__main__":
    main()
