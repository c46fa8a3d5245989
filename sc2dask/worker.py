"""The worker preload, at its documented path: ``dask worker ... --preload sc2dask.worker``.

The preload itself is ``sc2dask/runtime/preload.py``; its teardown is here, so that the
preload module never imports the env host that imports it.
"""

from .runtime.preload import dask_setup

__all__ = ["dask_setup", "dask_teardown"]


async def dask_teardown(worker) -> None:
    """Close the worker's env hosts as it closes (``sc2dask/runtime/env_host.py``)."""
    if worker.state.actors:  # else nothing to close, and pysc2 (heavy) stays unimported
        from .runtime.env_host import close_hosts

        await close_hosts(worker)
