"""Hypothesis strategies for semantically wild requests, and the fuzzing settings."""

import math

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from s2clientprotocol import common_pb2, raw_pb2, spatial_pb2, ui_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from sc2dask.emulator.maps import SCENARIOS

INT32 = st.integers(-(2**31), 2**31 - 1)
UINT32 = st.integers(0, 2**32 - 1)
COORD = st.one_of(st.integers(-16, 300), INT32)  # pixels: near the screen, or anywhere
POINT_I = st.builds(common_pb2.PointI, x=COORD, y=COORD)
WORLD = st.one_of(st.floats(-10, 80, width=32), st.floats(width=32))  # with nan and inf
# Real-looking tags (the emulator's first units) and arbitrary ones.
TAG = st.one_of(st.integers(1, 40).map(lambda i: (i << 18) | 1), st.integers(0, 2**64 - 1))
ABILITY = st.one_of(
    st.sampled_from([0, 1, 4, 16, 17, 18, 23, 295, 319, 524, 3665, 3674, 3793, 3794, 3795]), INT32
)


def enum_values(enum):
    return st.sampled_from(list(enum.values()))


@st.composite
def spatial_actions(draw) -> spatial_pb2.ActionSpatial:
    act = spatial_pb2.ActionSpatial()
    kind = draw(st.sampled_from(["camera", "point", "rect", "command", "none"]))
    if kind == "camera":
        act.camera_move.center_minimap.CopyFrom(draw(POINT_I))
    elif kind == "point":
        act.unit_selection_point.selection_screen_coord.CopyFrom(draw(POINT_I))
        act.unit_selection_point.type = draw(
            enum_values(spatial_pb2.ActionSpatialUnitSelectionPoint.Type)
        )
    elif kind == "rect":
        for _ in range(draw(st.integers(0, 3))):  # corners in any order, off screen too
            act.unit_selection_rect.selection_screen_coord.add(p0=draw(POINT_I), p1=draw(POINT_I))
        act.unit_selection_rect.selection_add = draw(st.booleans())
    elif kind == "command":
        cmd = act.unit_command
        cmd.ability_id = draw(ABILITY)
        target = draw(st.sampled_from(["screen", "minimap", None]))
        if target:
            getattr(cmd, f"target_{target}_coord").CopyFrom(draw(POINT_I))
        cmd.queue_command = draw(st.booleans())
    return act


@st.composite
def ui_actions(draw) -> ui_pb2.ActionUI:
    act = ui_pb2.ActionUI()
    kind = draw(
        st.sampled_from(
            [
                "control_group",
                "select_army",
                "select_warp_gates",
                "select_larva",
                "select_idle_worker",
                "multi_panel",
                "cargo_panel",
                "production_panel",
                "toggle_autocast",
            ]
        )
    )
    msg = getattr(act, kind)
    msg.SetInParent()
    if kind == "control_group":
        msg.action = draw(enum_values(ui_pb2.ActionControlGroup.ControlGroupAction))
        msg.control_group_index = draw(st.one_of(st.integers(0, 12), UINT32))
    elif kind == "select_army":
        msg.selection_add = draw(st.booleans())
    elif kind == "select_idle_worker":
        msg.type = draw(enum_values(ui_pb2.ActionSelectIdleWorker.Type))
    elif kind == "multi_panel":
        msg.type = draw(enum_values(ui_pb2.ActionMultiPanel.Type))
        msg.unit_index = draw(st.one_of(st.integers(-2, 12), INT32))
    elif kind in ("cargo_panel", "production_panel"):
        msg.unit_index = draw(INT32)
    elif kind == "toggle_autocast":
        msg.ability_id = draw(ABILITY)
    return act


@st.composite
def raw_actions(draw) -> raw_pb2.ActionRaw:
    act = raw_pb2.ActionRaw()
    kind = draw(st.sampled_from(["unit_command", "camera_move", "toggle_autocast"]))
    if kind == "unit_command":
        cmd = act.unit_command
        cmd.ability_id = draw(ABILITY)
        cmd.unit_tags.extend(draw(st.lists(TAG, max_size=4)))
        target = draw(st.sampled_from(["unit", "pos", None]))
        if target == "unit":
            cmd.target_unit_tag = draw(TAG)
        elif target == "pos":
            cmd.target_world_space_pos.x, cmd.target_world_space_pos.y = draw(WORLD), draw(WORLD)
        cmd.queue_command = draw(st.booleans())
    elif kind == "camera_move":
        act.camera_move.center_world_space.x = draw(WORLD)
        act.camera_move.center_world_space.y = draw(WORLD)
    else:
        act.toggle_autocast.ability_id = draw(ABILITY)
        act.toggle_autocast.unit_tags.extend(draw(st.lists(TAG, max_size=2)))
    return act


@st.composite
def actions(draw) -> sc_pb.Action:
    action = sc_pb.Action()  # all parts unset is pysc2's no_op
    if draw(st.booleans()):
        action.action_feature_layer.CopyFrom(draw(spatial_actions()))
    if draw(st.integers(0, 3)) == 0:
        action.action_ui.CopyFrom(draw(ui_actions()))
    if draw(st.integers(0, 3)) == 0:
        action.action_raw.CopyFrom(draw(raw_actions()))
    if draw(st.integers(0, 7)) == 0:
        action.action_render.camera_move.center_minimap.CopyFrom(draw(POINT_I))
    return action


