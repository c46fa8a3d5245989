"""Where a run's env hosts go: one ``Placement`` per host, planned from the workers' SC2
capacity (``plan_placements``) or from running games to attach to (``plan_attached``).

Plain functions of the cluster's state, so that the plans are tested without a cluster.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from distributed.comm import get_address_host

from ..errors import NoCapacityError
from ..game import game_seed
from ..settings import parse_endpoint


@dataclasses.dataclass
class Placement:
    """Where one env host runs, how many envs it owns, and its actor proxy once started."""

    worker: str
    n_envs: int
    seed: int
    host: Any | None = None  # the dask Actor proxy (its methods resolve remotely)
    endpoints: tuple[str, ...] = ()  # attached: the running game of each env
    pinned: bool = False  # attached to a worker's own games: only a worker listing them
    released: bool = False  # closed on purpose (its worker retires): never replaced


def plan_placements(capacity: dict[str, int], n_envs: int, seed: int = 0) -> list[Placement]:
    """``n_envs`` envs on the fewest workers: the roomiest first, each filled to its capacity.

    Fewer hosts means fewer actor calls per rollout and larger batches per host.
    """
    placements, remaining = [], n_envs
    for i, (worker, slots) in enumerate(sorted(capacity.items(), key=lambda kv: -kv[1])):
        if remaining == 0:
            break
        take = min(slots, remaining)
        placements.append(Placement(worker, take, game_seed(seed, i)))
        remaining -= take
    return placements


def plan_attached(
    own_games: dict[str, list[str]],
    endpoints: tuple[str, ...],
    n_envs: int | None = None,
    seed: int = 0,
) -> list[Placement]:
    """One env per running game: each worker's own games (``own_games``, from its
    ``sc2dask.worker.sc2``) on it, and each of ``endpoints`` on a worker of the same
    machine if there is one, else on the worker with the fewest envs so far.

    ``n_envs`` None takes every game; fewer takes the first ones.
    """
    if not own_games:
        raise NoCapacityError(
            "No Dask worker is connected to host the envs of the running "
            "games; start one with `dask worker SCHEDULER --preload "
            "sc2dask.worker`."
        )
    assigned = {worker: [(game, True) for game in games] for worker, games in own_games.items()}
    for endpoint in endpoints:
        host = parse_endpoint(endpoint)[0]
        near = [w for w in assigned if get_address_host(w) == host] or list(assigned)
        assigned[min(near, key=lambda w: len(assigned[w]))].append((endpoint, False))
    total = sum(len(games) for games in assigned.values())
    if n_envs is not None and n_envs > total:
        raise NoCapacityError(
            f"{n_envs} environments wanted but {total} running games were given (--sc2 and "
            f"the workers' sc2dask.worker.sc2); start more games or ask for fewer envs."
        )
    remaining = total if n_envs is None else n_envs
    placements: list[Placement] = []
    for worker, games in assigned.items():
        # pinned and free games on one worker become two hosts, so each can be replaced
        for pinned in (True, False):
            mine = [game for game, own in games if own is pinned][:remaining]
            if mine:
                placements.append(
                    Placement(
                        worker,
                        len(mine),
                        game_seed(seed, len(placements)),
                        endpoints=tuple(mine),
                        pinned=pinned,
                    )
                )
                remaining -= len(mine)
    return placements


def share_episodes(placements: list[Placement], episodes: int) -> list[int]:
    """``episodes`` split over ``placements`` in proportion to their envs, as evenly as whole
    episodes allow (the remainder goes one each to the first hosts)."""
    total = sum(p.n_envs for p in placements)
    shares = [episodes * p.n_envs // total for p in placements]
    for i in range(episodes - sum(shares)):
        shares[i] += 1
    return shares
