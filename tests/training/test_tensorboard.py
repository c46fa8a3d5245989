"""TensorBoard's scalars, written without TensorFlow: what TensorBoard reads back is what
a run's rows held, and writing them imports no TensorFlow."""

import subprocess
import sys

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from sc2dask.training.tensorboard import ScalarWriter

pytestmark = pytest.mark.unit


def test_tensorboard_reads_back_each_finite_number_of_each_row_at_its_step(tmp_path):
    writer = ScalarWriter(str(tmp_path))
    writer.write({"mean_score": 3.5, "updates": 1, "mode": "sync", "loss": float("nan")}, 100)
    writer.write({"mean_score": 7.0, "updates": 2}, 200)
    writer.close()
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert sorted(events.Tags()["scalars"]) == ["mean_score", "updates"]  # no text, no NaN
    assert [(e.step, e.value) for e in events.Scalars("mean_score")] == [(100, 3.5), (200, 7.0)]


def test_writing_summaries_imports_no_tensorflow(tmp_path):
    code = (
        "import sys\n"
        "from sc2dask.training.tensorboard import ScalarWriter\n"
        f"w = ScalarWriter({str(tmp_path)!r}); w.write({{'x': 1.0}}, 1); w.close()\n"
        "assert 'tensorflow' not in sys.modules, 'tensorflow was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
