"""Compressed gradients (what a host sends the client in sync and async modes) and
compressed weight deltas (what the client sends a host, in every mode).

``none`` sends float32 arrays as they are. ``fp16`` and ``int8`` quantise each array with a
scale of its own (its largest magnitude), for 2x and 4x fewer bytes. ``topk`` sends the
``fraction`` of entries largest in magnitude (as float16 with a scale, and their int32
indices: 6 bytes each) and keeps the rest as a residual that is added to the next
gradient (error feedback, Stich et al. 2018), so nothing is lost, only delayed.

Weights travel to a host as the packed difference from the weights that host holds
(``DeltaSender``). The client keeps a copy of what each host holds, updated with exactly
what was sent, so the rounding of one delta is part of the next: the host's weights
follow the store's with an error of one delta's rounding, never more.

A packed gradient is a list of ``Packed`` tuples of numpy arrays and numbers, or with
``none`` one ``Flat`` buffer: plain data that pickles anywhere, as everything that crosses
the network does. Whole weights travel as ``Flat`` too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

METHODS = ("none", "fp16", "int8", "topk")


class Packed(NamedTuple):
    """One array as it travels: ``values`` (and ``indices`` for topk) with its ``scale``."""

    method: str
    shape: tuple[int, ...]
    values: np.ndarray
    scale: float = 1.0
    indices: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        return int(self.values.nbytes + (0 if self.indices is None else self.indices.nbytes))


class Flat(NamedTuple):
    """Arrays as one buffer (of their common dtype) and their shapes. Dask gives each
    array of a list a frame and a header of its own, and at hundreds of hosts writing and
    reading those was a large share of the client's cost per host
    (docs/results/scaling.md); one buffer is one frame."""

    values: np.ndarray
    shapes: tuple[tuple[int, ...], ...]

    @property
    def nbytes(self) -> int:
        return int(self.values.nbytes)


def flatten(arrays: Sequence[np.ndarray]) -> Flat:
    shapes = tuple(tuple(np.shape(a)) for a in arrays)
    if not arrays:
        return Flat(np.zeros(0, np.float32), shapes)
    return Flat(np.concatenate([np.ravel(a) for a in arrays]), shapes)


def unflatten(flat: Flat) -> list[np.ndarray]:
    """The arrays of ``flat``, as views of its buffer."""
    ends = np.cumsum([math.prod(shape) for shape in flat.shapes])
    starts = [0, *ends[:-1]]
    return [
        flat.values[start:end].reshape(shape)
        for start, end, shape in zip(starts, ends, flat.shapes)
    ]


class Compressor:
    """Packs one host's gradients; holds the topk residual between calls."""

    def __init__(self, method: str = "none", fraction: float = 0.01):
        if method not in METHODS:
            raise ValueError(f"Unknown compression {method!r}; choose one of {', '.join(METHODS)}")
        if not 0 < fraction <= 1:
            raise ValueError(f"topk fraction must be in (0, 1], not {fraction}")
        self.method, self.fraction = method, fraction
        self._residual: list[np.ndarray] | None = None

    def pack(self, grads: Sequence[np.ndarray]) -> Flat | list[Packed]:
        """``grads`` as they should travel (one buffer for ``none``)."""
        if self.method == "none":
            return flatten(grads)
        if self.method == "topk":
            return self._topk(grads)
        return [_quantise(np.asarray(g, np.float32), self.method) for g in grads]

    def _topk(self, grads: Sequence[np.ndarray]) -> list[Packed]:
        if self._residual is None or [r.shape for r in self._residual] != [g.shape for g in grads]:
            self._residual = [np.zeros(g.shape, np.float32) for g in grads]
        packed = []
        for i, g in enumerate(grads):
            total = (self._residual[i] + g).ravel()
            k = max(1, math.ceil(self.fraction * total.size))
            keep = np.argpartition(np.abs(total), total.size - k)[total.size - k :]
            chosen = total[keep]
            scale = float(np.abs(chosen).max()) or 1.0
            values = (chosen / scale).astype(np.float16)
            sent = values.astype(np.float32) * scale
            total[keep] -= sent  # what rounding to float16 lost stays in the residual too
            self._residual[i] = total.reshape(g.shape)
            packed.append(Packed("topk", tuple(g.shape), values, scale, keep.astype(np.int32)))
        return packed


