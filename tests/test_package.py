"""The top-level API a notebook uses, the documented preload paths, and what imports TensorFlow."""

import importlib
import subprocess
import sys

import pytest

import sc2dask

pytestmark = pytest.mark.unit


def test_train_and_evaluate_are_functions_after_every_submodule_is_imported():
    for module in (
        "sc2dask.training",
        "sc2dask.training.loop",
        "sc2dask.training.evaluate",
        "sc2dask.worker",
        "sc2dask.dashboard",
        "sc2dask.cli",
    ):
        importlib.import_module(module)
    assert callable(sc2dask.evaluate) and sc2dask.evaluate.__name__ == "evaluate"
    assert callable(sc2dask.train) and sc2dask.train.__name__ == "train"
    assert sc2dask.local_cluster.__module__ == "sc2dask.training.cluster"
    assert type(sc2dask) is type(importlib)  # a plain module: no class swap


def test_the_documented_preloads_keep_their_paths():
    from sc2dask.monitoring import page
    from sc2dask.runtime import preload

    assert importlib.import_module("sc2dask.worker").dask_setup is preload.dask_setup
    assert importlib.import_module("sc2dask.dashboard").dask_setup is page.dask_setup


def test_every_export_resolves():
    for name in sc2dask.__all__:
        assert getattr(sc2dask, name) is not None, name


def test_the_agent_config_imports_without_tensorflow():
    """The client builds it before its cluster starts and workers unpickle it in their
    event loop: neither may wait 3-4 s for TensorFlow there (sc2dask/agents/config.py)."""
    code = (
        "import sys; from sc2dask.agents.config import A2CConfig; A2CConfig(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
