"""bench_scaling's one-node reference (a curve learned at one quota put on another's
clock) and how it splits an efficiency into where it was lost."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_scaling import (  # noqa: E402
    efficiency_parts,
    on_quota_clock,
    reference_verdict,
    same_learning,
)


def _rows(updates, steps_per_update=10, score=lambda u: float(u), wall_per_update=1.0):
    return [
        {
            "update": u,
            "agent_steps": u * steps_per_update,
            "episodes": u // 2,
            "mean_score_last_100": score(u),
            "wall_s": u * wall_per_update,
        }
        for u in updates
    ]


@pytest.mark.unit
def test_same_learning_compares_the_updates_both_runs_made():
    reference = _rows(range(1, 11), wall_per_update=0.1)
    assert same_learning(reference, _rows(range(1, 5))) == (4, None)
    before_any_episode = _rows(range(1, 5), score=lambda u: float("nan"))
    assert (
        same_learning(_rows(range(1, 11), score=lambda u: float("nan")), before_any_episode)[1]
        is None
    )
    assert same_learning(reference, before_any_episode) == (1, 1)
    assert same_learning(reference, _rows(range(5, 15))) == (6, None)  # 11-14: not in it
    differs = _rows(range(1, 5), score=lambda u: u + (0.5 if u == 3 else 0.0))
    assert same_learning(reference, differs) == (3, 3)


@pytest.mark.unit
def test_the_reference_continues_at_the_quota_runs_pace():
    reference = _rows(range(1, 11), wall_per_update=0.1)  # 100 steps/s
    quota = _rows(range(1, 5), wall_per_update=1.0)  # 10 steps/s, 40 steps in 4 s
    curve = on_quota_clock(reference, quota, steps_per_s=10.0)
    assert [r["update"] for r in curve] == list(range(1, 11))
    assert curve[:4] == quota
    assert [r["wall_s"] for r in curve[4:]] == pytest.approx([5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    assert curve[-1]["mean_score_last_100"] == 10.0  # the reference's learning, not retimed


@pytest.mark.unit
def test_a_failed_reference_check_is_said_in_the_printed_line():
    checked = {"reference_cpu": 1.0, "reference_updates_compared": 29}
    assert "same at all 29 updates" in reference_verdict(
        checked | {"reference_first_mismatch": None}
    )
    failed = reference_verdict(checked | {"reference_first_mismatch": 7})
    assert "FAILED at update 7" in failed and "quota run's own figures" in failed
    assert reference_verdict({}) == ""


@pytest.mark.unit
def test_an_efficiency_splits_into_pace_steps_and_the_rest():
    figures = {  # CollectMineralShards in central mode, seed 0
        "nodes": [1, 8, 16],
        "steps_to_target": [91920, 95040, 111664],
        "efficiency_steps_per_s": [1.0, 1.064, 0.779],
        "efficiency_time_to_target": [1.0, 0.974, 0.594],
    }
    eight, sixteen = efficiency_parts(figures)
    assert eight.startswith("at 8 nodes: efficiency 0.974 = steps/s 1.064")
    assert "steps to the target 0.967" in eight and "the rest 0.946" in eight
    assert "steps to the target 0.823" in sixteen and "the rest 0.926" in sixteen
    assert efficiency_parts({"nodes": [1, 8]}) == []  # a run missed the target
