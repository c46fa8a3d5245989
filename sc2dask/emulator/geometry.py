"""World <-> screen and world <-> minimap pixel transforms, exactly as pysc2 computes them.

The screen is ``width`` world units wide, centred on the camera, with square pixels
and y pointing down; the minimap shows the whole map scaled by ``res / max(map size)``.
"""

from __future__ import annotations

import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class ScreenGeometry:
    res_x: int
    res_y: int
    width: float  # world units spanned horizontally
    cam_x: float
    cam_y: float

    @property
    def scale(self) -> float:
        """Pixels per world unit."""
        return self.res_x / self.width

    @property
    def height(self) -> float:
        return self.res_y / self.scale

    def world_to_screen(self, x: float, y: float) -> tuple[int, int]:
        """pysc2's own transform for feature units (``floor`` of the scaled offset)."""
        return (
            math.floor((x - self.cam_x) * self.scale + self.res_x / 2),
            math.floor((self.cam_y - y) * self.scale + self.res_y / 2),
        )

    def screen_to_world(self, px: float, py: float) -> tuple[float, float]:
        """World position of the centre of screen pixel (px, py)."""
        return (
            self.cam_x - self.width / 2 + (px + 0.5) / self.scale,
            self.cam_y + self.height / 2 - (py + 0.5) / self.scale,
        )

    def world_bounds(self) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) of the world area the screen shows."""
        return (
            self.cam_x - self.width / 2,
            self.cam_y - self.height / 2,
            self.cam_x + self.width / 2,
            self.cam_y + self.height / 2,
        )

    def on_screen(self, x: float, y: float) -> bool:
        x0, y0, x1, y1 = self.world_bounds()
        return x0 <= x < x1 and y0 <= y < y1


@dataclasses.dataclass(frozen=True)
class MinimapGeometry:
    res_x: int
    res_y: int
    map_w: int
    map_h: int

    @property
    def scale(self) -> float:
        return min(self.res_x, self.res_y) / max(self.map_w, self.map_h)

    def world_to_minimap(self, x: float, y: float) -> tuple[int, int]:
        return (math.floor(x * self.scale), math.floor((self.map_h - y) * self.scale))

    def minimap_to_world(self, px: float, py: float) -> tuple[float, float]:
        return ((px + 0.5) / self.scale, self.map_h - (py + 0.5) / self.scale)


def screen_geometry(feature_layer, camera) -> ScreenGeometry:
    """Screen transform for ``InterfaceOptions.feature_layer`` with the camera at ``camera``."""
    res = feature_layer.resolution
    return ScreenGeometry(res.x, res.y, feature_layer.width or 24.0, camera[0], camera[1])


def minimap_geometry(feature_layer, map_size) -> MinimapGeometry:
    res = feature_layer.minimap_resolution
    return MinimapGeometry(res.x, res.y, map_size[0], map_size[1])
