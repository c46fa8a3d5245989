"""sc2dask's settings: one typed definition per section, with the values in ``sc2dask.yaml``.

Each field of ``TrainSettings``, ``AgentSettings`` and ``EvaluateSettings`` is a key of
its section of ``sc2dask.yaml`` (snake_case here, kebab-case there; dask.config treats
the two alike), and the YAML, registered with ``dask.config``, holds the defaults. Users
change them the dask ways (YAML in ``~/.config/dask``, ``DASK_SC2DASK__TRAIN__MODE=sync``,
``dask.config.set``), with ``--config FILE.yaml``, or with keyword arguments and flags
(generated from these fields by ``sc2dask/cli/flags.py``). Precedence, highest first:
keyword or flag; ``--config`` file (applied with ``dask.config.set`` when the command
starts); dask.config (``dask.config.set``, then environment variables, then YAML files);
the map's own default (``sc2dask.maps.<map>.<section>``); the section's default. A value
left at None means "from config". (A value set in a dask YAML file or with
``dask.config.set`` that equals the section's default cannot be told from it, so the
map's default wins there.)

``load`` checks every value against its field's type and ``Rule`` and says where a bad
one came from, so ``DASK_SC2DASK__AGENT__LEARNING_RATE=abc`` fails at once, naming itself.
"""

from __future__ import annotations

import dataclasses
import difflib
import numbers
import os
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

import dask.config
import yaml

from .errors import ConfigError

DEFAULTS_FILE = Path(__file__).with_name("sc2dask.yaml")
DEFAULTS = yaml.safe_load(DEFAULTS_FILE.read_text())
dask.config.update_defaults(DEFAULTS)
DEFAULT_ORIGIN = "default (sc2dask/sc2dask.yaml)"
MAP_DEFAULT_ORIGIN = "default for {map} (sc2dask.maps)"
MAP_DEFAULTS = "maps"  # sc2dask.maps.<map>.<section>.<key>: one map's defaults

Mode = Literal["central", "sync", "async"]
Precision = Literal["float32", "mixed_float16", "mixed_bfloat16"]
Compression = Literal["none", "fp16", "int8", "topk"]
LrScaling = Literal["none", "sqrt", "linear"]
AsyncDamping = Literal["excess", "staleness"]
Race = Literal["terran", "zerg", "protoss", "random"]
Reward = Literal["score", "outcome", "both", "trade", "material", "value"]
OffPolicy = Literal["clip", "vtrace"]
# The built-in AI's levels, by pysc2's names (sc2_env.Difficulty), easiest first.
DIFFICULTIES = (
    "very_easy",
    "easy",
    "medium",
    "medium_hard",
    "hard",
    "harder",
    "very_hard",
    "cheat_vision",
    "cheat_money",
    "cheat_insane",
)


@dataclasses.dataclass(frozen=True)
class Rule:
    """What a setting means and which values it takes (bounds are inclusive unless ``above``)."""

    help: str
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None  # exclusive lower bound
    parse: typing.Callable[[Any], Any] | None = None  # checks and normalises (ConfigError)
    metavar: str | None = None  # the flag's placeholder, where the type's says too little

    def describe(self) -> str:
        parts = []
        if self.above is not None:
            parts.append(f"> {self.above:g}")
        if self.minimum is not None:
            parts.append(f">= {self.minimum:g}")
        if self.maximum is not None:
            parts.append(f"<= {self.maximum:g}")
        return " and ".join(parts)

    def admits(self, value) -> bool:
        return (
            (self.above is None or value > self.above)
            and (self.minimum is None or value >= self.minimum)
            and (self.maximum is None or value <= self.maximum)
        )


