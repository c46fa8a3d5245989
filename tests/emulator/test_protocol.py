"""Bad input against the real emulator process over a real websocket, and the protocol as
pysc2's ``RemoteController`` drives it.

Every reply must be a BINARY ``Response`` with ``status`` set and the request ``id``
echoed; a refused request leaves the status as it was; the emulator keeps serving after
anything a client sends; and nothing may surface as an internal error (a crash of the
emulator's game logic that ``Session`` caught), which these tests report as a failure.
"""

import contextlib
import gc
import importlib
import math
import os
import threading
import time

import psutil
import pytest
import websocket
from google.protobuf import text_format
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from s2clientprotocol import common_pb2, raw_pb2, spatial_pb2, ui_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb
from emulator_process import connect, emulator

from sc2dask.emulator.maps import SCENARIOS
from sc2dask.game.pysc2lib import (PACKAGE_NAME, features, maps, protocol, remote_controller, run_configs,
                           sc2_env)

Status = sc_pb.Status
INTERNAL_ERROR = "internal error"
MARINE, BEACON = 48, 317
MOVE_TO_BEACON_LOOPS = SCENARIOS["MoveToBeacon"].time_limit_loops  # 1920


def describe(message) -> str:
    return text_format.MessageToString(message, as_one_line=True) or "<empty>"


# --- a client that checks every reply -------------------------------------------------


class Client:
    """One websocket connection that writes like pysc2 (TEXT frames) and checks each reply.

    ``status`` is the status of the latest reply, starting from the fresh connection's
    ``launched``.
    """

    def __init__(self, ws, server_log):
        self.ws = ws
        self.status = Status.launched
        self._server_log = server_log
        self._next_id = 1
        self.broken = False  # the connection is gone; skip the closing handshake

    def send_bytes(self, payload: bytes, what: str) -> sc_pb.Response:
        """Send ``payload``; the reply must be a parseable BINARY Response with a status."""
        try:
            self.ws.send(payload)  # websocket-client's default opcode is TEXT, as in pysc2
            opcode, data = self.ws.recv_data()
        except (websocket.WebSocketException, OSError) as exc:
            self.broken = True
            pytest.fail(f"the emulator dropped the connection on {what}: {exc!r}\n"
                        f"{self._server_log()}")
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            self.broken = True
            time.sleep(0.2)
            code = int.from_bytes(data[:2], "big") if len(data) >= 2 else None
            pytest.fail(f"the emulator closed the connection (code {code}) instead of "
                        f"answering {what}\n{self._server_log()}")
        assert opcode == websocket.ABNF.OPCODE_BINARY, f"{what}: reply opcode {opcode}"
        response = sc_pb.Response.FromString(data)
        assert response.HasField("status"), f"{what}: reply without status: {describe(response)}"
        crashes = [e for e in response.error if INTERNAL_ERROR in e]
        if crashes:
            time.sleep(0.2)  # let the traceback reach the log reader
            pytest.fail(f"the emulator crashed on {what}:\n  {crashes}\n{self._server_log()}")
        return response

    def call(self, request=None, **fields) -> sc_pb.Response:
        """Send one Request (an id is added unless it has one); check the reply's id and
        that a refused request left the status unchanged."""
        request = sc_pb.Request(**fields) if request is None else request
        if not request.HasField("id"):
            request.id = self._next_id
            self._next_id += 1
        before = self.status
        response = self.send_bytes(request.SerializeToString(), describe(request))
        assert response.id == request.id, f"{describe(request)}: reply id {response.id}"
        if response.error:
            assert response.status == before, (
                f"{describe(request)} was refused ({list(response.error)}) but moved the "
                f"status from {Status.Name(before)} to {Status.Name(response.status)}")
        self.status = response.status
        return response

    def ping(self) -> None:
        response = self.call(ping=sc_pb.RequestPing())
        assert response.HasField("ping") and not response.error, describe(response)


