"""Compressed gradients: bytes saved per method, the error each makes, and topk's feedback."""

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from sc2dask.compression import METHODS, Compressor, nbytes, unpack

pytestmark = pytest.mark.unit
SHAPES = [(5, 5, 2, 16), (16,), (2048, 256), (256, 1)]  # conv, bias, dense, head


def _grads(rng, scale=1e-3):
    return [rng.normal(0, scale, s).astype(np.float32) for s in SHAPES]


@pytest.mark.parametrize("method, at_least", [("none", 1), ("fp16", 1.99), ("int8", 3.99),
                                              ("topk", 50)])
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
        assert all(len(p.indices) == max(1, int(np.ceil(fraction * g.size)))
                   for p, g in zip(packed, grads))
        for i, (g, back) in enumerate(zip(grads, unpack(packed))):
            given_sum[i] += g
            sent_sum[i] += back
    for given_, sent, residual in zip(given_sum, sent_sum, compressor._residual):
        np.testing.assert_allclose(sent + residual, given_, atol=1e-5)


def test_unknown_methods_and_fractions_are_refused():
    with pytest.raises(ValueError, match="choose one of " + ", ".join(METHODS)):
        Compressor("zip")
    with pytest.raises(ValueError, match=r"fraction must be in \(0, 1\]"):
        Compressor("topk", 0)