def parse_endpoint(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) -> (host, port); ConfigError if malformed."""
    host, sep, port = str(text).strip().rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(
            f"{text!r} is not a game address: give HOST:PORT, e.g. 127.0.0.1:5000 for a game "
            f"started with `StarCraft II -listen 127.0.0.1 -port 5000` or `sc2dask emulator "
            f"serve --port 5000`; several are comma-separated."
        )
    return host, int(port)


def parse_endpoints(texts) -> tuple[str, ...]:
    """Checked, normalised ``HOST:PORT`` strings; ConfigError for a malformed or repeated
    one (two envs cannot share a game)."""
    endpoints = []
    for text in texts:
        host, port = parse_endpoint(text)
        endpoint = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if endpoint in endpoints:
            raise ConfigError(
                f"the game {endpoint} is listed twice; each env needs a game of "
                f"its own, so list each address once."
            )
        endpoints.append(endpoint)
    return tuple(endpoints)


def parse_conv_filters(filters: tuple[int, ...]) -> tuple[int, ...]:
    """Two positive filter counts, one per conv of the tower (``conv_kernels``)."""
    if len(filters) != 2 or min(filters) < 1:
        raise ConfigError(
            f"give two filter counts of at least 1, one per conv of the "
            f"tower, e.g. 16,32; not {','.join(map(str, filters))}"
        )
    return filters


def parse_conv_kernels(kernels: tuple[int, ...]) -> tuple[int, ...]:
    """Two odd kernel sizes, one per conv of the tower: odd, so a "same" conv stays
    centred on its cell and the spatial policy's logits line up with the screen."""
    if len(kernels) != 2 or min(kernels) < 1 or any(k % 2 == 0 for k in kernels):
        raise ConfigError(
            f"give two odd kernel sizes, one per conv of the tower, e.g. "
            f"5,3 (FullyConv's) or 3,3; not {','.join(map(str, kernels))}"
        )
    return kernels


def parse_spatial_dilations(rates: tuple[int, ...]) -> tuple[int, ...]:
    """Dilation rates of at least 1, one per 3x3 conv before the spatial logits."""
    if any(rate < 1 for rate in rates):
        raise ConfigError(
            f"give dilation rates of at least 1, one per conv, e.g. 2,4,8, or none "
            f"for FullyConv's own view; not {','.join(map(str, rates))}"
        )
    return rates


def parse_opponent(text: str | None) -> str | None:
    """``bot:RACE:DIFFICULTY`` (checked, lower-cased), or None for no opponent."""
    if text is None or str(text).strip().lower() in ("", "none", "null"):
        return None
    parts = str(text).strip().lower().split(":")
    races = typing.get_args(Race)
    if (
        len(parts) != 3
        or parts[0] != "bot"
        or parts[1] not in races
        or parts[2] not in DIFFICULTIES
    ):
        raise ConfigError(
            f"{text!r} is not an opponent: give bot:RACE:DIFFICULTY, e.g. bot:terran:very_easy; "
            f"RACE is one of {', '.join(races)}, DIFFICULTY one of {', '.join(DIFFICULTIES)}."
        )
    return ":".join(parts)


def rule(help: str, **limits: Any) -> Any:
    """``Rule(help, **limits)``, typed ``Any``: in a section's class body it stands in for
    the field's default, which ``_section`` reads from ``sc2dask.yaml``."""
    return Rule(help, **limits)


class _Section:
    """A settings section; ``_section`` sets its name (its key under ``sc2dask:``)."""

    section: ClassVar[str]


_S = typing.TypeVar("_S", bound=_Section)


@typing.dataclass_transform(frozen_default=True)
def _section(name: str) -> Callable[[type[_S]], type[_S]]:
    """Make a frozen dataclass of settings section ``name``: each ``field: type = rule(...)``
    gets its default from ``sc2dask.yaml`` and keeps its rule in the field's metadata."""

    def decorate(cls):
        yaml_section = DEFAULTS["sc2dask"][name]
        for field_name in cls.__annotations__:
            rule = getattr(cls, field_name)
            key = field_name.replace("_", "-")
            if key not in yaml_section:
                raise KeyError(f"sc2dask.yaml has no sc2dask.{name}.{key}")
            default = yaml_section[key]
            setattr(
                cls,
                field_name,
                dataclasses.field(
                    default=tuple(default) if isinstance(default, list) else default,
                    metadata={"rule": rule},
                ),
            )
        cls.section = name
        return dataclasses.dataclass(frozen=True)(cls)

    return decorate


