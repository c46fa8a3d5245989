"""An empty map for tests that place their own units: no triggers, no waves."""

from sc2dask.emulator.maps.base import Scenario
from sc2dask.emulator.units import Owner
from sc2dask.emulator.world import World


class EmptyField(Scenario):
    """Nothing on it; as big as Simple64's playable area, ``minerals`` in player 1's bank."""

    playable = (2.0, 2.0, 62.0, 62.0)

    def __init__(self, minerals: int = 0):
        self.minerals = minerals

    def setup(self, world) -> None:
        world.players[Owner.AGENT].minerals = self.minerals


def empty_world(seed: int = 0, minerals: int = 0) -> World:
    return World(EmptyField(minerals), seed=seed)
