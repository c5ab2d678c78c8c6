"""``percentile_columns`` gives the values numpy's linear rule gives on each column's sorted finite values, NaN
left out, whatever the ties, NaNs and infinities, in place or not."""

from __future__ import annotations

import numpy as np
import pytest

from rageval.stats.resample import percentile_columns


def _by_sorting(values: np.ndarray, qs: list[float]) -> np.ndarray:
    """The definition, column by column: sort the column (NaN last), count its finite values n, and read
    percentile q at position q/100 * (n - 1) between the two order statistics around it."""
    out = np.full((len(qs), values.shape[1]), np.nan)
    for c in range(values.shape[1]):
        col = np.sort(values[:, c])
        n = int(np.isfinite(values[:, c]).sum())
        if n == 0:
            continue
        for i, q in enumerate(qs):
            pos = q / 100 * (n - 1)
            lo = int(np.floor(pos))
            hi = min(lo + 1, n - 1)
            with np.errstate(invalid="ignore"):
                out[i, c] = col[lo] + (col[hi] - col[lo]) * (pos - lo)
    return out


def test_hand_computed_column():
    # 5 finite values, sorted 1 2 3 4 10: the 25th percentile sits at position 1.0 (2), the 90th at 3.6
    # (4 + 0.6 * (10 - 4) = 7.6); the NaN is left out
    x = np.array([[10.0], [np.nan], [2.0], [4.0], [1.0], [3.0]])
    out, n = percentile_columns(x, [25.0, 90.0])
    assert n.tolist() == [5]
    assert out[:, 0].tolist() == pytest.approx([2.0, 7.6])
    assert x[1, 0] != x[1, 0] and x[0, 0] == 10.0  # not in place: the input is as it was


@pytest.mark.parametrize("inplace", [False, True])
def test_equals_a_full_sort(inplace):
    rng = np.random.default_rng(7)
    for trial in range(300):
        rows, cols = int(rng.integers(1, 200)), int(rng.integers(1, 8))
        x = rng.normal(size=(rows, cols))
        if trial % 3 == 0:
            x = np.round(x, 1)  # ties
        if trial % 2 == 0:
            x[rng.random(x.shape) < rng.random()] = np.nan  # columns with different finite counts, some none
        if trial % 5 == 0:
            x[rng.random(x.shape) < 0.1] = np.inf
        qs = [2.5, 97.5] if trial % 4 else [0.0, 50.0, 12.5, 100.0]
        want = _by_sorting(x, qs)
        with np.errstate(invalid="ignore"):
            got, n = percentile_columns(x.copy() if not inplace else x, qs, inplace=inplace)
        assert np.array_equal(got, want, equal_nan=True), trial
        assert n.tolist() == np.isfinite(x).sum(axis=0).tolist()


def test_matches_numpy_nanpercentile_on_finite_values():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1001, 4))
    x[rng.random(x.shape) < 0.2] = np.nan
    got, _ = percentile_columns(x, [2.5, 97.5])
    assert np.allclose(got, np.nanpercentile(x, [2.5, 97.5], axis=0), rtol=0, atol=1e-12)