RACE = rule("the agent's race (on a map whose units it does not bring, such as a melee map)")
OPPONENT = rule(
    "the other player of a map for two: bot:RACE:DIFFICULTY, a built-in AI, e.g. "
    "bot:terran:very_easy; unset on the one-player mini-games",
    parse=parse_opponent,
    metavar="bot:RACE:DIFFICULTY",
)

RUNNING_GAMES = rule(
    "games already running to play on (HOST:PORT each, e.g. `StarCraft II "
    "-listen HOST -port PORT` or `sc2dask emulator serve`), one env each, on "
    "the workers nearest them; empty: every env launches its own game",
    parse=parse_endpoints,
    metavar="HOST:PORT,...",
)


@_section("train")
class TrainSettings(_Section):
    """How a training run uses the cluster."""

    map: str = rule("the map to train on: a mini-game, or a melee map with an opponent")
    envs: int | None = rule("environments in all; leave unset for all SC2 capacity", minimum=1)
    envs_max: int | None = rule(
        "elastic: grow to this many envs as workers with SC2 "
        "capacity join, and carry on without the hosts of workers "
        "that leave for good; unset: a fixed number of envs",
        minimum=1,
    )
    max_steps: int = rule("agent steps to train for, summed over all envs", minimum=1)
    max_minutes: float | None = rule(
        "wall-clock minutes to train for, from the run's start; the run then ends as at "
        "max-steps, with its summary and checkpoint; unset: no limit",
        above=0,
    )
    mode: Mode = rule(
        "central: the client computes gradients; sync: hosts do, averaged "
        "per update; async: hosts do, applied as they arrive"
    )
    rollout_steps: int = rule("steps each env plays per rollout", minimum=1)
    step_mul: int = rule("game loops per agent step", minimum=1)
    env_groups: int = rule(
        "a host's envs split into this many groups that take turns: one "
        "group's forward pass while the others' games step (2: double "
        "buffering)",
        minimum=1,
    )
    overlap: bool = rule(
        "central: a host plays its next rollout while the client learns "
        "from its last (on weights one update older)"
    )
    sync_gradients: int | None = rule(
        "sync: gradients averaged per update (at most the "
        "number of env hosts); unset: one per host",
        minimum=1,
    )
    compression: Compression = rule(
        "how weights travel to hosts (as deltas from what a "
        "host holds) and, in sync and async, gradients back "
        "(fp16, int8: 2x, 4x fewer bytes; topk: the "
        "topk-fraction largest, with error feedback)"
    )
    topk_fraction: float = rule(
        "topk: the fraction of gradient (and weight delta) entries sent", above=0, maximum=1
    )
    layered_sync: int = rule(
        "send hosts the policy and value heads with every update and "
        "the other layers every k updates (1: everything, every update)",
        minimum=1,
    )
    sync_lr_scaling: LrScaling = rule(
        "sync: scale each update's learning rate with the "
        "number K of gradients it averages (a K times larger "
        "batch): none, sqrt (by sqrt(K)) or linear (by K)"
    )
    async_lr_damping: AsyncDamping = rule(
        "async: divide a gradient's learning rate by 1 + the staleness beyond the H - 1 "
        "versions that H hosts make anyway (excess), or by 1 + its staleness (staleness)"
    )
    async_combine: LrScaling = rule(
        "async: apply the gradients that arrive together (while the client is busy with "
        "the last) one by one (none), or as one step of their average with the learning "
        "rate times sqrt(K) or K for K of them: one optimizer step for many hosts' gradients"
    )
    max_staleness: int = rule(
        "async, and sync stragglers: drop gradients more than this "
        "many versions old (async with excess damping: beyond the "
        "H - 1 that H hosts make)",
        minimum=0,
    )
    race: Race = RACE
    opponent: str | None = OPPONENT
    easier_games: float = rule(
        "share of games played against a bot level below the opponent's, drawn per game, "
        "to learn from wins the opponent does not yet allow; the run's scores and win rate "
        "count the opponent's games only (at most 0.9: the opponent must be played)",
        minimum=0,
        maximum=0.9,
    )
    climb: bool = rule(
        "easier games climb: each env plays the lowest level below the opponent's that it "
        "has not yet won 8 of its last 10 games against, from VeryEasy up, instead of a level "
        "drawn per game; every game is against the opponent once all are passed"
    )
    reward: Reward = rule(
        "what the agent is paid: score (the change of the map's score: a mini-game's, or "
        "the Blizzard score on a melee map), outcome (+1 win, 0 tie, -1 loss, at the end; "
        "needs an opponent), both (outcome + score-scale x score) or trade (outcome + "
        "score-scale x (value destroyed - value lost); needs an opponent), material (outcome "
        "+ score-scale x (the Melee score + the value destroyed); needs an opponent) or value "
        "(outcome + score-scale x (the value made + the value destroyed); needs an opponent)"
    )
    score_scale: float = rule(
        "reward both, trade, material and value: the weight of one point of score (of value: a marine is 50)",
        above=0,
    )
    checkpoint_dir: str | None = rule("folder for checkpoints and TensorBoard files")
    checkpoint_every: int = rule("updates between checkpoints (0: only at the end)", minimum=0)
    seed: int = rule("seed of the weights, the games and the action sampling", minimum=0)
    call_timeout: float = rule("seconds before an env host counts as lost", above=0)
    sc2: tuple[str, ...] = RUNNING_GAMES


