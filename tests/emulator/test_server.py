"""The emulator process as pysc2 sees it: the game's flags, the websocket, signals and ``quit``."""

import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest
import websocket
from s2clientprotocol import sc2api_pb2 as sc_pb

from sc2dask.emulator.install import EXECUTABLE
from sc2dask.game import install_emulator
from sc2dask.game.pysc2lib import remote_controller
from tests.emulator_process import PYSC2_FLAGS, connect, emulator, free_port

UNKNOWN_FLAGS = ["-unknownFlag", "value", "-anotherUnknownSwitch"]  # the game ignores these


def request(**fields):
    return sc_pb.Request(**fields).SerializeToString()


def test_answers_a_non_utf8_text_frame_with_a_binary_frame():
    with emulator(flags=PYSC2_FLAGS + UNKNOWN_FLAGS) as (proc, port):
        ws = connect(port)
        payload = request(ping=sc_pb.RequestPing(), id=200)
        with pytest.raises(UnicodeDecodeError):
            payload.decode("utf-8")
        ws.send(payload)  # websocket-client's default opcode is TEXT, as in pysc2.
        opcode, data = ws.recv_data()
        assert opcode == websocket.ABNF.OPCODE_BINARY
        response = sc_pb.Response.FromString(data)
        assert response.id == 200
        assert response.HasField("ping") and response.HasField("status")
        assert not response.error
        ws.close()
        proc.terminate()
        _, stderr = proc.communicate(timeout=10)
    assert stderr.count("Listening on ws://127.0.0.1:") == 1
    assert "-unknownFlag value -anotherUnknownSwitch" in stderr
    assert "Traceback" not in stderr


def test_permessage_deflate_is_not_negotiated():
    with emulator() as (proc, port):
        ws = connect(port, header=["Sec-WebSocket-Extensions: permessage-deflate"])
        assert "sec-websocket-extensions" not in {k.lower() for k in ws.getheaders()}
        ws.close()


def test_quit_exits_with_status_0_even_when_the_client_does_not_read_the_reply():
    with emulator() as (proc, port):
        ws = connect(port)
        ws.send(request(quit=sc_pb.RequestQuit(), id=999999999))
        ws.close()  # pysc2 closes right after writing `quit`.
        assert proc.wait(timeout=10) == 0
        _, stderr = proc.communicate(timeout=10)
    assert "Traceback" not in stderr


def test_pysc2_remote_controller_pings_and_quits():
    with emulator() as (proc, port):
        controller = remote_controller.RemoteController("127.0.0.1", port, timeout_seconds=20)
        assert controller.ping().base_build > 0
        controller.quit()
        assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signals_stop_the_launched_process_promptly_and_leave_nothing(tmp_path, signum):
    launcher = install_emulator(tmp_path / "StarCraftII") / EXECUTABLE
    # As pysc2 starts it from a process that handles SIGINT (an ignored SIGINT is inherited
    # and stays ignored, on purpose: sc2dask/emulator/server.py), whatever the test runner's.
    default_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731
    with emulator(command=[str(launcher)], preexec_fn=default_sigint) as (proc, port):
        ws = connect(port)  # A game still connected must not hold the exit up.
        ws.send(request(ping=sc_pb.RequestPing(), id=1))
        ws.recv()
        process = psutil.Process(proc.pid)
        # The launcher execs Python: the pid pysc2 signals is the server itself.
        assert "sc2dask.emulator" in process.cmdline()
        assert process.children(recursive=True) == []
        start = time.monotonic()
        # pysc2's _shutdown_proc sends SIGTERM every 0.1 s until the process is gone.
        while proc.poll() is None and time.monotonic() - start < 10:
            proc.send_signal(signum)
            time.sleep(0.05)
        assert proc.poll() == 0
        assert time.monotonic() - start < 3  # pysc2 kills after 3 s.
        _, stderr = proc.communicate(timeout=10)
        assert not psutil.pid_exists(proc.pid)
        ws.close()
    assert "Traceback" not in stderr
    assert "Listening" not in stderr  # the launcher (what pysc2 starts) runs it -quiet


