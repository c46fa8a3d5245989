"""A policy over macros that decides on numbers, not pictures: an MLP over the player's
scalars and ``macro_state``'s counts (``game/macro_state.py``).

TStarBot1 and Thought-SC2 beat the built-in AI with macro actions chosen from such
counts alone; with no feature layers to render or convolve, a step costs the emulator
and the network a fraction of FullyConv's.
"""

from __future__ import annotations

from collections.abc import Mapping

import keras
from keras import layers

from ..errors import ConfigError
from .spaces import ActionSet, InputSpec


def build_macro_mlp(encoder_spec: Mapping[str, InputSpec], action_set: ActionSet, config):
    """A model from "player" and "macro" (``ObservationEncoder``'s, with a batch axis) to
    "function" logits [B, n_macros] and "value" [B]: ``build_fullyconv``'s outputs for a
    set with no argument heads, its output layers named as ``SplitsHeads.head_weights`` reads."""
    if "macro" not in encoder_spec or action_set.argument_heads:
        raise ConfigError(
            f"The macro MLP plays a set of macros (action-set macro), not {action_set.name!r}; "
            f"use sc2dask.agents.fullyconv_a2c:FullyConvA2C for pysc2's functions."
        )
    body = keras.DTypePolicy(config.precision)
    inputs = {
        k: keras.Input(encoder_spec[k].shape, dtype="float32", name=k) for k in ("player", "macro")
    }
    x = layers.Concatenate(dtype=body, name="numbers")([inputs["player"], inputs["macro"]])
    for i, units in enumerate(config.mlp_units):
        x = layers.Dense(
            units,
            activation="tanh",
            kernel_initializer=keras.initializers.Orthogonal(2**0.5, seed=config.seed * 1000 + i),
            dtype=body,
            name=f"mlp{i}",
        )(x)
    seed = config.seed * 1000 + len(config.mlp_units)
    logits = layers.Dense(
        action_set.heads["function"],
        kernel_initializer=keras.initializers.Orthogonal(0.01, seed=seed),
        dtype="float32",
        name="function_logits",
    )(x)
    value = layers.Dense(
        1,
        kernel_initializer=keras.initializers.Orthogonal(1.0, seed=seed + 1),
        dtype="float32",
        name="value_dense",
    )(x)
    outputs = {"function": logits, "value": layers.Reshape((), name="value")(value)}
    return keras.Model(inputs, outputs, name="macro_mlp")
