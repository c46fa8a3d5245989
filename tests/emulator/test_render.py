"""Feature layers decoded with pysc2's own unpacking must show the world where pysc2 expects it."""

import math

import numpy as np
import pytest
from s2clientprotocol import sc2api_pb2 as sc_pb

from sc2dask.emulator.gamedata import ZERGLING
from sc2dask.emulator.geometry import screen_geometry
from sc2dask.emulator.maps import scenario_for
from sc2dask.emulator.render import MINIMAP_BPP, SCREEN_BPP, render_feature_layers
from sc2dask.emulator.units import Alliance, Owner
from sc2dask.emulator.world import World
from sc2dask.game.pysc2lib import features


def _setup(screen=(64, 64), minimap=(64, 64), width=24, **kw):
    fl = sc_pb.SpatialCameraSetup(width=width, **kw)
    fl.resolution.x, fl.resolution.y = screen
    fl.minimap_resolution.x, fl.minimap_resolution.y = minimap
    return fl


def _decode(world, fl):
    """{'screen': {name: array}, 'minimap': {...}} via pysc2's Feature.unpack."""
    obs = sc_pb.Observation()
    obs.feature_layer_data.CopyFrom(render_feature_layers(world, fl))
    return {
        "screen": {f.name: f.unpack(obs) for f in features.SCREEN_FEATURES},
        "minimap": {f.name: f.unpack(obs) for f in features.MINIMAP_FEATURES},
        "proto": obs.feature_layer_data,
    }


def test_marine_and_beacon_drawn_where_pysc2_puts_them():
    world = World(scenario_for("MoveToBeacon"), seed=1)
    fl = _setup()
    layers = _decode(world, fl)["screen"]
    g = screen_geometry(fl, world.agent.camera)
    marine, beacon = world.scenario.marine, world.scenario.beacon
    mx, my = g.world_to_screen(marine.x, marine.y)
    bx, by = g.world_to_screen(beacon.x, beacon.y)
    assert layers["player_relative"][my, mx] == Alliance.SELF
    assert layers["player_id"][my, mx] == 1
    assert layers["unit_type"][my, mx] == 48
    assert layers["unit_hit_points"][my, mx] == 45
    assert layers["unit_hit_points_ratio"][my, mx] == 255
    assert layers["player_relative"][by, bx] == Alliance.NEUTRAL
    assert layers["player_id"][by, bx] == 16
    # The beacon (radius 1 at 64/24 px per unit) is a disc of about pi * 2.67^2 pixels.
    beacon_px = np.count_nonzero(layers["unit_type"] == 317)
    assert 15 <= beacon_px <= 30
    assert np.count_nonzero(layers["player_relative"] == Alliance.SELF) >= 1
    assert layers["selected"].max() == 0
    assert layers["unit_density_aa"][my, mx] > 0


def test_rectangular_resolutions_and_bit_depths():
    world = World(scenario_for("DefeatRoaches"), seed=3)
    fl = _setup(screen=(84, 60), minimap=(72, 48), width=30)
    decoded = _decode(world, fl)
    for name, bpp in SCREEN_BPP.items():
        image = getattr(decoded["proto"].renders, name)
        assert image.bits_per_pixel == bpp, name
        assert (image.size.x, image.size.y) == (84, 60)
        assert decoded["screen"][name].shape == (60, 84), name
    for name, bpp in MINIMAP_BPP.items():
        if name == "unit_type":
            continue
        image = getattr(decoded["proto"].minimap_renders, name)
        assert image.bits_per_pixel == bpp, name
        assert decoded["minimap"][name].shape == (48, 72), name
    assert decoded["minimap"]["unit_type"] is None  # a cheat layer, not requested


def test_odd_sizes_pack_exact_byte_counts():
    world = World(scenario_for("MoveToBeacon"), seed=2)
    fl = _setup(screen=(33, 17), minimap=(13, 11), allow_cheating_layers=True)
    proto = render_feature_layers(world, fl)
    for layers, (w, h), depths in (
        (proto.renders, (33, 17), SCREEN_BPP),
        (proto.minimap_renders, (13, 11), MINIMAP_BPP),
    ):
        for name, bpp in depths.items():
            assert len(getattr(layers, name).data) == math.ceil(w * h * bpp / 8), name
    assert proto.minimap_renders.unit_type.bits_per_pixel == 32


