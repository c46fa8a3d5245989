"""The documents' own promises: every results file is indexed, with the claim it backs."""

import pathlib

import pytest

pytestmark = pytest.mark.unit

RESULTS = pathlib.Path(__file__).parents[1] / "benchmarks" / "results"


def test_every_results_file_is_named_in_the_results_index():
    index = (RESULTS / "README.md").read_text()
    missing = [
        p.name
        for p in sorted(RESULTS.iterdir())
        if p.is_file() and p.name != "README.md" and p.name not in index
    ]
    assert not missing, f"add these to benchmarks/results/README.md: {missing}"
