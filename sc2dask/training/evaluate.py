"""``evaluate``: score any pysc2 agent (or a trained checkpoint) over N episodes on the pool."""

from __future__ import annotations

import dataclasses
import statistics
from typing import TypedDict

from ..game import EnvConfig, load_agent_class, plays_macros
from ..game.recording import check_layer
from ..settings import EvaluateSettings, load
from . import checkpoint
from .cluster import cluster_client
from .code_upload import upload_agent_code
from .pool import EnvPool
from .video import check_video_path, write_video


@dataclasses.dataclass
class EvaluationResult:
    map: str
    episodes: int
    mean: float
    std: float
    min: float
    max: float
    scores: list[float]
    outcomes: list[int] = dataclasses.field(default_factory=list)  # games for two
    video: str | None = None  # the recorded episode's file
    video_score: float | None = None

    @property
    def results(self) -> dict[str, int]:
        """Wins, draws and losses of games for two."""
        return {
            "wins": sum(o > 0 for o in self.outcomes),
            "draws": sum(o == 0 for o in self.outcomes),
            "losses": sum(o < 0 for o in self.outcomes),
        }

    def summary(self) -> dict:
        """The fields the CLI prints with --json."""
        fields = ["map", "episodes", "mean", "std", "min", "max"]
        fields += ["video", "video_score"] if self.video else []
        return {k: getattr(self, k) for k in fields} | (self.results if self.outcomes else {})


def evaluate(
    agent: str,
    map: str | None = None,
    episodes: int | None = None,
    envs: int | None = None,
    client=None,
    scheduler: str | None = None,
    config: EnvConfig | None = None,
    map_name: str | None = None,
    sc2=None,
    video: str | None = None,
    video_layer: str | None = None,
    seed: int | None = None,
) -> EvaluationResult:
    """Play ``episodes`` episodes of ``agent`` (a dotted path to a pysc2 ``BaseAgent``).

    Settings left at None come from ``sc2dask.evaluate`` config; ``config`` sets the
    envs' map, sizes and step_mul at once (``map_name`` is the old name of ``map``). Runs
    on ``client``'s cluster, on the scheduler at ``scheduler``, or on a local cluster;
    ``sc2`` (HOST:PORT each) plays on games already running instead of launching them.
    ``video`` (.gif or .mp4) records one more episode, drawn by ``video_layer``. ``seed``
    seeds the games and the agents' random choices; every episode gets its own.
    """
    given = {"map": map or map_name, "episodes": episodes, "envs": envs, "sc2": sc2, "seed": seed}
    opts = load(EvaluateSettings, {**given, "video": video, "video_layer": video_layer}).values
    load_agent_class(agent)  # fail here, with a clear message, not on a worker
    config = _env_config(agent, opts, config)
    if client is None:
        with cluster_client(scheduler, opts.envs or len(opts.sc2) or None) as own:
            return _play(agent, opts, config, own)
    return _play(agent, opts, config, client)


def _env_config(agent: str, opts: EvaluateSettings, config: EnvConfig | None) -> EnvConfig:
    """The envs' config (the settings', or ``config``), checked before any game starts:
    a bad video request, an unknown map, players that do not fit."""
    if opts.video:
        check_video_path(opts.video)
        check_layer(opts.video_layer)
    config = config or EnvConfig(
        opts.map,
        screen=opts.screen,
        minimap=opts.minimap,
        step_mul=opts.step_mul,
        race=opts.race,
        opponent=opts.opponent,
        **agent_env(agent),
    )
    if opts.video and not config.feature_layers:  # the video draws the feature layers
        config = dataclasses.replace(config, feature_layers=True)
    config.check(attached=bool(opts.sc2))
    return config


def _play(agent: str, opts: EvaluateSettings, config: EnvConfig, client) -> EvaluationResult:
    """The episodes (and the video's) on ``client``'s cluster."""
    for code in checkpoint.agent_code(agent):  # workers elsewhere may lack it
        upload_agent_code(client, code)
    with EnvPool(client, config, n_envs=opts.envs, seed=opts.seed, sc2=opts.sc2) as pool:
        played = pool.evaluate(agent, opts.episodes)
        recording = pool.record(agent, opts.video_layer) if opts.video else None
    if recording is not None and opts.video:
        write_video(recording, opts.video, config.map_name)
    scores = [e.score for e in played]
    return EvaluationResult(
        map=config.map_name,
        episodes=len(scores),
        mean=statistics.fmean(scores),
        std=statistics.pstdev(scores),
        min=min(scores),
        max=max(scores),
        scores=scores,
        outcomes=[e.outcome for e in played if e.outcome is not None],
        video=opts.video,
        video_score=None if recording is None else float(recording.scores[-1]),
    )


class AgentEnv(TypedDict):
    """The ``EnvConfig`` fields an agent decides (``checkpoint.OWN_ENV_FIELDS``)."""

    macro_actions: bool
    feature_layers: bool


def agent_env(agent: str) -> AgentEnv:
    """The ``EnvConfig`` fields that are ``agent``'s own (``checkpoint.OWN_ENV_FIELDS``):
    a checkpoint's as it was trained; else whether its class plays macros
    (``sc2dask.game.plays_macros``), with feature layers."""
    path, _, directory = agent.partition(":")
    if path == checkpoint.CHECKPOINT_AGENT and directory:
        trained = checkpoint.checkpoint_env(directory)
        return {
            "macro_actions": bool(trained.get("macro_actions", False)),
            "feature_layers": bool(trained.get("feature_layers", True)),
        }
    return {"macro_actions": plays_macros(agent), "feature_layers": True}