RESOLUTION = st.one_of(
    st.sampled_from([(0, 0), (1, 7), (7, 1), (1, 1), (64, 64), (84, 84)]),
    st.tuples(st.integers(0, 128), st.integers(0, 128)),
)
# Screen width in world units. Tiny widths are left out: they make the renderer allocate
# memory in proportion to 1/width squared (see test_a_tiny_screen_width_is_handled).
WIDTH = st.sampled_from([0.0, 1.0, 24.0, 64.0, -24.0, 1e9, math.nan, math.inf])


@st.composite
def interface_options(draw) -> sc_pb.InterfaceOptions:
    options = sc_pb.InterfaceOptions(
        raw=draw(st.booleans()),
        score=draw(st.booleans()),
        show_cloaked=draw(st.booleans()),
        raw_affects_selection=draw(st.booleans()),
        raw_crop_to_playable_area=draw(st.booleans()),
    )
    if draw(st.integers(0, 4)):
        fl = options.feature_layer
        fl.width = draw(WIDTH)
        fl.resolution.x, fl.resolution.y = draw(RESOLUTION)
        fl.minimap_resolution.x, fl.minimap_resolution.y = draw(RESOLUTION)
        fl.crop_to_playable_area = draw(st.booleans())
        fl.allow_cheating_layers = draw(st.booleans())
    if draw(st.integers(0, 9)) == 0:
        options.render.resolution.x, options.render.resolution.y = draw(RESOLUTION)
    return options


MAP_PATHS = st.one_of(
    st.sampled_from([f"mini_games/{name}.SC2Map" for name in SCENARIOS]),
    st.sampled_from(
        [
            "",
            "MoveToBeacon",
            "/abs/MoveToBeacon.SC2Map",
            "Ladder/Acropolis.SC2Map",
            "../../../etc/passwd",
            "mini_games/.SC2Map",
        ]
    ),
    st.text(max_size=40),
)


@st.composite
def create_game_requests(draw) -> sc_pb.RequestCreateGame:
    req = sc_pb.RequestCreateGame(disable_fog=draw(st.booleans()), realtime=draw(st.booleans()))
    which = draw(st.integers(0, 9))
    if which == 0:
        req.battlenet_map_name = draw(st.text(max_size=20))
    elif which > 1:  # which == 1: no map at all
        req.local_map.map_path = draw(MAP_PATHS)
        req.local_map.map_data = draw(st.binary(max_size=64))
    setups = (
        draw(st.lists(enum_values(sc_pb.PlayerType), max_size=3))
        if draw(st.integers(0, 3)) == 0
        else [sc_pb.Participant]
    )
    for player_type in setups:
        req.player_setup.add(type=player_type)
    if draw(st.booleans()):
        req.random_seed = draw(UINT32)
    return req


@st.composite
def join_game_requests(draw) -> sc_pb.RequestJoinGame:
    req = sc_pb.RequestJoinGame(
        race=draw(enum_values(common_pb2.Race)), player_name=draw(st.text(max_size=10))
    )
    if draw(st.integers(0, 9)):
        req.options.CopyFrom(draw(interface_options()))
    return req


STEP_COUNT = st.one_of(
    st.none(), st.integers(0, 64), st.sampled_from([1919, 1920, 1921, 2**31, 2**32 - 1])
)
UNSUPPORTED = (
    "start_replay",
    "quick_save",
    "quick_load",
    "obs_action",
    "query",
    "map_command",
    "replay_info",
    "available_maps",
    "save_map",
)


@st.composite
def requests(draw, tame=False) -> sc_pb.Request:
    """Any Request but ``quit``, with wild field values and a random id (or none).

    ``tame`` keeps to the requests of a game in progress with ordinary values.
    """
    req = sc_pb.Request()
    kinds = ["ping", "observation", "step", "action", "game_info"]
    if not tame:
        kinds += [
            "data",
            "create_game",
            "join_game",
            "restart_game",
            "leave_game",
            "save_replay",
            "unsupported",
            "empty",
            "action",
            "action",
        ]
    kind = draw(st.sampled_from(kinds))
    if kind == "step":
        count = draw(st.integers(0, 16) if tame else STEP_COUNT)
        req.step.SetInParent()
        if count is not None:
            req.step.count = count
    elif kind == "observation":
        req.observation.disable_fog = draw(st.booleans())
        if draw(st.booleans()):
            req.observation.game_loop = draw(UINT32)
    elif kind == "action":
        req.action.SetInParent()
        req.action.actions.extend(
            draw(st.lists(st.just(sc_pb.Action()) if tame else actions(), max_size=3))
        )
    elif kind == "data":
        for field in sc_pb.RequestData.DESCRIPTOR.fields:
            setattr(req.data, field.name, draw(st.booleans()))
    elif kind == "create_game":
        req.create_game.CopyFrom(draw(create_game_requests()))
    elif kind == "join_game":
        req.join_game.CopyFrom(draw(join_game_requests()))
    elif kind == "unsupported":
        getattr(req, draw(st.sampled_from(UNSUPPORTED))).SetInParent()
    elif kind != "empty":
        getattr(req, kind).SetInParent()
    if draw(st.integers(0, 4)):
        req.id = draw(UINT32)
    return req


# No "explain" phase: it re-runs a failing example ~200 times against the server.
FUZZ = settings(
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
