"""FullyConv-LSTM (Vinyals et al. 2017, SC2LE's recurrent agent): FullyConv with a memory.

SC2LE's FullyConv LSTM runs a convolutional LSTM on the spatial state. Here an LSTM
reads FullyConv's dense input (the state shrunk to the dense grid, and the player's
numbers), and its output reaches every head: the function, the non-spatial arguments and
the value read it, and a projection of it is broadcast over each cell of the spatial
state that the click logits read. A policy can then act on what it saw steps ago (a
beacon reached, a shard gone), at a dense layer's cost rather than a conv tower's.

The memory crosses the interface as sc2dask's recurrent state (``core.State``): the
hosts carry it from step to step and rollout to rollout and reset it at episode ends
(``runtime/rollout.py``); each trajectory brings its ``initial_state``, and the learner
unrolls the network through the trajectory's steps from there, starting afresh after
each terminal step, so its log-probabilities are the acting policy's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import keras
import numpy as np
import tensorflow as tf
from keras import layers

from ..core import State, Trajectory
from .a2c import Learner, Policy
from .fullyconv import NetworkParts, broadcast
from .spaces import ActionSet, InputSpec

MEMORY = ("memory_h", "memory_c")  # the LSTM's hidden and cell state, [B, lstm_units] each


def build_fullyconv_lstm(
    encoder_spec: Mapping[str, InputSpec], action_set: ActionSet, config
) -> keras.Model:
    """``build_fullyconv``'s inputs and outputs plus the memory: inputs "memory_h" and
    "memory_c" (the state before the step), outputs of the same names (after it)."""
    parts = NetworkParts(config)
    inputs, state = parts.encode(encoder_spec, action_set)
    x = parts.shrink(state["screen"], config.dense_grid, "shrink_conv")
    x = layers.Concatenate(dtype=parts.body, name="dense_input")(
        [layers.Flatten(dtype=parts.body)(x), inputs["player"]]
    )
    memory = {k: keras.Input((config.lstm_units,), dtype="float32", name=k) for k in MEMORY}
    # The LSTM keeps float32 under mixed precision: its state is carried over many steps.
    core, (hidden, cell) = layers.LSTMCell(
        config.lstm_units,
        kernel_initializer=parts.init(),
        recurrent_initializer=parts.init(),
        dtype="float32",
        name="lstm",
    )(layers.Activation("linear", dtype="float32", name="lstm_input")(x), list(memory.values()))
    recalled = layers.Dense(
        config.conv_filters[-1],
        activation="relu",
        kernel_initializer=parts.init(),
        dtype=parts.body,
        name="memory_to_cells",
    )(core)
    spatial = {
        resolution: layers.Concatenate(dtype=parts.body, name=f"{resolution}_with_memory")(
            [cells, broadcast(recalled, cells)]
        )
        for resolution, cells in state.items()
    }
    outputs = parts.heads(action_set, spatial, core)
    outputs.update(memory_h=hidden, memory_c=cell)
    return keras.Model({**inputs, **memory}, outputs, name="fullyconv_lstm")


class RecurrentPolicy(Policy):
    """``a2c.Policy`` with the LSTM's memory in and out of each forward pass."""

    def initial_state(self, batch_size: int) -> State:
        """Zeros: an episode's start."""
        units = self.config.lstm_units
        return {k: np.zeros((batch_size, units), np.float32) for k in MEMORY}

    def _signature(self) -> dict:
        units = self.config.lstm_units
        memory = {k: tf.TensorSpec((None, units), tf.float32) for k in MEMORY}
        return {**super()._signature(), **memory}

    def _inputs(self, batch, state: State | None = None):
        """The encoded batch and the memory before this step (an episode's start where
        none is given: ``value`` on observations alone)."""
        if not state:
            state = self.initial_state(len(batch["available"]))
        inputs = {k: tf.convert_to_tensor(batch[k]) for k in self.input_keys if k not in MEMORY}
        inputs.update({k: tf.convert_to_tensor(np.asarray(state[k], np.float32)) for k in MEMORY})
        return inputs

    def _memory(self, outputs) -> State:
        return {k: outputs[k].numpy() for k in MEMORY}


class RecurrentLearner(Learner):
    """``a2c.Learner`` whose forward pass unrolls the network through each trajectory.

    The batch's observations stay one row each, as the loss reads them; ``_rows`` adds
    the unroll's layout: each trajectory's rows in time order ("time_rows", -1 past a
    shorter trajectory's end), where the memory starts afresh ("resets", the row after a
    terminal step), each row's place in the time-major unroll ("positions") and the
    memory each trajectory starts from.
    """

    policy_class = RecurrentPolicy

    def _row_signature(self) -> dict:
        units = self.config.lstm_units
        return {
            **super()._row_signature(),
            "time_rows": tf.TensorSpec((None, None), tf.int32),
            "resets": tf.TensorSpec((None, None), tf.float32),
            "positions": tf.TensorSpec((None,), tf.int32),
            **{k: tf.TensorSpec((None, units), tf.float32) for k in MEMORY},
        }

    def _rows(self, trajectories: Sequence[Trajectory]) -> dict[str, np.ndarray]:
        rows = super()._rows(trajectories)
        n, width = len(trajectories), max(len(t) + 1 for t in trajectories)
        time_rows = np.full((n, width), -1, np.int32)
        resets = np.zeros((n, width), np.float32)
        positions = []
        start = 0
        for i, t in enumerate(trajectories):
            steps = len(t) + 1
            time_rows[i, :steps] = np.arange(start, start + steps)
            resets[i, 1:steps] = t.terminal  # the row after an episode's end starts the next
            positions.append(np.arange(steps) * n + i)
            start += steps
        fresh = self.policy.initial_state(1)
        for k in MEMORY:
            rows[k] = np.stack(
                [np.asarray(t.initial_state.get(k, fresh[k][0]), np.float32) for t in trajectories]
            )
        rows.update(time_rows=time_rows, resets=resets, positions=np.concatenate(positions))
        return rows

    def _outputs(self, rows) -> dict:
        """The outputs of every row, the network stepped through the trajectories side by
        side (a padded row is computed and dropped)."""
        time_rows = rows["time_rows"]
        width = tf.shape(time_rows)[1]
        observed = [k for k in self.policy.input_keys if k not in MEMORY]
        names = [*self.policy.action_set.heads, "value"]

        def step(t, hidden, cell, arrays):
            at = tf.maximum(time_rows[:, t], 0)
            keep = 1.0 - rows["resets"][:, t, None]
            outputs = self.model(
                {
                    **{k: tf.gather(rows[k], at) for k in observed},
                    "memory_h": hidden * keep,
                    "memory_c": cell * keep,
                },
                training=True,
            )
            arrays = {k: arrays[k].write(t, outputs[k]) for k in names}
            return t + 1, outputs["memory_h"], outputs["memory_c"], arrays

        arrays = {k: tf.TensorArray(tf.float32, size=width) for k in names}
        _, _, _, arrays = tf.while_loop(
            lambda t, *_: t < width,
            step,
            (tf.constant(0), rows["memory_h"], rows["memory_c"], arrays),
        )
        outputs = {}
        for k in names:
            stacked = arrays[k].stack()  # [T + 1, N, ...]: time-major
            flat = tf.reshape(stacked, tf.concat([[-1], tf.shape(stacked)[2:]], 0))
            outputs[k] = tf.gather(flat, rows["positions"])
        return outputs
