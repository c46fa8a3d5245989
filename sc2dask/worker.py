"""The worker preload, at its documented path: ``dask worker ... --preload sc2dask.worker``.

The preload itself is ``sc2dask/runtime/preload.py``.
"""

from .runtime.preload import dask_setup, dask_teardown

__all__ = ["dask_setup", "dask_teardown"]
