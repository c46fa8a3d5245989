"""`sc2dask train` and `evaluate` as a user runs them: real processes on a real local cluster.

What the terminal shows (a few lines and a progress bar, logs in a file), that settings
from the environment are not overridden by flags left out, Ctrl-C, and bad input.
"""

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.waiting import wait_until

pytestmark = pytest.mark.usefixtures("sc2path")
SC2DASK = str(Path(sys.executable).with_name("sc2dask"))
TINY = ["--action-set", "move", "--screen", "16", "--minimap", "16"]
RANDOM = "pysc2_evolved.agents.random_agent.RandomAgent"


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_SC2DASK")}
    env.update(SC2DASK_LOG_DIR=str(tmp_path / "logs"), **extra)
    return env


def _run(args, tmp_path, timeout=300, **extra):
    return subprocess.run(
        [SC2DASK, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(tmp_path, **extra),
    )


@pytest.mark.cluster
def test_the_mode_from_the_environment_is_trained_until_max_minutes_then_checkpointed(tmp_path):
    """The old bug: `sc2dask train` passed --mode central whatever the config said. And a
    wall-clock budget ends a run as --max-steps does: its summary, and its last update in
    the checkpoint."""
    checkpoints = tmp_path / "run"
    done = _run(
        [
            "train",
            "--map",
            "MoveToBeacon",
            "--envs",
            "2",
            "--max-steps",
            "1000000000",
            "--max-minutes",
            "1.5",  # cluster start-up included: room for a first update on a busy machine
            "--checkpoint-dir",
            str(checkpoints),
            "--json",
        ],
        tmp_path,
        DASK_SC2DASK__TRAIN__MODE="sync",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout  # --json: one JSON object and nothing else
    summary = json.loads(lines[0])
    assert summary["mode"] == "sync" and 0 < summary["agent_steps"] < 1_000_000_000
    assert 90 <= summary["wall_s"] < 90 + 60  # the budget, then one update's worth
    state = json.loads(
        (checkpoints / (checkpoints / "LATEST").read_text().strip() / "state.json").read_text()
    )
    assert state["updates"] == summary["updates"]
    assert "Traceback" not in done.stderr


@pytest.mark.cluster
def test_train_shows_a_few_lines_and_a_bar_and_logs_to_a_file(tmp_path):
    done = _run(["train", "--envs", "2", "--max-steps", "300", *TINY], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert len(lines) <= 6, done.stdout
    assert [line.split(":")[0] for line in lines] == [
        "Log",
        "Dask dashboard",
        "Training page",
        lines[3].split(":")[0],
        "Done",
    ]
    assert lines[3].startswith("Training FullyConvA2C on MoveToBeacon (central updates")
    assert re.search(r"Done: \d+ agent steps, \d+ updates", lines[-1])
    bar = done.stderr.replace("\r", "\n")
    assert "step/s" in bar and "updates" in bar and "score(100)" in bar and "restarts" in bar
    for noise in ("INFO", "Traceback", "oneDNN", "distributed."):
        assert noise not in done.stdout + done.stderr, noise
    log = Path(lines[0].split(":", 1)[1].strip())
    assert log.parent == tmp_path / "logs"
    assert "distributed.scheduler" in log.read_text()


@pytest.mark.cluster
@pytest.mark.parametrize("signum, group", [(signal.SIGINT, True), (signal.SIGTERM, False)])
def test_ctrl_c_or_sigterm_finishes_the_update_checkpoints_and_exits_0(tmp_path, signum, group):
    """SIGINT as a terminal sends it, to the whole process group (workers and games too);
    SIGTERM as `kill` or a batch system's end of walltime sends it first, to the command."""
    checkpoints = tmp_path / "run"
    process = subprocess.Popen(
        [
            SC2DASK,
            "train",
            "--envs",
            "2",
            "--max-steps",
            "1000000",
            "--checkpoint-dir",
            str(checkpoints),
            "--checkpoint-every",
            "1",
            "--json",
            *TINY,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
        start_new_session=True,
    )
    try:
        wait_until(
            lambda: (checkpoints / "LATEST").exists() or process.poll() is not None,
            timeout=240,
            what="the first checkpoint",
        )
        (os.killpg if group else os.kill)(process.pid, signum)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 0, err[-3000:]
    summary = json.loads(out.strip().splitlines()[-1])
    assert 0 < summary["agent_steps"] < 1_000_000
    assert summary["restarts"] == 0  # no worker or game died of the Ctrl-C
    state = json.loads(
        (checkpoints / (checkpoints / "LATEST").read_text().strip() / "state.json").read_text()
    )
    assert state["updates"] == summary["updates"]  # the last update is in the checkpoint
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


@pytest.mark.parametrize(
    "args, extra, message",
    [
        (
            ["train", "--envs", "2", "--max-steps", "10"],
            {"DASK_SC2DASK__AGENT__LEARNING_RATE": "abc"},
            "DASK_SC2DASK__AGENT__LEARNING_RATE",
        ),
        (["train", "--screen", "0"], {}, "sc2dask.agent.screen must be >= 1 and <= 1024"),
        (["train", "--config", "/nonexistent/run.yaml"], {}, "Cannot read --config"),
        (["train", "--map", "NoSuchMap", "--max-steps", "10"], {}, "Unknown map 'NoSuchMap'"),
        (["train", "--map", "Simple64"], {}, "Simple64 is a map for 2 players: give the agent"),
        (["train", "--opponent", "bot:elf:easy"], {}, "'bot:elf:easy' is not an opponent"),
        (["train", "--race", "elf"], {}, "invalid choice: 'elf' (choose from 'terran', 'zerg'"),
        (
            ["train", "--map", "Simple64", "--opponent", "bot:zerg:easy"],
            {},
            "The sc2dask emulator plays terran only, not zerg",
        ),
        (["train", "--reward", "outcome"], {}, "no opponent to win or lose against"),
        (
            ["evaluate", "--agent", RANDOM, "--map", "Simple64", "--opponent"]
            + ["bot:terran:cheat_insane"],
            {},
            "The sc2dask emulator has no cheat_insane bot",
        ),
        (["train", "--max-minutes", "0"], {}, "sc2dask.train.max-minutes must be > 0"),
        (
            ["evaluate", "--agent", RANDOM, "--opponent", "bot:terran:easy", "--episodes", "1"],
            {},
            "MoveToBeacon has one player",
        ),
        (
            ["train", "--map", "Flat64", "--opponent", "bot:terran:very_easy"],
            {},
            "The sc2dask emulator cannot play 'Flat64'",
        ),
        pytest.param(
            ["evaluate", "--agent", "no.such.Agent", "--episodes", "1"],
            {},
            "Cannot load agent",
            marks=pytest.mark.cluster,
        ),
        (["evaluate", "--checkpoint", "/nonexistent", "--episodes", "1"], {}, "No checkpoint in"),
        (
            ["train", "--scheduler", "http://x", "--max-steps", "10"],
            {},
            "'http://x' is not a Dask scheduler address",
        ),
        (["train", "--scheduler", "localhost", "--max-steps", "10"], {}, "'localhost' has no port"),
        pytest.param(
            ["evaluate", "--agent", "os.path.join", "--episodes", "1"],
            {},
            "'os.path.join' is not a pysc2 agent class",
            marks=pytest.mark.cluster,
        ),
        pytest.param(
            ["evaluate", "--agent", f"{RANDOM}:oops", "--episodes", "1"],
            {},
            "cannot be made with the argument 'oops'",
            marks=pytest.mark.cluster,
        ),
        (["train", "--rollout-steps", "0"], {}, "sc2dask.train.rollout-steps must be >= 1"),
        (["train", "--mode", "async", "--sync-lr-scaling", "sqrt"], {}, "only mode='sync' makes"),
        (["train", "--async-combine", "sqrt"], {}, "set mode='async', or async-combine=none"),
        (["train", "--max-staleness", "-1"], {}, "sc2dask.train.max-staleness must be >= 0"),
        (["train", "--call-timeout", "0"], {}, "sc2dask.train.call-timeout must be > 0"),
        (
            ["train", "--max-steps", "10", "--checkpoint-dir", "/proc/sc2dask-run"],
            {},
            "Cannot write checkpoints to '/proc/sc2dask-run'",
        ),
        pytest.param(
            ["train", "--envs", "1", "--max-steps", "10", *TINY],
            {"TF_NUM_INTRAOP_THREADS": "abc"},
            "TF_NUM_INTRAOP_THREADS='abc' on this worker is not a whole number",
            marks=pytest.mark.cluster,
        ),
        (["emulator", "serve", "--port", "70000"], {}, "70000 is not a port"),
        (["emulator", "install", "/proc/sc2dask-emulator"], {}, "Cannot install the emulator in"),
        (["train", "--tls-cert", "cert.pem"], {}, "--tls-ca-file and --tls-key missing"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path, args, extra, message):
    done = _run(args, tmp_path, timeout=180, **extra)
    assert done.returncode == 2, done.stderr[-3000:]
    assert message in done.stderr, done.stderr[-3000:]
    assert done.stderr.startswith(("error: ", "usage: "))  # ours, or argparse's
    assert "Traceback" not in done.stderr + done.stdout


def test_resuming_from_a_corrupt_checkpoint_is_exit_2_before_any_cluster(tmp_path):
    run = tmp_path / "run"
    (run / "ckpt-00000001").mkdir(parents=True)
    (run / "ckpt-00000001" / "state.json").write_text("{}")
    (run / "ckpt-00000001" / "weights.npz").write_bytes(b"not a zip")
    (run / "LATEST").write_text("ckpt-00000001")
    done = _run(["train", "--checkpoint-dir", str(run), "--resume", *TINY], tmp_path, timeout=120)
    assert done.returncode == 2 and "incomplete or corrupt" in done.stderr, done.stderr[-2000:]
    assert "Dask dashboard" not in done.stdout  # refused before a cluster started


def test_resuming_with_another_network_names_the_checkpoints_settings(tmp_path):
    """MoveToBeacon's default network shrank: a run resumed with today's defaults from a
    checkpoint of FullyConv's shape is told which flags give that shape, before any cluster."""
    folder = tmp_path / "run" / "ckpt-00000001"
    folder.mkdir(parents=True)
    (folder / "state.json").write_text(
        json.dumps(
            {
                "agent_config": {
                    "action_set": "move",
                    "screen_layers": ["player_relative", "selected"],
                    "minimap_layers": [],
                    "screen": 16,
                    "minimap": 16,
                    "conv_filters": [16, 32],
                    "dense_grid": 8,
                }
            }
        )
    )
    for name in ("weights.npz", "optimizer.npz"):
        np.savez(folder / name)
    (tmp_path / "run" / "LATEST").write_text(folder.name)
    done = _run(
        ["train", "--checkpoint-dir", str(tmp_path / "run"), "--resume", *TINY],
        tmp_path,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert (
        "has another network than this run's settings give (conv-filters, dense-grid); "
        "resume with its settings: --conv-filters 16,32 --dense-grid 8." in done.stderr
    )
    assert "Dask dashboard" not in done.stdout and "Traceback" not in done.stderr


@pytest.mark.cluster
def test_a_second_run_on_the_same_checkpoint_folder_is_refused(tmp_path):
    from sc2dask.training import checkpoint

    with checkpoint.run_lock(tmp_path / "run"):  # as a run in another process holds it
        done = _run(
            ["train", "--checkpoint-dir", str(tmp_path / "run"), *TINY], tmp_path, timeout=120
        )
    assert done.returncode == 2, done.stderr[-2000:]
    assert (
        f"Another run is writing checkpoints to '{tmp_path / 'run'}' (process "
        f"{os.getpid()}@" in done.stderr
    )


@pytest.mark.cluster
def test_a_setting_checked_once_the_cluster_is_up_is_also_exit_2(tmp_path):
    done = _run(
        [
            "train",
            "--envs",
            "2",
            "--max-steps",
            "100",
            "--mode",
            "sync",
            "--sync-gradients",
            "3",
            *TINY,
        ],
        tmp_path,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert "sync-gradients is 3 but the run has 2 env hosts" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.slow
@pytest.mark.cluster
def test_evaluate_a_checkpoint_on_the_map_and_sizes_it_was_trained_with(tmp_path):
    checkpoints = tmp_path / "run"
    trained = _run(
        [
            "train",
            "--envs",
            "1",
            "--max-steps",
            "32",
            "--checkpoint-dir",
            str(checkpoints),
            "--json",
            *TINY,
        ],
        tmp_path,
    )
    assert trained.returncode == 0, trained.stderr[-3000:]
    done = _run(
        ["evaluate", "--checkpoint", str(checkpoints), "--episodes", "1", "--envs", "1", "--json"],
        tmp_path,
    )  # no --screen: the checkpoint's 16, not 32
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["map"] == "MoveToBeacon" and result["episodes"] == 1


@pytest.mark.slow
@pytest.mark.cluster
def test_evaluate_plays_the_scripted_macro_agent_in_an_env_that_takes_its_raw_calls(tmp_path):
    done = _run(
        [
            "evaluate",
            "--agent",
            "sc2dask.game.scripted_agents.TerranMacro",
            "--map",
            "Simple64",
            "--opponent",
            "bot:terran:very_easy",
            "--screen",
            "16",
            "--minimap",
            "16",
            "--episodes",
            "1",
            "--envs",
            "1",
            "--json",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["wins"] + result["draws"] + result["losses"] == 1


@pytest.mark.cluster
def test_a_game_that_never_starts_ends_the_command_with_a_clear_error(tmp_path):
    """A node whose game binary exits at once: the host gives up after MAX_FAILURES_IN_A_ROW
    launches (each bounded by pysc2's TIMEOUT_SECONDS, lowered here) instead of looping."""
    game = tmp_path / "StarCraftII" / "Versions" / "Base55958" / "SC2_x64"
    game.parent.mkdir(parents=True)
    game.write_text("#!/bin/sh\necho this game is broken >&2\nexit 3\n")
    game.chmod(0o755)
    done = _run(
        [
            "evaluate",
            "--agent",
            "pysc2_evolved.agents.random_agent.RandomAgent",
            "--map",
            "MoveToBeacon",
            "--episodes",
            "1",
            "--envs",
            "1",
            "--screen",
            "16",
            "--minimap",
            "16",
        ],
        tmp_path,
        timeout=240,
        SC2PATH=str(tmp_path / "StarCraftII"),
        TIMEOUT_SECONDS="4",
    )
    assert done.returncode == 2, done.stdout + done.stderr[-3000:]
    assert "failed 5 times in a row" in done.stderr and "SC2PATH=" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.cluster
def test_a_client_killed_mid_run_resumes_from_its_last_checkpoint(tmp_path):
    """The fault no handler can catch: SIGKILL of `sc2dask train` (and, with it, its local
    cluster). `--resume` carries on from the checkpoint, losing only the updates after it."""
    checkpoints = tmp_path / "run"
    args = [
        SC2DASK,
        "train",
        "--envs",
        "2",
        "--max-steps",
        "1000000",
        "--checkpoint-dir",
        str(checkpoints),
        "--checkpoint-every",
        "2",
        "--json",
        *TINY,
    ]
    process = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
        start_new_session=True,
    )
    try:
        wait_until(
            lambda: _checkpointed(checkpoints) >= 4 or process.poll() is not None,
            timeout=240,
            what="a few checkpoints",
        )
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
    saved = _checkpointed(checkpoints)
    assert saved >= 4
    resumed = _run(
        [
            "train",
            "--envs",
            "2",
            "--max-steps",
            str(16 * saved + 320),
            "--checkpoint-dir",
            str(checkpoints),
            "--resume",
            "--json",
            *TINY,
        ],
        tmp_path,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert summary["updates"] > saved  # counted on from the checkpoint, not from 0
    assert _checkpointed(checkpoints) == summary["updates"]  # and checkpointed at the end


def _checkpointed(folder: Path) -> int:
    """Updates in the checkpoint LATEST names (0 before the first)."""
    try:
        name = (folder / "LATEST").read_text().strip()
        return json.loads((folder / name / "state.json").read_text())["updates"]
    except (OSError, ValueError):
        return 0
