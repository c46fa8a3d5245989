"""The relational network (Zambaldi et al. 2018, "Relational Deep Reinforcement Learning",
arXiv:1806.01830): FullyConv's input encoding, then self-attention between the cells of the
state, so that what the agent does at one cell can depend on any other cell.

FullyConv's spatial logits see only the few cells its two convs reach; here the cells of
the state become entities (their features plus their x, y coordinates) and blocks of
multi-head dot-product attention (MHDPA) relate every entity to every other one.

Changes from the paper's SC2 agent: attention runs on a grid of at most
``config.entity_grid`` cells a side (strided convs shrink the state first), since its cost
grows with the square of the number of entities; the spatial logits read the attended grid,
upsampled, beside FullyConv's full-resolution state, so a click keeps a single cell's
precision; and there is no recurrent core, so rollouts carry no state.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import keras
import numpy as np
from keras import layers, ops

from .fullyconv import NetworkParts
from .spaces import ActionSet, InputSpec


def build_relational(
    encoder_spec: Mapping[str, InputSpec], action_set: ActionSet, config
) -> keras.Model:
    """A model with ``build_fullyconv``'s inputs and outputs (a dict of unmasked logits,
    "function" and one per argument head, and "value" [B]), and its head layers' names
    (``<head>_logits``, ``value_dense``), so ``a2c.Policy`` and ``a2c.Learner`` serve it.

    ``config`` is a ``RelationalConfig`` (``sc2dask/agents/relational_a2c.py``).
    """
    parts = NetworkParts(config)
    body, init = parts.body, parts.init
    inputs, state = parts.encode(encoder_spec, action_set)  # FullyConv's own encoding

    # Entities: the cells of the screen state, shrunk to the entity grid, with coordinates.
    x = parts.shrink(state["screen"], config.entity_grid, "entity_conv")
    height, width, channels = x.shape[1:]
    x = layers.Concatenate(dtype=body, name="entity_features")([x, _coordinates(x)])
    entities = layers.Reshape((height * width, channels + 2), dtype=body, name="entities")(x)
    size = config.attention_heads * config.attention_size
    entities = layers.Dense(size, kernel_initializer=init(), dtype=body, name="entity_embedding")(
        entities
    )
    for block in range(config.attention_blocks):
        entities = _attention_block(entities, config, f"attention{block}", init, body)

    # Spatial heads: the attended grid at each resolution, beside that resolution's state.
    grid = layers.Reshape((height, width, size), dtype=body, name="attended_grid")(entities)
    spatial: dict[str, keras.KerasTensor] = {}
    for resolution, at in state.items():
        if grid.shape[1:3] != at.shape[1:3]:
            upsampled = layers.Resizing(
                *at.shape[1:3], dtype=body, name=f"attended_at_{resolution}"
            )(grid)
        else:
            upsampled = grid
        spatial[resolution] = layers.Concatenate(dtype=body, name=f"{resolution}_relational")(
            [at, upsampled]
        )

    # Non-spatial heads and the value: feature-wise max over entities, then a dense layer.
    pooled = layers.GlobalMaxPooling1D(dtype=body, name="entity_max")(entities)
    x = layers.Concatenate(dtype=body, name="dense_input")([pooled, inputs["player"]])
    return keras.Model(inputs, parts.heads(action_set, spatial, x), name="relational")


def _attention_block(entities, config, name: str, init, body):
    """One MHDPA block over [B, N, d] entities (d = heads * attention_size): each entity
    attends to all, then residual and layer norm, a two-layer MLP shared by every entity,
    residual and layer norm again."""
    n, d = entities.shape[1:]
    heads, size = config.attention_heads, config.attention_size

    def project(part):  # [B, N, d] -> [B, heads, N, size]
        x = layers.Dense(d, kernel_initializer=init(), dtype=body, name=f"{name}_{part}")(entities)
        return ops.transpose(ops.reshape(x, (-1, n, heads, size)), (0, 2, 1, 3))

    query, key, value = project("query"), project("key"), project("value")
    logits = ops.matmul(query, ops.transpose(key, (0, 1, 3, 2))) / math.sqrt(size)
    # Softmax in float32 under mixed precision, then back to the body's dtype.
    weights = ops.cast(ops.softmax(ops.cast(logits, "float32"), axis=-1), value.dtype)
    attended = ops.reshape(ops.transpose(ops.matmul(weights, value), (0, 2, 1, 3)), (-1, n, d))
    x = layers.LayerNormalization(dtype=body, name=f"{name}_norm0")(entities + attended)
    mlp = layers.Dense(
        config.attention_mlp_units,
        activation="relu",
        kernel_initializer=init(),
        dtype=body,
        name=f"{name}_mlp0",
    )(x)
    mlp = layers.Dense(d, kernel_initializer=init(), dtype=body, name=f"{name}_mlp1")(mlp)
    return layers.LayerNormalization(dtype=body, name=f"{name}_norm1")(x + mlp)


def _coordinates(like):
    """[B, H, W, 2]: each cell's row and column, scaled to [-1, 1], for ``like`` [B, H, W, c]."""
    height, width = like.shape[1:3]
    rows, columns = np.meshgrid(
        np.linspace(-1.0, 1.0, height), np.linspace(-1.0, 1.0, width), indexing="ij"
    )
    grid = np.stack([rows, columns], axis=-1)[None].astype(np.float32)
    return ops.ones_like(like[..., :1]) * ops.cast(grid, like.dtype)
