"""``sc2dask evaluate --video``: one more episode drawn in pysc2's palette, written by
imageio, with the score; a bad file name or layer is one line and exit 2."""

import json

import imageio.v3 as iio
import numpy as np
import pytest

from sc2dask.game.pysc2lib import features
from sc2dask.game.recording import Recording
from sc2dask.training.video import BAND, HEIGHT, frames
from tests.cli.test_cli import _run

SCRIPTED = "pysc2_evolved.agents.scripted_agent.MoveToBeacon"
PALETTE = np.asarray(features.SCREEN_FEATURES.player_relative.palette, np.uint8)
SELF, NEUTRAL = PALETTE[1], PALETTE[3]  # the marine, the beacon


@pytest.mark.unit
def test_frames_put_the_screen_and_the_minimap_side_by_side_scaled_by_whole_pixels():
    screen = np.zeros((3, 16, 16, 3), np.uint8)
    screen[:, 4, 5] = SELF
    minimap = np.zeros((3, 8, 8, 3), np.uint8)
    minimap[:, 0, 0] = NEUTRAL
    clip = frames(Recording("player_relative", screen, minimap, np.array([0, 1, 2])), "Map")
    assert clip.shape[0] == 3 and clip.shape[1] == BAND + HEIGHT and clip.shape[2] % 16 == 0
    scale = HEIGHT // 16
    assert (clip[0, BAND + 4 * scale : BAND + 5 * scale, 5 * scale : 6 * scale] == SELF).all()
    left = 16 * scale + 8
    assert (clip[0, BAND : BAND + HEIGHT // 8, left : left + HEIGHT // 8] == NEUTRAL).all()
    assert (clip[:, :BAND] > 200).any(axis=(1, 2, 3)).all()  # each frame's line of text


@pytest.mark.cluster
@pytest.mark.usefixtures("sc2path")
def test_evaluate_records_an_episode_of_any_pysc2_agent_to_a_gif(tmp_path):
    clip = tmp_path / "beacon.gif"
    done = _run(
        ["evaluate", "--agent", SCRIPTED, "--episodes", "1", "--envs", "1", "--step-mul", "32"]
        + ["--screen", "16", "--minimap", "16", "--video", str(clip), "--json"],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["video"] == str(clip) and result["video_score"] >= 1  # it reached a beacon
    pictures = iio.imread(clip, index=None)
    assert len(pictures) == 1920 // 32 + 1  # every step, the first state included
    screen = pictures[0, BAND : BAND + HEIGHT, :HEIGHT, :3].reshape(-1, 3).astype(int)
    for colour in (SELF, NEUTRAL):
        assert (np.abs(screen - colour).sum(axis=1) < 30).any()  # GIF's palette is close


@pytest.mark.parametrize(
    "args, message",
    [
        (["--video", "clip.avi"], "name a .gif or .mp4 file"),
        (["--video", "/nonexistent/clip.gif"], "the folder '/nonexistent' does not exist"),
        (["--video", "clip.gif", "--video-layer", "colour"], "'colour' is not a layer of both"),
    ],
)
@pytest.mark.unit
def test_a_bad_video_request_is_one_line_and_exit_2(tmp_path, args, message):
    done = _run(["evaluate", "--agent", SCRIPTED, "--episodes", "1", *args], tmp_path)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
