"""A real emulator process for tests that talk to it over the wire, as pysc2 does."""

import contextlib
import os
import socket
import subprocess
import sys
import time

import websocket

# What pysc2's sc_process passes (with -headlessNoRender when RGB is wanted but no GL
# library exists).
PYSC2_FLAGS = [
    "-dataDir",
    "/nonexistent/StarCraftII/",
    "-tempDir",
    "/tmp/sc-x/",
    "-headlessNoRender",
    "-dataVersion",
    "B89B5D6FA7CBF6452E721311BFBC6CB2",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def emulator(
    command=(sys.executable, "-m", "sc2dask.emulator"), flags=PYSC2_FLAGS, env=None, **popen
):
    """A running emulator process on a free port; killed at the end if still running.
    ``env`` adds to this process's environment; ``popen`` goes to ``subprocess.Popen``."""
    port = free_port()
    proc = subprocess.Popen(
        [*command, "-listen", "127.0.0.1", "-port", str(port), *flags],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        **popen,
    )
    try:
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def connect(port, path="/sc2api", **kwargs):
    """Connect like pysc2: retry while the process starts up (bounded to ~20 s)."""
    for _ in range(200):
        try:
            return websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=10, **kwargs)
        except ConnectionRefusedError:
            time.sleep(0.1)
    raise TimeoutError(f"the emulator never listened on port {port}")
