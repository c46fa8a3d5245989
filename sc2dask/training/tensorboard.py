"""TensorBoard scalars through TensorBoard's own record writer, not TensorFlow's.

``tf.summary`` would import TensorFlow on the client of every run, whatever array library
its agent uses (a PyTorch agent's run imports none), and so would TensorBoard's
``EventFileWriter``, which opens its file through ``tf.io.gfile`` where TensorFlow is
installed. ``RecordWriter`` frames the same records on a plain file: TensorBoard's scalar
dashboard reads them.
"""

from __future__ import annotations

import math
import os
import socket
import time
from collections.abc import Mapping

from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.record_writer import RecordWriter


class ScalarWriter:
    """Appends one event a call, every finite number of ``row`` at ``step``, to an event
    file of its own in ``directory`` (named as TensorBoard's writers name theirs)."""

    def __init__(self, directory: str):
        os.makedirs(directory, exist_ok=True)
        name = f"events.out.tfevents.{time.time():010.0f}.{socket.gethostname()}.{os.getpid()}"
        self._records = RecordWriter(open(os.path.join(directory, name), "ab"))
        self._add(event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2"))

    def write(self, row: Mapping[str, object], step: int) -> None:
        values = [
            summary_pb2.Summary.Value(tag=key, simple_value=float(value))
            for key, value in row.items()
            if isinstance(value, (int, float)) and math.isfinite(value)
        ]
        if values:
            summary = summary_pb2.Summary(value=values)
            self._add(event_pb2.Event(wall_time=time.time(), step=step, summary=summary))

    def close(self) -> None:
        self._records.close()

    def _add(self, event: event_pb2.Event) -> None:
        self._records.write(event.SerializeToString())
        self._records.flush()  # a row an update: TensorBoard sees each as it comes
