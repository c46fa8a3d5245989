"""An episode as pictures: pysc2's own colours of one feature layer of the screen and of
the minimap, step by step, with the score. Drawn where the game runs, so that only small
RGB arrays travel; ``sc2dask.training.video`` lays them out and writes the file."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import ConfigError
from .pysc2lib import features


@dataclasses.dataclass
class Recording:
    """Frames of one episode: a layer of the feature screen and of the minimap in pysc2's
    palette, and the score at each frame."""

    layer: str
    screen: np.ndarray  # [T, H, W, 3] uint8
    minimap: np.ndarray  # [T, h, w, 3] uint8
    scores: np.ndarray  # [T] float32, the episode's score so far

    def __len__(self) -> int:
        return len(self.scores)


def check_layer(name: str) -> str:
    """``name`` if pysc2 has it on both the screen and the minimap, else ConfigError."""
    both = set(features.SCREEN_FEATURES._fields) & set(features.MINIMAP_FEATURES._fields)
    if name not in both:
        raise ConfigError(
            f"{name!r} is not a layer of both the feature screen and the minimap; choose "
            f"one of {', '.join(sorted(both))}."
        )
    return name


def colorize(layer: features.Feature, values: np.ndarray) -> np.ndarray:
    """[H, W] layer values -> [H, W, 3] uint8 in the layer's own palette (as pysc2's
    renderer draws it)."""
    palette = np.asarray(layer.palette, np.uint8)
    return palette[np.clip(np.asarray(values, np.int64), 0, len(palette) - 1)]


class EpisodeRecorder:
    """A ``watch`` for ``play_episode``: draws each TimeStep's ``layer`` of the screen and
    the minimap (pysc2 always sends every layer, whatever the agent reads)."""

    def __init__(self, layer: str = "player_relative"):
        self.layer = check_layer(layer)
        self._screen_layer = getattr(features.SCREEN_FEATURES, layer)
        self._minimap_layer = getattr(features.MINIMAP_FEATURES, layer)
        self._screen: list[np.ndarray] = []
        self._minimap: list[np.ndarray] = []
        self._scores: list[float] = []

    def __call__(self, timestep, score: float) -> None:
        observation = timestep.observation
        screen = observation["feature_screen"][self._screen_layer.index]
        minimap = observation["feature_minimap"][self._minimap_layer.index]
        self._screen.append(colorize(self._screen_layer, screen))
        self._minimap.append(colorize(self._minimap_layer, minimap))
        self._scores.append(score)

    def recording(self) -> Recording:
        return Recording(
            self.layer,
            np.stack(self._screen),
            np.stack(self._minimap),
            np.asarray(self._scores, np.float32),
        )
