"""``SC2GymEnv``: one pysc2 ``SC2Env`` behind Gymnasium's API, with spaces a generic library
can use.

The observation is a ``Dict`` of ``Box``es made by the agents' own ``ObservationEncoder``
("screen" and "minimap" [C, H, W] feature layers, "player" float32 [11]). The action is one
``Discrete`` index over the (function, point) choices of an ``ActionSet``: a function with
a screen or minimap argument offers one choice per pixel (index = y * W + x within its
block), any other one choice; the remaining arguments take their first option (act now,
replace the selection). ``info["action_mask"]`` says which indices the game allows now; an
index it does not allow plays ``no_op``, so the episode goes on, as in the agents' own
masked sampling.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from ..agents.spaces import (
    ACTION_SETS,
    SPATIAL_ARGS,
    ObservationEncoder,
    expected_obs_spec,
    reads_feature_layers,
    uses_macros,
)
from ..errors import ConfigError
from ..game import EnvConfig, check_map, game_seed
from ..game.macros import MacroCall
from ..game.pysc2lib import actions
from ..game.scored_env import ScoredEnv
from ..settings import AgentSettings, TrainSettings, load

# The player row is encoded as log1p of the game's int32 counts, so it never exceeds this.
PLAYER_HIGH = float(np.log1p(np.iinfo(np.int32).max))


class SC2GymEnv(gymnasium.Env[dict[str, Any], np.int64]):
    """A pysc2 map as a Gymnasium env, on the game ``sc2dask.game.find_game`` picks: the
    real StarCraft II when ``SC2PATH`` names it, else the emulator (the seven mini-games).

    Keywords left at None come from sc2dask's config with the map's own defaults
    (``sc2dask.agent`` and ``sc2dask.maps.<map>`` in ``sc2dask/sc2dask.yaml``; ``step_mul``
    from ``sc2dask.train``), as for ``sc2dask train``. ``reset(seed=...)`` starts a fresh
    game with that seed, so the same seed and actions replay the same episode; ``reset()``
    restarts the current game. ``timestep`` is the last pysc2 ``TimeStep``, for what the
    spaces leave out.

    Raises:
      UnknownMapError: pysc2 does not know ``map_name``, or the emulator cannot play it.
      ConfigError: a size out of range, an unknown action set or feature layer.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        map_name: str,
        screen: int | None = None,
        minimap: int | None = None,
        step_mul: int | None = None,
        action_set: str | None = None,
        screen_layers: Sequence[str] | None = None,
        minimap_layers: Sequence[str] | None = None,
        race: str | None = None,
        opponent: str | None = None,
        reward: str | None = None,
    ):
        check_map(map_name)
        agent = load(
            AgentSettings,
            {
                "screen": screen,
                "minimap": minimap,
                "action_set": action_set,
                "screen_layers": screen_layers,
                "minimap_layers": minimap_layers,
            },
            map_name=map_name,
        ).values
        given = {"step_mul": step_mul, "race": race, "opponent": opponent, "reward": reward}
        self.env_config = _env_config(
            map_name, agent, load(TrainSettings, given, map_name=map_name).values
        )
        # The spec pysc2 will give, without starting a game: the spaces exist before reset.
        self.encoder = ObservationEncoder(expected_obs_spec(agent), agent)
        self.action_set = self.encoder.action_set
        self.observation_space = _observation_space(self.encoder)
        self._boxes = dict(self.observation_space.spaces)  # in its order
        self._point_arg = [
            None if self.action_set.macros else _point_argument(i)
            for i in self.action_set.function_ids
        ]
        pixels = {
            "screen": int(np.prod(self.action_set.screen_size)),
            "minimap": int(np.prod(self.action_set.minimap_size)),
        }
        self._choices = np.array(
            [pixels[SPATIAL_ARGS[arg]] if arg else 1 for arg in self._point_arg], np.int64
        )
        self._first = np.concatenate([[0], np.cumsum(self._choices)])  # each block's start
        self.action_space = gymnasium.spaces.Discrete(int(self._first[-1]))

        self._no_op = self.action_index("no_op")
        self._env: ScoredEnv | None = None
        self._mask = np.zeros(self.action_space.n, bool)
        self.timestep: Any = None  # a pysc2 TimeStep

    # --- Gymnasium's API ----------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """The first observation of an episode. ``seed`` starts a fresh game with it (the
        game's own random seed, mixed by ``game_seed``); without, the game restarts."""
        super().reset(seed=seed)
        env = self._env
        if env is None or seed is not None:
            self.close()
            env = self._env = self.env_config.make(seed=None if seed is None else game_seed(seed))
        self.timestep = env.reset()[0]
        return self._observe()

    def step(self, action):
        """Play ``action`` (a ``no_op`` where ``info["action_mask"]`` is False) for
        ``step_mul`` game loops. ``terminated``: the game ended (a mini-game's timer
        included); ``truncated``: pysc2's own episode length ran out first."""
        if self._env is None or self.timestep.last():
            raise gymnasium.error.ResetNeeded(
                "Call reset() before step(), and after an episode ends."
            )
        index = int(action)
        if not 0 <= index < self.action_space.n:
            raise gymnasium.error.InvalidAction(
                f"Action {action!r} is outside Discrete({self.action_space.n})."
            )
        call = self.function_call(index if self._mask[index] else self._no_op)
        self.timestep = self._env.step([call])[0]
        terminated = self.timestep.last() and self.timestep.discount == 0
        truncated = self.timestep.last() and not terminated
        observation, info = self._observe()
        if self.timestep.last() and self._env.outcome is not None:
            info["outcome"] = self._env.outcome  # +1 win, 0 tie, -1 loss (a game for two)
        return observation, float(self.timestep.reward), bool(terminated), bool(truncated), info

    def close(self):
        if self._env is not None:
            self._env.close()
            self._env = None
        self.timestep = None

    # --- the flattened action ------------------------------------------------------------

    def action_index(self, function: str, point: tuple[int, int] | None = None) -> int:
        """The action that calls pysc2 function ``function`` (by name; a macro's name for
        a set of macros), at ``point`` (x, y) for one with a screen or minimap argument:
        the inverse of ``function_call``."""
        ids = [int(i) for i in self.action_set.function_ids]
        names = (
            list(ACTION_SETS[self.action_set.name] or ())
            if self.action_set.macros
            else [actions.FUNCTIONS[i].name for i in ids]
        )
        if function not in names:
            raise ConfigError(
                f"{function!r} is not in action set {self.action_set.name!r}; name one of its "
                f"functions ({', '.join(names[:4])}, ...) or choose another set "
                f"(action_set=...)."
            )
        block = names.index(function)
        arg = self._point_arg[block]
        if (arg is None) != (point is None):
            raise ConfigError(
                f"{function} takes {'a point (x, y)' if arg else 'no point'}; "
                f"{'give' if arg else 'leave out'} point=."
            )
        if arg is None or point is None:
            return int(self._first[block])
        width, height = getattr(self.action_set, f"{SPATIAL_ARGS[arg]}_size")
        x, y = (int(v) for v in point)
        if not (0 <= x < width and 0 <= y < height):
            raise ConfigError(f"Point {point} is outside the {width}x{height} {SPATIAL_ARGS[arg]}.")
        return int(self._first[block]) + y * width + x

    def function_call(self, index: int) -> actions.FunctionCall | MacroCall:
        """The pysc2 call (or macro) that action ``index`` stands for (whether or not it is available):
        the point fills every spatial argument (``select_rect``'s two corners alike)."""
        function = int(np.searchsorted(self._first, index, side="right")) - 1
        heads = dict.fromkeys(self.action_set.heads, 0)
        heads["function"] = function
        if self._point_arg[function]:
            point = index - int(self._first[function])
            heads.update({arg: point for arg in SPATIAL_ARGS if arg in heads})
        return self.action_set.function_call(heads)

    def _observe(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        encoded = self.encoder.encode(self.timestep.observation)
        observation = {}
        for key, space in self._boxes.items():
            # Scalar layers saturate at their scale's top, where pysc2 puts their range.
            observation[key] = np.minimum(encoded[key], space.high, dtype=space.dtype)
        self._mask = np.repeat(encoded["available"], self._choices)
        return observation, {"action_mask": self._mask.copy()}


def _point_argument(function_id: int) -> str | None:
    """The spatial argument (screen, minimap, screen2) a pysc2 function takes first, if any."""
    names = [arg.name for arg in actions.FUNCTIONS[int(function_id)].args]
    return next((name for name in names if name in SPATIAL_ARGS), None)


def _env_config(map_name: str, agent, train) -> EnvConfig:
    """The env the settings describe, checked before any game starts."""
    config = EnvConfig(
        map_name,
        agent.screen,
        agent.minimap,
        train.step_mul,
        race=train.race,
        opponent=train.opponent,
        reward=train.reward,
        score_scale=train.score_scale,
        macro_actions=uses_macros(agent.action_set),
        feature_layers=reads_feature_layers(agent),
    )
    config.check()
    return config


def _observation_space(encoder: ObservationEncoder) -> gymnasium.spaces.Dict:
    """A ``Box`` per encoded array, bounded as the encoder bounds it."""
    spec = encoder.spec()
    boxes: dict[str, gymnasium.spaces.Box] = {}
    for key in ("screen", "minimap"):
        if key in spec:
            highs = np.array([layer.scale - 1 for layer in spec[key].layers])
            high = np.broadcast_to(highs[:, None, None], spec[key].shape)
            boxes[key] = gymnasium.spaces.Box(0, high, dtype=spec[key].dtype)
    boxes["player"] = gymnasium.spaces.Box(0.0, PLAYER_HIGH, spec["player"].shape, np.float32)
    if "macro" in spec:  # log1p of counts as PLAYER_HIGH bounds them, minutes / 30
        boxes["macro"] = gymnasium.spaces.Box(0.0, PLAYER_HIGH, spec["macro"].shape, np.float32)
    return gymnasium.spaces.Dict(dict(boxes))
