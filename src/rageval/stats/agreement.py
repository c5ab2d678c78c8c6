"""Agreement between two raters on binary labels: the confusion table, the agreement rate and Cohen's kappa.

Used by the second-evaluator audit (judge vs judge) and by the human calibration of
the citation scores (human vs automatic).  Labels are 0/1 (bools accepted); a pair
where either side is missing (None) is left out and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["confusion", "cohen_kappa", "agreement"]


def confusion(a: Sequence[Any], b: Sequence[Any]) -> tuple[list[list[int]], int]:
    """``([[n00, n01], [n10, n11]], n_missing)``: rows are ``a``'s label, columns ``b``'s.

    >>> confusion([1, 0, 1, None], [1, 1, 0, 0])
    ([[0, 1], [1, 1]], 1)
    """
    if len(a) != len(b):
        raise ValueError(f"the two label lists differ in length: {len(a)} and {len(b)}")
    table = [[0, 0], [0, 0]]
    missing = 0
    for x, y in zip(a, b):
        if x is None or y is None:
            missing += 1
            continue
        x, y = int(x), int(y)
        if x not in (0, 1) or y not in (0, 1):
            raise ValueError(f"labels must be 0 or 1, got {x!r} and {y!r}")
        table[x][y] += 1
    return table, missing


def cohen_kappa(table: Sequence[Sequence[int]]) -> float | None:
    """Cohen's kappa of a 2x2 confusion table: ``(p_o - p_e) / (1 - p_e)``, ``p_e`` from the margins.

    None when the table is empty or chance agreement is 1 (both raters used one label only).

    >>> round(cohen_kappa([[20, 5], [10, 15]]), 4)
    0.4
    """
    n = sum(sum(r) for r in table)
    if n == 0:
        return None
    po = (table[0][0] + table[1][1]) / n
    rows = [sum(r) / n for r in table]
    cols = [(table[0][j] + table[1][j]) / n for j in (0, 1)]
    pe = rows[0] * cols[0] + rows[1] * cols[1]
    if pe >= 1.0:
        return None
    return (po - pe) / (1.0 - pe)


def agreement(a: Sequence[Any], b: Sequence[Any]) -> dict[str, Any]:
    """``{n, n_missing, agree, rate, kappa, confusion}`` of two label lists (rows of ``confusion``: ``a``)."""
    table, missing = confusion(a, b)
    n = sum(sum(r) for r in table)
    agree = table[0][0] + table[1][1]
    return {
        "n": n,
        "n_missing": missing,
        "agree": agree,
        "rate": agree / n if n else None,
        "kappa": cohen_kappa(table),
        "confusion": table,
    }
