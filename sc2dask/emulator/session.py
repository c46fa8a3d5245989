"""One game's request/response loop: the SC2 API state machine the emulator presents to pysc2.

``Session.handle`` takes a serialized ``sc_pb.Request`` and always returns a serialized
``sc_pb.Response`` with ``status`` set and the request ``id`` echoed: anything it cannot
do becomes ``Response.error`` with a message, never an exception or a hang.
"""

from __future__ import annotations

import logging
import secrets

import numpy as np
from s2clientprotocol import common_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from . import commands, debug, observe, static_data
from .bots import LEVELS
from .gamedata import BASE_BUILD, DATA_VERSION, GAME_VERSION
from .maps import UnsupportedMapError, scenario_for
from .world import World

log = logging.getLogger(__name__)

Status = sc_pb.Status

# Statuses in which each request is legal, as the real game (and pysc2) see it.
VALID_STATUS = {
    "create_game": {Status.launched, Status.ended, Status.in_game},
    "join_game": {Status.init_game},
    "restart_game": {Status.ended, Status.in_game},
    "leave_game": {Status.in_game, Status.ended},
    "game_info": {Status.in_game, Status.ended},
    "data": {Status.in_game, Status.ended},
    "observation": {Status.in_game, Status.ended},
    "action": {Status.in_game},
    "step": {Status.in_game},
    "save_replay": {Status.in_game, Status.ended},
    "debug": {Status.in_game},
}

# Interface sizes the emulator renders: beyond these an observation would not fit in
# memory or in a protobuf message, and pysc2's own agents use 16-84 pixels.
MAX_RESOLUTION = 1024
MAX_SCREEN_WIDTH = 256.0  # world units; the mini-game maps are 64 wide


def _interface_problem(options) -> str | None:
    """Why the emulator cannot render these ``InterfaceOptions``, or None."""
    if not options.HasField("feature_layer"):
        return None
    fl = options.feature_layer
    for name in ("resolution", "minimap_resolution"):
        size = getattr(fl, name)
        if not (1 <= size.x <= MAX_RESOLUTION and 1 <= size.y <= MAX_RESOLUTION):
            return (
                f"feature_layer.{name} {size.x}x{size.y} is out of range: each side must be "
                f"1..{MAX_RESOLUTION} pixels"
            )
    if fl.HasField("width") and not (1.0 <= fl.width <= MAX_SCREEN_WIDTH):
        return (
            f"feature_layer.width {fl.width} is out of range: the screen must span "
            f"1..{MAX_SCREEN_WIDTH:g} world units (pysc2's default is 24)"
        )
    return None


# Races the emulator plays on a map for two: Terran, or Random (which it resolves to Terran).
EMULATED_RACES = (common_pb2.Terran, common_pb2.Random)


def _computer_problem(computer) -> str | None:
    """Why the emulator cannot play this Computer player, or None."""
    if computer.race not in EMULATED_RACES:
        return (
            f"the sc2dask emulator's bots play Terran only, not "
            f"{common_pb2.Race.Name(computer.race)}"
        )
    if computer.difficulty not in LEVELS:
        return (
            f"the sc2dask emulator has no {sc_pb.Difficulty.Name(computer.difficulty)} bot; it "
            f"has {', '.join(sc_pb.Difficulty.Name(d) for d in LEVELS)}"
        )
    return None


class Refused(Exception):
    """A create/join/restart request the game declines with its own ``error`` enum."""

    def __init__(self, code: int, details: str):
        super().__init__(details)
        self.code, self.details = code, details


class RequestFailed(Exception):
    """A request that gets ``Response.error`` (the message) instead of a result."""