@_section("agent")
class AgentSettings(_Section):
    """What the agent sees and does, and how it learns (the A2C hyperparameters)."""

    agent_class: str = rule(
        "the agent to train: module:Class following sc2dask.core.Agent", metavar="MODULE:CLASS"
    )
    action_set: str = rule("the functions the agent may call (sc2dask/agents/spaces.py)")
    screen_layers: tuple[str, ...] = rule("pysc2 feature screen layers the network reads")
    minimap_layers: tuple[str, ...] = rule(
        "pysc2 feature minimap layers the network reads (none: no minimap tower)"
    )
    screen: int = rule("feature screen size, pixels a side", minimum=1, maximum=1024)
    minimap: int = rule("feature minimap size, pixels a side", minimum=1, maximum=1024)
    learning_rate: float = rule("Adam's step size", above=0)
    entropy_coef: float = rule("weight of the entropy bonus", minimum=0)
    value_coef: float = rule("weight of the value loss", minimum=0)
    gamma: float = rule("discount per agent step", above=0, maximum=1)
    gae_lambda: float = rule("GAE's lambda (1: plain n-step returns)", minimum=0, maximum=1)
    normalize_advantages: bool = rule("scale each batch's advantages to mean 0, std 1")
    reward_scale: float = rule(
        "multiplies every reward before the returns (the scores shown are unscaled)", above=0
    )
    clip_ratio: float = rule("PPO's clip on pi/pi_behaviour", above=0)
    off_policy: OffPolicy = rule(
        "data from older weights: clip (PPO's clip on the policy term) | vtrace "
        "(IMPALA's truncated importance weights on the returns and the policy term)"
    )
    epochs: int = rule(
        "passes over each batch; > 1 is PPO-style reuse (central mode only)", minimum=1
    )
    minibatches: int = rule("minibatches per epoch, split by trajectory", minimum=1)
    kickstart: float = rule(
        "a set of macros: weight of the cross-entropy from the scripted TerranMacro's choice "
        "to the policy's, on the policy's own games (kickstarting, Schmitt et al. 2018); 0: none",
        minimum=0,
    )
    kickstart_updates: int = rule(
        "updates over which kickstart's weight falls linearly to 0 (0: it never falls)",
        minimum=0,
    )
    jit_compile: bool = rule(
        "XLA-compile the gradient's graph (the learner's; compiled again for each new batch shape)"
    )
    precision: Precision = rule(
        "Keras dtype policy of the network's body (heads and "
        "value stay float32; mixed_float16 scales the loss)"
    )
    conv_filters: tuple[int, ...] = rule(
        "filters of FullyConv's two convs at full resolution",
        parse=parse_conv_filters,
        metavar="N,N",
    )
    conv_kernels: tuple[int, ...] = rule(
        "kernel sizes of those two convs (odd)", parse=parse_conv_kernels, metavar="N,N"
    )
    dense_grid: int = rule(
        "strided convs shrink the state to at most this many cells a "
        "side before the dense layer (fewer: fewer weights to send)",
        minimum=1,
    )
    spatial_dilations: tuple[int, ...] = rule(
        "dilation rates of 3x3 convs between the state and the spatial "
        "logits, so that a click's logit sees further than the tower's "
        "7x7 cells (e.g. 2,4,8); empty: FullyConv's",
        parse=parse_spatial_dilations,
        metavar="N,...",
    )


