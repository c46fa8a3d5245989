"""Requests in the wrong state are refused, naming the state, and change nothing."""

import pytest
from s2clientprotocol import sc2api_pb2 as sc_pb

from tests.emulator.checked_client import (
    Status,
    create_game,
    describe,
    enter,
    interface,
    join_game,
    observe,
)

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


@pytest.mark.parametrize(
    "state, kind, request_",
    WRONG_STATE,
    ids=[f"{kind}-in-{state}" for state, kind, _ in WRONG_STATE],
)
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
