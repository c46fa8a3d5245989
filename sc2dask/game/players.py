"""Who plays a game: the agent's race and, on a map for two, the built-in AI it plays.

Settings name them as plain strings (``race``, ``opponent = bot:RACE:DIFFICULTY``,
checked in ``sc2dask/settings.py``); this turns them into pysc2's ``players`` list, and
refuses a map and players that do not fit before any game starts.
"""

from __future__ import annotations

from ..emulator.maps import EMULATED_LEVELS, EMULATED_RACES, SCENARIOS
from ..errors import ConfigError, UnknownMapError
from .pysc2lib import maps, sc2_env


def pysc2_players(race: str, opponent: str | None) -> list:
    """``[Agent(race)]``, plus ``Bot(race, difficulty)`` for an opponent."""
    players = [sc2_env.Agent(sc2_env.Race[race])]
    if opponent is not None:
        _, bot_race, difficulty = opponent.split(":")
        players.append(sc2_env.Bot(sc2_env.Race[bot_race], sc2_env.Difficulty[difficulty]))
    return players


def map_players(map_name: str) -> int:
    """How many players ``map_name`` is made for (pysc2's map definition)."""
    try:
        return int(maps.get(map_name).players or 1)
    except maps.lib.NoMapError:
        raise UnknownMapError(
            f"Unknown map {map_name!r}. pysc2 knows: {', '.join(sorted(maps.get_maps()))}."
        ) from None


def check_players(map_name: str, race: str, opponent: str | None, reward: str) -> None:
    """ConfigError, naming the fix, where the players or the reward do not fit the map."""
    players = map_players(map_name)
    if players >= 2 and opponent is None:
        raise ConfigError(
            f"{map_name} is a map for {players} players: give the agent an opponent, e.g. "
            f"--opponent bot:terran:very_easy."
        )
    if players < 2 and opponent is not None:
        raise ConfigError(
            f"{map_name} has one player: leave out --opponent {opponent}, or choose a map "
            f"for two such as Simple64."
        )
    if opponent is None and reward != "score":
        raise ConfigError(
            f"--reward {reward} pays the game's outcome, and {map_name} has no opponent to "
            f"win or lose against: use --reward score."
        )


def check_emulated_players(map_name: str, race: str, opponent: str | None) -> None:
    """ConfigError for a race the emulator has no rules for, on a map where the players'
    races matter (a mini-game brings its own units, as in the real game), or for a bot
    level it does not play."""
    if map_name in SCENARIOS:
        return
    asked = [race] + ([opponent.split(":")[1]] if opponent else [])
    others = sorted(set(asked) - set(EMULATED_RACES))
    if others:
        raise ConfigError(
            f"The sc2dask emulator plays {', '.join(EMULATED_RACES)} only, not "
            f"{', '.join(others)}: choose --race terran and a terran opponent, or set SC2PATH "
            f"to a StarCraft II install."
        )
    level = opponent.split(":")[2] if opponent else None
    if level is not None and level not in EMULATED_LEVELS:
        raise ConfigError(
            f"The sc2dask emulator has no {level} bot; its bots play "
            f"{', '.join(EMULATED_LEVELS)}: choose one of them, or set SC2PATH to a StarCraft "
            f"II install for the game's own AI."
        )
