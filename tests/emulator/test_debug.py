"""``RequestDebug`` on the emulator: create, kill and set a unit's life as pysc2's tests do;
a unit type it has no rules for is an error that names the ones it has."""

import pytest
from s2clientprotocol import common_pb2, debug_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from sc2dask.emulator.session import Session
from sc2dask.game.pysc2lib import units

pytestmark = pytest.mark.unit


def _call(session, **request):
    response = sc_pb.Response.FromString(
        session.handle(sc_pb.Request(**request).SerializeToString())
    )
    return response


def _game():
    session = Session()
    create = sc_pb.RequestCreateGame(local_map=sc_pb.LocalMap(map_path="Melee/Simple64.SC2Map"))
    create.player_setup.add(type=sc_pb.Participant)
    create.player_setup.add(type=sc_pb.Computer, race=common_pb2.Terran, difficulty=sc_pb.Easy)
    assert not _call(session, create_game=create).error
    join = sc_pb.RequestJoinGame(race=common_pb2.Terran, options=sc_pb.InterfaceOptions(raw=True))
    assert not _call(session, join_game=join).error
    return session


def _debug(session, *commands):
    return _call(session, debug=sc_pb.RequestDebug(debug=list(commands)))


def test_create_kill_and_set_life():
    session = _game()
    create = debug_pb2.DebugCreateUnit(
        unit_type=units.Terran.Marine, owner=1, pos=common_pb2.Point2D(x=32, y=32), quantity=3
    )
    assert not _debug(session, debug_pb2.DebugCommand(create_unit=create)).error
    marines = [u for u in session.world.units.values() if u.type.type_id == units.Terran.Marine]
    assert len(marines) == 3 and all(u.owner == 1 for u in marines)
    kill = debug_pb2.DebugCommand(kill_unit=debug_pb2.DebugKillUnit(tag=[marines[0].tag]))
    life = debug_pb2.DebugCommand(
        unit_value=debug_pb2.DebugSetUnitValue(
            unit_value=debug_pb2.DebugSetUnitValue.Life, value=5, unit_tag=marines[1].tag
        )
    )
    assert not _debug(session, kill, life).error
    assert marines[0].tag not in session.world.units
    assert session.world.units[marines[1].tag].health == 5


def test_an_unemulated_unit_type_names_the_ones_there_are():
    session = _game()
    create = debug_pb2.DebugCreateUnit(
        unit_type=units.Protoss.Zealot, owner=1, pos=common_pb2.Point2D(x=32, y=32)
    )
    response = _debug(session, debug_pb2.DebugCommand(create_unit=create))
    assert (
        "is not emulated; the emulator has" in response.error[0] and "Marine" in response.error[0]
    )


def test_surrender_ends_the_game_as_a_defeat():
    session = _game()
    end = debug_pb2.DebugEndGame(end_result=debug_pb2.DebugEndGame.Surrender)
    _debug(session, debug_pb2.DebugCommand(end_game=end))
    observation = _call(session, observation=sc_pb.RequestObservation()).observation
    assert [(r.player_id, r.result) for r in observation.player_result] == [
        (1, sc_pb.Defeat),
        (2, sc_pb.Victory),
    ]
