"""Bad input against the real emulator process: random bytes, wild requests in any order,
and the crashers that fuzzing found, pinned down one by one (see checked_client.py for
what every reply must satisfy)."""

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from s2clientprotocol import common_pb2, raw_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from sc2dask.emulator.maps import SCENARIOS
from tests.emulator.checked_client import Status, create_game, enter, interface, join_game, observe
from tests.emulator.request_strategies import FUZZ, interface_options, requests

TAG_PREFIXES = [bytes([(number << 3) | 2]) for number in range(1, 16)] + [
    b"\xa2\x01",
    b"\xaa\x01",
    b"\xfa\x06",
    b"\xc0\x3e",
    b"\xff\xff\xff\xff\x0f",
]


def payloads():
    """Bytes as a broken client might send: random, truncated or extended Requests, and
    valid field tags (length-delimited Request fields, the id's varint) before garbage."""
    valid = requests(tame=True).map(lambda r: r.SerializeToString())
    return st.one_of(
        st.binary(max_size=256),
        st.tuples(valid, st.integers(0, 64)).map(lambda t: t[0][: t[1]]),
        st.tuples(valid, st.binary(min_size=1, max_size=32)).map(lambda t: t[0] + t[1]),
        st.tuples(st.sampled_from(TAG_PREFIXES), st.binary(max_size=64)).map(lambda t: t[0] + t[1]),
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
@given(
    start=st.sampled_from(["launched", "init_game", "in_game"]),
    map_name=st.sampled_from(sorted(SCENARIOS)),
    options=interface_options(),
    sequence=st.lists(requests(), min_size=1, max_size=6),
)
def test_wild_requests_in_any_order_get_a_response_and_the_emulator_keeps_serving(
    host, start, map_name, options, sequence
):
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
@pytest.mark.parametrize(
    "screen, minimap, width",
    [
        ((0, 0), (64, 64), 24.0),
        ((64, 64), (0, 0), 24.0),
        ((0, 5), (5, 0), 24.0),
        ((1, 7), (7, 1), 24.0),
        ((64, 64), (64, 64), math.nan),
        ((64, 64), (64, 64), math.inf),
        ((64, 64), (64, 64), -24.0),
    ],
    ids=["screen-0x0", "minimap-0x0", "0x5", "1x7", "width-nan", "width-inf", "width-negative"],
)
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
        assert (layers.renders.player_relative.size.x, layers.renders.player_relative.size.y) in (
            screen,
            (0, 0),
        )
        assert (
            layers.minimap_renders.player_relative.size.x,
            layers.minimap_renders.player_relative.size.y,
        ) in (minimap, (0, 0))
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
@pytest.mark.parametrize(
    "target", [(math.nan, 30.0), (math.inf, -math.inf), (1e30, -1e30)], ids=["nan", "inf", "huge"]
)
def test_raw_commands_to_non_finite_points_are_harmless(host, map_name, target):
    """Raw camera moves and raw moves to any world point: the game goes on."""
    with host.client() as client:
        enter(client, "in_game", map_name, options=interface(raw=True))
        units = observe(client).raw_data.units
        own = [u.tag for u in units if u.alliance == raw_pb2.Self]
        camera = raw_pb2.ActionRaw(
            camera_move=raw_pb2.ActionRawCameraMove(
                center_world_space=common_pb2.Point(x=target[0], y=target[1])
            )
        )
        move = raw_pb2.ActionRaw(
            unit_command=raw_pb2.ActionRawUnitCommand(
                ability_id=16,
                unit_tags=own,
                target_world_space_pos=common_pb2.Point2D(x=target[0], y=target[1]),
            )
        )
        client.call(
            action=sc_pb.RequestAction(
                actions=[sc_pb.Action(action_raw=camera), sc_pb.Action(action_raw=move)]
            )
        )
        client.call(step=sc_pb.RequestStep(count=8))
        obs = observe(client)
        for unit in obs.raw_data.units:
            assert math.isfinite(unit.pos.x) and math.isfinite(unit.pos.y), unit
        assert math.isfinite(obs.raw_data.player.camera.x)
