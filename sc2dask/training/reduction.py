"""The client's side of a tree reduction (``sync-reduce: tree``): one sum per update.

A sync update averages K gradients. By default each comes to the client, which averages
them: K gradients in per update. With the tree, the hosts keep theirs
(``sc2dask/runtime/reduction.py``) and the client sends one ``ReductionTree`` to a root
host; the sum flows up a binary tree of hosts, log2(K) hops deep, and one gradient comes
in. It saves the client K - 1 gradients' bytes and averaging per update, for log2(K)
hops of latency and the summing done on the workers.
"""

from __future__ import annotations

from ..core import ReductionTree, Weights
from ..errors import SC2DaskError

FAN_IN = 2  # children per host: a binary tree balances the bytes each host takes in


class ReductionFailed(SC2DaskError):
    """A host in the tree was lost or no longer held its gradients: the update's gradients
    are lost, and its hosts play on with the weights there are."""


def plan_tree(parts: list[tuple[object, int, float]]) -> ReductionTree:
    """The tree over ``parts``, (host actor, version of its held gradients, weight) each:
    part i's parent is part (i - 1) // FAN_IN, so the first is the root."""
    nodes = [ReductionTree(host, version, weight) for host, version, weight in parts]
    for i, node in enumerate(nodes[1:], start=1):
        nodes[(i - 1) // FAN_IN].children.append(node)
    return nodes[0]


def reduce_on_workers(parts: list[tuple[object, int, float]], timeout: float) -> Weights:
    """The weighted sum of the held gradients of ``parts``, computed up a tree of hosts;
    ReductionFailed (naming the cause) if any host of it fails."""
    tree = plan_tree(parts)
    try:
        return tree.host.reduce(tree).result(timeout=timeout)
    except Exception as exc:  # any host's failure reaches the root's call
        raise ReductionFailed(
            f"the tree reduction over {len(parts)} hosts failed ({type(exc).__name__}: {exc})"
        ) from exc
