"""Checkpoint files on disk: what a crash, a re-save or a resume from an older one leaves."""

import json
import os

import numpy as np
import pytest

from sc2dask.errors import CheckpointError
from sc2dask.training import checkpoint

pytestmark = pytest.mark.unit


def _save(directory, update, value=0.0):
    return checkpoint.save(
        directory,
        update,
        [np.full(3, value, np.float32)],
        [np.zeros(2, np.float32)],
        {"updates": update, "value": value},
    )


def _latest(directory):
    weights, _, state = checkpoint.load(directory)
    return state["updates"], float(weights[0][0])


def test_saving_the_same_update_again_never_leaves_latest_naming_nothing(tmp_path):
    first = _save(tmp_path, 50, value=1.0)
    second = _save(tmp_path, 50, value=2.0)  # e.g. the last checkpoint of a run, repeated
    assert second != first and second.exists()  # a new name: LATEST named `first` meanwhile
    assert (tmp_path / "LATEST").read_text().strip() == second.name
    assert _latest(tmp_path) == (50, 2.0)


def test_a_crashs_half_written_files_are_cleared_by_the_next_save(tmp_path):
    _save(tmp_path, 1)
    (tmp_path / ".tmp-crashed").mkdir()
    (tmp_path / ".tmp-crashed" / "weights.npz").write_bytes(b"half")
    (tmp_path / "LATEST.tmp").write_text("ckpt-0000")
    _save(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "LATEST",
        "ckpt-00000001",
        "ckpt-00000002",
    ]


def test_pruning_keeps_the_checkpoints_written_last_even_after_resuming_an_older_one(tmp_path):
    for update in (100, 200, 300, 400):
        _save(tmp_path, update)
    assert len(list(tmp_path.glob("ckpt-*"))) == checkpoint.KEEP
    (tmp_path / "LATEST").write_text("ckpt-00000200")  # the user goes back to update 200
    assert _latest(tmp_path)[0] == 200
    written = [_save(tmp_path, update) for update in (201, 202)]
    assert all(p.exists() for p in written)  # by name these sort below 300 and 400
    assert _latest(tmp_path)[0] == 202
    assert len(list(tmp_path.glob("ckpt-*"))) == checkpoint.KEEP


def test_a_corrupt_checkpoint_is_a_clear_error(tmp_path):
    folder = _save(tmp_path, 7)
    (folder / "weights.npz").write_bytes(b"not a zip")
    with pytest.raises(CheckpointError, match="incomplete or corrupt.*older ckpt"):
        checkpoint.load(tmp_path)
    state = json.loads((folder / "state.json").read_text())
    assert state["updates"] == 7
    assert not os.path.exists(tmp_path / "LATEST.tmp")
