"""``SC2Adaptive``: ``cluster.adapt`` sized by the envs a run wants, not by its tasks.

Dask's own adaptive policy sizes a cluster by its task backlog. Env hosts are actors,
which make no tasks, so that policy sees a training cluster as idle and retires the
workers whose games are playing. This one asks for as many workers as the wanted envs
need at the workers' SC2 capacity; an elastic run (``envs_max``) then grows onto the
workers it adds::

    cluster.adapt(Adaptive=SC2Adaptive, envs=16, minimum=1, maximum=8)
    sc2dask.train(client=client, envs=2, envs_max=16, ...)
"""

from __future__ import annotations

from distributed.deploy.adaptive import Adaptive

from ..errors import ConfigError
from .cluster import SC2_RESOURCE


class SC2Adaptive(Adaptive):
    """Adaptive scaling to ``ceil(envs / sc2_per_worker)`` workers (within minimum and
    maximum). ``sc2_per_worker`` defaults to the ``SC2`` resource of the cluster's worker
    spec (``sc2dask.local_cluster``, dask-jobqueue's ``--resources SC2=N``)."""

    def __init__(self, cluster=None, envs: int = 1, sc2_per_worker: int | None = None, **kwargs):
        sc2_per_worker = sc2_per_worker or _spec_sc2(cluster)
        if envs < 1 or sc2_per_worker < 1:
            raise ConfigError(
                f"SC2Adaptive needs envs >= 1 and sc2_per_worker >= 1, not "
                f"{envs} and {sc2_per_worker}."
            )
        self.envs, self.sc2_per_worker = envs, sc2_per_worker
        super().__init__(cluster, **kwargs)

    def __del__(self):
        if hasattr(self, "state"):  # a refused config never started: nothing to stop
            super().__del__()

    async def target(self) -> int:
        return -(-self.envs // self.sc2_per_worker)


def _spec_sc2(cluster) -> int:
    """The SC2 slots each new worker of ``cluster`` will have (1 if its spec does not say)."""
    spec = getattr(cluster, "new_spec", None) or {}
    options = spec.get("options", {}) if isinstance(spec, dict) else {}
    resources = options.get("resources") or {}
    return int(resources.get(SC2_RESOURCE, 1))
