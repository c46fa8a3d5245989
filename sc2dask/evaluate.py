"""``evaluate``: score any pysc2 agent (or a trained checkpoint) over N episodes on the pool."""

from __future__ import annotations

import dataclasses
import statistics

from .cluster import cluster_client
from .env_host import EnvConfig, load_agent_class
from .game import check_map
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


def evaluate(agent: str, map_name: str = "MoveToBeacon", episodes: int = 10,
             envs: int | None = None, client=None, scheduler: str | None = None,
             config: EnvConfig | None = None) -> EvaluationResult:
    """Play ``episodes`` episodes of ``agent`` (a dotted path to a pysc2 ``BaseAgent``).

    Runs on ``client``'s cluster, on the scheduler at ``scheduler``, or on a local cluster.
    """
    load_agent_class(agent)  # fail here, with a clear message, not on a worker
    config = config or EnvConfig(map_name=map_name)
    check_map(config.map_name)  # unknown maps fail here, before any worker starts a game
    if client is None:
        with cluster_client(scheduler, envs) as own:
            return evaluate(agent, map_name, episodes, envs, own, config=config)
    with EnvPool(client, config, n_envs=envs) as pool:
        scores = pool.evaluate(agent, episodes)
    return EvaluationResult(
        map=config.map_name, episodes=len(scores), mean=statistics.fmean(scores),
        std=statistics.pstdev(scores), min=min(scores), max=max(scores), scores=scores)