@_section("evaluate")
class EvaluateSettings(_Section):
    """How ``evaluate`` plays an agent (a checkpoint brings its own map and sizes)."""

    map: str = rule("the map to play: a mini-game, or a melee map with an opponent")
    episodes: int = rule("episodes to play in all", minimum=1)
    envs: int | None = rule("environments in all; leave unset for all SC2 capacity", minimum=1)
    screen: int = rule("feature screen size, pixels a side", minimum=1, maximum=1024)
    minimap: int = rule("feature minimap size, pixels a side", minimum=1, maximum=1024)
    step_mul: int = rule("game loops per agent step", minimum=1)
    sc2: tuple[str, ...] = RUNNING_GAMES
    race: Race = RACE
    opponent: str | None = OPPONENT
    video: str | None = rule(
        "file (.gif or .mp4) to record one more episode to: the screen and the minimap in "
        "pysc2's colours, with the score",
        metavar="FILE",
    )
    video_layer: str = rule("the feature layer the video draws, on the screen and the minimap")
    seed: int = rule(
        "seed of the games and of the agents' random choices (an agent's seed method); "
        "each episode's own is derived from it",
        minimum=0,
    )


@_section("worker")
class WorkerSettings(_Section):
    """What one worker offers; read where the worker runs (``sc2dask.worker`` preload), so
    each node can set its own, e.g. ``DASK_SC2DASK__WORKER__SC2=127.0.0.1:5000,...``."""

    sc2: tuple[str, ...] = rule(
        "games already running for this worker's envs (HOST:PORT "
        "each, usually its own node's); they are used instead of "
        "launching games",
        parse=parse_endpoints,
        metavar="HOST:PORT,...",
    )


SECTIONS = {
    cls.section: cls for cls in (TrainSettings, AgentSettings, EvaluateSettings, WorkerSettings)
}


@dataclasses.dataclass(frozen=True)
class Loaded:
    """A section's checked settings and, for each field, where its value came from."""

    values: Any
    origins: dict[str, str]


