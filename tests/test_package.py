"""The top-level API a notebook uses: ``sc2dask.train`` and ``sc2dask.evaluate`` are functions."""

import importlib

import sc2dask


def test_exports_stay_functions_after_their_submodules_are_imported():
    importlib.import_module("sc2dask.evaluate")
    importlib.import_module("sc2dask.train")
    assert callable(sc2dask.evaluate) and sc2dask.evaluate.__name__ == "evaluate"
    assert callable(sc2dask.train) and sc2dask.train.__name__ == "train"
    assert sc2dask.local_cluster.__module__ == "sc2dask.cluster"
