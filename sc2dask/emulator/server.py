"""The process that stands in for the StarCraft II binary: the SC2 API over a websocket.

pysc2 launches ``Versions/Base*/SC2_x64 -listen HOST -port PORT ...``, connects to
``ws://HOST:PORT/sc2api`` and exchanges one serialized ``Request``/``Response`` per
message. We accept the game's flags, serve one game at a time, hand every message to a
``Session`` and exit after ``quit`` or on SIGTERM/SIGINT, as the game does.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import urllib.parse
from collections.abc import Callable, Sequence
from http import HTTPStatus

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Server, ServerConnection, serve

from .session import Session

log = logging.getLogger("sc2dask.emulator")

API_PATH = "/sc2api"


def parse_flags(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """The game's command line (see pysc2's ``lib/sc_process.py``); unknown flags come back apart."""
    parser = argparse.ArgumentParser(
        prog="SC2_x64", description=__doc__, allow_abbrev=False)
    parser.add_argument("-listen", default="127.0.0.1", help="address to listen on")
    parser.add_argument("-port", type=int, required=True, help="port to listen on")
    # Accepted for compatibility with the game; the emulator needs none of them.
    for flag in ("-dataDir", "-tempDir", "-dataVersion", "-displayMode", "-eglpath",
                 "-osmesapath", "-windowwidth", "-windowheight", "-windowx", "-windowy"):
        parser.add_argument(flag)
    for flag in ("-headlessNoRender", "-verboseMP", "-ipv6"):
        parser.add_argument(flag, action="store_true")
    parser.add_argument("-verbose", action="store_true", help="log every connection")
    return parser.parse_known_args(list(argv))


class GameServer:
    """One websocket endpoint at ``/sc2api`` that plays one game per connection.

    ``stopped`` is set once a client sent ``quit``; the caller then shuts the server down.
    """

    def __init__(self, host: str, port: int, make_session: Callable[[], Session] = Session):
        self._make_session = make_session
        self.stopped = threading.Event()
        self._server: Server = serve(
            self._play, host, port,
            process_request=self._check_request,
            compression=None,      # pysc2's client never negotiates permessage-deflate.
            max_size=None,         # create_game carries the map; observations the layers.
            ping_interval=None,    # The game sends no keepalive pings, and a slow agent
                                   # would otherwise be disconnected for not answering.
            close_timeout=1,
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
        if self._server.connections or self.stopped.is_set():
            # Like the game, drop a second client mid-handshake; pysc2 reports it as
            # "Connection rejected. Is something else connected?".
            log.warning("Rejected a second connection from %s:%s; a game is already "
                        "connected.", *connection.remote_address[:2])
            connection.close_socket()
        return None

    def _play(self, connection: ServerConnection) -> None:
        log.debug("Client connected from %s:%s", *connection.remote_address[:2])
        session = self._make_session()
        try:
            while True:
                # pysc2 sends TEXT frames that are not UTF-8: never decode them.
                request = connection.recv(decode=False)
                connection.send(session.handle(request))  # bytes -> BINARY frame
                if session.quit_requested:
                    self.stopped.set()
                    break
        except ConnectionClosed:
            pass
        log.debug("Client disconnected")


class _Stop(Exception):
    """Raised by the SIGTERM/SIGINT handler to leave the main thread's wait."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one emulated game on ``-listen``/``-port`` until ``quit``, SIGTERM or SIGINT."""
    args, unknown = parse_flags(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="sc2dask emulator: %(message)s", stream=sys.stderr)
    logging.getLogger("websockets").setLevel(logging.WARNING)
    if unknown:
        log.info("Ignoring unknown flags: %s", " ".join(unknown))
    try:
        server = GameServer(args.listen, args.port)
    except OSError as err:
        log.error("Cannot listen on %s:%s: %s", args.listen, args.port, err)
        return 1

    def stop(signum, frame):
        # A second signal (Ctrl-C twice, pysc2's terminate then kill) must not interrupt
        # the shutdown with a traceback.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise _Stop

    thread = threading.Thread(target=server.serve_forever, name="sc2api-accept")
    try:
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        thread.start()
        host, port = server.address
        log.info("Listening on ws://%s:%s%s", host, port, API_PATH)
        server.stopped.wait()  # set by `quit`
    except _Stop:
        pass
    finally:
        if thread.ident is not None:  # shutdown() waits for serve_forever() to have run.
            server.shutdown()
            thread.join()
    return 0
