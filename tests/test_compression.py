"""Compressed gradients and weight deltas: bytes saved per method, the error each makes,
and topk's feedback."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from sc2dask.compression import (
    METHODS,
    Compressor,
    DeltaSender,
    WeightDelta,
    apply_delta,
    flatten,
    nbytes,
    payload_nbytes,
    unflatten,
    unpack,
)

pytestmark = pytest.mark.unit
SHAPES = [(5, 5, 2, 16), (16,), (2048, 256), (256, 1)]  # conv, bias, dense, head


def _grads(rng, scale=1e-3):
    return [rng.normal(0, scale, s).astype(np.float32) for s in SHAPES]


@pytest.mark.parametrize(
    "method, at_least", [("none", 1), ("fp16", 1.99), ("int8", 3.99), ("topk", 50)]
)
def test_each_method_sends_its_share_of_the_bytes(method, at_least):
    grads = _grads(np.random.default_rng(0))
    packed = Compressor(method, fraction=0.01).pack(grads)
    ratio = nbytes(grads) / nbytes(packed)
    assert ratio >= at_least, ratio
    assert [g.shape for g in unpack(packed)] == [g.shape for g in grads]
    assert all(g.dtype == np.float32 for g in unpack(packed))


@pytest.mark.parametrize("method, tolerance", [("none", 0), ("fp16", 1e-3), ("int8", 1 / 127)])
def test_quantised_arrays_are_within_their_step_of_the_original(method, tolerance):
    grads = _grads(np.random.default_rng(1))
    for g, back in zip(grads, unpack(Compressor(method).pack(grads))):
        assert np.max(np.abs(back - g)) <= tolerance * np.max(np.abs(g)) + 1e-12


@hsettings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.floats(0.001, 0.5), st.integers(1, 30))
def test_topk_error_feedback_sends_everything_eventually(seed, fraction, rounds):
    """What topk holds back stays in the residual: after any number of rounds, the sum of
    what was sent plus the residual is the sum of every gradient given to it."""
    rng = np.random.default_rng(seed)
    compressor = Compressor("topk", fraction)
    given_sum = [np.zeros(s, np.float64) for s in SHAPES]
    sent_sum = [np.zeros(s, np.float64) for s in SHAPES]
    for _ in range(rounds):
        grads = _grads(rng)
        packed = compressor.pack(grads)
        assert all(
            len(p.indices) == max(1, int(np.ceil(fraction * g.size))) for p, g in zip(packed, grads)
        )
        for i, (g, back) in enumerate(zip(grads, unpack(packed))):
            given_sum[i] += g
            sent_sum[i] += back
    for given_, sent, residual in zip(given_sum, sent_sum, compressor._residual):
        np.testing.assert_allclose(sent + residual, given_, atol=1e-5)


@hsettings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), max_size=3), max_size=6))
def test_flat_arrays_come_back_as_they_were(shapes):
    """One buffer for any list of arrays, empty ones and scalars included."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    flat = flatten(arrays)
    assert flat.nbytes == nbytes(arrays) and flat.values.ndim == 1
    back = unflatten(flat)
    assert [a.shape for a in back] == [a.shape for a in arrays]
    for a, b in zip(arrays, back):
        np.testing.assert_array_equal(a, b)


def test_unknown_methods_and_fractions_are_refused():
    with pytest.raises(ValueError, match="choose one of " + ", ".join(METHODS)):
        Compressor("zip")
    with pytest.raises(ValueError, match=r"fraction must be in \(0, 1\]"):
        Compressor("topk", 0)


@hsettings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from(METHODS), st.integers(1, 5), st.integers(1, 12))
def test_a_host_fed_weight_deltas_holds_what_the_client_thinks_it_holds(
    seed, method, every, versions
):
    """Whatever the method and layering, the host (applying each delta to what it holds)
    and the client's copy agree exactly, and after a version that carries everything the
    host is within one delta's rounding of the store's weights."""
    rng = np.random.default_rng(seed)
    heads = [False, False, False, True]
    sender = DeltaSender(method, 0.05, every, heads)
    weights = _grads(rng, 1.0)
    host = unflatten(sender.encode("host", 0, weights))
    for version in range(1, versions + 1):
        weights = [w + u for w, u in zip(weights, _grads(rng, 1e-2))]
        payload = sender.encode("host", version, weights)
        assert isinstance(payload, WeightDelta) == (method != "none" or every > 1)
        host = (
            apply_delta(host, payload) if isinstance(payload, WeightDelta) else unflatten(payload)
        )
        if isinstance(payload, WeightDelta):
            sent = [entry is not None for entry in payload.packed]
            everything = version % every == 0
            assert sent == ([True] * 4 if everything else heads), (version, sent)
        _, copy, _ = sender._held.get("host", (None, host, None))
        for h, c in zip(host, copy):
            np.testing.assert_array_equal(h, c)
    if method in ("none", "fp16") and versions % every == 0:
        for h, w in zip(host, weights):
            np.testing.assert_allclose(h, w, atol=1e-3 * max(1.0, np.abs(w).max()))


def test_weight_deltas_are_the_methods_share_of_whole_weights():
    rng = np.random.default_rng(3)
    weights = _grads(rng, 1.0)
    for method, at_least in (("fp16", 1.99), ("int8", 3.99), ("topk", 50)):
        sender = DeltaSender(method, 0.01)
        assert payload_nbytes(sender.encode("h", 0, weights)) == nbytes(weights)  # whole
        moved = [w + u for w, u in zip(weights, _grads(rng))]
        assert nbytes(weights) / payload_nbytes(sender.encode("h", 1, moved)) >= at_least
    layered = DeltaSender("none", every=4, always=[False, False, False, True])
    layered.encode("h", 0, weights)
    assert payload_nbytes(layered.encode("h", 1, weights)) == weights[3].nbytes