class Session:
    """The state of one connection: status, the scenario, the current episode's World."""

    def __init__(self):
        self.status = Status.launched
        self.quit_requested = False
        self.world: World | None = None
        self._map_path = ""
        self._scenario_class = None
        self._seed = 0
        self._episode = 0
        self._options = sc_pb.InterfaceOptions()
        self._race = 0
        self._computers: list = []  # the Computer players' setups (a map for two)

    def handle(self, data: bytes) -> bytes:
        response = sc_pb.Response()
        try:
            request = sc_pb.Request.FromString(data)
        except Exception as exc:  # malformed bytes from a client
            response.error.append(f"sc2dask emulator: could not parse the Request ({exc})")
            response.status = self.status
            return response.SerializeToString()
        if request.HasField("id"):
            response.id = request.id
        kind = request.WhichOneof("request")
        try:
            if kind is None:
                raise RequestFailed("empty Request: set one of its request fields")
            handler = getattr(self, "_" + kind, None)
            if handler is None:
                raise RequestFailed(f"request '{kind}' is not supported by the sc2dask emulator")
            allowed = VALID_STATUS.get(kind)
            if kind in ("action", "step") and self.status == Status.ended:
                raise RequestFailed(f"'{kind}': Game has already ended; call restart_game")
            if allowed is not None and self.status not in allowed:
                raise RequestFailed(
                    f"'{kind}' called while in state {Status.Name(self.status)}; valid: "
                    + ", ".join(sorted(Status.Name(s) for s in allowed))
                )
            handler(getattr(request, kind), getattr(response, kind))
        except Refused as exc:
            reply = getattr(response, kind)
            reply.error, reply.error_details = exc.code, exc.details
        except RequestFailed as exc:
            response = self._error_response(response, kind, str(exc))
        except Exception as exc:  # a bug of ours must not take the connection down
            log.exception("request %s failed", kind)
            response = self._error_response(
                response, kind, f"sc2dask emulator internal error in '{kind}': {exc!r}"
            )
        response.status = self.status
        return response.SerializeToString()

    @staticmethod
    def _error_response(response, kind, message):
        if kind:
            response.ClearField(kind)
        response.error.append(message)
        return response

    # --- game lifecycle ----------------------------------------------------------------

    def _ping(self, req, resp) -> None:
        resp.game_version = GAME_VERSION
        resp.data_version = DATA_VERSION
        resp.data_build = BASE_BUILD
        resp.base_build = BASE_BUILD

    def _create_game(self, req, resp) -> None:
        if req.HasField("battlenet_map_name"):
            raise Refused(
                sc_pb.ResponseCreateGame.InvalidMapName,
                "Battle.net maps are not emulated; use a mini-game map via local_map.map_path",
            )
        if not req.HasField("local_map"):
            raise Refused(
                sc_pb.ResponseCreateGame.MissingMap, "create_game needs local_map.map_path"
            )
        try:
            self._scenario_class = type(scenario_for(req.local_map.map_path))
        except UnsupportedMapError as exc:
            raise Refused(sc_pb.ResponseCreateGame.InvalidMapPath, str(exc)) from None
        participants = [p for p in req.player_setup if p.type == sc_pb.Participant]
        computers = [p for p in req.player_setup if p.type == sc_pb.Computer]
        players = self._scenario_class.players
        if len(participants) != 1 or len(participants) + len(computers) != players:
            raise Refused(
                sc_pb.ResponseCreateGame.InvalidPlayerSetup,
                f"the emulator plays {self._scenario_class.name} with one Participant"
                + (" and one Computer" if players == 2 else " and no other player"),
            )
        for computer in computers:
            problem = _computer_problem(computer)
            if problem:
                raise Refused(sc_pb.ResponseCreateGame.InvalidPlayerSetup, problem)
        self._computers = [sc_pb.PlayerSetup() for _ in computers]
        for copy, computer in zip(self._computers, computers):
            copy.CopyFrom(computer)
        self._map_path = req.local_map.map_path
        self._seed = req.random_seed if req.HasField("random_seed") else secrets.randbits(32)
        self._episode = 0
        self.world = None
        self.status = Status.init_game

    def _join_game(self, req, resp) -> None:
        if req.options.HasField("render"):
            raise Refused(
                sc_pb.ResponseJoinGame.FeatureUnsupported,
                "RGB rendering is not available in the sc2dask emulator: "
                "use feature layers (rgb_screen=None) or the real game",
            )
        if not req.HasField("options"):
            raise Refused(sc_pb.ResponseJoinGame.MissingOptions, "join_game needs InterfaceOptions")
        problem = _interface_problem(req.options)
        if problem:
            raise Refused(sc_pb.ResponseJoinGame.OtherError, problem)
        if self._scenario_class.players > 1 and req.race not in EMULATED_RACES:
            raise Refused(
                sc_pb.ResponseJoinGame.OtherError,
                f"the sc2dask emulator plays Terran only on {self._scenario_class.name}, not "
                f"{common_pb2.Race.Name(req.race)}",
            )
        self._options = sc_pb.InterfaceOptions()
        self._options.CopyFrom(req.options)
        self._race = req.race
        self._new_episode()
        resp.player_id = 1
        self.status = Status.in_game

    def _restart_game(self, req, resp) -> None:
        self._episode += 1
        self._new_episode()
        self.status = Status.in_game

    def _new_episode(self) -> None:
        # Each episode has its own seed derived from the game's, so runs replay exactly.
        seed = np.random.SeedSequence([self._seed, self._episode]).generate_state(1)[0]
        scenario = self._scenario_class()
        scenario.configure(self._computers)
        self.world = World(scenario, int(seed))

    def _leave_game(self, req, resp) -> None:
        self.world = None
        self.status = Status.launched

    def _quit(self, req, resp) -> None:
        self.quit_requested = True
        self.status = Status.quit

    # --- playing -----------------------------------------------------------------------

    def _game_info(self, req, resp) -> None:
        resp.CopyFrom(
            observe.game_info(
                self.world, self._map_path, self._options, self._race, self._computers
            )
        )

    def _data(self, req, resp) -> None:
        resp.CopyFrom(static_data.static_data(req))

    def _observation(self, req, resp) -> None:
        resp.CopyFrom(observe.observe(self.world, self._options))
        self.world.agent.action_errors.clear()
        if self.world.ended:
            resp.player_result.add(player_id=1, result=self.world.result)
            if self._computers:  # the other side of the same end
                other = {sc_pb.Victory: sc_pb.Defeat, sc_pb.Defeat: sc_pb.Victory}
                resp.player_result.add(
                    player_id=2, result=other.get(self.world.result, self.world.result)
                )
            self.status = Status.ended

    def _action(self, req, resp) -> None:
        for action in req.actions:
            result = commands.apply_action(self.world, action, self._options)
            resp.result.append(result)
            if result != commands.SUCCESS:
                self.world.agent.action_errors.append(result)

    def _step(self, req, resp) -> None:
        self.world.step(req.count if req.HasField("count") else 1)
        resp.simulation_loop = self.world.game_loop
        if self.world.ended:
            self.status = Status.ended

    def _debug(self, req, resp) -> None:
        """pysc2's debug commands: create units, kill units, set a unit's life, energy or
        shields, and end the game; the drawing ones are accepted and ignored."""
        for command in req.debug:
            problem = debug.apply(self.world, command)
            if problem:
                raise RequestFailed(f"debug: {problem}")

    def _save_replay(self, req, resp) -> None:
        raise RequestFailed(
            "save_replay: the sc2dask emulator does not write replays; "
            "set save_replay_episodes=0 or use the real game"
        )