def test_selection_density_and_static_layers():
    world = World(scenario_for("DefeatRoaches"), seed=5)  # 9 marines, pre-selected
    fl = _setup()
    layers = _decode(world, fl)
    screen, minimap = layers["screen"], layers["minimap"]
    g = screen_geometry(fl, world.agent.camera)
    for marine in world.units_of(Owner.AGENT):
        x, y = g.world_to_screen(marine.x, marine.y)
        assert screen["selected"][y, x] == 1
    assert np.count_nonzero(screen["player_relative"] == Alliance.ENEMY) > 0
    assert screen["selected"][screen["player_relative"] == Alliance.ENEMY].max() == 0
    # Marines stacked one unit apart with radius 0.375 do not overlap; roaches 1 apart,
    # radius 0.5, touch, so density never exceeds 2 here but is at least 1 under units.
    assert screen["unit_density"][screen["player_relative"] > 0].min() >= 1
    assert set(np.unique(screen["pathable"])) == {0, 1}
    assert screen["height_map"][screen["pathable"] == 1].min() == 127
    assert (screen["visibility_map"] == 2).all()
    assert minimap["selected"].sum() >= 1
    assert minimap["camera"][int(64 - world.agent.camera[1]), int(world.agent.camera[0])] == 1
    assert minimap["camera"][0, 0] == 0


def test_overlapping_units_add_density():
    world = World(scenario_for("MoveToBeacon"), seed=1)
    marine = world.scenario.marine
    world.scenario.beacon.x, world.scenario.beacon.y = marine.x, marine.y
    fl = _setup()
    screen = _decode(world, fl)["screen"]
    x, y = screen_geometry(fl, world.agent.camera).world_to_screen(marine.x, marine.y)
    assert screen["unit_density"][y, x] == 2
    assert screen["player_relative"][y, x] == Alliance.SELF  # own units are drawn on top
    assert screen["unit_density_aa"][y, x] > 16


def test_fog_hides_unseen_enemies():
    world = World(scenario_for("FindAndDefeatZerglings"), seed=1)
    hidden = world.spawn(ZERGLING, Owner.HOSTILE, 43.0, 15.0)  # on screen, out of sight
    seen = world.spawn(ZERGLING, Owner.HOSTILE, 35.0, 28.0)
    assert not world.is_visible(hidden) and world.is_visible(seen)
    fl = _setup()
    screen = _decode(world, fl)["screen"]
    g = screen_geometry(fl, world.agent.camera)
    hx, hy = g.world_to_screen(hidden.x, hidden.y)
    sx, sy = g.world_to_screen(seen.x, seen.y)
    assert screen["player_relative"][hy, hx] == 0
    assert screen["visibility_map"][hy, hx] != 2
    assert screen["player_relative"][sy, sx] == Alliance.ENEMY
    assert screen["visibility_map"][sy, sx] == 2


@pytest.mark.parametrize("crop", [False, True])
def test_minimap_units_and_cropping(crop):
    world = World(scenario_for("MoveToBeacon"), seed=4)
    fl = _setup(minimap=(32, 32), crop_to_playable_area=crop, allow_cheating_layers=True)
    minimap = _decode(world, fl)["minimap"]
    marine = world.scenario.marine
    x0, y0, x1, y1 = world.scenario.playable if crop else (0, 0, 64, 64)
    scale = 32 / max(x1 - x0, y1 - y0)
    px, py = int((marine.x - x0) * scale), int((y1 - marine.y) * scale)
    assert minimap["player_relative"][py, px] == Alliance.SELF
    assert minimap["unit_type"][py, px] == 48
    assert minimap["pathable"].mean() > (0.5 if crop else 0.05)


@pytest.mark.unit
def test_the_largest_zoom_renders_within_bounded_memory():
    """1024 pixels over one world unit (the limits the emulator accepts) makes every disc
    wider than the screen; drawing them all in one window each took about a gigabyte."""
    import tracemalloc

    world = World(scenario_for("DefeatZerglingsAndBanelings"), seed=2)
    unit = next(u for u in world.units.values() if u.alliance == Alliance.SELF)
    world.agent.camera = (unit.x, unit.y)  # the screen shows one world unit around this marine
    fl = _setup(screen=(1024, 1024), minimap=(64, 64), width=1)
    tracemalloc.start()
    try:
        layers = _decode(world, fl)["screen"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 300 * 2**20, f"{peak / 2**20:.0f} MiB"
    # Still the picture: the marine (radius 0.375 of the 1-unit-wide view) fills the middle.
    relative = layers["player_relative"]
    assert relative.shape == (1024, 1024) and relative[512, 512] == Alliance.SELF
    assert 0.3 < np.mean(relative == Alliance.SELF) < 0.6  # pi 0.375^2 = 0.44 of the view
