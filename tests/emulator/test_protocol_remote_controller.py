"""The protocol as pysc2's ``RemoteController`` drives it: a whole MoveToBeacon episode and
a restart, against a real emulator process."""

import importlib

from s2clientprotocol import common_pb2, raw_pb2
from s2clientprotocol import sc2api_pb2 as sc_pb

from sc2dask.emulator.maps import SCENARIOS
from sc2dask.game.pysc2lib import PACKAGE_NAME, maps, protocol, run_configs
from tests.emulator.checked_client import interface

MARINE, BEACON = 48, 317
MOVE_TO_BEACON_LOOPS = SCENARIOS["MoveToBeacon"].time_limit_loops  # 1920


def test_remote_controller_plays_an_episode_and_restarts(sc2path):
    static_data = importlib.import_module(PACKAGE_NAME + ".lib.static_data")
    run_config = run_configs.get()
    map_inst = maps.get("MoveToBeacon")
    options = interface(screen=(84, 84), minimap=(64, 64), raw=True)
    with run_config.start(want_rgb=False) as controller:
        controller.create_game(
            sc_pb.RequestCreateGame(
                local_map=sc_pb.LocalMap(
                    map_path=map_inst.path, map_data=map_inst.data(run_config)
                ),
                player_setup=[sc_pb.PlayerSetup(type=sc_pb.Participant)],
                random_seed=5,
            )
        )
        assert controller.status == protocol.Status.init_game
        controller.join_game(sc_pb.RequestJoinGame(race=common_pb2.Terran, options=options))
        assert controller.status == protocol.Status.in_game

        info = controller.game_info()
        assert info.options == options
        assert [(p.player_id, p.type, p.race_requested) for p in info.player_info] == [
            (1, sc_pb.Participant, common_pb2.Terran)
        ]
        data = static_data.StaticData(controller.data_raw())
        assert data.units[MARINE] == "Marine"
        assert data.abilities[16].remaps_to_ability_id == 3794  # Move_Move -> Move
        assert {3665, 3674, 3793, 3794, 3795} <= data.general_abilities

        assert controller.observe().observation.game_loop == 0
        controller.step(0)
        assert controller.observe().observation.game_loop == 0
        controller.step(5)
        obs = controller.observe()
        assert obs.observation.game_loop == 5

        # Earn a point (raw move onto the beacon) so that the restart has a score to reset.
        units = {u.unit_type: u for u in obs.observation.raw_data.units}
        beacon = units[BEACON].pos
        controller.act(
            sc_pb.Action(
                action_raw=raw_pb2.ActionRaw(
                    unit_command=raw_pb2.ActionRawUnitCommand(
                        ability_id=16,
                        unit_tags=[units[MARINE].tag],
                        target_world_space_pos=common_pb2.Point2D(x=beacon.x, y=beacon.y),
                    )
                )
            )
        )
        while obs.observation.score.score == 0:
            assert obs.observation.game_loop < 400, "the marine never reached the beacon"
            controller.step(8)
            obs = controller.observe()
        assert obs.observation.score.score == 1 and not obs.player_result

        controller.step(MOVE_TO_BEACON_LOOPS - 1 - obs.observation.game_loop)
        obs = controller.observe()
        assert obs.observation.game_loop == MOVE_TO_BEACON_LOOPS - 1
        assert not obs.player_result and controller.status == protocol.Status.in_game
        controller.step(8)  # past the time limit: the episode ends at the limit
        assert controller.status == protocol.Status.ended
        obs = controller.observe()
        assert obs.observation.game_loop == MOVE_TO_BEACON_LOOPS
        assert [(r.player_id, r.result) for r in obs.player_result] == [(1, sc_pb.Tie)]
        assert controller.status == protocol.Status.ended

        controller.restart()
        assert controller.status == protocol.Status.in_game
        obs = controller.observe()
        assert obs.observation.game_loop == 0
        assert obs.observation.score.score == 0 and not obs.player_result
        controller.step(8)
        assert controller.observe().observation.game_loop == 8
