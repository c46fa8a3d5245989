"""The client's arithmetic, without a cluster: placing envs, sharing episodes, batching
trajectories, weighting sync gradients, and the settings that must agree."""

import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sc2dask.core import Ended, GradientResult, Trajectory, Work
from sc2dask.errors import ConfigError
from sc2dask.game import game_seed
from sc2dask.settings import AgentSettings, TrainSettings, load
from sc2dask.training.placement import Placement, plan_placements, share_episodes
from sc2dask.training.recorder import Progress, Recorder
from sc2dask.training.run_settings import check_settings
from sc2dask.training.updates import average_gradients, make_update_rule, minibatches

pytestmark = pytest.mark.unit

capacities = st.dictionaries(
    st.text("abcdef", min_size=1, max_size=3), st.integers(1, 8), min_size=1, max_size=6
)


@given(capacities, st.data())
def test_placements_fill_the_roomiest_workers_and_never_exceed_capacity(capacity, data):
    n_envs = data.draw(st.integers(1, sum(capacity.values())))
    placements = plan_placements(capacity, n_envs, seed=3)
    assert sum(p.n_envs for p in placements) == n_envs
    assert all(0 < p.n_envs <= capacity[p.worker] for p in placements)
    assert len({p.worker for p in placements}) == len(placements)  # one host per worker
    assert len({p.seed for p in placements}) == len(placements)
    # The fewest workers: every host but the last is full.
    assert all(p.n_envs == capacity[p.worker] for p in placements[:-1])
    assert [p.n_envs for p in placements[:-1]] == sorted(
        (p.n_envs for p in placements[:-1]), reverse=True
    )


@given(st.lists(st.integers(0, 2**64), min_size=1, max_size=5))
def test_game_seeds_always_fit_pysc2s_uint32_and_differ(parts):
    """pysc2 sends the seed in RequestCreateGame.random_seed, a uint32: a resumed run's
    seed (seed + updates) and the restarts counted into it must never overflow it."""
    seed = game_seed(*parts)
    assert 0 <= seed < 2**32
    assert game_seed(*parts) == seed and game_seed(*parts, 1) != seed


@given(st.lists(st.integers(1, 8), min_size=1, max_size=6), st.integers(0, 200))
def test_episodes_are_shared_in_proportion_to_envs(envs, episodes):
    placements = [Placement(f"w{i}", n, i) for i, n in enumerate(envs)]
    shares = share_episodes(placements, episodes)
    assert sum(shares) == episodes
    total = sum(envs)
    for share, n in zip(shares, envs):
        assert abs(share - episodes * n / total) < 1 + 1e-9


def _trajectory(steps: int, version: int = 0) -> Trajectory:
    observations = [{"screen": np.full((1, 2, 2), t, np.uint8)} for t in range(steps + 1)]
    return Trajectory.from_steps(
        observations,
        [{"function": t % 3} for t in range(steps)],
        [1.0] * steps,
        [False] * steps,
        version,
        log_probs=[-0.5] * steps,
    )


def test_a_trajectory_from_steps_stacks_the_records():
    t = _trajectory(4, version=7)
    assert len(t) == 4 and t.version == 7 and t.observations["screen"].shape == (5, 1, 2, 2)
    assert t.actions["function"].dtype == np.int32 and t.log_probs.dtype == np.float32
    assert t.nbytes == 5 * 4 + 4 * 4 + 4 * 4 + 4
    with pytest.raises(ValueError, match="needs 4 observations, got 3"):
        Trajectory.from_steps(
            [{"screen": np.zeros(1)}] * 3, [{"function": 0}] * 3, [0.0] * 3, [False] * 3, 0
        )


@given(st.integers(1, 20), st.integers(1, 8), st.integers(0, 2**31))
def test_minibatches_split_every_trajectory_into_at_most_n_groups(count, n, seed):
    trajectories = [_trajectory(1, version=i) for i in range(count)]
    groups = minibatches(trajectories, n, np.random.default_rng(seed))
    assert len(groups) == min(n, count) and all(groups)
    assert sorted(t.version for g in groups for t in g) == list(range(count))


def test_sync_gradients_are_averaged_per_step():
    results = [
        GradientResult([np.array([1.0, 1.0])], {"steps": 30.0, "loss": 1.0}, [5.0]),
        GradientResult([np.array([4.0, 0.0])], {"steps": 10.0, "loss": 3.0, "truncated": 1}, []),
    ]
    grads, metrics = average_gradients(results)
    np.testing.assert_allclose(grads[0], [(30 * 1 + 10 * 4) / 40, 30 / 40])
    assert metrics["steps"] == 40 and metrics["loss"] == 2.0 and metrics["truncated"] == 1


def test_hundreds_of_float32_gradients_average_to_float32_precision():
    """The average is summed in the gradients' own precision (fast at hundreds of hosts):
    it matches a float64 sum to float32's rounding, and stays float32."""
    rng = np.random.default_rng(0)
    results = [
        GradientResult(
            [rng.standard_normal((64, 8)).astype(np.float32)],
            {"steps": float(rng.integers(1, 64))},
            [],
        )
        for _ in range(300)
    ]
    (grad,), _ = average_gradients(results)
    steps = np.array([r.metrics["steps"] for r in results])
    exact = np.einsum("k,kij->ij", steps / steps.sum(), [r.grads[0] for r in results])
    assert grad.dtype == np.float32
    np.testing.assert_allclose(grad, exact, rtol=0, atol=1e-6)


