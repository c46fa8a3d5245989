"""Feature layers: the screen and minimap images pysc2 reads from ``feature_layer_data``.

Units are filled discs of their radius. Everything that depends only on the map, the
resolution and the camera is built once and cached (as packed bytes inside a template
message), so a frame costs one rasterisation of the units plus a proto copy.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from s2clientprotocol import spatial_pb2

from .economy import blocked_cells
from .geometry import MinimapGeometry, ScreenGeometry, minimap_geometry, screen_geometry
from .units import Alliance, Unit
from .world import MAP_SIZE

# Height of the flat playable ground, in world units; the layer encodes -200..200 as 0..255.
TERRAIN_HEIGHT = 0.0
DENSITY_AA_PER_UNIT = 16
RASTER_BUDGET = 1 << 21  # window cells per rasterising pass (a few float64 arrays of it)

SCREEN_BPP = {
    "height_map": 8,
    "visibility_map": 8,
    "creep": 1,
    "power": 1,
    "player_id": 8,
    "player_relative": 8,
    "unit_type": 32,
    "selected": 1,
    "unit_hit_points": 32,
    "unit_hit_points_ratio": 8,
    "unit_energy": 32,
    "unit_energy_ratio": 8,
    "unit_shields": 32,
    "unit_shields_ratio": 8,
    "unit_density": 8,
    "unit_density_aa": 8,
    "effects": 8,
    "hallucinations": 1,
    "cloaked": 1,
    "blip": 1,
    "buffs": 32,
    "buff_duration": 8,
    "active": 1,
    "build_progress": 8,
    "pathable": 1,
    "buildable": 1,
    "placeholder": 1,
}
MINIMAP_BPP = {
    "height_map": 8,
    "visibility_map": 8,
    "creep": 1,
    "camera": 1,
    "player_id": 8,
    "player_relative": 8,
    "selected": 1,
    "alerts": 1,
    "pathable": 1,
    "buildable": 1,
    "unit_type": 32,
}
# Layers drawn from per-unit values, in the order _draw_units lists those values.
_UNIT_LAYERS = (
    "player_relative",
    "player_id",
    "unit_type",
    "selected",
    "unit_hit_points",
    "unit_hit_points_ratio",
    "build_progress",
)
# Overlapping units: the later one in this order is drawn on top, so the agent's own
# units stay visible on a beacon, and small units on big ones.
_DRAW_RANK = {Alliance.NEUTRAL: 0, Alliance.ENEMY: 1, Alliance.ALLY: 2, Alliance.SELF: 3}


def height_value(height: float = TERRAIN_HEIGHT) -> int:
    """The 8-bit ``height_map`` encoding of a world height."""
    return int(np.clip((height + 200.0) / 400.0 * 255.0, 0, 255))


def minimap_frame(feature_layer, playable, map_size=MAP_SIZE):
    """The minimap transform and the world origin it is relative to.

    With ``crop_to_playable_area`` the minimap shows only the playable rectangle, so
    world (x, y) maps through ``geometry.world_to_minimap(x - ox, y - oy)``.
    """
    if feature_layer.crop_to_playable_area:
        x0, y0, x1, y1 = playable
        res = feature_layer.minimap_resolution
        return MinimapGeometry(res.x, res.y, x1 - x0, y1 - y0), (x0, y0)
    return minimap_geometry(feature_layer, map_size), (0.0, 0.0)


def render_feature_layers(
    world, feature_layer, visible_units: list[Unit] | None = None
) -> spatial_pb2.ObservationFeatureLayer:
    """All 27 screen and 11 minimap layers for ``InterfaceOptions.feature_layer``.

    ``visible_units`` lets a caller that already filtered by fog share that work.
    """
    if visible_units is None:
        visible_units = world.visible_units()
    scenario = world.scenario
    playable = tuple(scenario.playable)
    screen = screen_geometry(feature_layer, world.agent.camera)
    mini, origin = minimap_frame(feature_layer, playable)
    cheat = bool(feature_layer.allow_cheating_layers)

    out = spatial_pb2.ObservationFeatureLayer()
    out.CopyFrom(_template(screen, mini, origin, playable, scenario.fog, cheat))
    if visible_units:
        units = sorted(visible_units, key=lambda u: (_DRAW_RANK[u.alliance], -u.type.radius))
        _draw_units(out, screen, mini, origin, units, set(world.agent.selection), cheat)
    if world.structure_version:  # structures and resources are neither pathable nor buildable
        _draw_open_ground(
            out,
            blocked_cells(world),
            _screen_static(screen, playable),
            _minimap_static(mini, origin, playable),
        )
    if scenario.fog:  # without fog the template's all-visible layer stands
        vis = world.visibility()
        out.renders.visibility_map.data = pack_layer(
            _sample(vis, _screen_static(screen, playable).cell_index), 8
        )
        out.minimap_renders.visibility_map.data = pack_layer(
            _sample(vis, _minimap_static(mini, origin, playable).cell_index), 8
        )
    return out


# --- the parts that change every frame -------------------------------------------------


def _draw_units(
    out, screen: ScreenGeometry, mini: MinimapGeometry, origin, units, selected, cheat
) -> None:
    """Rasterise the units into the screen and the minimap in one pass.

    Both views share one flat pixel buffer (screen first) and only covered pixels are
    written: numpy's per-call overhead, not pixel work, dominates at these sizes.
    """
    sw, sh, mw, mh = screen.res_x, screen.res_y, mini.res_x, mini.res_y
    n = len(units)
    rows, values = _unit_rows(screen, mini, origin, units, selected)
    # build_progress stays the template's zeros unless something is under construction.
    drawn = _UNIT_LAYERS if any(not u.finished for u in units) else _UNIT_LAYERS[:-1]
    size = np.empty((2 * n, 3), dtype=np.int64)
    size[:n] = (sw, sh, 0)
    size[n:] = (mw, mh, sw * sh)
    pixels, owner, n_screen, aa_pixels, aa_weights = _rasterize(np.array(rows), size, n)

    split = sw * sh
    layers = np.zeros((len(drawn), split + mw * mh), dtype=np.int32)
    layers[:, pixels] = np.array(values, dtype=np.int32)[owner, : len(drawn)].T
    for layer, name in zip(layers, drawn):
        getattr(out.renders, name).data = pack_layer(layer[:split], SCREEN_BPP[name])
        if name in MINIMAP_BPP and (cheat or name != "unit_type"):
            getattr(out.minimap_renders, name).data = pack_layer(layer[split:], MINIMAP_BPP[name])

    density = np.zeros(split, dtype=np.int32)
    np.add.at(density, pixels[:n_screen], 1)
    out.renders.unit_density.data = np.minimum(density, 255).astype(np.uint8).tobytes()
    density_aa = np.zeros(split, dtype=np.int32)
    np.add.at(density_aa, aa_pixels, aa_weights)
    out.renders.unit_density_aa.data = np.minimum(density_aa, 255).astype(np.uint8).tobytes()


def _unit_rows(screen: ScreenGeometry, mini: MinimapGeometry, origin, units, selected):
    """Each unit's place on the screen, then on the minimap (centre pixel, continuous
    centre, radius in pixels), and its layer values, in ``_UNIT_LAYERS``' order."""
    sw, sh = screen.res_x, screen.res_y
    ox, oy = origin
    s_scale, m_scale = screen.scale, mini.scale
    rows, values = [], []
    for u in units:
        # Centre pixels come from the geometry module (the transform pysc2 and the action
        # handler use); the continuous positions repeat its formulas.
        rows.append(
            (
                *screen.world_to_screen(u.x, u.y),
                (u.x - screen.cam_x) * s_scale + sw / 2,
                (screen.cam_y - u.y) * s_scale + sh / 2,
                u.type.radius * s_scale,
            )
        )
        values.append(
            (
                u.alliance,
                u.owner,
                u.type.type_id,
                u.tag in selected,
                int(u.health),
                int(u.health / u.type.health * 255) if u.type.health > 0 else 0,
                0 if u.finished else int(u.build_progress * 255),
            )
        )
    for u in units:
        rows.append(
            (
                *mini.world_to_minimap(u.x - ox, u.y - oy),
                (u.x - ox) * m_scale,
                (mini.map_h - (u.y - oy)) * m_scale,
                u.type.radius * m_scale,
            )
        )
    return rows, values


