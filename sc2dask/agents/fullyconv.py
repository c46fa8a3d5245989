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
from typing import Any

import keras
from keras import layers, ops

from ..errors import ConfigError
from .spaces import SPATIAL_ARGS, ActionSet, InputSpec, LayerSpec


def build_fullyconv(
    encoder_spec: Mapping[str, InputSpec], action_set: ActionSet, config
) -> keras.Model:
    """A model from encoded observations to logits for every head of ``action_set``.

    Inputs: "screen", "minimap" (if the encoder has minimap layers), "player" as
    ``ObservationEncoder`` makes them (with a batch axis). Outputs: a dict of unmasked
    logits, "function" [B, n_functions] and one [B, n] per argument head (spatial heads
    flattened row-major), and "value" [B].
    """
    if config.dense_grid < 1:
        raise ConfigError(f"dense_grid must be at least 1, got {config.dense_grid}")
    parts = NetworkParts(config)
    inputs, state = parts.encode(encoder_spec, action_set)
    # Non-spatial path: strided convs down to a small grid, then one dense layer.
    x = parts.shrink(state["screen"], config.dense_grid, "shrink_conv")
    x = layers.Concatenate(dtype=parts.body, name="dense_input")(
        [layers.Flatten(dtype=parts.body)(x), inputs["player"]]
    )
    return keras.Model(inputs, parts.heads(action_set, state, x), name="fullyconv")


class NetworkParts:
    """FullyConv's parts, shared with the networks built on its encoding (``relational``).

    Keras mixed precision: the body computes in float16/bfloat16 (weights stay float32);
    the logits and the value compute in float32, so softmax and returns keep their range.
    Every layer draws the next seed: the same config gives the same weights.
    """

    def __init__(self, config):
        self.config = config
        self.body = keras.DTypePolicy(config.precision)
        self.seeds = itertools.count(config.seed * 1000)

    def init(self, gain: float = 1.0):
        return keras.initializers.Orthogonal(gain, seed=next(self.seeds))

    def encode(self, encoder_spec: Mapping[str, InputSpec], action_set: ActionSet):
        """(inputs, the state at each resolution a head needs): feature layers, two convs
        per tower, both towers at that resolution and the player's features over every
        cell."""
        config, body = self.config, self.body
        spatial = [k for k in ("screen", "minimap") if k in encoder_spec]
        inputs = {
            k: keras.Input(encoder_spec[k].shape, dtype=encoder_spec[k].dtype.name, name=k)
            for k in (*spatial, "player")
        }
        towers = {}
        for name in spatial:
            x = _feature_layers(
                inputs[name], encoder_spec[name].layers, name, self.seeds, config.one_hot_max
            )
            for i, (filters, kernel) in enumerate(zip(config.conv_filters, config.conv_kernels)):
                x = self.conv(filters, kernel, f"{name}_conv{i}")(x)
            towers[name] = x

        def state_at(resolution):
            height, width = towers[resolution].shape[1:3]
            parts = [
                towers[k]
                if towers[k].shape[1:3] == (height, width)
                else layers.Resizing(height, width, dtype=body, name=f"{k}_at_{resolution}")(
                    towers[k]
                )
                for k in spatial
            ]
            return layers.Concatenate(dtype=body, name=f"{resolution}_state")(
                [*parts, broadcast(inputs["player"], towers[resolution])]
            )

        state = {"screen": state_at("screen")}
        if "minimap" in action_set.heads:
            state["minimap"] = state_at("minimap")
        return inputs, state

    def conv(self, filters: int, kernel: int, name: str, **options) -> layers.Conv2D:
        """A "same"-padded ReLU conv of the body, with the next seed's weights."""
        return layers.Conv2D(
            filters,
            kernel,
            padding="same",
            activation="relu",
            kernel_initializer=self.init(),
            dtype=self.body,
            name=name,
            **options,
        )

    def shrink(self, x, grid: int, name: str):
        """Strided 3x3 convs until ``x`` [B, H, W, c] is at most ``grid`` cells a side."""
        shrinks = 0
        while max(x.shape[1:3]) > grid:
            x = self.conv(self.config.conv_filters[-1], 3, f"{name}{shrinks}", strides=2)(x)
            shrinks += 1
        return x

    def heads(self, action_set: ActionSet, spatial: Mapping[str, Any], features) -> dict:
        """The outputs: one logit per cell of ``spatial[resolution]`` for each spatial
        head, and a dense layer over ``features`` for the other heads and the value. The
        head layers are named ``<head>_logits`` and ``value_dense`` (``head_weights``)."""
        hidden = layers.Dense(
            self.config.dense_units,
            activation="relu",
            kernel_initializer=self.init(),
            dtype=self.body,
            name="dense",
        )(features)
        outputs = {}
        widened = {}
        for head, size in action_set.heads.items():
            if head in SPATIAL_ARGS:  # one logit per cell of the screen or minimap
                resolution = SPATIAL_ARGS[head]
                if resolution not in widened:
                    widened[resolution] = self.widen(spatial[resolution], resolution)
                logits = layers.Conv2D(
                    1, 1, kernel_initializer=self.init(0.01), dtype="float32", name=f"{head}_logits"
                )(widened[resolution])
                outputs[head] = layers.Flatten(name=f"{head}_flat")(logits)
            else:
                outputs[head] = layers.Dense(
                    size, kernel_initializer=self.init(0.01), dtype="float32", name=f"{head}_logits"
                )(hidden)
        value = layers.Dense(
            1, kernel_initializer=self.init(), dtype="float32", name="value_dense"
        )(hidden)
        outputs["value"] = layers.Reshape((), name="value")(value)
        return outputs

    def widen(self, state, resolution: str):
        """``state`` beside what dilated 3x3 convs (``config.spatial_dilations``) read
        around each cell, for the spatial logits. A tower's two convs show a cell's logit
        only the cells its kernels reach (7x7 with FullyConv's 5 and 3): on a 32x32 screen
        too few to tell which shard is nearest the army, or where the fog's edge is beyond
        the army's sight. Each rate r adds 2r cells to that view (2, 4, 8: 35x35), with no
        loss of resolution, so a click keeps a single cell's precision."""
        dilations = self.config.spatial_dilations
        if not dilations:
            return state
        filters = self.config.conv_filters[-1]
        x = self.conv(filters, 1, f"{resolution}_widen_in")(state)
        for i, rate in enumerate(dilations):
            wider = self.conv(filters, 3, f"{resolution}_widen{i}", dilation_rate=rate)(x)
            x = layers.Add(dtype=self.body, name=f"{resolution}_widened{i}")([x, wider])
        return layers.Concatenate(dtype=self.body, name=f"{resolution}_widened")([state, x])


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


def broadcast(vector, like):
    """[B, n] repeated over every cell of ``like`` [B, H, W, c] -> [B, H, W, n]."""
    return ops.tile(vector[:, None, None, :], (1, like.shape[1], like.shape[2], 1))
