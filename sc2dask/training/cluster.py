"""Getting a Dask cluster with room for SC2 environments, and reading that room.

A worker's capacity is its ``SC2`` resource (``dask worker --resources SC2=4``). Dask
does not cap live actors by resources, so sc2dask places env hosts itself from these
numbers and never beyond them.
"""

from __future__ import annotations

import contextlib
import os

import psutil

from ..errors import ConfigError, GameNotFoundError, NoCapacityError, SchedulerUnreachableError

SC2_RESOURCE = "SC2"
DASHBOARD_PRELOAD = "sc2dask.dashboard"  # the training page and sc2dask_ metrics
# One emulated game plus its pysc2 client needs about half a core and ~0.4 GB.
MEMORY_PER_ENV = 0.4 * 2**30


def default_sc2_per_worker(n_workers: int) -> int:
    """SC2 slots per local worker from this machine's cores and memory."""
    cores = os.cpu_count() or 1
    by_cpu = max(1, 2 * cores // n_workers)
    by_memory = max(1, int(psutil.virtual_memory().available / MEMORY_PER_ENV) // n_workers)
    return min(by_cpu, by_memory)


def local_cluster(
    n_workers: int | None = None, sc2_per_worker: int | None = None, security=None, **kwargs
):
    """A ``LocalCluster`` whose workers advertise SC2 capacity (processes, 1 thread each).

    Its scheduler serves the training page and its workers run the ``sc2dask.worker``
    preload, as a command-line cluster started by the README's guide does. Everything
    listens on loopback only (dask's default ":0" dashboard would take every interface).
    With ``security`` the cluster's connections are TLS: a ``distributed.Security`` (e.g.
    from ``tls_security``), or True for a throwaway certificate (``Security.temporary()``,
    which needs the ``cryptography`` package: ``pip install sc2dask[tls]``); a client
    then needs ``Client(cluster, security=cluster.security)``.
    """
    from distributed import LocalCluster

    n_workers = n_workers or min(os.cpu_count() or 1, 4)
    sc2 = default_sc2_per_worker(n_workers) if sc2_per_worker is None else sc2_per_worker
    kwargs.setdefault("threads_per_worker", 1)
    kwargs.setdefault("host", "127.0.0.1")
    kwargs.setdefault("dashboard_address", "127.0.0.1:0")
    if security is True:
        security = _temporary_security()
    if security is not None:
        kwargs.update(security=security, protocol="tls://")
    kwargs["scheduler_kwargs"] = _with_dashboard_preload(kwargs.get("scheduler_kwargs"))
    kwargs.setdefault("preload", ["sc2dask.worker"])
    return LocalCluster(n_workers=n_workers, resources={SC2_RESOURCE: sc2}, **kwargs)


def _with_dashboard_preload(scheduler_kwargs: dict | None) -> dict:
    """``scheduler_kwargs`` plus the preload of the training page (sc2dask/dashboard.py)."""
    scheduler_kwargs = dict(scheduler_kwargs or {})
    preload = scheduler_kwargs.get("preload") or []
    preload = [preload] if isinstance(preload, str) else list(preload)
    if DASHBOARD_PRELOAD not in preload:
        preload.append(DASHBOARD_PRELOAD)
    scheduler_kwargs["preload"] = preload
    return scheduler_kwargs


def _temporary_security():
    from distributed import Security

    try:
        return Security.temporary()
    except ImportError:
        raise ConfigError(
            "A throwaway TLS certificate (security=True) needs the cryptography "
            "package: pip install 'sc2dask[tls]' (or cryptography)."
        ) from None


def tls_security(ca_file: str, cert: str, key: str):
    """``distributed.Security`` for every role (client, scheduler, workers) from the files
    ``dask scheduler``/``dask worker`` take as --tls-ca-file, --tls-cert and --tls-key."""
    from distributed import Security

    return Security(
        tls_ca_file=ca_file,
        require_encryption=True,
        tls_client_cert=cert,
        tls_client_key=key,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
    )


def check_address(address: str) -> None:
    """SchedulerUnreachableError, with an example, unless ``address`` is a scheduler
    address dask can dial: a known protocol (tcp:// when none) and, for tcp and tls, a
    host and a port."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import backends

    example = "tcp://HOST:8786 (tls://HOST:8786 with TLS)"
    protocol, location = parse_address(address, strict=False)
    if protocol not in backends:
        raise SchedulerUnreachableError(
            f"{address!r} is not a Dask scheduler address: dask speaks "
            f"{', '.join(sorted(backends))}, not {protocol!r}; give {example}."
        )
    if protocol in ("tcp", "tls"):
        try:
            _, port = parse_host_port(location)
        except ValueError:
            port = None
        if not port:
            raise SchedulerUnreachableError(
                f"{address!r} has no port; give {example} (`dask scheduler` prints its "
                f"address when it starts)."
            )


def connect(address: str, timeout: float = 10.0, security=None):
    """A ``Client`` for the scheduler at ``address``, or an error saying how to get one.

    ``security`` None: dask's config decides (``distributed.comm.tls`` keys).
    """
    from distributed import Client

    check_address(address)
    try:
        return Client(address, timeout=timeout, direct_to_workers=True, security=security)
    except TypeError as exc:  # distributed's way of saying a tls:// address needs TLS files
        raise SchedulerUnreachableError(
            f"The scheduler at {address!r} needs TLS ({exc}); give --tls-ca-file, "
            f"--tls-cert and --tls-key, as `dask scheduler` was given."
        ) from None
    except (OSError, TimeoutError) as exc:
        raise SchedulerUnreachableError(
            f"No Dask scheduler answers at {address!r} ({exc}). Start one with "
            f"`dask scheduler`, check the address and port (and TLS: a tls:// scheduler "
            f"takes the --tls-* flags), or leave --scheduler out to use a local "
            f"cluster."
        ) from None


def sc2_capacity(client) -> dict[str, int]:
    """SC2 slots per live worker address (workers without the resource count 0)."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    return {
        addr: int(info.get("resources", {}).get(SC2_RESOURCE, 0)) for addr, info in workers.items()
    }


def worker_games(client) -> dict[str, list[str]]:
    """Each live worker's own running games (its ``sc2dask.worker.sc2``, HOST:PORT each;
    [] for none, or for a worker without the ``sc2dask.worker`` preload)."""
    from ..runtime.preload import REPORT_KEY

    workers = client.scheduler_info(n_workers=-1)["workers"]
    return {addr: list(info.get(REPORT_KEY, {}).get("sc2", [])) for addr, info in workers.items()}


def require_capacity(client, wanted: int | None = None) -> dict[str, int]:
    check_workers(client)
    capacity = {addr: n for addr, n in sc2_capacity(client).items() if n > 0}
    if not capacity:
        raise NoCapacityError(
            "No worker offers SC2 capacity: start workers with "
            "`dask worker SCHEDULER --resources SC2=4` (or use sc2dask.local_cluster())."
        )
    if wanted is not None and wanted > sum(capacity.values()):
        raise NoCapacityError(
            f"{wanted} environments wanted but the cluster has {sum(capacity.values())} SC2 "
            f"slots ({capacity}); ask for fewer or add workers with --resources SC2=N."
        )
    return capacity


def check_workers(client) -> None:
    """Raise GameNotFoundError naming each worker whose ``sc2dask.worker`` preload found no
    usable StarCraft II (workers started without the preload are not checked)."""
    from ..runtime.preload import REPORT_KEY

    workers = client.scheduler_info(n_workers=-1)["workers"]
    broken = {
        addr: info[REPORT_KEY]
        for addr, info in workers.items()
        if not info.get(REPORT_KEY, {"ok": True})["ok"]
    }
    if broken:
        raise GameNotFoundError(
            "; ".join(
                f"{report.get('problem', 'StarCraft II cannot start')} on worker {addr} (host "
                f"{report['host']}): {report['error']}"
                for addr, report in sorted(broken.items())
            )
        )


@contextlib.contextmanager
def cluster_client(scheduler: str | None = None, envs: int | None = None, security=None):
    """A client on ``scheduler``, or on a local cluster with room for ``envs`` envs
    (``security``: TLS for either, e.g. from ``tls_security``)."""
    from distributed import Client

    if scheduler:
        with connect(scheduler, security=security) as client:
            yield client
        return
    n_workers = min(os.cpu_count() or 1, envs or 2, 4)
    per_worker = None if envs is None else -(-envs // n_workers)
    with (
        local_cluster(n_workers, per_worker, security=security) as cluster,
        Client(cluster, direct_to_workers=True, security=security) as client,
    ):
        yield client
