"""``evaluate``: score any pysc2 agent (or a trained checkpoint) over N episodes on the pool."""

from __future__ import annotations

import dataclasses
import statistics

from ..game import EnvConfig, check_map, load_agent_class
from ..settings import EvaluateSettings, load
from . import checkpoint
from .cluster import cluster_client
from .code_upload import upload_agent_code
from .pool import EnvPool


@dataclasses.dataclass
class EvaluationResult:
    map: str
    episodes: int
    mean: float
    std: float
    min: float
    max: float
    scores: list[float]

    def summary(self) -> dict:
        """The fields the CLI prints with --json."""
        return {k: getattr(self, k) for k in ("map", "episodes", "mean", "std", "min", "max")}


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
) -> EvaluationResult:
    """Play ``episodes`` episodes of ``agent`` (a dotted path to a pysc2 ``BaseAgent``).

    Settings left at None come from ``sc2dask.evaluate`` config; ``config`` sets the
    envs' map, sizes and step_mul at once (``map_name`` is the old name of ``map``). Runs
    on ``client``'s cluster, on the scheduler at ``scheduler``, or on a local cluster;
    ``sc2`` (HOST:PORT each) plays on games already running instead of launching them.
    """
    opts = load(
        EvaluateSettings, {"map": map or map_name, "episodes": episodes, "envs": envs, "sc2": sc2}
    ).values
    load_agent_class(agent)  # fail here, with a clear message, not on a worker
    config = config or EnvConfig(
        opts.map, screen=opts.screen, minimap=opts.minimap, step_mul=opts.step_mul
    )
    # unknown maps fail here, before any worker starts a game
    check_map(config.map_name, attached=bool(opts.sc2))
    if client is None:
        with cluster_client(scheduler, opts.envs or len(opts.sc2) or None) as own:
            return evaluate(
                agent,
                episodes=opts.episodes,
                envs=opts.envs,
                client=own,
                config=config,
                sc2=opts.sc2,
            )
    for code in checkpoint.agent_code(agent):  # workers elsewhere may lack it
        upload_agent_code(client, code)
    with EnvPool(client, config, n_envs=opts.envs, sc2=opts.sc2) as pool:
        scores = pool.evaluate(agent, opts.episodes)
    return EvaluationResult(
        map=config.map_name,
        episodes=len(scores),
        mean=statistics.fmean(scores),
        std=statistics.pstdev(scores),
        min=min(scores),
        max=max(scores),
        scores=scores,
    )