def test_a_launched_game_exits_when_its_owner_dies(tmp_path):
    """A SIGKILLed Dask worker cannot quit its games; they must not run on, orphaned."""
    launcher = install_emulator(tmp_path / "StarCraftII") / EXECUTABLE
    owner = subprocess.run(  # starts the game, prints its pid, and dies at once
        [
            sys.executable,
            "-c",
            "import subprocess, sys; p = subprocess.Popen(sys.argv[1:], "
            "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)",
            str(launcher),
            "-listen",
            "127.0.0.1",
            "-port",
            str(free_port()),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    game = psutil.Process(int(owner.stdout))
    try:
        game.wait(timeout=20)  # raises TimeoutExpired if it runs on (no exit code: not our child)
        assert not game.is_running()
    finally:
        if game.is_running():
            game.kill()


def test_other_paths_get_404():
    with emulator() as (proc, port):
        connect(port).close()  # Wait until it listens.
        with pytest.raises(websocket.WebSocketBadStatusException) as err:
            websocket.create_connection(f"ws://127.0.0.1:{port}/other", timeout=10)
        assert err.value.status_code == 404


def test_a_second_client_is_rejected_like_the_game_does():
    with emulator() as (proc, port):
        first = connect(port)
        with pytest.raises(remote_controller.ConnectError, match="Connection rejected"):
            remote_controller.RemoteController("127.0.0.1", port, timeout_seconds=5)
        first.close()
        for _ in range(50):  # The server notices the close asynchronously.
            try:
                second = connect(port)
                break
            except websocket.WebSocketConnectionClosedException:
                time.sleep(0.1)
        else:
            pytest.fail("a new client was still rejected after the first one left")
        second.send(request(ping=sc_pb.RequestPing(), id=7))
        assert sc_pb.Response.FromString(second.recv()).id == 7
        second.close()


def test_a_busy_port_is_reported_and_exits_1():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "sc2dask.emulator", "-listen", "127.0.0.1", "-port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert result.returncode == 1
    assert f"Cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


def _ping(ws, id=1):
    ws.send(request(ping=sc_pb.RequestPing(), id=id))
    return sc_pb.Response.FromString(ws.recv_data()[1])


def test_a_request_beyond_the_size_limit_closes_that_client_only():
    from sc2dask.emulator.server import MAX_MESSAGE_BYTES

    with emulator() as (proc, port):
        ws = connect(port)
        ws.send(b"\0" * (MAX_MESSAGE_BYTES + 1))
        opcode, data = ws.recv_data()
        assert opcode == websocket.ABNF.OPCODE_CLOSE
        assert int.from_bytes(data[:2], "big") == 1009  # "message too big"
        ws.close()
        fresh = connect(port)  # the game is free again
        assert _ping(fresh).HasField("ping")
        fresh.close()
        assert proc.poll() is None


def test_a_silent_client_is_dropped_after_the_idle_timeout():
    with emulator(env={"SC2DASK_EMULATOR_IDLE_TIMEOUT": "1"}) as (proc, port):
        ws = connect(port)
        assert _ping(ws).HasField("ping")
        time.sleep(2.5)
        with pytest.raises((websocket.WebSocketConnectionClosedException, ConnectionError)):
            _ping(ws, id=2)
        fresh = connect(port)
        assert _ping(fresh).HasField("ping")
        fresh.close()
        proc.terminate()
        _, stderr = proc.communicate(timeout=10)
    assert "no request for 1 s (SC2DASK_EMULATOR_IDLE_TIMEOUT)" in stderr


def test_a_bad_idle_timeout_is_a_clear_error_with_exit_2():
    with emulator(env={"SC2DASK_EMULATOR_IDLE_TIMEOUT": "soon"}) as (proc, port):
        assert proc.wait(timeout=30) == 2
        _, stderr = proc.communicate(timeout=10)
    assert "SC2DASK_EMULATOR_IDLE_TIMEOUT='soon' must be a number of seconds" in stderr
    assert "Traceback" not in stderr
