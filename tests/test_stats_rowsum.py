"""abs_column_sums: the bits of ``np.abs(X).sum(axis=0)`` with no copy of X (rageval.stats.rowsum)."""

import numpy as np
import pytest

from rageval.stats import rowsum
from rageval.stats.rowsum import abs_column_sums


@pytest.mark.parametrize("shape", [(1, 1), (7, 1), (1000, 1), (5, 2), (1001, 3), (999, 13), (4096, 24), (3, 40)])
def test_the_same_bits_as_the_whole_sum_over_several_row_blocks(monkeypatch, shape):
    monkeypatch.setattr(rowsum, "BLOCK_CELLS", 64)  # rows per block: 64 // columns (a block of one row at most 64)
    rng = np.random.default_rng(sum(shape))
    X = rng.standard_normal(shape) * rng.integers(1, 10**6, size=(shape[0], 1))
    X[rng.random(shape) < 0.1] = 0.0
    before = X.tobytes()
    want = np.abs(X).sum(axis=0)
    got = abs_column_sums(X)
    assert got.tobytes() == want.tobytes()
    assert X.tobytes() == before  # X itself is not written


def test_by_hand():
    X = np.array([[1.0, -2.0], [-3.0, 4.0], [0.5, -0.25]])
    assert abs_column_sums(X).tolist() == [4.5, 6.25]
    assert abs_column_sums(np.zeros((0, 3))).tolist() == [0.0, 0.0, 0.0]