class EmulatorHost:
    """One emulator process for the module, restarted if a test took it down.

    Each ``client()`` is a new connection, so a new game: a test that breaks its
    connection (or the emulator) does not leave state behind for the next one.
    """

    def __init__(self):
        self._stack = contextlib.ExitStack()
        self.proc = None
        self._port = None
        self._log = []

    def _ensure_running(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            self.proc, self._port = self._stack.enter_context(emulator())
            self._log = []
            # Drain stderr: tracebacks of caught crashes would otherwise fill the pipe
            # and block the emulator. What it wrote shows up in failure messages.
            threading.Thread(target=self._log.extend, args=(self.proc.stderr,),
                             daemon=True).start()
        return self._port

    def server_log(self, since=0, lines=40) -> str:
        tail = "".join(self._log[since:][-lines:])
        return f"--- emulator stderr (last {lines} lines) ---\n{tail}" if tail else ""

    @contextlib.contextmanager
    def client(self):
        port = self._ensure_running()
        deadline = time.monotonic() + 10
        while True:
            try:
                ws = connect(port)
                break
            except (websocket.WebSocketConnectionClosedException, ConnectionResetError,
                    BrokenPipeError):
                # The server drops a new client mid-handshake until it has noticed that
                # the previous one closed.
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        since = len(self._log)
        client = Client(ws, lambda: self.server_log(since))
        try:
            yield client
        finally:
            with contextlib.suppress(Exception):
                if client.broken:
                    ws.shutdown()
                else:
                    ws.close(timeout=2)

    def close(self):
        self._stack.close()


@pytest.fixture(scope="module")
def host():
    server = EmulatorHost()
    yield server
    server.close()


# --- well-formed requests ---------------------------------------------------------------


def create_game(map_name="MoveToBeacon", **fields) -> sc_pb.RequestCreateGame:
    return sc_pb.RequestCreateGame(
        local_map=sc_pb.LocalMap(map_path=f"mini_games/{map_name}.SC2Map"),
        player_setup=[sc_pb.PlayerSetup(type=sc_pb.Participant)], **fields)


def interface(screen=(64, 64), minimap=(64, 64), width=24.0, raw=False, **fields):
    return sc_pb.InterfaceOptions(
        raw=raw, score=True, feature_layer=sc_pb.SpatialCameraSetup(
            width=width, resolution=common_pb2.Size2DI(x=screen[0], y=screen[1]),
            minimap_resolution=common_pb2.Size2DI(x=minimap[0], y=minimap[1])), **fields)


def join_game(options=None) -> sc_pb.RequestJoinGame:
    return sc_pb.RequestJoinGame(race=common_pb2.Terran,
                                 options=interface() if options is None else options)


def observe(client: Client) -> sc_pb.Observation:
    return client.call(observation=sc_pb.RequestObservation()).observation.observation


def enter(client: Client, state: str, map_name="MoveToBeacon", options=None) -> None:
    """Bring a fresh connection to ``state``: launched, init_game, in_game or ended."""
    assert client.status == Status.launched
    if state == "launched":
        return
    assert not client.call(create_game=create_game(map_name)).create_game.HasField("error")
    if state == "init_game":
        return
    response = client.call(join_game=join_game(options))
    assert not response.error and not response.join_game.HasField("error"), describe(response)
    if state == "ended":
        client.call(step=sc_pb.RequestStep(count=SCENARIOS[map_name].time_limit_loops))
    assert client.status == getattr(Status, state)


# --- strategies for semantically wild requests ------------------------------------------

INT32 = st.integers(-2**31, 2**31 - 1)
UINT32 = st.integers(0, 2**32 - 1)
COORD = st.one_of(st.integers(-16, 300), INT32)  # pixels: near the screen, or anywhere
POINT_I = st.builds(common_pb2.PointI, x=COORD, y=COORD)
WORLD = st.one_of(st.floats(-10, 80, width=32), st.floats(width=32))  # with nan and inf
# Real-looking tags (the emulator's first units) and arbitrary ones.
TAG = st.one_of(st.integers(1, 40).map(lambda i: (i << 18) | 1), st.integers(0, 2**64 - 1))
ABILITY = st.one_of(st.sampled_from([0, 1, 4, 16, 17, 18, 23, 295, 319, 524, 3665, 3674,
                                     3793, 3794, 3795]), INT32)


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
            enum_values(spatial_pb2.ActionSpatialUnitSelectionPoint.Type))
    elif kind == "rect":
        for _ in range(draw(st.integers(0, 3))):  # corners in any order, off screen too
            act.unit_selection_rect.selection_screen_coord.add(p0=draw(POINT_I),
                                                               p1=draw(POINT_I))
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
    kind = draw(st.sampled_from(["control_group", "select_army", "select_warp_gates",
                                 "select_larva", "select_idle_worker", "multi_panel",
                                 "cargo_panel", "production_panel", "toggle_autocast"]))
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


