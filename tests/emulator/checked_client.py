"""A client of a real emulator process over a real websocket that checks every reply.

Every reply must be a BINARY ``Response`` with ``status`` set and the request ``id``
echoed; a refused request leaves the status as it was; the emulator keeps serving after
anything a client sends; and nothing may surface as an internal error (a crash of the
emulator's game logic that ``Session`` caught), which these tests report as a failure.
"""

import contextlib
import threading
import time

import pytest
import websocket
from google.protobuf import text_format
from s2clientprotocol import common_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from sc2dask.emulator.maps import SCENARIOS
from tests.emulator_process import connect, emulator

Status = sc_pb.Status
INTERNAL_ERROR = "internal error"


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
            pytest.fail(
                f"the emulator dropped the connection on {what}: {exc!r}\n{self._server_log()}"
            )
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            self.broken = True
            time.sleep(0.2)
            code = int.from_bytes(data[:2], "big") if len(data) >= 2 else None
            pytest.fail(
                f"the emulator closed the connection (code {code}) instead of "
                f"answering {what}\n{self._server_log()}"
            )
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
                f"status from {Status.Name(before)} to {Status.Name(response.status)}"
            )
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
            threading.Thread(target=self._log.extend, args=(self.proc.stderr,), daemon=True).start()
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
            except (
                websocket.WebSocketConnectionClosedException,
                ConnectionResetError,
                BrokenPipeError,
            ):
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


# --- well-formed requests ---------------------------------------------------------------


def create_game(map_name="MoveToBeacon", **fields) -> sc_pb.RequestCreateGame:
    return sc_pb.RequestCreateGame(
        local_map=sc_pb.LocalMap(map_path=f"mini_games/{map_name}.SC2Map"),
        player_setup=[sc_pb.PlayerSetup(type=sc_pb.Participant)],
        **fields,
    )


def interface(screen=(64, 64), minimap=(64, 64), width=24.0, raw=False, **fields):
    return sc_pb.InterfaceOptions(
        raw=raw,
        score=True,
        feature_layer=sc_pb.SpatialCameraSetup(
            width=width,
            resolution=common_pb2.Size2DI(x=screen[0], y=screen[1]),
            minimap_resolution=common_pb2.Size2DI(x=minimap[0], y=minimap[1]),
        ),
        **fields,
    )


def join_game(options=None) -> sc_pb.RequestJoinGame:
    return sc_pb.RequestJoinGame(
        race=common_pb2.Terran, options=interface() if options is None else options
    )


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
