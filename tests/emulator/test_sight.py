"""The fog's sight grid: the vectorised drawing agrees with the definition, cell by cell."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sc2dask.emulator.world import sight_grid

eye = st.tuples(
    st.floats(0, 64, allow_nan=False),
    st.floats(0, 64, allow_nan=False),
    st.sampled_from([0.5, 7.0, 8.0, 9.0, 11.0, 12.5]),
)


def reference(eyes, width, height) -> np.ndarray:
    """A cell is seen when its centre is within some eye's sight radius."""
    ys, xs = np.mgrid[0:height, 0:width] + 0.5
    seen = np.zeros((height, width), dtype=bool)
    for x, y, s in eyes:
        seen |= (xs - x) ** 2 + (ys - y) ** 2 <= s**2
    return seen


@pytest.mark.unit
@settings(max_examples=200, deadline=None)
@given(st.lists(eye, max_size=12))
def test_sight_grid_is_the_union_of_the_discs_even_at_the_map_edges(eyes):
    np.testing.assert_array_equal(sight_grid(eyes, 64, 64), reference(eyes, 64, 64))