def _quantise(g: np.ndarray, method: str) -> Packed:
    scale = float(np.abs(g).max()) or 1.0
    if method == "fp16":
        return Packed("fp16", g.shape, (g / scale).astype(np.float16), scale)
    return Packed("int8", g.shape, np.rint(g / scale * 127).astype(np.int8), scale / 127)


def unpack(grads: Flat | Sequence) -> list[np.ndarray]:
    """float32 arrays from what ``Compressor.pack`` sent (arrays pass through)."""
    if isinstance(grads, Flat):
        return unflatten(grads)
    out = []
    for g in grads:
        if not isinstance(g, Packed):
            out.append(np.asarray(g))
        elif g.method == "topk":
            dense = np.zeros(int(np.prod(g.shape)), np.float32)
            dense[g.indices] = g.values.astype(np.float32) * g.scale
            out.append(dense.reshape(g.shape))
        else:
            out.append(g.values.astype(np.float32) * np.float32(g.scale))
    return out


def nbytes(grads: Flat | Sequence) -> int:
    """Bytes of gradients as they travel, packed or not."""
    if isinstance(grads, Flat):
        return grads.nbytes
    return int(sum(g.nbytes for g in grads))


class WeightDelta(NamedTuple):
    """New weights as packed differences from the weights of version ``base``; an entry
    of None leaves that array as the host holds it (layered synchronisation)."""

    base: int
    packed: list


def apply_delta(weights: Sequence[np.ndarray], delta: WeightDelta) -> list[np.ndarray]:
    """The weights a host holds after ``delta`` (it must hold ``delta.base``)."""
    return [w if d is None else w + unpack([d])[0] for w, d in zip(weights, delta.packed)]


class DeltaSender:
    """What the client sends each host: whole weights the first time (and with ``none``
    and no layering, where a delta is no smaller), then packed deltas from the copy it
    keeps of what the host holds. Used from one thread per host at a time.

    Layered synchronisation (``every`` > 1): the arrays marked in ``always`` (the policy
    and value heads) travel with every new version, the others only once ``every``
    versions have passed since they last did.
    """

    def __init__(
        self,
        method: str = "none",
        fraction: float = 0.01,
        every: int = 1,
        always: Sequence[bool] | None = None,
    ):
        Compressor(method, fraction)  # checks both
        if every < 1:
            raise ValueError(
                f"layered sync sends the other layers every k >= 1 updates, not {every}"
            )
        self.method, self.fraction, self.every = method, fraction, every
        self.always = None if always is None else list(always)
        self._held: dict = {}  # host key -> (version, the weights it holds, version of the rest)
        self._flat: tuple[Sequence[np.ndarray], Flat] | None = None  # the last whole weights sent

    def encode(self, key, version: int, weights: Sequence[np.ndarray]):
        """What to send host ``key`` so that it holds ``weights`` of ``version`` (or, with
        layering, that version's heads)."""
        held = self._held.get(key)
        if held is None or (self.method == "none" and self.every == 1):
            return self.whole(key, version, weights)
        base, copy, rest_at = held
        send_rest = self.every == 1 or version - rest_at >= self.every
        chosen = [
            i
            for i in range(len(weights))
            if send_rest or (self.always is not None and self.always[i])
        ]
        differences = [np.asarray(weights[i], np.float32) - copy[i] for i in chosen]
        # A fresh compressor each time: the copy already carries what was not sent yet.
        packed = (
            differences
            if self.method == "none"  # layered: the chosen arrays, each an entry
            else Compressor(self.method, self.fraction).pack(differences)
        )
        entries = [None] * len(weights)
        for i, entry in zip(chosen, packed):
            entries[i] = entry
        delta = WeightDelta(base, entries)
        self._held[key] = (version, apply_delta(copy, delta), version if send_rest else rest_at)
        return delta

    def whole(self, key, version: int, weights: Sequence[np.ndarray]) -> Flat:
        """Whole weights (a new host, or one that lost what it held). The buffer is made
        once per ``weights`` list: give a new list for new weights, as
        ``ParameterStore.snapshot`` does, never the same one changed in place."""
        if self.method != "none" or self.every > 1:
            self._held[key] = (version, [np.array(w, np.float32) for w in weights], version)
        if self._flat is None or self._flat[0] is not weights:  # once for all the hosts
            self._flat = (weights, flatten(weights))
        return self._flat[1]


def payload_nbytes(payload) -> int:
    """Bytes of weights as they travel: whole, or a packed delta."""
    if isinstance(payload, WeightDelta):
        return nbytes([entry for entry in payload.packed if entry is not None])
    return nbytes(payload)
