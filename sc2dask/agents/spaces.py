"""What the agent sees and what it can do: compact observations and reduced action sets.

``ObservationEncoder`` turns a pysc2 ``TimeStep.observation`` into a few small numpy
arrays (the keys of ``Trajectory.observations``); ``ActionSet`` names the pysc2
functions (or the macros) a policy may choose and turns sampled head indices into
``FunctionCall``s (or ``MacroCall``s).
Neither imports TensorFlow, so env hosts can encode and decode without it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ConfigError
from ..game import macro_state, macros
from ..game.pysc2lib import actions, features, point
from ..game.scripted_agents import TerranMacro

# Reduced function sets, by pysc2 function name. A small set leaves the policy fewer
# useless calls to try before it finds the ones a map rewards; "minigames"
# follows Reaver's mini-game set (plus the economy functions the two build maps need).
ACTION_SETS: dict[str, tuple[str, ...] | None] = {
    "move": ("no_op", "select_army", "Move_screen"),
    # Two marines apart (CollectMineralShards): select one marine by clicking it, or
    # the army, and move; the marines can split the field between them.
    "split": ("no_op", "select_army", "select_point", "Move_screen"),
    "minigames": (
        "no_op",
        "move_camera",
        "select_point",
        "select_rect",
        "select_control_group",
        "select_unit",
        "select_army",
        "select_idle_worker",
        "Attack_screen",
        "Attack_minimap",
        "Move_screen",
        "Move_minimap",
        "Patrol_screen",
        "Patrol_minimap",
        "HoldPosition_quick",
        "Stop_quick",
        "Smart_screen",
        "Smart_minimap",
        "Harvest_Gather_screen",
        "Harvest_Return_quick",
        "Build_SupplyDepot_screen",
        "Build_Barracks_screen",
        "Build_Refinery_screen",
        "Train_SCV_quick",
        "Train_Marine_quick",
        "Rally_Workers_screen",
    ),
    # One army fighting as one (DefeatRoaches, DefeatZerglingsAndBanelings): select it
    # all, attack a unit or a place; nothing to split, queue or walk away with.
    "attack": ("no_op", "select_army", "Attack_screen"),
    # Combat on one screen with micro: select all, a few or one marine, and attack or
    # move them; splitting the army is the whole game.
    "combat": (
        "no_op",
        "select_army",
        "select_point",
        "select_rect",
        "Attack_screen",
        "Move_screen",
    ),
    # Combat beyond the screen (FindAndDefeatZerglings): attack-move on the minimap and
    # move the camera to see what the fog hides.
    "explore": (
        "no_op",
        "select_army",
        "move_camera",
        "Attack_screen",
        "Attack_minimap",
        "Move_screen",
        "Move_minimap",
    ),
    # The army sweeping the map (FindAndDefeatZerglings): attack-move to a place on the
    # minimap, or wait; no camera to steer: the one place to choose is where the army goes.
    "sweep": ("no_op", "select_army", "Attack_minimap"),
    # An economy (CollectMineralsAndGas, BuildMarines): select workers and buildings,
    # mine, build and train.
    "economy": (
        "no_op",
        "select_point",
        "select_rect",
        "select_idle_worker",
        "Harvest_Gather_screen",
        "Harvest_Return_quick",
        "Build_SupplyDepot_screen",
        "Build_Barracks_screen",
        "Build_Refinery_screen",
        "Build_CommandCenter_screen",
        "Train_SCV_quick",
        "Train_Marine_quick",
        "Rally_Workers_screen",
    ),
    "all": None,  # every pysc2 function
}
# A melee game (Simple64): the economy, and an army to attack with anywhere on the map.
ACTION_SETS["melee"] = (
    *(ACTION_SETS["economy"] or ()),
    "select_army",
    "move_camera",
    "Attack_screen",
    "Attack_minimap",
)

# Sets of macro actions (sc2dask/game/macros.py), not pysc2 functions: each choice is a
# whole intention (build barracks, train a marine, attack) that the env turns into a raw
# action. A melee game's economy and army in a few choices; no arguments to choose.
MACRO_SETS = {"macro": macros.MACROS}
ACTION_SETS.update(MACRO_SETS)

# Arguments a set does not let the policy choose: calls get option 0 (queued: act now,
# not after the current orders; select_add: replace the selection). A random policy
# that queues half its moves sends its marines along long chains of old targets, which
# hides which click earned the reward.
FIXED_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "move": ("queued", "select_add"),
    "split": ("queued", "select_add", "select_point_act"),
    "sweep": ("queued", "select_add"),
    "attack": ("queued", "select_add"),
}

SPATIAL_ARGS = {"screen": "screen", "screen2": "screen", "minimap": "minimap"}


@dataclasses.dataclass(frozen=True)
class LayerSpec:
    """One feature layer as the model must read it: a category id, or a scalar in [0, scale)."""

    name: str
    categorical: bool
    scale: int


@dataclasses.dataclass(frozen=True)
class InputSpec:
    """Shape (without batch) and dtype of one encoded array; ``layers`` for spatial ones."""

    shape: tuple[int, ...]
    dtype: np.dtype
    layers: tuple[LayerSpec, ...] = ()


class ObservationEncoder:
    """Encodes pysc2 observations as the dict stored in ``Trajectory.observations``.

    Keys: "screen" [C,H,W] and "minimap" [C,h,w] (raw layer values as small ints: the
    model one-hots or embeds categories and scales scalars; no "minimap" when the config
    names no minimap layers), "player" float32 [11] (log1p of the counts), "available"
    bool [n_functions] (which functions of the action set the game allows now), and for
    a set of macros "macro" float32 [len(macro_state.NAMES)] (``game/macro_state.py``)
    and, where the agent is kickstarted, "teacher" int32 [] (the scripted TerranMacro's
    choice, an index of the set, for the learner's cross-entropy: not a network input).
    A set of macros may name no feature layers at all: then there is no "screen" nor
    "minimap", and the env renders none (``reads_feature_layers``).
    """

    def __init__(self, obs_spec: Mapping[str, tuple], config):
        self.feature_layers = reads_feature_layers(config)
        needed = ("feature_screen", "feature_minimap") if self.feature_layers else ()
        for key in (*needed, "player"):
            if key not in obs_spec:
                raise ConfigError(
                    f"The observation spec has no {key!r}; create the env with feature "
                    f"layers (features.AgentInterfaceFormat(feature_dimensions=...))."
                )
        sizes = [_size(obs_spec[k]) for k in needed] or [(0, 0), (0, 0)]
        self.action_set = ActionSet.create(config.action_set, *sizes)
        self.screen_layers = _layer_specs(features.SCREEN_FEATURES, config.screen_layers)
        self.minimap_layers = _layer_specs(features.MINIMAP_FEATURES, config.minimap_layers)
        self._check(obs_spec, config)
        self._screen_index = [
            features.SCREEN_FEATURES._fields.index(layer.name) for layer in self.screen_layers
        ]
        self._minimap_index = [
            features.MINIMAP_FEATURES._fields.index(layer.name) for layer in self.minimap_layers
        ]
        (w, h), (mw, mh) = self.action_set.screen_size, self.action_set.minimap_size
        self._spec = {
            "player": InputSpec(tuple(obs_spec["player"]), np.dtype(np.float32)),
            "available": InputSpec((len(self.action_set.function_ids),), np.dtype(bool)),
        }
        if self.feature_layers:
            self._spec["screen"] = InputSpec(
                (len(self.screen_layers), h, w), _int_dtype(self.screen_layers), self.screen_layers
            )
        if self.action_set.macros:
            self._spec["macro"] = InputSpec((len(macro_state.NAMES),), np.dtype(np.float32))
            if getattr(config, "kickstart", 0) > 0:  # an agent's own Config may have none
                self._spec["teacher"] = InputSpec((), np.dtype(np.int32))
        if self.minimap_layers:  # without layers the model has no minimap tower at all
            self._spec["minimap"] = InputSpec(
                (len(self.minimap_layers), mh, mw),
                _int_dtype(self.minimap_layers),
                self.minimap_layers,
            )

    def _check(self, obs_spec: Mapping[str, tuple], config) -> None:
        """ConfigError where the env and the config do not fit each other."""
        for what, got, want in (
            ("screen", self.action_set.screen_size, config.screen),
            ("minimap", self.action_set.minimap_size, config.minimap),
        ):
            if self.feature_layers and want is not None and tuple(got) != _xy(want):
                raise ConfigError(
                    f"The env's feature {what} is {got[0]}x{got[1]} (x by y) but the agent "
                    f"config says {_xy(want)}; create the env from the same config "
                    f"(sc2dask.agents.spaces.agent_interface_format)."
                )
        if not self.screen_layers and self.feature_layers:
            raise ConfigError(
                "screen-layers is empty; the policy needs at least one screen "
                "feature layer (e.g. player_relative), unless it plays a set of macros "
                "with no feature layers at all (minimap-layers empty too)."
            )
        if not self.minimap_layers and "minimap" in self.action_set.heads:
            raise ConfigError(
                f"Action set {config.action_set!r} has minimap arguments, so "
                f"minimap-layers cannot be empty; name at least one layer "
                f"(e.g. player_relative)."
            )
        # A set of macros reads the raw units for its mask; pysc2's functions, the game's.
        mask_from = "raw_units" if uses_macros(config.action_set) else "available_actions"
        if mask_from not in obs_spec:
            raise ConfigError(
                f"The observation spec has no {mask_from!r}, which action set "
                f"{config.action_set!r} needs; create the env from the same config "
                f"(sc2dask.agents.spaces.agent_interface_format, or EnvConfig with "
                f"macro_actions={uses_macros(config.action_set)})."
            )

    def spec(self) -> dict[str, InputSpec]:
        """What ``encode`` returns, key by key: each array's shape (no batch axis), dtype
        and, for "screen" and "minimap", the layers in their order."""
        return dict(self._spec)

    def encode(self, observation) -> dict[str, np.ndarray]:
        """One pysc2 observation (``TimeStep.observation``) as compact arrays."""
        spec = self._spec
        # The mask and the counts read one board: converting the raw units is most of
        # an encoding's cost.
        board = macros.Board.read(observation) if self.action_set.macros else None
        can = board.can() if board is not None else None  # the mask's, and the teacher's
        encoded = {
            "player": np.log1p(np.maximum(np.asarray(observation["player"], np.float32), 0)),
            "available": (
                macros.available(observation, board, can)
                if board is not None
                else self._available(observation["available_actions"])
            ),
        }
        if "screen" in spec:
            encoded["screen"] = np.asarray(observation["feature_screen"])[
                self._screen_index
            ].astype(spec["screen"].dtype)
        if "macro" in spec:
            encoded["macro"] = macro_state.macro_state(observation, board)
        if "teacher" in spec:
            encoded["teacher"] = np.int32(TerranMacro.choice(board, can))
        if "minimap" in spec:
            encoded["minimap"] = np.asarray(observation["feature_minimap"])[
                self._minimap_index
            ].astype(spec["minimap"].dtype)
        return encoded

    def _available(self, function_ids) -> np.ndarray:
        """Which functions of the action set are among pysc2's ``available_actions``: a
        table lookup: 2 us on every env step where ``np.isin`` took 43."""
        allowed = np.zeros(len(actions.FUNCTIONS), bool)
        allowed[np.asarray(function_ids, np.intp)] = True
        return allowed[self.action_set.function_ids]

    def encode_batch(self, observations: Sequence) -> dict[str, np.ndarray]:
        """Several observations (one per env) stacked on a leading batch axis."""
        encoded = [self.encode(o) for o in observations]
        return {k: np.stack([e[k] for e in encoded]) for k in self._spec}


@dataclasses.dataclass(frozen=True, eq=False)
class ActionSet:
    """The functions a policy chooses from, and its argument heads.

    ``heads`` maps each head name ("function", then the pysc2 argument types the set
    uses, e.g. "queued", "screen") to its number of choices. Spatial heads index the
    flattened [H, W] (row-major) layer, so index = y * W + x.
    """

    name: str
    function_ids: np.ndarray  # [n_functions] pysc2 function ids
    heads: dict[str, int]
    uses: np.ndarray  # [n_functions, n_argument_heads] bool: function i takes argument j
    screen_size: tuple[int, int]  # (x, y), as pysc2's action dimensions
    minimap_size: tuple[int, int]
    macros: bool = False  # the choices are macros (MACRO_SETS), indexed 0..n-1

    @classmethod
    def create(
        cls, name: str, screen_size: tuple[int, int], minimap_size: tuple[int, int]
    ) -> ActionSet:
        """The set called ``name`` (the ``action-set`` setting: ``ACTION_SETS`` and the
        macro sets) for an env whose feature screen and minimap are these (x, y) sizes;
        ConfigError naming the choices for an unknown name."""
        if name not in ACTION_SETS:
            raise ConfigError(
                f"Unknown action set {name!r}; choose one of {', '.join(ACTION_SETS)}."
            )
        if name in MACRO_SETS:
            n = len(MACRO_SETS[name])
            return cls(
                name,
                np.arange(n, dtype=np.int32),
                {"function": n},
                np.zeros((n, 0), bool),
                tuple(screen_size),
                tuple(minimap_size),
                macros=True,
            )
        names = ACTION_SETS[name]
        functions = (
            list(actions.FUNCTIONS) if names is None else [actions.FUNCTIONS[n] for n in names]
        )
        used = {a.name for f in functions for a in f.args} - set(FIXED_ARGUMENTS.get(name, ()))
        arg_names = [t.name for t in actions.TYPES if t.name in used]  # pysc2's order
        sizes = {
            "screen": screen_size[0] * screen_size[1],
            "screen2": screen_size[0] * screen_size[1],
            "minimap": minimap_size[0] * minimap_size[1],
        }
        heads = {"function": len(functions)}
        heads.update({a: sizes.get(a) or getattr(actions.TYPES, a).sizes[0] for a in arg_names})
        uses = np.array(
            [[a in {x.name for x in f.args} for a in arg_names] for f in functions], dtype=bool
        ).reshape(len(functions), len(arg_names))
        return cls(
            name,
            np.array([f.id for f in functions], np.int32),
            heads,
            uses,
            tuple(screen_size),
            tuple(minimap_size),
        )

    @property
    def argument_heads(self) -> list[str]:
        """The heads besides "function", in ``uses``' column order."""
        return [h for h in self.heads if h != "function"]

    def function_call(self, heads: Mapping[str, int]) -> actions.FunctionCall | macros.MacroCall:
        """The pysc2 call for one env's sampled head indices (unused heads ignored); for a
        set of macros, the ``MacroCall`` a ``MacroEnv`` plays."""
        if self.macros:
            return macros.MacroCall(int(heads["function"]))
        function = actions.FUNCTIONS[int(self.function_ids[int(heads["function"])])]
        arguments = []
        for arg in function.args:
            if arg.name not in self.heads:  # fixed by the set
                arguments.append([0])
                continue
            index = int(heads[arg.name])
            if arg.name in SPATIAL_ARGS:
                width = (
                    self.screen_size if SPATIAL_ARGS[arg.name] == "screen" else self.minimap_size
                )[0]
                arguments.append([index % width, index // width])
            else:
                arguments.append([index])
        return actions.FunctionCall(function.id, arguments)

    def function_calls(self, batch: Mapping[str, np.ndarray]) -> list[actions.FunctionCall]:
        """One call per env from batched head indices (each array [B])."""
        return [
            self.function_call({k: v[i] for k, v in batch.items()})
            for i in range(len(batch["function"]))
        ]


def agent_interface_format(config) -> features.AgentInterfaceFormat:
    """The pysc2 interface an env must offer this agent: its screen and minimap sizes, and
    the raw units and actions a set of macros plays with."""
    raw = uses_macros(config.action_set)
    return features.AgentInterfaceFormat(
        feature_dimensions=features.Dimensions(
            screen=_xy(config.screen), minimap=_xy(config.minimap)
        )
        if reads_feature_layers(config)
        else None,
        use_raw_units=raw,
        use_raw_actions=raw,
    )


def expected_obs_spec(config) -> dict[str, tuple]:
    """The observation spec pysc2 gives an env made for this agent, without starting a
    game: what the Gymnasium env's spaces and the check of an agent's parts before a
    cluster starts are built from. Raw units need a map size to place the camera; the
    spec does not depend on it, so any size does."""
    interface = features.Features(agent_interface_format(config), map_size=point.Point(64, 64))
    return dict(interface.observation_spec())


def reads_feature_layers(config) -> bool:
    """Whether an agent reads feature layers: all do but a policy over macros that names
    none (it decides on ``macro_state``'s numbers), whose env renders no layers at all."""
    return not uses_macros(config.action_set) or bool(config.screen_layers or config.minimap_layers)


def uses_macros(action_set: str) -> bool:
    """Whether an env for this action set must take macro actions (``EnvConfig``'s
    ``macro_actions``)."""
    return action_set in MACRO_SETS


def _layer_specs(layer_set, names: Sequence[str]) -> tuple[LayerSpec, ...]:
    specs = []
    for name in names:
        if name not in layer_set._fields:
            raise ConfigError(
                f"Unknown feature layer {name!r}; pysc2 has {', '.join(layer_set._fields)}."
            )
        layer = getattr(layer_set, name)
        specs.append(
            LayerSpec(name, layer.type == features.FeatureType.CATEGORICAL, int(layer.scale))
        )
    return tuple(specs)


def _int_dtype(layers: Sequence[LayerSpec]) -> np.dtype:
    """uint8 when every layer fits (all but unit_type), else int16."""
    return np.dtype(np.uint8 if max(layer.scale for layer in layers) <= 256 else np.int16)


def _size(layer_shape: tuple[int, int, int]) -> tuple[int, int]:
    """(x, y) of a [C, y, x] feature-layer spec."""
    return int(layer_shape[2]), int(layer_shape[1])


def _xy(size: int | tuple[int, int]) -> tuple[int, int]:
    return (size, size) if isinstance(size, int) else tuple(size)
