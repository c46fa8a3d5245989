"""The scheduler preload, at its documented path: ``dask scheduler --preload sc2dask.dashboard``.

Importing it adds the training page to the dashboard; the page itself is
``sc2dask/monitoring/page.py``.
"""

from .monitoring.page import dask_setup, dask_teardown

__all__ = ["dask_setup", "dask_teardown"]