RESOLUTION = st.one_of(st.sampled_from([(0, 0), (1, 7), (7, 1), (1, 1), (64, 64), (84, 84)]),
                       st.tuples(st.integers(0, 128), st.integers(0, 128)))
# Screen width in world units. Tiny widths are left out: they make the renderer allocate
# memory in proportion to 1/width squared (see test_a_tiny_screen_width_is_handled).
WIDTH = st.sampled_from([0.0, 1.0, 24.0, 64.0, -24.0, 1e9, math.nan, math.inf])


@st.composite
def interface_options(draw) -> sc_pb.InterfaceOptions:
    options = sc_pb.InterfaceOptions(
        raw=draw(st.booleans()), score=draw(st.booleans()), show_cloaked=draw(st.booleans()),
        raw_affects_selection=draw(st.booleans()),
        raw_crop_to_playable_area=draw(st.booleans()))
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
    st.sampled_from(["", "MoveToBeacon", "/abs/MoveToBeacon.SC2Map", "Ladder/Acropolis.SC2Map",
                     "../../../etc/passwd", "mini_games/.SC2Map"]),
    st.text(max_size=40))


@st.composite
def create_game_requests(draw) -> sc_pb.RequestCreateGame:
    req = sc_pb.RequestCreateGame(disable_fog=draw(st.booleans()), realtime=draw(st.booleans()))
    which = draw(st.integers(0, 9))
    if which == 0:
        req.battlenet_map_name = draw(st.text(max_size=20))
    elif which > 1:  # which == 1: no map at all
        req.local_map.map_path = draw(MAP_PATHS)
        req.local_map.map_data = draw(st.binary(max_size=64))
    setups = draw(st.lists(enum_values(sc_pb.PlayerType), max_size=3)) if draw(
        st.integers(0, 3)) == 0 else [sc_pb.Participant]
    for player_type in setups:
        req.player_setup.add(type=player_type)
    if draw(st.booleans()):
        req.random_seed = draw(UINT32)
    return req


@st.composite
def join_game_requests(draw) -> sc_pb.RequestJoinGame:
    req = sc_pb.RequestJoinGame(race=draw(enum_values(common_pb2.Race)),
                                player_name=draw(st.text(max_size=10)))
    if draw(st.integers(0, 9)):
        req.options.CopyFrom(draw(interface_options()))
    return req


STEP_COUNT = st.one_of(st.none(), st.integers(0, 64),
                       st.sampled_from([1919, 1920, 1921, 2**31, 2**32 - 1]))
UNSUPPORTED = ("start_replay", "quick_save", "quick_load", "obs_action", "query", "map_command",
               "replay_info", "available_maps", "save_map", "debug")


