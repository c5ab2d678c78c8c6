"""The validity analysis of *What Survives Into Context* (docs/design.md#validity-analysis,
#references): does answer-in-context predict answer quality better than retrieval recall?

For the (question, setting) rows where answer F1, answer-in-context and recall
are all defined: Pearson r of answer-in-context with F1 and of recall with F1;
R^2 of F1 ~ recall and of F1 ~ recall + answer-in-context (OLS with intercept);
the incremental R^2 (their difference); and mean F1 when the answer is / is not in
the context.  Pooled over every row and per setting
(docs/design.md#decision-statistics-families).  A quantity that
cannot be computed (too few rows, a constant column) is ``None`` with a reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["validity_analysis", "validity_stats"]

_MIN_ROWS = 3


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < _MIN_ROWS:
        return None
    xc, yc = x - x.mean(), y - y.mean()
    den = np.sqrt((xc * xc).sum() * (yc * yc).sum())
    if den <= 0:
        return None
    return float(np.clip((xc * yc).sum() / den, -1.0, 1.0))


def _r2(y: np.ndarray, cols: list[np.ndarray]) -> float | None:
    n = y.size
    if n < len(cols) + 2:
        return None
    sst = float(((y - y.mean()) ** 2).sum())
    if sst <= 0:
        return None
    A = np.column_stack([np.ones(n), *cols])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ coef
    return float(max(0.0, 1.0 - (resid @ resid) / sst))


def validity_stats(f1: npt.ArrayLike, aic: npt.ArrayLike, recall: npt.ArrayLike) -> dict[str, Any]:
    """The validity quantities for aligned arrays (NaN = undefined; such rows are dropped).

    >>> s = validity_stats([1, 0, 1, 0, 1, 0], [1, 0, 1, 0, 1, 1], [1, 1, 0, 0, 1, 0])
    >>> s["n"], round(s["r_aic_f1"], 3), round(s["r_recall_f1"], 3), round(s["delta_r2"], 3)
    (6, 0.707, 0.333, 0.5)
    """
    f1, aic, rec = (np.asarray(v, dtype=np.float64) for v in (f1, aic, recall))
    if not (f1.shape == aic.shape == rec.shape):
        raise ValueError(f"f1, aic and recall must have the same length, got {f1.shape}, {aic.shape}, {rec.shape}")
    ok = np.isfinite(f1) & np.isfinite(aic) & np.isfinite(rec)
    y, a, r = f1[ok], aic[ok], rec[ok]
    r2_rec = _r2(y, [r])
    r2_both = _r2(y, [r, a])
    in_ctx, not_ctx = y[a >= 0.5], y[a < 0.5]
    out: dict[str, Any] = {
        "n": int(ok.sum()),
        "n_dropped": int((~ok).sum()),
        "r_aic_f1": _pearson(a, y),
        "r_recall_f1": _pearson(r, y),
        "r2_recall": r2_rec,
        "r2_recall_aic": r2_both,
        "delta_r2": (r2_both - r2_rec) if (r2_both is not None and r2_rec is not None) else None,
        "mean_f1_in_context": float(in_ctx.mean()) if in_ctx.size else None,
        "n_in_context": int(in_ctx.size),
        "mean_f1_not_in_context": float(not_ctx.mean()) if not_ctx.size else None,
        "n_not_in_context": int(not_ctx.size),
    }
    if out["n"] < _MIN_ROWS:
        out["note"] = f"fewer than {_MIN_ROWS} rows with F1, answer-in-context and recall all defined"
    elif out["r_aic_f1"] is None or out["r_recall_f1"] is None:
        out["note"] = "a constant column: correlation undefined"
    else:
        out["note"] = None
    return out


def validity_analysis(
    f1: npt.ArrayLike, aic: npt.ArrayLike, recall: npt.ArrayLike, groups: Sequence[str]
) -> dict[str, Any]:
    """``{"pooled": stats, "by_group": {group: stats}}`` (groups in first-seen order)."""
    g = list(groups)
    f1, aic, recall = (np.asarray(v, dtype=np.float64) for v in (f1, aic, recall))
    if len(g) != f1.size:
        raise ValueError(f"groups has {len(g)} entries, the metrics {f1.size}")
    names = list(dict.fromkeys(g))
    garr = np.array(g, dtype=object)
    by = {name: validity_stats(f1[garr == name], aic[garr == name], recall[garr == name]) for name in names}
    return {"pooled": validity_stats(f1, aic, recall), "by_group": by}
