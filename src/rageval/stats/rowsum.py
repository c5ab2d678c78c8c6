"""Column sums of a matrix too large to copy, taken a row block at a time with the bits of the whole sum.

numpy sums a matrix of two or more columns over its rows in order (row 0, plus row 1, plus row 2, ...), so a row
block summed with the running sums as one more first row gives the same bits as the whole matrix's sum
(``tests/test_stats_rowsum.py`` checks it on this numpy). A questions x contrasts matrix of a million-record run is
some 100 MB: its absolute values are never held whole.
"""

from __future__ import annotations

import numpy as np

__all__ = ["abs_column_sums"]

#: cells of a row block (float64: 8 MiB)
BLOCK_CELLS = 2**20


def abs_column_sums(X: np.ndarray) -> np.ndarray:
    """``np.abs(X).sum(axis=0)`` of a 2-D float64 ``X``, the same bits, without a copy of ``X``."""
    K, C = X.shape
    rows = max(1, BLOCK_CELLS // max(C, 1))
    if C < 2 or K <= rows:  # one column is summed pairwise, not in order; a small matrix is copied whole
        out: np.ndarray = np.abs(X).sum(axis=0)
        return out
    acc = np.abs(X[:rows]).sum(axis=0)
    buf = np.empty((rows + 1, C))
    for start in range(rows, K, rows):
        block = X[start : start + rows]
        b = buf[: len(block) + 1]
        b[0] = acc
        np.abs(block, out=b[1:])
        acc = b.sum(axis=0)
    return acc
