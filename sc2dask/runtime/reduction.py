"""The hosts' side of a tree reduction (``sync-reduce: tree``): gradients summed on workers.

In sync mode every host's gradient otherwise travels to the client, which takes in and
averages one gradient per host per update. With the tree, a host keeps its gradient
(``hold``) and answers with its metrics only; once an update's gradients are all in, the
client sends one ``ReductionTree`` to its root host, and each host adds its weighted
gradient to the sums its children return (``reduce``), so each gradient crosses one link
between workers and the client receives one sum (``sc2dask/training/reduction.py``).
"""

from __future__ import annotations

import asyncio

import distributed
import numpy as np

from ..core import HeldGradients, ReductionTree, Weights

KEPT = 4  # held gradients per host: a straggler's waits for the next update beside its new one


class GradientsNotHeld(LookupError):
    """A tree asked a host for gradients it does not hold (a host recreated since)."""


class TreeReducer:
    """Mixed into an env host: holds its gradients by version and sums them up a tree."""

    def hold(self, version: int, grads: Weights) -> HeldGradients:
        """Keep ``grads`` of ``version`` for a later ``reduce``; the oldest beyond ``KEPT``
        go (the client dropped them as too stale, or a failed reduction left them)."""
        held = self.__dict__.setdefault("_held", {})
        held[version] = grads
        for old in sorted(held)[:-KEPT]:
            del held[old]
        return HeldGradients(version)

    async def reduce(self, tree: ReductionTree) -> Weights:
        """``tree.weight`` x this host's gradients of ``tree.version`` plus the sums of
        the children's subtrees, which their hosts compute at the same time."""
        parts = await asyncio.gather(*(child.host.reduce(child) for child in tree.children))
        grads = self.__dict__.get("_held", {}).pop(tree.version, None)
        if grads is None:
            raise GradientsNotHeld(f"the host on {_worker()} holds no gradients of v{tree.version}")
        return await asyncio.to_thread(weighted_sum, grads, tree.weight, parts)


def _worker() -> str:
    """This process's worker address, for messages (a host outside a worker: 'no worker')."""
    try:
        return distributed.get_worker().address
    except ValueError:
        return "no worker"


def weighted_sum(grads: Weights, weight: float, parts: list[Weights]) -> Weights:
    """``weight`` x ``grads`` + each of ``parts``, array by array, in float32."""
    total = [np.multiply(g, np.float32(weight), dtype=np.float32) for g in grads]
    for part in parts:
        for t, g in zip(total, part):
            t += g
    return total
