"""A recorded episode as a clip (``sc2dask evaluate --video FILE``): the feature screen and
the minimap side by side in pysc2's palette, under a line with the map, step and score.

imageio writes the file: a GIF through Pillow, an MP4 through imageio-ffmpeg.
"""

from __future__ import annotations

from pathlib import Path

import imageio.v3 as iio
import numpy as np
from PIL import Image, ImageDraw

from ..errors import ConfigError
from ..game.recording import Recording

FORMATS = (".gif", ".mp4")
HEIGHT = 256  # pixels of the screen and minimap pictures; a multiple of 16 for MP4
GAP = 8
BAND = 32  # the text line's height (with HEIGHT, a multiple of 16)
FPS = 8  # agent steps a second of clip: 4x game speed at step_mul 8


def check_video_path(path: str | Path) -> Path:
    """``path`` if it names a .gif or .mp4 in a folder that exists, else ConfigError."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ConfigError(
            f"cannot write a video to {str(path)!r}: name a .gif or .mp4 file, e.g. "
            f"--video MoveToBeacon.gif"
        )
    if not path.parent.is_dir():
        raise ConfigError(
            f"cannot write a video to {str(path)!r}: the folder {str(path.parent)!r} does "
            f"not exist; create it first"
        )
    return path


def frames(recording: Recording, title: str) -> np.ndarray:
    """[T, H, W, 3] uint8: each step's screen and minimap, scaled by whole pixels to
    ``HEIGHT`` and laid side by side, under ``title``, the step and the score."""
    screen = _scale(recording.screen)
    minimap = _scale(recording.minimap)
    width = screen.shape[2] + GAP + minimap.shape[2]
    width += -width % 16  # MP4's macroblocks
    out = np.zeros((len(recording), BAND + HEIGHT, width, 3), np.uint8)
    out[:, BAND : BAND + screen.shape[1], : screen.shape[2]] = screen
    left = screen.shape[2] + GAP
    out[:, BAND : BAND + minimap.shape[1], left : left + minimap.shape[2]] = minimap
    for t, score in enumerate(recording.scores):
        picture = Image.fromarray(out[t])
        text = f"{title}  step {t}/{len(recording) - 1}  score {score:g}"
        ImageDraw.Draw(picture).text((4, 10), text, fill=(255, 255, 255))
        out[t] = np.asarray(picture)
    return out


def write_video(recording: Recording, path: str | Path, title: str) -> Path:
    """Write ``recording`` to ``path`` (.gif or .mp4) and return the path."""
    path = check_video_path(path)
    clip = frames(recording, title)
    if path.suffix.lower() == ".gif":
        iio.imwrite(path, clip, extension=".gif", duration=1000 / FPS, loop=0)
    else:
        iio.imwrite(path, clip, extension=".mp4", fps=FPS)
    return path


def _scale(pictures: np.ndarray) -> np.ndarray:
    """Nearest-neighbour upscaling by the largest whole factor that fits ``HEIGHT``."""
    factor = max(1, HEIGHT // pictures.shape[1])
    return pictures.repeat(factor, axis=1).repeat(factor, axis=2)