def load(
    cls,
    overrides: Mapping[str, Any] | None = None,
    origin: str = "keyword argument",
    map_name: str | None = None,
) -> Loaded:
    """The checked settings of section ``cls`` from dask.config, with ``overrides`` on top.

    ``overrides`` are field names (snake_case or kebab-case); a None value means "from
    config". With ``map_name``, that map's defaults (``sc2dask.maps.<map>``, in
    sc2dask.yaml) replace the section's defaults; any setting a user gave wins over both. Raises ConfigError naming the setting, its origin and the values it takes.
    """
    name = cls.section
    fields = {f.name: f for f in dataclasses.fields(cls)}
    current = {
        key.replace("-", "_"): value
        for key, value in (dask.config.get(f"sc2dask.{name}", default={}) or {}).items()
    }
    per_map = map_defaults(map_name, name)
    # The keys a user's dask config files set (read once per load, not once per key).
    files = dask.config.collect(paths=dask.config.paths, env={})
    in_files = {k.replace("-", "_") for k in files.get("sc2dask", {}).get(name, {}) or {}}
    for key in current:
        _check_known(name, key, fields)
    given = {}
    for key, value in (overrides or {}).items():
        key = key.replace("-", "_")
        _check_known(name, key, fields)
        if value is not None:
            given[key] = value
    hints = typing.get_type_hints(cls)
    values, origins = {}, {}
    for key, field in fields.items():
        if key in given:
            value, where = given[key], origin
        else:
            value = current.get(key, field.default)
            where = _config_origin(name, key, current, in_files)
            if where == DEFAULT_ORIGIN and key in per_map:
                value, where = per_map[key], MAP_DEFAULT_ORIGIN.format(map=map_name)
        values[key] = _checked(
            f"sc2dask.{name}.{key.replace('_', '-')}",
            value,
            hints[key],
            field.metadata["rule"],
            where,
        )
        origins[key] = where
    return Loaded(cls(**values), origins)


def is_default(origin: str) -> bool:
    """Whether ``origin`` (a ``Loaded.origins`` value) is a default, the package's or a
    map's, rather than a value the user gave."""
    return origin == DEFAULT_ORIGIN or origin.startswith(MAP_DEFAULT_ORIGIN.split("{")[0])


def use_file(path: str | os.PathLike) -> dict:
    """Layer a YAML file of sc2dask settings over the dask config of this process.

    The file has the shape of a dask config file (``sc2dask: {train: {...}, agent: ...}``).
    Returns the config it set; ``load`` reports its values as coming from ``path``.
    """
    try:
        content = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(
            f"Cannot read --config {path} ({exc.strerror}); give a YAML "
            f"file such as sc2dask/sc2dask.yaml."
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"--config {path} is not valid YAML ({exc}).") from None
    if not isinstance(content, dict) or not isinstance(content.get("sc2dask"), dict):
        raise ConfigError(
            f"--config {path} must hold a mapping under 'sc2dask:' (sections "
            f"{', '.join(SECTIONS)}), as sc2dask/sc2dask.yaml does."
        )
    for section, values in content["sc2dask"].items():
        if section not in SECTIONS:
            raise ConfigError(
                f"--config {path}: unknown section sc2dask.{section}; "
                f"sections are {', '.join(SECTIONS)}."
            )
        if not isinstance(values, dict):
            raise ConfigError(f"--config {path}: sc2dask.{section} must be a mapping of settings.")
        _FILES[section].update({k.replace("-", "_"): (v, str(path)) for k, v in values.items()})
    # Leaf by leaf: setting the "sc2dask" mapping whole would drop every key the file lacks.
    dask.config.set(
        {
            f"sc2dask.{section}.{key}": value
            for section, values in content["sc2dask"].items()
            for key, value in values.items()
        }
    )  # process-wide, like a config file
    return content


_FILES: dict[str, dict[str, tuple[Any, str]]] = {section: {} for section in SECTIONS}


def map_defaults(map_name: str | None, section: str) -> dict[str, Any]:
    """Map ``map_name``'s own defaults for ``section`` (snake_case keys); {} if it has none.

    They are dask config too (``sc2dask.maps.<map>.<section>``), so a user can add some.
    """
    if not map_name:
        return {}
    maps = dask.config.get(f"sc2dask.{MAP_DEFAULTS}", default={}) or {}
    values = (maps.get(map_name) or {}).get(section) or {}
    return {k.replace("-", "_"): v for k, v in values.items()}


