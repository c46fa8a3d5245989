"""Simple64's default agent: an MLP over macro_state's counts, in an env that renders no
feature layers, learning with A2C's learner (PPO's clip and epochs)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sc2dask.agents.loading import build_agent
from sc2dask.core import Trajectory
from sc2dask.game import macro_state
from sc2dask.game.macros import MACROS, MacroCall
from sc2dask.training.run_settings import resolve_run

pytestmark = pytest.mark.usefixtures("sc2path")

NAMES = macro_state.NAMES


def _count(state: np.ndarray, name: str) -> float:
    return float(np.expm1(state[NAMES.index(name)]))


@pytest.fixture(scope="module")
def simple64():
    """Simple64's defaults against VeryEasy: the run, its agent and a game."""
    run = resolve_run({"map": "Simple64", "opponent": "bot:terran:very_easy"})
    env = run.env_config.make(seed=3)
    yield run, build_agent(run.agent_spec), env
    env.close()


def test_the_env_of_simple64s_defaults_renders_no_feature_layers(simple64):
    run, agent, env = simple64
    spec = env.observation_spec()[0]
    assert run.env_config.feature_layers is False
    assert "feature_screen" not in spec and "feature_minimap" not in spec
    assert "raw_units" in spec  # what the counts and the macros read
    policy = agent.make_policy({k: tuple(v) for k, v in spec.items()})
    # kickstarted by default: the teacher's choice is stored, not read by the network
    assert set(policy.encoder.spec()) == {"player", "macro", "available", "teacher"}
    assert set(policy.input_keys) == {"player", "macro"}


def test_the_counts_follow_the_game(simple64):
    """The start (12 SCVs, a command center, 50 minerals, 15 supply), then an SCV in
    training makes the command center busy; the clock moves with the game loop."""
    _, _, env = simple64
    observation = env.reset()[0].observation
    start = macro_state.macro_state(observation)
    assert start.shape == (len(NAMES),) and start.dtype == np.float32
    assert _count(start, "scvs") == pytest.approx(12)
    assert _count(start, "command_center") == pytest.approx(1)
    assert _count(start, "minerals") == pytest.approx(50)
    assert _count(start, "supply_cap") == pytest.approx(15)
    assert _count(start, "command_center_busy") == 0 and _count(start, "marines") == 0
    later = env.step([MacroCall(MACROS.index("train_scv"))])[0].observation
    state = macro_state.macro_state(later)
    assert _count(state, "command_center_busy") == pytest.approx(1)
    assert _count(state, "minerals") < 50 + 40  # paid 50; mined less than 90 in 32 loops
    minutes = state[NAMES.index("game_minutes")] * 30
    assert minutes == pytest.approx(float(later["game_loop"][0]) / (22.4 * 60))


def test_the_learner_learns_from_a_played_trajectory(simple64):
    """Gradients from 16 played steps are finite and reach every layer, and steps that
    each paid +1 (every advantage positive while the values are near 0) make the macros
    chosen in them likelier."""
    run, agent, env = simple64
    spec = {k: tuple(v) for k, v in env.observation_spec()[0].items()}
    plain = dataclasses.replace(agent.config, normalize_advantages=False)
    learner = type(agent)(plain).make_learner(spec)
    policy = learner.policy
    rng = np.random.default_rng(0)
    timestep = env.reset()[0]
    observations, actions, log_probs = [], [], []
    for _ in range(16):
        batch = policy.encoder.encode_batch([timestep.observation])
        heads, behaviour, calls, _ = policy.act(batch, rng, {})
        observations.append({k: v[0] for k, v in batch.items()})
        actions.append({k: int(v[0]) for k, v in heads.items()})
        log_probs.append(float(behaviour["log_prob"][0]))
        timestep = env.step(calls)[0]
    observations.append(policy.encoder.encode(timestep.observation))
    rewards = np.ones(16, np.float32)
    terminal = np.zeros(16, bool)
    terminal[-1] = True
    trajectory = Trajectory.from_steps(
        observations, actions, rewards, terminal, version=0, log_probs=log_probs
    )
    grads, metrics = learner.compute_gradients([trajectory])
    assert all(np.isfinite(g).all() for g in grads)
    assert all(np.abs(g).sum() > 0 for g in grads), "a layer the loss does not reach"
    before = _log_prob(policy, trajectory)
    for _ in range(4):
        learner.apply_gradients(learner.compute_gradients([trajectory])[0])
    assert _log_prob(policy, trajectory) > before


def _log_prob(policy, trajectory) -> float:
    """The sum over the trajectory's steps of log pi(chosen macro) under the policy now."""
    batch = {k: v[:-1] for k, v in trajectory.observations.items()}
    logits = policy.forward(policy._inputs(batch))["function"].numpy()
    logits = np.where(batch["available"], logits, -np.inf)
    top = logits.max(axis=1, keepdims=True)
    log_z = np.log(np.exp(logits - top).sum(axis=1)) + top[:, 0]
    chosen = trajectory.actions["function"]
    return float((logits[np.arange(len(chosen)), chosen] - log_z).sum())


def test_a_kickstarted_learner_learns_the_teachers_choices(simple64):
    """With ``kickstart``, each encoded step holds the scripted TerranMacro's choice
    (an SCV first: 12 of its 16, no depot affordable yet) and the loss adds the
    cross-entropy to it: paid nothing, the policy moves towards the teacher's choices;
    past ``kickstart_updates`` the teacher weighs nothing."""
    run, agent, env = simple64
    spec = {k: tuple(v) for k, v in env.observation_spec()[0].items()}
    config = dataclasses.replace(agent.config, kickstart=1.0, kickstart_updates=10)
    learner = type(agent)(config).make_learner(spec)
    policy = learner.policy
    assert "teacher" in policy.encoder.spec() and "teacher" not in policy.input_keys
    timestep = env.reset()[0]
    first = policy.encoder.encode(timestep.observation)
    assert first["teacher"] == MACROS.index("train_scv")
    rng = np.random.default_rng(1)
    observations, actions = [], []
    for _ in range(24):
        batch = policy.encoder.encode_batch([timestep.observation])
        heads, _, calls, _ = policy.act(batch, rng, {})
        observations.append({k: v[0] for k, v in batch.items()})
        actions.append({k: int(v[0]) for k, v in heads.items()})
        timestep = env.step(calls)[0]
    observations.append(policy.encoder.encode(timestep.observation))
    zeros, ends = np.zeros(24, np.float32), np.zeros(24, bool)

    def played(version):
        return Trajectory.from_steps(observations, actions, zeros, ends, version=version)

    teacher = played(0)
    teacher.actions["function"] = teacher.observations["teacher"][:-1].astype(np.int32)
    before = _log_prob(policy, teacher)
    for _ in range(8):
        grads, metrics = learner.compute_gradients([played(0)])
        learner.apply_gradients(grads)
    assert _log_prob(policy, teacher) > before + 1.0  # over 24 steps
    assert 0 <= metrics["teacher_agreement"] <= 1 and metrics["kickstart_cross_entropy"] > 0
    plain = type(agent)(dataclasses.replace(config, kickstart=0.0)).make_learner(spec)
    plain.model.set_weights(learner.model.get_weights())
    late, _ = learner.compute_gradients([played(10)])  # the weight has fallen to 0
    without = plain.compute_gradients([Trajectory.from_steps(
        [{k: v for k, v in o.items() if k != "teacher"} for o in observations],
        actions, zeros, ends, version=10,
    )])[0]  # fmt: skip
    assert all(np.allclose(a, b, atol=1e-6) for a, b in zip(late, without))