@st.composite
def requests(draw, tame=False) -> sc_pb.Request:
    """Any Request but ``quit``, with wild field values and a random id (or none).

    ``tame`` keeps to the requests of a game in progress with ordinary values.
    """
    req = sc_pb.Request()
    kinds = ["ping", "observation", "step", "action", "game_info"]
    if not tame:
        kinds += ["data", "create_game", "join_game", "restart_game", "leave_game",
                  "save_replay", "unsupported", "empty", "action", "action"]
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
            draw(st.lists(st.just(sc_pb.Action()) if tame else actions(), max_size=3)))
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
FUZZ = settings(deadline=None, database=None,
                phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- 1. fuzzing -------------------------------------------------------------------------

TAG_PREFIXES = [bytes([(number << 3) | 2]) for number in range(1, 16)] + [
    b"\xa2\x01", b"\xaa\x01", b"\xfa\x06", b"\xc0\x3e", b"\xff\xff\xff\xff\x0f"]


def payloads():
    """Bytes as a broken client might send: random, truncated or extended Requests, and
    valid field tags (length-delimited Request fields, the id's varint) before garbage."""
    valid = requests(tame=True).map(lambda r: r.SerializeToString())
    return st.one_of(
        st.binary(max_size=256),
        st.tuples(valid, st.integers(0, 64)).map(lambda t: t[0][:t[1]]),
        st.tuples(valid, st.binary(min_size=1, max_size=32)).map(lambda t: t[0] + t[1]),
        st.tuples(st.sampled_from(TAG_PREFIXES), st.binary(max_size=64)).map(
            lambda t: t[0] + t[1]),
    )


def test_arbitrary_bytes_get_a_response_and_the_emulator_keeps_serving(host):
    with host.client() as client:
        enter(client, "in_game")  # so that bytes that parse reach the game logic too

        @settings(FUZZ, max_examples=150)
        @given(payload=payloads())
        def check(payload):
            try:
                parsed = sc_pb.Request.FromString(payload)
            except Exception:
                parsed = None
            assume(parsed is None or not parsed.HasField("quit"))
            response = client.send_bytes(payload, f"the bytes {payload!r}")
            if parsed is None:
                assert response.error, "unparseable bytes were answered without an error"
            elif parsed.HasField("id"):
                assert response.id == parsed.id
            client.status = response.status
            client.ping()

        check()


@settings(FUZZ, max_examples=100)
@given(start=st.sampled_from(["launched", "init_game", "in_game"]),
       map_name=st.sampled_from(sorted(SCENARIOS)), options=interface_options(),
       sequence=st.lists(requests(), min_size=1, max_size=6))
def test_wild_requests_in_any_order_get_a_response_and_the_emulator_keeps_serving(
        host, start, map_name, options, sequence):
    """Structurally valid Requests with wild values, from any state, one game each."""
    with host.client() as client:
        if start != "launched":
            client.call(create_game=create_game(map_name))
        if start == "in_game":
            client.call(join_game=sc_pb.RequestJoinGame(race=common_pb2.Random, options=options))
        for request in sequence:
            client.call(request)
            if client.status == Status.in_game or client.status == Status.ended:
                client.call(observation=sc_pb.RequestObservation())  # render what it did
            client.ping()


# Known crashers the fuzzing above finds, pinned down one by one. Each join_game must
# either be refused with ResponseJoinGame.error or give observations of the asked size.
@pytest.mark.parametrize("screen, minimap, width", [
    ((0, 0), (64, 64), 24.0),
    ((64, 64), (0, 0), 24.0),
    ((0, 5), (5, 0), 24.0),
    ((1, 7), (7, 1), 24.0),
    ((64, 64), (64, 64), math.nan),
    ((64, 64), (64, 64), math.inf),
    ((64, 64), (64, 64), -24.0),
], ids=["screen-0x0", "minimap-0x0", "0x5", "1x7", "width-nan", "width-inf", "width-negative"])
def test_odd_feature_layer_options_are_refused_or_served(host, screen, minimap, width):
    with host.client() as client:
        enter(client, "init_game")
        options = interface(screen, minimap, width, raw=True)
        response = client.call(join_game=join_game(options))
        if response.join_game.HasField("error"):
            assert response.join_game.error_details and client.status == Status.init_game
            return
        obs = observe(client)
        layers = obs.feature_layer_data
        assert (layers.renders.player_relative.size.x,
                layers.renders.player_relative.size.y) in (screen, (0, 0))
        assert (layers.minimap_renders.player_relative.size.x,
                layers.minimap_renders.player_relative.size.y) in (minimap, (0, 0))
        client.call(step=sc_pb.RequestStep(count=8))
        client.call(observation=sc_pb.RequestObservation())
        assert client.status == Status.in_game


def test_a_tiny_screen_width_is_handled(host):
    """A width of 1/1000 world unit puts 64000 pixels on a world unit."""
    with host.client() as client:
        enter(client, "init_game")
        response = client.call(join_game=join_game(interface(width=0.001)))
        if not response.join_game.HasField("error"):
            client.call(observation=sc_pb.RequestObservation())


@pytest.mark.parametrize("map_name", ["FindAndDefeatZerglings", "MoveToBeacon"])
@pytest.mark.parametrize("target", [(math.nan, 30.0), (math.inf, -math.inf), (1e30, -1e30)],
                         ids=["nan", "inf", "huge"])
def test_raw_commands_to_non_finite_points_are_harmless(host, map_name, target):
    """Raw camera moves and raw moves to any world point: the game goes on."""
    with host.client() as client:
        enter(client, "in_game", map_name, options=interface(raw=True))
        units = observe(client).raw_data.units
        own = [u.tag for u in units if u.alliance == raw_pb2.Self]
        camera = raw_pb2.ActionRaw(camera_move=raw_pb2.ActionRawCameraMove(
            center_world_space=common_pb2.Point(x=target[0], y=target[1])))
        move = raw_pb2.ActionRaw(unit_command=raw_pb2.ActionRawUnitCommand(
            ability_id=16, unit_tags=own,
            target_world_space_pos=common_pb2.Point2D(x=target[0], y=target[1])))
        client.call(action=sc_pb.RequestAction(actions=[sc_pb.Action(action_raw=camera),
                                                        sc_pb.Action(action_raw=move)]))
        client.call(step=sc_pb.RequestStep(count=8))
        obs = observe(client)
        for unit in obs.raw_data.units:
            assert math.isfinite(unit.pos.x) and math.isfinite(unit.pos.y), unit
        assert math.isfinite(obs.raw_data.player.camera.x)


# --- 2. requests in the wrong state ---------------------------------------------------

WRONG_STATE = [
    ("launched", "step", sc_pb.Request(step=sc_pb.RequestStep(count=8))),
    ("launched", "observation", sc_pb.Request(observation=sc_pb.RequestObservation())),
    ("launched", "action", sc_pb.Request(action=sc_pb.RequestAction(actions=[sc_pb.Action()]))),
    ("launched", "join_game", sc_pb.Request(join_game=join_game())),
    ("launched", "restart_game", sc_pb.Request(restart_game=sc_pb.RequestRestartGame())),
    ("launched", "game_info", sc_pb.Request(game_info=sc_pb.RequestGameInfo())),
    ("launched", "leave_game", sc_pb.Request(leave_game=sc_pb.RequestLeaveGame())),
    ("init_game", "create_game", sc_pb.Request(create_game=create_game())),
    ("init_game", "step", sc_pb.Request(step=sc_pb.RequestStep(count=1))),
    ("init_game", "restart_game", sc_pb.Request(restart_game=sc_pb.RequestRestartGame())),
    ("init_game", "observation", sc_pb.Request(observation=sc_pb.RequestObservation())),
    ("in_game", "join_game", sc_pb.Request(join_game=join_game())),
    ("ended", "action", sc_pb.Request(action=sc_pb.RequestAction(actions=[sc_pb.Action()]))),
    ("ended", "step", sc_pb.Request(step=sc_pb.RequestStep(count=8))),
    ("ended", "join_game", sc_pb.Request(join_game=join_game())),
]


@pytest.mark.parametrize("state, kind, request_", WRONG_STATE,
                         ids=[f"{kind}-in-{state}" for state, kind, _ in WRONG_STATE])
def test_a_request_in_the_wrong_state_is_refused_naming_the_state(host, state, kind, request_):
    with host.client() as client:
        enter(client, state)
        before = observe(client) if state in ("in_game", "ended") else None
        response = client.call(sc_pb.Request.FromString(request_.SerializeToString()))
        assert len(response.error) == 1, describe(response)
        message = response.error[0]
        assert kind in message and state in message, message
        if kind in ("action", "step") and state == "ended":
            # pysc2's catch_game_end recognises exactly this phrase.
            assert "Game has already ended" in message
        assert not response.HasField(kind), describe(response)
        assert response.status == getattr(Status, state)
        client.ping()
        assert client.status == getattr(Status, state)
        if before is not None:  # the game itself did not move either
            assert observe(client).game_loop == before.game_loop


def test_join_game_twice_leaves_the_first_game_running(host):
    with host.client() as client:
        enter(client, "in_game")
        client.call(step=sc_pb.RequestStep(count=16))
        response = client.call(join_game=join_game(interface(screen=(32, 32))))
        assert response.error and "in_game" in response.error[0]
        obs = observe(client)
        assert obs.game_loop == 16
        assert obs.feature_layer_data.renders.player_relative.size.x == 64  # first options


# --- 3. maps the emulator cannot play ---------------------------------------------------


@pytest.fixture
def reap_emulators():
    """pysc2 leaks the game it launched when SC2Env's constructor raises; end those."""
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    yield
    gc.collect()  # StarcraftProcess.__del__ closes what is no longer referenced
    leftover = [p for p in me.children(recursive=True) if p.pid not in before]
    for proc in leftover:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    _, alive = psutil.wait_procs(leftover, timeout=5)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()


def make_env(map_name, **aif):
    aif.setdefault("feature_dimensions", features.Dimensions(screen=64, minimap=64))
    return sc2_env.SC2Env(map_name=map_name, players=[sc2_env.Agent(sc2_env.Race.terran)],
                          agent_interface_format=sc2_env.AgentInterfaceFormat(**aif))


@settings(FUZZ, max_examples=30)
@given(map_path=MAP_PATHS)
def test_create_game_with_an_unknown_map_path_lists_the_supported_maps(host, map_path):
    assume(os.path.splitext(os.path.basename(map_path))[0] not in SCENARIOS)
    with host.client() as client:
        response = client.call(create_game=sc_pb.RequestCreateGame(
            local_map=sc_pb.LocalMap(map_path=map_path),
            player_setup=[sc_pb.PlayerSetup(type=sc_pb.Participant)]))
        assert response.create_game.error == sc_pb.ResponseCreateGame.InvalidMapPath
        for supported in SCENARIOS:
            assert supported in response.create_game.error_details
        assert client.status == Status.launched


# --- 4. RGB rendering and replays -----------------------------------------------------


@pytest.mark.usefixtures("sc2path", "reap_emulators")
def test_sc2env_with_rgb_rendering_fails_with_a_message_about_rgb():
    with pytest.raises(remote_controller.RequestError) as err:
        make_env("MoveToBeacon", feature_dimensions=None,
                 rgb_dimensions=features.Dimensions(screen=64, minimap=64)).close()
    assert "FeatureUnsupported" in str(err.value) and "RGB" in str(err.value)


def test_join_game_with_render_options_is_refused_and_a_plain_join_still_works(host):
    with host.client() as client:
        enter(client, "init_game")
        options = interface()
        options.render.resolution.x = options.render.resolution.y = 64
        response = client.call(join_game=join_game(options))
        assert response.join_game.error == sc_pb.ResponseJoinGame.FeatureUnsupported
        assert "RGB" in response.join_game.error_details
        assert client.status == Status.init_game
        client.call(join_game=join_game())
        assert client.status == Status.in_game


@pytest.mark.parametrize("state", ["in_game", "ended"])
def test_save_replay_is_refused_with_a_message_about_replays(host, state):
    with host.client() as client:
        enter(client, state)
        response = client.call(save_replay=sc_pb.RequestSaveReplay())
        assert response.error and "replay" in response.error[0].lower()
        assert not response.save_replay.data
        assert client.status == getattr(Status, state)
        client.call(observation=sc_pb.RequestObservation())  # still playing


# --- 5. empty and unsupported requests --------------------------------------------------


@pytest.mark.parametrize("state", ["launched", "in_game"])
@pytest.mark.parametrize("kind", [None, *UNSUPPORTED])
def test_empty_and_unsupported_requests_are_refused_and_serving_goes_on(host, state, kind):
    with host.client() as client:
        enter(client, state)
        request = sc_pb.Request(id=77)
        if kind is not None:
            getattr(request, kind).SetInParent()
        response = client.call(request)
        assert len(response.error) == 1, describe(response)
        assert (kind or "empty") in response.error[0]
        assert response.WhichOneof("response") is None
        assert client.status == getattr(Status, state)
        client.ping()
        if state == "in_game":
            client.call(step=sc_pb.RequestStep(count=1))
            assert observe(client).game_loop == 1


# --- 6. the protocol through pysc2's RemoteController -------------------------------------


def test_remote_controller_plays_an_episode_and_restarts(sc2path):
    static_data = importlib.import_module(PACKAGE_NAME + ".lib.static_data")
    run_config = run_configs.get()
    map_inst = maps.get("MoveToBeacon")
    options = interface(screen=(84, 84), minimap=(64, 64), raw=True)
    with run_config.start(want_rgb=False) as controller:
        controller.create_game(sc_pb.RequestCreateGame(
            local_map=sc_pb.LocalMap(map_path=map_inst.path, map_data=map_inst.data(run_config)),
            player_setup=[sc_pb.PlayerSetup(type=sc_pb.Participant)], random_seed=5))
        assert controller.status == protocol.Status.init_game
        controller.join_game(sc_pb.RequestJoinGame(race=common_pb2.Terran, options=options))
        assert controller.status == protocol.Status.in_game

        info = controller.game_info()
        assert info.options == options
        assert [(p.player_id, p.type, p.race_requested) for p in info.player_info] == [
            (1, sc_pb.Participant, common_pb2.Terran)]
        data = static_data.StaticData(controller.data_raw())
        assert data.units[MARINE] == "Marine"
        assert data.abilities[16].remaps_to_ability_id == 3794  # Move_Move -> Move
        assert {3665, 3674, 3793, 3794, 3795} <= data.general_abilities

        assert controller.observe().observation.game_loop == 0
        controller.step(0)
        assert controller.observe().observation.game_loop == 0
        controller.step(5)
        obs = controller.observe()
        assert obs.observation.game_loop == 5

        # Earn a point (raw move onto the beacon) so that the restart has a score to reset.
        units = {u.unit_type: u for u in obs.observation.raw_data.units}
        beacon = units[BEACON].pos
        controller.act(sc_pb.Action(action_raw=raw_pb2.ActionRaw(
            unit_command=raw_pb2.ActionRawUnitCommand(
                ability_id=16, unit_tags=[units[MARINE].tag],
                target_world_space_pos=common_pb2.Point2D(x=beacon.x, y=beacon.y)))))
        while obs.observation.score.score == 0:
            assert obs.observation.game_loop < 400, "the marine never reached the beacon"
            controller.step(8)
            obs = controller.observe()
        assert obs.observation.score.score == 1 and not obs.player_result

        controller.step(MOVE_TO_BEACON_LOOPS - 1 - obs.observation.game_loop)
        obs = controller.observe()
        assert obs.observation.game_loop == MOVE_TO_BEACON_LOOPS - 1
        assert not obs.player_result and controller.status == protocol.Status.in_game
        controller.step(8)  # past the time limit: the episode ends at the limit
        assert controller.status == protocol.Status.ended
        obs = controller.observe()
        assert obs.observation.game_loop == MOVE_TO_BEACON_LOOPS
        assert [(r.player_id, r.result) for r in obs.player_result] == [(1, sc_pb.Tie)]
        assert controller.status == protocol.Status.ended

        controller.restart()
        assert controller.status == protocol.Status.in_game
        obs = controller.observe()
        assert obs.observation.game_loop == 0
        assert obs.observation.score.score == 0 and not obs.player_result
        controller.step(8)
        assert controller.observe().observation.game_loop == 8