def _config_origin(section: str, key: str, current: Mapping[str, Any], in_files: set[str]) -> str:
    value = current.get(key)
    if key in _FILES[section] and _FILES[section][key][0] == value:
        return _FILES[section][key][1]
    from_env = dask.config.collect_env().get("sc2dask", {}).get(section, {})
    for name in (key, key.replace("_", "-")):
        if name in from_env and from_env[name] == value:
            return f"environment variable DASK_SC2DASK__{section.upper()}__{key.upper()}"
    default = DEFAULTS["sc2dask"][section].get(key.replace("_", "-"))
    # A user's dask config file may give the package default's value: still the user's,
    # and it must win over a map's own default (dask.config.set of it cannot be told).
    if key in current and (value != default or key in in_files):
        return "dask config (~/.config/dask, $DASK_CONFIG or dask.config.set)"
    return DEFAULT_ORIGIN


def _check_known(section: str, key: str, fields: Mapping[str, Any]) -> None:
    if key not in fields:
        known = [k.replace("_", "-") for k in fields]
        close = difflib.get_close_matches(key.replace("_", "-"), known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"Unknown setting sc2dask.{section}.{key.replace('_', '-')}.{hint} "
            f"Known: {', '.join(known)}."
        )


def _checked(name: str, value, hint, rule: Rule, origin: str):
    """``value`` as type ``hint`` within ``rule``, or a ConfigError naming the fix."""
    allowed = [a for a in typing.get_args(hint)] if _is_union(hint) else [hint]
    if type(None) in allowed:
        if value is None:
            return None
        allowed.remove(type(None))
    (kind,) = allowed
    converted = _convert(value, kind)
    if converted is _INVALID:
        raise ConfigError(
            f"{name} must be {_kind_name(kind, rule)}, not {value!r} (from {origin})."
        )
    if (
        isinstance(converted, (int, float))
        and not isinstance(converted, bool)
        and not rule.admits(converted)
    ):
        raise ConfigError(f"{name} must be {rule.describe()}, not {value!r} (from {origin}).")
    if rule.parse is not None:
        try:
            converted = rule.parse(converted)
        except ConfigError as exc:
            raise ConfigError(f"{name} (from {origin}): {exc}") from None
    return converted


_INVALID = object()
_TRUE, _FALSE = {"true", "yes", "on", "1"}, {"false", "no", "off", "0"}


def _convert(value, kind):
    if typing.get_origin(kind) is Literal:
        if value is None and "none" in typing.get_args(kind):
            return "none"  # dask reads DASK_...=none from the environment as None
        return value if value in typing.get_args(kind) else _INVALID
    if kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        return True if text in _TRUE else False if text in _FALSE else _INVALID
    if kind in (int, float):
        if isinstance(value, bool):
            return _INVALID
        if isinstance(value, str):
            try:
                value = float(value) if kind is float else int(value)
            except ValueError:
                return _INVALID
        if isinstance(value, numbers.Integral):  # numpy's too
            return kind(value)
        if isinstance(value, numbers.Real):
            if kind is float:
                return float(value)
            return int(value) if float(value).is_integer() else _INVALID
        return _INVALID
    if typing.get_origin(kind) is tuple:  # a YAML list, or "a,b" from a flag
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, (list, tuple)):
            return _INVALID
        (item, _) = typing.get_args(kind)
        items = [_convert(v, item) for v in value]
        return _INVALID if _INVALID in items else tuple(items)
    if kind is str:
        if isinstance(value, os.PathLike):  # a folder setting given as a Path
            value = os.fspath(value)
        return value if isinstance(value, str) and value else _INVALID
    raise TypeError(f"settings of type {kind} are not supported")


def _kind_name(kind, rule: Rule) -> str:
    if typing.get_origin(kind) is Literal:
        return "one of " + ", ".join(map(str, typing.get_args(kind)))
    if typing.get_origin(kind) is tuple:
        if typing.get_args(kind)[0] is int:
            return "a list of whole numbers (a YAML list, or comma-separated: 16,32)"
        return "a list of names (a YAML list, or comma-separated: a,b)"
    bounds = rule.describe()
    names = {
        bool: "true or false",
        int: "a whole number",
        float: "a number",
        str: "a non-empty string",
    }
    return names[kind] + (f" {bounds}" if bounds else "")


def _is_union(hint) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)
