"""Holm's step-down adjustment over a whole contrast family."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["holm", "holm_grouped"]


def holm(p_values: Sequence[float | None] | np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values, in the input order.

    The family size ``m`` is every entry, *including* undefined ones (``None``/NaN):
    an undefined p-value is ranked as if it were 1 (the conservative choice: it can
    only raise the others' multipliers) and stays undefined in the output.

    Sorted ascending, ``p_(i)`` becomes ``max_{j<=i} min(1, (m - j + 1) p_(j))``.

    >>> holm([0.01, 0.04, 0.03, 0.005]).round(4).tolist()
    [0.03, 0.06, 0.06, 0.02]
    >>> holm([0.01, None]).tolist()
    [0.02, nan]
    """
    p = np.array([np.nan if v is None else v for v in np.asarray(p_values, dtype=object).ravel()], dtype=np.float64)
    finite = np.isfinite(p)
    if np.any((p[finite] < 0) | (p[finite] > 1)):
        raise ValueError(f"p-values must lie in [0, 1], got {p[finite & ((p < 0) | (p > 1))].tolist()}")
    m = p.size
    if m == 0:
        return p
    filled = np.where(finite, p, 1.0)
    order = np.argsort(filled, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * filled[order])
    adj_sorted = np.maximum.accumulate(scaled)
    out = np.empty(m)
    out[order] = adj_sorted
    out[~finite] = np.nan
    return out


def holm_grouped(p_values: Sequence[float | None] | np.ndarray, groups: Sequence[object] | None = None) -> np.ndarray:
    """Holm-adjusted p-values with a separate family per group label (``None``: one family), in input order.

    >>> holm_grouped([0.01, 0.04, 0.03, 0.005], ["a", "a", "b", "b"]).round(4).tolist()
    [0.02, 0.04, 0.03, 0.01]
    """
    p = np.array([np.nan if v is None else v for v in np.asarray(p_values, dtype=object).ravel()], dtype=np.float64)
    if groups is None:
        return holm(p)
    groups = list(groups)
    if len(groups) != p.size:
        raise ValueError(f"groups has {len(groups)} labels for {p.size} p-values")
    out = np.full(p.size, np.nan)
    for g in dict.fromkeys(groups):
        idx = np.array([i for i, x in enumerate(groups) if x == g], dtype=np.intp)
        out[idx] = holm(p[idx])
    return out
