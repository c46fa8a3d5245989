"""The process that stands in for the StarCraft II binary: the SC2 API over a websocket.

pysc2 launches ``Versions/Base*/SC2_x64 -listen HOST -port PORT ...``, connects to
``ws://HOST:PORT/sc2api`` and exchanges one serialized ``Request``/``Response`` per
message. We accept the game's flags, serve one game at a time, hand every message to a
``Session`` and exit after ``quit`` or on SIGTERM/SIGINT, as the game does.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from http import HTTPStatus

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

from .session import Session

log = logging.getLogger("sc2dask.emulator")

API_PATH = "/sc2api"
# The largest request accepted: create_game carries the map file (a mini-game's, all
# the emulator plays, is under 1 MB); beyond it a client could make us allocate anything.
MAX_MESSAGE_BYTES = 16 * 2**20
# A connected client that sends nothing for this long is dropped, so that one silent
# client cannot hold the game for ever; $SC2DASK_EMULATOR_IDLE_TIMEOUT (seconds, 0:
# never) changes it. The real game has no such limit, so it is long.
IDLE_TIMEOUT_ENV = "SC2DASK_EMULATOR_IDLE_TIMEOUT"
DEFAULT_IDLE_TIMEOUT = 3600.0


def parse_flags(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """The game's command line (see pysc2's ``lib/sc_process.py``); unknown flags come back apart."""
    parser = argparse.ArgumentParser(
        prog="SC2_x64",
        description="The sc2dask emulator of the StarCraft II API.",
        allow_abbrev=False,
    )
    parser.add_argument("-listen", default="127.0.0.1", help="address to listen on")
    parser.add_argument("-port", type=int, required=True, help="port to listen on")
    # Accepted for compatibility with the game; the emulator needs none of them.
    for flag in (
        "-dataDir",
        "-tempDir",
        "-dataVersion",
        "-displayMode",
        "-eglpath",
        "-osmesapath",
        "-windowwidth",
        "-windowheight",
        "-windowx",
        "-windowy",
    ):
        parser.add_argument(flag)
    for flag in ("-headlessNoRender", "-verboseMP", "-ipv6"):
        parser.add_argument(flag, action="store_true")
    parser.add_argument("-verbose", action="store_true", help="log every connection")
    parser.add_argument(
        "-quiet", action="store_true", help="warnings and errors only (how pysc2's launches run it)"
    )
    parser.add_argument(
        "-exitWithParent",
        type=int,
        metavar="PID",
        help="exit when process PID (the one that started this one) dies",
    )
    return parser.parse_known_args(list(argv))


class GameServer:
    """A websocket endpoint at ``/sc2api`` that plays one game per connection, one at a time.

    ``on_quit`` is called (from a connection thread) when a client sends ``quit``.
    """

    def __init__(
        self,
        host: str,
        port: int,
        on_quit: Callable[[], None],
        make_session: Callable[[], Session] = Session,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
    ):
        self._on_quit = on_quit
        self._make_session = make_session
        self._idle_timeout = idle_timeout or None  # 0: never
        self._quitting = False
        self._server = serve(
            self._play,
            host,
            port,
            process_request=self._check_request,
            compression=None,  # pysc2's client never negotiates permessage-deflate.
            max_size=MAX_MESSAGE_BYTES,  # requests only; observations go out unlimited.
            ping_interval=None,  # The game sends no keepalive pings, and a slow agent
            # would otherwise be dropped for not answering them.
            close_timeout=0.5,  # Bounds how long a silent client delays exit.
        )

    @property
    def address(self) -> tuple[str, int]:
        return self._server.socket.getsockname()[:2]

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def shutdown(self) -> None:
        self._server.shutdown()

    def _check_request(self, connection: ServerConnection, request):
        if urllib.parse.urlsplit(request.path).path != API_PATH:
            return connection.respond(HTTPStatus.NOT_FOUND, f"Only {API_PATH} is served.\n")
        if self._server.connections or self._quitting:
            # Like the game, drop a second client mid-handshake; pysc2 reports that as
            # "Connection rejected. Is something else connected?".
            log.warning(
                "Rejected a connection from %s:%s: a game is already connected.",
                *connection.remote_address[:2],
            )
            connection.close_socket()
        return None

    def _play(self, connection: ServerConnection) -> None:
        log.debug("Client connected from %s:%s", *connection.remote_address[:2])
        session = self._make_session()
        try:
            while not session.quit_requested:
                # pysc2 sends TEXT frames that are not UTF-8: never decode them.
                try:
                    request = connection.recv(timeout=self._idle_timeout, decode=False)
                except TimeoutError:
                    log.warning(
                        "Dropped the client at %s:%s: no request for %g s (%s).",
                        *connection.remote_address[:2],
                        self._idle_timeout,
                        IDLE_TIMEOUT_ENV,
                    )
                    connection.close()
                    break
                reply = session.handle(request)
                if session.quit_requested:
                    # pysc2 closes the socket right after `quit` without reading the
                    # reply, so the send below may fail: stop first.
                    self._quitting = True
                    self._on_quit()
                connection.send(reply)  # bytes -> BINARY frame
        except ConnectionClosed:
            pass
        log.debug("Client disconnected")


def main(argv: Sequence[str] | None = None) -> int:
    """Serve one emulated game on ``-listen``/``-port`` until ``quit``, SIGTERM or SIGINT."""
    args, unknown = parse_flags(sys.argv[1:] if argv is None else argv)
    level = logging.DEBUG if args.verbose else logging.WARNING if args.quiet else logging.INFO
    logging.basicConfig(
        level=level, format="sc2dask emulator: %(message)s", stream=sys.stderr, force=True
    )  # This process is ours; drop handlers set by imports.
    logging.getLogger("websockets").setLevel(logging.WARNING)
    if unknown:
        log.info("Ignoring unknown flags: %s", " ".join(unknown))

    # Every way to stop -- SIGTERM, SIGINT, `quit` -- writes to one socket the main thread
    # waits on. Signals get there through set_wakeup_fd from whichever thread catches them
    # (numpy's BLAS threads can), and their Python handlers do nothing, so no signal can
    # interrupt start-up or shutdown with a traceback (pysc2 sends SIGTERM every 0.1 s).
    wake_up, wake_up_writer = socket.socketpair()
    with wake_up, wake_up_writer:
        try:
            server = GameServer(
                args.listen,
                args.port,
                on_quit=lambda: wake_up_writer.send(b"q"),
                idle_timeout=_idle_timeout(),
            )
        except ValueError as err:
            log.error("%s", err)
            return 2
        except OSError as err:
            log.error("Cannot listen on %s:%s: %s", args.listen, args.port, err)
            return 1
        wake_up_writer.setblocking(False)
        signal.set_wakeup_fd(wake_up_writer.fileno(), warn_on_full_buffer=False)
        # A SIGINT ignored by whoever started us stays ignored (as nohup does), so a
        # terminal's Ctrl-C can stop a training run cleanly without killing its games.
        stopping = [signal.SIGTERM] + [signal.SIGINT] * (
            signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
        )
        for signum in stopping:
            signal.signal(signum, lambda signum, frame: None)
        accept = threading.Thread(target=server.serve_forever, name="sc2api-accept")
        accept.start()
        if args.exitWithParent:
            threading.Thread(
                target=_wake_when_orphaned,
                args=(args.exitWithParent, wake_up_writer),
                name="parent-watch",
                daemon=True,
            ).start()
        host, port = server.address
        log.info("Listening on ws://%s:%s%s", f"[{host}]" if ":" in host else host, port, API_PATH)
        wake_up.recv(1)
        # Ignored from here on: Python resets its own handlers to the default (die) while
        # it exits, which would turn pysc2's next SIGTERM into a death by signal.
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, signal.SIG_IGN)
        signal.set_wakeup_fd(-1)
        server.shutdown()
        accept.join()
    return 0


def _idle_timeout() -> float:
    text = os.environ.get(IDLE_TIMEOUT_ENV, "")
    if not text:
        return DEFAULT_IDLE_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise ValueError(
            f"{IDLE_TIMEOUT_ENV}={text!r} must be a number of seconds >= 0 "
            f"(0: never drop an idle client)."
        )
    return seconds


def _wake_when_orphaned(parent: int, wake_up_writer: socket.socket, every: float = 1.0) -> None:
    """Stop the server once ``parent`` is gone (e.g. a SIGKILLed Dask worker), as it can
    no longer quit the game and nobody else knows its port."""
    while os.getppid() == parent:  # an orphan is adopted by init or a subreaper
        time.sleep(every)
    log.warning("The process that started this game (pid %d) is gone; exiting", parent)
    wake_up_writer.send(b"p")
