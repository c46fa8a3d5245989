"""V-trace's targets and advantages, in the graph over concatenated trajectories, against
IMPALA's recursion written out step by step."""

import numpy as np
import pytest

from sc2dask.agents.a2c import advantage_operator, vtrace

GAMMA, LAMBDA = 0.9, 0.8


def _recursion(values, rewards, not_done, ratios, lengths):
    """Espeholt et al. (2018), eq. 1 as a backward recursion, one trajectory at a time:
    v_s = V(x_s) + rho_s delta_s + gamma c_s (v_(s+1) - V(x_(s+1))), each trajectory's
    last row (its bootstrap) standing for itself."""
    targets, advantages = [], []
    row = 0
    for n in lengths:
        v, r, d, w = values[row : row + n + 1], rewards[:n], not_done[:n], ratios[:n]
        rewards, not_done, ratios = rewards[n:], not_done[n:], ratios[n:]
        rho, c = np.minimum(1.0, w), LAMBDA * np.minimum(1.0, w)
        target = np.array(v, np.float64)
        for s in reversed(range(n)):
            delta = r[s] + GAMMA * d[s] * v[s + 1] - v[s]
            target[s] = v[s] + rho[s] * delta + GAMMA * c[s] * d[s] * (target[s + 1] - v[s + 1])
        targets += list(target[:n])
        advantages += [rho[s] * (r[s] + GAMMA * d[s] * target[s + 1] - v[s]) for s in range(n)]
        row += n + 1
    return np.array(targets), np.array(advantages)


def _inputs(ratios):
    rng = np.random.default_rng(3)
    lengths = [5, 4]  # two trajectories, each with its bootstrap row after its steps
    values = rng.normal(size=sum(lengths) + len(lengths)).astype(np.float32)
    rewards = rng.normal(size=sum(lengths)).astype(np.float32)
    not_done = np.ones(sum(lengths), np.float32)
    not_done[2] = 0.0  # an episode ends inside the first
    step_rows = np.array([0, 1, 2, 3, 4, 6, 7, 8, 9], np.int32)
    return lengths, values, rewards, not_done, step_rows, np.asarray(ratios, np.float32)


def _vtrace(lengths, values, rewards, not_done, step_rows, ratios, gamma_lambda):
    deltas = rewards + GAMMA * not_done * values[step_rows + 1] - values[step_rows]
    targets, advantages = vtrace(
        deltas,
        values[step_rows],
        not_done,
        step_rows,
        advantage_operator(lengths, not_done, gamma_lambda),
        np.log(ratios),
        GAMMA,
    )
    return targets.numpy(), advantages.numpy()


@pytest.mark.unit
def test_vtrace_is_impalas_recursion():
    ratios = [0.5, 2.0, 1.0, 0.1, 1.5, 0.8, 3.0, 0.3, 1.0]  # truncated at 1 where above
    lengths, values, rewards, not_done, step_rows, ratios = _inputs(ratios)
    targets, advantages = _vtrace(
        lengths, values, rewards, not_done, step_rows, ratios, GAMMA * LAMBDA
    )
    expected_targets, expected_advantages = _recursion(values, rewards, not_done, ratios, lengths)
    np.testing.assert_allclose(targets, expected_targets, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(advantages, expected_advantages, rtol=1e-5, atol=1e-5)


@pytest.mark.unit
def test_vtrace_on_fresh_data_with_lambda_1_is_gae():
    lengths, values, rewards, not_done, step_rows, ratios = _inputs(np.ones(9))
    operator = advantage_operator(lengths, not_done, GAMMA)
    deltas = rewards + GAMMA * not_done * values[step_rows + 1] - values[step_rows]
    gae = operator @ deltas
    targets, advantages = _vtrace(lengths, values, rewards, not_done, step_rows, ratios, GAMMA)
    np.testing.assert_allclose(advantages, gae, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(targets, gae + values[step_rows], rtol=1e-5, atol=1e-5)
