"""Gymnasium envs on sc2dask's games: ``gymnasium.make("sc2dask/MoveToBeacon-v0")``.

Importing this package registers ``sc2dask/<Map>-v0`` for every map pysc2 knows: the
seven mini-games play on the emulator, any map on the real game (``SC2PATH``). Keywords
of ``gymnasium.make`` go to ``SC2GymEnv`` (``sc2dask/gym/env.py``): screen, minimap,
step_mul, action_set, screen_layers, minimap_layers, and on a map for two race, opponent
(bot:RACE:DIFFICULTY) and reward; ``info["outcome"]`` ends such a game.
"""

try:
    import gymnasium
except ImportError:
    raise ModuleNotFoundError(
        "sc2dask.gym needs Gymnasium; install it with pip install 'sc2dask[gym]'.",
        name="gymnasium",
    ) from None

from ..emulator.maps import SCENARIOS
from ..game.pysc2lib import maps
from .env import SC2GymEnv

NAMESPACE = "sc2dask"


def env_id(map_name: str) -> str:
    """The Gymnasium id of ``map_name``'s env."""
    return f"{NAMESPACE}/{map_name}-v0"


for _map in [*SCENARIOS, *sorted(set(maps.get_maps()) - set(SCENARIOS))]:
    if env_id(_map) not in gymnasium.registry:  # importing again registers nothing twice
        gymnasium.register(env_id(_map), "sc2dask.gym.env:SC2GymEnv", kwargs={"map_name": _map})

__all__ = ["NAMESPACE", "SC2GymEnv", "env_id"]
