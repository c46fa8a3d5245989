"""Shared fixtures: a StarCraft II-like install that launches the emulator, for real pysc2."""

import os

import pytest

from sc2dask.emulator.install import install


@pytest.fixture(scope="session")
def sc2path(tmp_path_factory):
    """SC2PATH pointing at an emulator install, for the whole session (pysc2 reads the env)."""
    path = install(tmp_path_factory.mktemp("StarCraftII"))
    old = os.environ.get("SC2PATH")
    os.environ["SC2PATH"] = str(path)
    yield path
    if old is None:
        os.environ.pop("SC2PATH", None)
    else:
        os.environ["SC2PATH"] = old


@pytest.fixture(scope="session", autouse=True)
def _absl_flags():
    """pysc2 reads absl flags (e.g. sc2_run_config); parse an empty command line once."""
    from absl import flags
    if not flags.FLAGS.is_parsed():
        flags.FLAGS(["pytest"])