def _draw_open_ground(out, blocked: np.ndarray, screen: _Static, mini: _Static) -> None:
    """``pathable`` and ``buildable``: the playable cells no footprint covers."""
    for layers, static in ((out.renders, screen), (out.minimap_renders, mini)):
        open_ground = static.in_playable.ravel() & ~_sample(blocked, static.cell_index)
        data = pack_layer(open_ground, 1)
        layers.pathable.data = data
        layers.buildable.data = data


def _rasterize(geo: np.ndarray, size: np.ndarray, n: int):
    """Filled discs for each row of ``geo`` = (centre px, centre py, x, y, radius) in pixels.

    ``size`` rows are (width, height, offset of that view in the flat buffer); the
    first ``n`` rows are the screen. A pixel belongs to a disc when its centre is inside
    it, and each disc also owns the pixel its centre falls in, so tiny units never
    vanish. Returns the covered flat pixels (with repeats where discs overlap), the
    unit (row mod ``n``) drawn on top at each, how many of them are on the screen, and
    the screen's anti-aliased coverage as (pixels, weights), 16 per full pixel.

    Discs are drawn in windows of one size, clipped to the view and slid inside it, a
    batch of rows at a time within ``RASTER_BUDGET`` cells: a huge zoom (1024 pixels over
    a few world units) makes discs wider than the view, and one window for every unit
    at once would take gigabytes.
    """
    half = int(math.ceil(float(geo[:, 4].max()) + 0.5)) + 1
    window = (min(2 * half + 1, int(size[:, 1].max())), min(2 * half + 1, int(size[:, 0].max())))
    rows_per_pass = max(1, RASTER_BUDGET // (window[0] * window[1]))
    parts = [
        _discs(
            geo[i : i + rows_per_pass],
            size[i : i + rows_per_pass],
            half,
            window,
            screen_rows=max(0, min(n - i, rows_per_pass)),
        )
        for i in range(0, len(geo), rows_per_pass)
    ]
    pixels = np.concatenate([p[0] for p in parts])
    rows = np.concatenate([p[1] + i for p, i in zip(parts, range(0, len(geo), rows_per_pass))])
    unit = rows % n
    # Rows are in draw order, so the highest unit index at a pixel is the one on top.
    top = np.full(int(size[-1, 2] + size[-1, 0] * size[-1, 1]), -1, dtype=np.int64)
    np.maximum.at(top, pixels, unit)
    n_screen = int(np.count_nonzero(rows < n))
    aa_pixels = np.concatenate([p[2] for p in parts])
    aa_weights = np.concatenate([p[3] for p in parts])
    return pixels, top[pixels], n_screen, aa_pixels, aa_weights


def _discs(geo: np.ndarray, size: np.ndarray, half: int, window: tuple[int, int], screen_rows: int):
    """One pass of ``_rasterize``: (flat pixels, their row in ``geo``, and the screen
    rows' anti-aliased pixels and weights), pixels in row then raster order."""
    ky, kx = window
    centre = geo[:, :2].astype(np.int64)
    w, h, base = size[:, :1], size[:, 1:2], size[:, 2:3]
    # Each window starts half a window before the centre, moved inside the view where
    # that leaves the view's pixels of the disc inside it (windows never exceed a view).
    x0 = np.clip(centre[:, :1] - half, 0, np.maximum(w - kx, 0))
    y0 = np.clip(centre[:, 1:] - half, 0, np.maximum(h - ky, 0))
    gx = x0 + np.arange(kx)  # (rows, kx) pixel columns of each disc's window
    gy = y0 + np.arange(ky)
    d2 = ((gy + 0.5 - geo[:, 3:4]) ** 2)[:, :, None] + ((gx + 0.5 - geo[:, 2:3]) ** 2)[:, None, :]
    inside = ((gy >= 0) & (gy < h))[:, :, None] & ((gx >= 0) & (gx < w))[:, None, :]
    flat = (base + gy * w)[:, :, None] + gx[:, None, :]
    radius = geo[:, 4, None, None]
    disc = d2 <= radius**2
    # The centre pixel, where it falls in the window (outside it, it is off the view).
    rows = np.arange(len(geo))
    cy, cx = centre[:, 1] - y0[:, 0], centre[:, 0] - x0[:, 0]
    own = (cy >= 0) & (cy < ky) & (cx >= 0) & (cx < kx)
    disc[rows[own], cy[own], cx[own]] = True
    disc &= inside
    row_of = np.nonzero(disc)[0]  # C order, matching flat[disc]
    # Area coverage, approximated as 1 well inside the edge and fading over one pixel.
    s = screen_rows
    cover = np.clip(radius[:s] + 0.5 - np.sqrt(d2[:s]), 0.0, 1.0)
    own_s = own[:s]
    centre_cover = cover[rows[:s][own_s], cy[:s][own_s], cx[:s][own_s]]
    cover[rows[:s][own_s], cy[:s][own_s], cx[:s][own_s]] = np.maximum(
        centre_cover, 1.0 / DENSITY_AA_PER_UNIT
    )
    keep = inside[:s] & (cover > 0)
    aa_weights = np.rint(cover[keep] * DENSITY_AA_PER_UNIT).astype(np.int32)
    return flat[disc], row_of, flat[:s][keep], aa_weights


def _sample(vis: np.ndarray, cell_index: np.ndarray) -> np.ndarray:
    """Per-pixel lookup of a [y, x] map grid; index ``vis.size`` means off the map (0)."""
    return np.append(vis.ravel(), np.zeros(1, vis.dtype))[cell_index]


_DTYPES = {1: np.bool_, 8: np.uint8, 32: np.dtype("<i4")}


def pack_layer(values: np.ndarray, bpp: int) -> bytes:
    """Bytes of an ImageData: 1-bit packed MSB first, 8-bit, or little-endian int32."""
    values = np.asarray(values, dtype=_DTYPES[bpp])
    return (np.packbits(values) if bpp == 1 else values).tobytes()


# --- the parts that are fixed for a map, resolution and camera -------------------------


class _Static:
    """Per-pixel lookups of one view (screen or minimap): playable mask and map cell."""

    def __init__(self, xs: np.ndarray, ys: np.ndarray, playable):
        """``xs``/``ys``: world coordinates of the pixel-centre columns and rows."""
        x0, y0, x1, y1 = playable
        self.in_playable = ((ys >= y0) & (ys < y1))[:, None] & ((xs >= x0) & (xs < x1))[None, :]
        mw, mh = MAP_SIZE
        cx, cy = np.floor(xs).astype(np.int64), np.floor(ys).astype(np.int64)
        on_map = ((cy >= 0) & (cy < mh))[:, None] & ((cx >= 0) & (cx < mw))[None, :]
        self.cell_index = np.where(on_map, cy[:, None] * mw + cx[None, :], mw * mh).ravel()


@functools.lru_cache(maxsize=64)
def _screen_static(g: ScreenGeometry, playable) -> _Static:
    xs, _ = g.screen_to_world(np.arange(g.res_x), 0)
    _, ys = g.screen_to_world(0, np.arange(g.res_y))
    return _Static(np.asarray(xs, float), np.asarray(ys, float), playable)


@functools.lru_cache(maxsize=64)
def _minimap_static(g: MinimapGeometry, origin, playable) -> _Static:
    ox, oy = origin
    xs, _ = g.minimap_to_world(np.arange(g.res_x), 0)
    _, ys = g.minimap_to_world(0, np.arange(g.res_y))
    # Pixels beyond the mapped area (non-square maps or resolutions) show nothing.
    xs = np.where(np.arange(g.res_x) < g.map_w * g.scale, xs + ox, -1.0)
    ys = np.where(np.arange(g.res_y) < g.map_h * g.scale, ys + oy, -1.0)
    return _Static(xs, ys, playable)


@functools.lru_cache(maxsize=32)
def _template(screen, mini, origin, playable, fog, cheat) -> spatial_pb2.ObservationFeatureLayer:
    """Every layer at its final size and depth: static ones filled, dynamic ones blank."""
    msg = spatial_pb2.ObservationFeatureLayer()
    full_vis = np.full(MAP_SIZE[::-1], 2, dtype=np.uint8)
    ground = height_value()

    s = _screen_static(screen, playable)
    static = {
        "height_map": np.where(s.in_playable, ground, 0),
        "pathable": s.in_playable,
        "buildable": s.in_playable,
    }
    if not fog:
        static["visibility_map"] = _sample(full_vis, s.cell_index)
    _fill(msg.renders, SCREEN_BPP, screen.res_x, screen.res_y, static)

    m = _minimap_static(mini, origin, playable)
    static = {
        "height_map": np.where(m.in_playable, ground, 0),
        "pathable": m.in_playable,
        "buildable": m.in_playable,
        "camera": _camera_layer(screen, mini, origin),
    }
    if not fog:
        static["visibility_map"] = _sample(full_vis, m.cell_index)
    names = {k: v for k, v in MINIMAP_BPP.items() if cheat or k != "unit_type"}
    _fill(msg.minimap_renders, names, mini.res_x, mini.res_y, static)
    return msg


def _fill(layers, bpps, w, h, static) -> None:
    for name, bpp in bpps.items():
        values = static.get(name)
        data = pack_layer(values, bpp) if values is not None else _zeros(w, h, bpp)
        _set_bytes(getattr(layers, name), bpp, w, h, data)


def _set_bytes(image, bpp, w, h, data: bytes) -> None:
    image.bits_per_pixel = bpp
    image.size.x = w
    image.size.y = h
    image.data = data


@functools.lru_cache(maxsize=32)
def _zeros(w: int, h: int, bpp: int) -> bytes:
    return bytes((w * h * bpp + 7) // 8)


def _camera_layer(screen: ScreenGeometry, mini: MinimapGeometry, origin) -> np.ndarray:
    """Minimap pixels whose centre lies in the world rectangle the screen shows."""
    ox, oy = origin
    x0, y0, x1, y1 = screen.world_bounds()
    xs, _ = mini.minimap_to_world(np.arange(mini.res_x), 0)
    _, ys = mini.minimap_to_world(0, np.arange(mini.res_y))
    xs, ys = np.asarray(xs) + ox, np.asarray(ys) + oy
    layer = ((ys >= y0) & (ys < y1))[:, None] & ((xs >= x0) & (xs < x1))[None, :]
    px, py = mini.world_to_minimap(screen.cam_x - ox, screen.cam_y - oy)
    if 0 <= px < mini.res_x and 0 <= py < mini.res_y:
        layer[py, px] = True  # a tiny minimap still shows where the camera is
    return layer
