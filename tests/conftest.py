"""Shared fixtures: an emulator install for real pysc2, and a real local Dask cluster.

The folders mirror ``sc2dask/`` (``tests/emulator`` tests ``sc2dask/emulator``, and so on);
``tests/system`` runs the whole system as a user would (command-line nodes, the
minicluster, the notebooks). Helpers shared across folders are modules here
(``waiting``, ``processes``, ``emulator_process``, ``pysc2_helpers``), imported as
``tests.<module>``.

Markers pick a tier: ``unit`` needs no cluster and no game (pure functions and
settings, under a minute together); ``cluster`` starts a Dask cluster; ``slow`` takes
over about 30 s. ``pytest -m "not unit and not cluster"`` leaves the tests that play
the emulator without a cluster.
"""

import os

import pytest
from distributed import Client

from sc2dask.game import install_emulator
from sc2dask.training.cluster import local_cluster


@pytest.fixture(scope="session")
def sc2path(tmp_path_factory):
    """SC2PATH pointing at an emulator install, for the whole session (pysc2 reads the env)."""
    path = install_emulator(tmp_path_factory.mktemp("StarCraftII"))
    old = os.environ.get("SC2PATH")
    os.environ["SC2PATH"] = str(path)
    yield path
    if old is None:
        os.environ.pop("SC2PATH", None)
    else:
        os.environ["SC2PATH"] = old


@pytest.fixture(scope="module")
def client(sc2path, request):
    """A client of a fresh two-worker local cluster per test module (tests kill workers).

    A module sets ``SC2_PER_WORKER`` for more than one SC2 slot per worker.
    """
    per_worker = getattr(request.module, "SC2_PER_WORKER", 1)
    with (
        local_cluster(n_workers=2, sc2_per_worker=per_worker) as cluster,
        Client(cluster, direct_to_workers=True) as client,
    ):
        yield client


@pytest.fixture(scope="session", autouse=True)
def _absl_flags():
    """pysc2 reads absl flags (e.g. sc2_run_config); parse an empty command line once."""
    from absl import flags

    if not flags.FLAGS.is_parsed():
        flags.FLAGS(["pytest"])
