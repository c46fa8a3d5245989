"""`sc2dask train --agent-class`: a user's own agent (examples/custom_agent.py, and a minimal
one written from the protocols alone) trains in every mode, checkpoints and is evaluated
like the built-in one; a class that is no agent is one line and exit code 2."""

import json

import pytest

from tests.cli.test_cli import _run

pytestmark = pytest.mark.usefixtures("sc2path")
CUSTOM = ["--agent-class", "examples.custom_agent:Agent"]
SHORT = ["--map", "MoveToBeacon", "--envs", "2", "--max-steps", "3000", "--json"]


def _summary(done) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.cluster
@pytest.mark.parametrize(
    "mode, extra",
    [
        ("sync", []),
        ("async", []),
        ("sync", ["--compression", "int8", "--layered-sync", "2"]),  # packed, and in layers
    ],
)
def test_a_custom_agent_trains_in_each_mode(tmp_path, mode, extra):
    summary = _summary(_run(["train", *CUSTOM, *SHORT, "--mode", mode, *extra], tmp_path))
    assert summary["mode"] == mode and summary["agent_steps"] >= 3000 and summary["updates"] > 0


@pytest.mark.cluster
@pytest.mark.parametrize("mode", ["central", "sync", "async"])
def test_an_agent_written_from_the_protocols_alone_trains_in_every_mode(tmp_path, mode):
    """tests/agents/minimal_agent.py: none of the optional parts, no "value" from act, and
    an extra of its own that its learner needs from every trajectory, in each mode where
    gradients are computed (the client, or the hosts)."""
    minimal = ["--agent-class", "tests.agents.minimal_agent:Agent"]
    summary = _summary(_run(["train", *minimal, *SHORT, "--mode", mode], tmp_path))
    assert summary["mode"] == mode and summary["agent_steps"] >= 3000 and summary["updates"] > 0


@pytest.mark.cluster
def test_a_custom_agent_trains_centrally_checkpoints_resumes_and_is_evaluated(tmp_path):
    run = ["train", *CUSTOM, *SHORT, "--checkpoint-dir", str(tmp_path / "run")]
    first = _summary(_run(run, tmp_path))
    assert first["mode"] == "central" and first["updates"] > 0
    resumed = _summary(_run([*run, "--resume", "--max-steps", "4000"], tmp_path))
    assert resumed["agent_steps"] >= 4000 and resumed["updates"] > first["updates"]
    done = _run(
        ["evaluate", "--checkpoint", str(tmp_path / "run"), "--episodes", "2", "--json"], tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["episodes"] == 2


@pytest.mark.parametrize(
    "path, says",
    [
        ("no_such_module:Agent", "cannot import 'no_such_module'"),
        ("examples.custom_agent:LinearPolicy", "is not an agent: it has no Config"),
    ],
)
def test_an_agent_class_that_is_no_agent_is_one_line_and_exit_2(tmp_path, path, says):
    done = _run(["train", "--agent-class", path, *SHORT], tmp_path, timeout=60)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and says in lines[0], done.stderr[-2000:]


@pytest.mark.parametrize(
    "path, extra, says",
    [
        (
            "tests.agents.misfit_agents:PrepareTooNarrow",
            [],
            "prepare(gradients: bool) -> None cannot take sc2dask's call",
        ),
        (
            "tests.agents.misfit_agents:PolicyWithoutHeads",
            ["--mode", "sync", "--layered-sync", "2"],
            "policy has no head_weights()",
        ),
    ],
)
def test_an_agent_whose_parts_cannot_take_the_frameworks_calls_is_refused_before_a_cluster(
    tmp_path, path, extra, says
):
    """Its learner and policy are built and checked as the client would build them, before
    any cluster starts: one error line, exit 2, no traceback, no dashboard."""
    done = _run(["train", "--agent-class", path, *SHORT, *extra], tmp_path, timeout=60)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(errors) == 1 and says in errors[0], done.stderr[-2000:]  # beside the "Log:" line
    assert "dashboard" not in (done.stdout + done.stderr).lower()
