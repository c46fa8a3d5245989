"""Making pysc2 environments on whichever game :func:`find_game` picks."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..emulator.maps import EMULATED_MAPS
from ..errors import UnknownMapError
from .attach import attach_env
from .easier_games import EasierGames, levels_below
from .install import GameInstall, find_game
from .macros import MacroEnv
from .players import check_emulated_players, check_players, map_players, pysc2_players
from .pysc2lib import base_env_wrapper, features, protocol, remote_controller, sc2_env
from .scored_env import ScoredEnv


@dataclasses.dataclass(frozen=True)
class EnvConfig:
    """How to make one environment; it travels to workers, so it is plain data."""

    map_name: str = "MoveToBeacon"
    screen: int | tuple[int, int] = 32
    minimap: int | tuple[int, int] = 32
    step_mul: int = 8
    feature_units: bool = False
    raw: bool = False
    race: str = "terran"
    opponent: str | None = None  # bot:RACE:DIFFICULTY on a map for two (game/players.py)
    reward: str = "score"  # score | outcome | both | trade | material | value (game/scored_env.py)
    score_scale: float = 0.001
    macro_actions: bool = False  # the agent sends MacroCalls (game/macros.py): raw actions
    feature_layers: bool = True  # False: raw units alone, no layers rendered (macro agents)
    easier_games: float = 0.0  # share of games against a lower level (game/easier_games.py)
    climb: bool = False  # those levels from the easiest up (game/easier_games.py)

    def make(
        self, seed: int | None = None, endpoint: str | None = None, first: bool = True
    ) -> ScoredEnv:
        """A pysc2 ``SC2Env`` on the game this machine has (real or emulated), or on the
        running game at ``endpoint`` (HOST:PORT; ``first``: see ``attach_env``), paying
        ``reward`` and keeping each episode's score and outcome (``ScoredEnv``); with
        ``macro_actions``, one that takes macro actions (``MacroEnv``)."""
        raw = self.raw or self.macro_actions
        aif = features.AgentInterfaceFormat(
            feature_dimensions=features.Dimensions(screen=self.screen, minimap=self.minimap)
            if self.feature_layers
            else None,
            use_feature_units=self.feature_units,
            use_raw_units=raw,
            use_raw_actions=raw,
        )
        two_players = self.opponent is not None
        env = make_env(
            self.map_name,
            endpoint=endpoint,
            first=first,
            agent_interface_format=aif,
            step_mul=self.step_mul,
            random_seed=seed,
            players=pysc2_players(self.race, self.opponent),
            # A game for two pays its outcome, so that ScoredEnv knows it.
            **({"score_index": -1} if two_players else {}),
        )
        if seed is not None:
            env = NewSeedEachGame(env, seed)
        mix = None
        if two_players and self.easier_games > 0:
            below = levels_below(self.opponent)
            mix = env = EasierGames(
                env, self.opponent, below, self.easier_games, game_seed(seed or 0), self.climb
            )
        if self.macro_actions:
            env = MacroEnv(env)
        return ScoredEnv(env, two_players, self.reward, self.score_scale, mix)

    def check(self, attached: bool = False) -> None:
        """UnknownMapError or ConfigError, before any game starts, where this env cannot
        be made: an unknown map, one the game here cannot play, or players that do not fit."""
        check_players(self.map_name, self.race, self.opponent, self.reward)
        game = check_map(self.map_name, attached)
        if game is not None and game.kind == "emulator":
            check_emulated_players(self.map_name, self.race, self.opponent)


class NewSeedEachGame(base_env_wrapper.BaseEnvWrapper):
    """Each game of an env its own seed, derived from the env's: pysc2 creates every game
    of a map for two with the seed the env was made with, and one seed plays one game, on
    the real game and on the emulator alike, so an env's games would all be the same."""

    def __init__(self, env, seed: int):
        super().__init__(env)
        self._seed, self._games = seed, 0

    def reset(self, *args, **kwargs):
        if self._games:
            # SC2Env reads it as it creates the next game (_create_join); it has no setter
            self._env._random_seed = game_seed(self._seed, self._games)  # noqa: SLF001
        self._games += 1
        return self._env.reset(*args, **kwargs)


def game_seed(*parts: int) -> int:
    """A game seed from any whole numbers (a run's seed, a host's and an env's index, a
    restart count): well mixed, and always inside ``RequestCreateGame.random_seed``, a
    uint32, however large the parts grow over a long run with restarts and resumes."""
    if any(p < 0 for p in parts):
        raise ValueError(f"seed parts must be >= 0, got {parts}")
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1, np.uint32)[0])


def check_map(map_name: str, attached: bool = False) -> GameInstall | None:
    """The game that will play ``map_name``; UnknownMapError if none can.

    ``attached``: the run plays games already running (``--sc2``), which may be the real
    game, so only pysc2's knowing the map is checked, and no local game is looked for.
    """
    map_players(map_name)  # UnknownMapError for a map pysc2 does not know
    if attached:
        return None
    game = find_game()
    if game.kind == "emulator" and map_name not in EMULATED_MAPS:
        raise UnknownMapError(
            f"The sc2dask emulator cannot play {map_name!r}; it plays "
            f"{', '.join(EMULATED_MAPS)}. Install StarCraft II and set SC2PATH for other maps."
        )
    return game


def make_env(
    map_name: str, endpoint: str | None = None, first: bool = True, **sc2env_kwargs
) -> sc2_env.SC2Env:
    """An ``SC2Env`` for ``map_name`` on the game :func:`find_game` picks, or attached to
    the running game at ``endpoint`` (``sc2dask/game/attach.py``).

    Defaults: one Terran agent, 64x64 feature screen and minimap, ``step_mul=8``; any
    ``SC2Env`` keyword overrides them.

    Raises:
      UnknownMapError: pysc2 does not know ``map_name``, or the emulator cannot play it.
      EndpointUnreachableError: the game at ``endpoint`` does not answer (``first``).
    """
    check_map(map_name, attached=endpoint is not None)
    sc2env_kwargs.setdefault("players", [sc2_env.Agent(sc2_env.Race.terran)])
    sc2env_kwargs.setdefault(
        "agent_interface_format",
        features.AgentInterfaceFormat(
            feature_dimensions=features.Dimensions(screen=64, minimap=64)
        ),
    )
    sc2env_kwargs.setdefault("step_mul", 8)
    if endpoint is not None:
        return attach_env(endpoint, first, map_name=map_name, **sc2env_kwargs)
    return sc2_env.SC2Env(map_name=map_name, **sc2env_kwargs)


# What a crashed or vanished game looks like from pysc2's side.
GAME_FAILURES: tuple[type[BaseException], ...] = (
    protocol.ConnectionError,
    protocol.ProtocolError,
    remote_controller.ConnectError,
    ConnectionError,
    OSError,
    TimeoutError,
    EOFError,
)
