"""FullyConv (Vinyals et al. 2017, SC2LE): conv towers, spatial policies at full resolution.

One change from the paper: its 256-unit dense layer reads the whole flattened state
(~20 M weights at 32x32). Here strided convs first shrink the state to at most
``config.dense_grid`` cells a side, so the model is a few MB at any resolution and
its weights cross the network cheaply.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import keras
from keras import layers, ops

from ..errors import ConfigError
from .spaces import SPATIAL_ARGS, ActionSet, InputSpec, LayerSpec


def build_fullyconv(
    encoder_spec: Mapping[str, InputSpec], action_set: ActionSet, config
) -> keras.Model:
    """A model from encoded observations to logits for every head of ``action_set``.

    Inputs: "screen", "minimap" (if the encoder has minimap layers), "player" as
    ``ObservationEncoder`` makes them (with a batch axis). Outputs: a dict of unmasked logits, "function" [B, n_functions] and one
    [B, n] per argument head (spatial heads flattened row-major), and "value" [B].
    """
    # Keras mixed precision: the body computes in float16/bfloat16 (weights stay float32);
    # the logits and the value compute in float32, so softmax and returns keep their range.
    body = keras.DTypePolicy(config.precision)
    if config.dense_grid < 1:
        raise ConfigError(f"dense_grid must be at least 1, got {config.dense_grid}")
    seeds = itertools.count(config.seed * 1000)  # one seed per layer: same config, same weights

    def init(gain=1.0):
        return keras.initializers.Orthogonal(gain, seed=next(seeds))

    spatial = [k for k in ("screen", "minimap") if k in encoder_spec]
    inputs = {
        k: keras.Input(encoder_spec[k].shape, dtype=encoder_spec[k].dtype.name, name=k)
        for k in (*spatial, "player")
    }
    player = inputs["player"]

    towers = {}
    for name in spatial:
        x = _feature_layers(
            inputs[name], encoder_spec[name].layers, name, seeds, config.one_hot_max
        )
        for i, (filters, kernel) in enumerate(zip(config.conv_filters, config.conv_kernels)):
            x = layers.Conv2D(
                filters,
                kernel,
                padding="same",
                activation="relu",
                kernel_initializer=init(),
                dtype=body,
                name=f"{name}_conv{i}",
            )(x)
        towers[name] = x

    # The state at each resolution: both towers (the other one resized) and the
    # non-spatial features broadcast over every cell.
    def state_at(resolution):
        height, width = towers[resolution].shape[1:3]
        parts = [
            towers[k]
            if towers[k].shape[1:3] == (height, width)
            else layers.Resizing(height, width, dtype=body, name=f"{k}_at_{resolution}")(towers[k])
            for k in spatial
        ]
        return layers.Concatenate(dtype=body, name=f"{resolution}_state")(
            [*parts, _broadcast(player, towers[resolution])]
        )

    state = {"screen": state_at("screen")}
    if "minimap" in action_set.heads:
        state["minimap"] = state_at("minimap")

    # Non-spatial path: strided convs down to a small grid, then one dense layer.
    x, shrinks = state["screen"], 0
    while max(x.shape[1:3]) > config.dense_grid:
        x = layers.Conv2D(
            config.conv_filters[-1],
            3,
            strides=2,
            padding="same",
            activation="relu",
            kernel_initializer=init(),
            dtype=body,
            name=f"shrink_conv{shrinks}",
        )(x)
        shrinks += 1
    x = layers.Concatenate(dtype=body, name="dense_input")([layers.Flatten(dtype=body)(x), player])
    hidden = layers.Dense(
        config.dense_units, activation="relu", kernel_initializer=init(), dtype=body, name="dense"
    )(x)

    outputs = {}
    for head, size in action_set.heads.items():
        if head in SPATIAL_ARGS:  # one logit per cell of the screen or minimap
            logits = layers.Conv2D(
                1, 1, kernel_initializer=init(0.01), dtype="float32", name=f"{head}_logits"
            )(state[SPATIAL_ARGS[head]])
            outputs[head] = layers.Flatten(name=f"{head}_flat")(logits)
        else:
            outputs[head] = layers.Dense(
                size, kernel_initializer=init(0.01), dtype="float32", name=f"{head}_logits"
            )(hidden)
    value = layers.Dense(1, kernel_initializer=init(), dtype="float32", name="value_dense")(hidden)
    outputs["value"] = layers.Reshape((), name="value")(value)
    return keras.Model(inputs, outputs, name="fullyconv")


def _feature_layers(x, specs: tuple[LayerSpec, ...], name: str, seeds, one_hot_max: int):
    """[B, C, H, W] raw layer values -> [B, H, W, channels] floats.

    Categorical layers are one-hot, as in the SC2LE paper, so every category starts out
    distinct (e.g. the beacon from the marine in player_relative). Those with more than
    ``one_hot_max`` categories (unit_type: 1962) get a learned embedding instead, the
    same as one-hot then a 1x1 conv without the huge one-hot. Scalars are log-scaled
    to [0, 1].
    """
    x = ops.transpose(ops.cast(x, "int32"), (0, 2, 3, 1))
    channels = []
    for c, spec in enumerate(specs):
        layer = ops.clip(x[..., c], 0, spec.scale - 1)
        if spec.categorical and spec.scale == 2:
            channels.append(ops.expand_dims(ops.cast(layer, "float32"), -1))
        elif spec.categorical and spec.scale <= one_hot_max:
            channels.append(ops.one_hot(layer, spec.scale))
        elif spec.categorical:
            dim = math.ceil(math.log2(spec.scale))
            channels.append(
                layers.Embedding(
                    spec.scale,
                    dim,
                    embeddings_initializer=keras.initializers.RandomUniform(
                        -1.0, 1.0, seed=next(seeds)
                    ),
                    name=f"{name}_{spec.name}_embedding",
                )(layer)
            )
        else:
            scaled = ops.log1p(ops.cast(layer, "float32")) / math.log1p(spec.scale)
            channels.append(ops.expand_dims(scaled, -1))
    return layers.Concatenate(name=f"{name}_features")(channels)


def _broadcast(vector, like):
    """[B, n] repeated over every cell of ``like`` [B, H, W, c] -> [B, H, W, n]."""
    return ops.tile(vector[:, None, None, :], (1, like.shape[1], like.shape[2], 1))