def test_a_metric_only_some_gradients_have_is_averaged_over_those():
    """With K of N gradients per update the hosts drift apart, so an update can mix a
    rollout in which an episode ended (it has ``mean_episode_score``) with one without."""
    ended = GradientResult(
        [np.zeros(1)], {"steps": 32.0, "loss": 1.0, "mean_episode_score": 24.0}, [24.0]
    )
    playing = GradientResult([np.zeros(1)], {"steps": 32.0, "loss": 3.0}, [])
    for results in ([ended, playing], [playing, ended]):
        _, metrics = average_gradients(results)
        assert metrics["mean_episode_score"] == 24.0 and metrics["loss"] == 2.0


def _train(**overrides) -> TrainSettings:
    return load(TrainSettings, overrides).values


def test_sync_gradients_above_the_number_of_hosts_is_refused():
    with pytest.raises(ConfigError, match="sync-gradients is 3 but the run has 2 env hosts"):
        make_update_rule(
            _train(mode="sync", sync_gradients=3),
            None,
            None,
            None,
            n_hosts=2,
            rng=np.random.default_rng(),
        )
    rule = make_update_rule(
        _train(mode="sync", sync_gradients=2),
        None,
        None,
        None,
        n_hosts=2,
        rng=np.random.default_rng(),
    )
    assert rule.k == 2 and rule.work is Work.GRADIENTS


def test_settings_that_must_agree():
    agent = load(AgentSettings, {"epochs": 2}).values
    with pytest.raises(ConfigError, match="needs mode='central'"):
        check_settings(_train(mode="async"), agent)
    check_settings(_train(mode="central"), agent)
    plain = load(AgentSettings).values
    chosen = load(TrainSettings, {"mode": "async", "sync_lr_scaling": "sqrt"})
    with pytest.raises(ConfigError, match="only mode='sync' makes"):
        check_settings(chosen.values, plain, chosen.origins)
    # the same value as the package's default: sync's rule, unused by async, no error
    default = load(TrainSettings, {"mode": "async"})
    assert default.values.sync_lr_scaling == "sqrt"
    check_settings(default.values, plain, default.origins)
    check_settings(_train(mode="sync", sync_lr_scaling="linear"), plain)
    with pytest.raises(ConfigError, match="async-combine='sqrt' combines .* set mode='async'"):
        check_settings(_train(mode="sync", async_combine="sqrt"), plain)
    check_settings(_train(mode="async", async_combine="linear"), plain)
    with pytest.raises(ConfigError, match="climb orders the games .* --easier-games SHARE"):
        check_settings(_train(climb=True, opponent="bot:terran:hard"), plain)
    check_settings(_train(climb=True, opponent="bot:terran:hard", easier_games=0.5), plain)
    with pytest.raises(ConfigError, match="kickstart=0.5 learns .* --action-set macro"):
        check_settings(_train(), load(AgentSettings, {"kickstart": 0.5}).values)
    check_settings(_train(), load(AgentSettings, {"kickstart": 0.5, "action_set": "macro"}).values)
    with pytest.raises(ConfigError, match="action-set 'jump' is not one of"):
        check_settings(_train(), load(AgentSettings, {"action_set": "jump"}).values)


def test_the_recorder_counts_batches_and_checkpoints_every_n_updates():
    progress, saved, seen = Progress(), [], []
    recorder = Recorder(
        progress,
        started=time.monotonic() - 5,
        version=lambda: 7,
        checkpoint=lambda: saved.append(progress.updates),
        checkpoint_every=2,
        on_update=lambda p: seen.append(p.agent_steps),
    )
    recorder.sent(600)
    recorder.received(400)
    for rollout in ("a-1", "b-1", "a-2", "b-1", ""):  # a result seen twice, and a nameless one
        recorder.arrived(rollout)
    assert progress.counted_twice == 1
    for applied, scores in [(1, [2.0]), (0, []), (1, [4.0]), (1, [])]:
        recorder.record(applied, {"steps": 32.0, "loss": 0.5, "truncated": 1}, Ended(scores), 1)
    assert (progress.agent_steps, progress.updates, progress.episodes) == (128, 3, 2)
    assert progress.mean_score_last_100 == 3.0 and progress.truncated == 4
    assert saved == [2]  # after the 2nd applied update; the 4th row made the 3rd
    assert seen == [32, 64, 96, 128]
    row = progress.history[-1]
    assert row["version"] == 7 and row["loss"] == 0.5
    assert (row["bytes_moved"], row["bytes_to_hosts"], row["bytes_from_hosts"]) == (1000, 600, 400)
    assert row["wall_s"] >= 5  # from the run's start, not the recorder's
    recorder.learned(64, 0.5)
    assert progress.learner_samples_per_s == 128.0
