"""What the emulator cannot do is refused with a message that says so, and serving goes on:
maps it cannot play, RGB rendering, replays, and empty or unsupported requests."""

import contextlib
import gc
import os

import psutil
import pytest
from hypothesis import assume, given, settings
from s2clientprotocol import sc2api_pb2 as sc_pb

from sc2dask.emulator.maps import SCENARIOS
from sc2dask.game.pysc2lib import features, remote_controller, sc2_env
from tests.emulator.checked_client import Status, describe, enter, interface, join_game, observe
from tests.emulator.request_strategies import FUZZ, MAP_PATHS, UNSUPPORTED

# --- maps the emulator cannot play ---------------------------------------------------


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
    return sc2_env.SC2Env(
        map_name=map_name,
        players=[sc2_env.Agent(sc2_env.Race.terran)],
        agent_interface_format=sc2_env.AgentInterfaceFormat(**aif),
    )


@settings(FUZZ, max_examples=30)
@given(map_path=MAP_PATHS)
def test_create_game_with_an_unknown_map_path_lists_the_supported_maps(host, map_path):
    assume(os.path.splitext(os.path.basename(map_path))[0] not in SCENARIOS)
    with host.client() as client:
        response = client.call(
            create_game=sc_pb.RequestCreateGame(
                local_map=sc_pb.LocalMap(map_path=map_path),
                player_setup=[sc_pb.PlayerSetup(type=sc_pb.Participant)],
            )
        )
        assert response.create_game.error == sc_pb.ResponseCreateGame.InvalidMapPath
        for supported in SCENARIOS:
            assert supported in response.create_game.error_details
        assert client.status == Status.launched


# --- RGB rendering and replays -----------------------------------------------------


@pytest.mark.usefixtures("sc2path", "reap_emulators")
def test_sc2env_with_rgb_rendering_fails_with_a_message_about_rgb():
    with pytest.raises(remote_controller.RequestError) as err:
        make_env(
            "MoveToBeacon",
            feature_dimensions=None,
            rgb_dimensions=features.Dimensions(screen=64, minimap=64),
        ).close()
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


# --- empty and unsupported requests --------------------------------------------------


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
