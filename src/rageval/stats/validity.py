"""The validity analysis of *What Survives Into Context* (docs/design.md#validity-analysis,
#references): does answer-in-context predict answer quality better than retrieval recall?

For the (question, setting) rows where answer F1, answer-in-context and recall
are all defined: Pearson r of answer-in-context with F1 and of recall with F1;
R^2 of F1 ~ recall and of F1 ~ recall + answer-in-context (OLS with intercept);
the incremental R^2 (their difference); and mean F1 when the answer is / is not in
the context.  Pooled over every row and per setting
(docs/design.md#decision-statistics-families).  A quantity that
cannot be computed (too few rows, a constant column) is ``None`` with a reason.

With ``clusters`` (a resampling unit per row: the question, or a QASPER paper) :func:`validity_analysis` adds a
**cluster bootstrap** interval to each quantity, and the difference ``r_diff = r_aic_f1 - r_recall_f1`` with its
interval and test-inversion p (the smallest alpha at which the ``(1 - alpha)`` percentile interval excludes 0): a
replicate draws the clusters with replacement and takes every row of each (:mod:`rageval.stats.moments`;
docs/statistics.md#validity-with-intervals).  The rows of one question in 17 settings are one unit, not 17.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rageval.stats.mediation import mediation_analyses
from rageval.stats.moments import (
    MomentAnalysis,
    by_group,
    cluster_moments,
    covariances,
    group_analyses,
    interval_columns,
    inversion_p,
    run_analyses,
)

__all__ = [
    "INTERVAL_KEYS",
    "validity_analyses",
    "validity_analysis",
    "validity_replicates",
    "validity_stats",
    "validity_with_mediation",
]

#: the quantities given a cluster-bootstrap interval (``KEY_ci_low``, ``KEY_ci_high``)
INTERVAL_KEYS = (
    "r_aic_f1",
    "r_recall_f1",
    "r_diff",
    "r2_recall",
    "r2_recall_aic",
    "delta_r2",
    "mean_f1_in_context",
    "mean_f1_not_in_context",
)

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


def _fit1(S: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The explained variance of one predictor: ``c² / S`` (0 for a constant predictor)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(S > 0, c * c / np.where(S > 0, S, 1.0), 0.0)


def _r2_moments(cov: np.ndarray, y: int, xs: list[int]) -> np.ndarray:
    """R² of ``y ~ xs`` (one or two predictors; OLS with intercept) from covariance matrices (``B x p x p``):
    ``c^T S^-1 c / var_y``; with two collinear predictors (or a constant one) the better single fit, which is least
    squares' fit then."""
    var_y = cov[:, y, y]
    fits = [_fit1(cov[:, x, x], cov[:, x, y]) for x in xs]
    fit = fits[0]
    if len(xs) == 2:
        i, j = xs
        s00, s11, s01 = cov[:, i, i], cov[:, j, j], cov[:, i, j]
        c0, c1 = cov[:, i, y], cov[:, j, y]
        det = s00 * s11 - s01 * s01
        ok = det > 1e-12 * s00 * s11
        with np.errstate(invalid="ignore", divide="ignore"):
            two = (s11 * c0 * c0 - 2 * s01 * c0 * c1 + s00 * c1 * c1) / np.where(ok, det, 1.0)
        fit = np.where(ok, two, np.maximum(fits[0], fits[1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var_y > 0, np.clip(fit / np.where(var_y > 0, var_y, 1.0), 0.0, 1.0), np.nan)


def _r_moments(cov: np.ndarray, i: int, j: int) -> np.ndarray:
    den = cov[:, i, i] * cov[:, j, j]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, np.clip(cov[:, i, j] / np.sqrt(den), -1.0, 1.0), np.nan)


def validity_replicates(M: np.ndarray) -> dict[str, np.ndarray]:
    """Each :data:`INTERVAL_KEYS` quantity of every replicate's moments ``M`` (``B x 5 x 5`` over
    ``(1, quality, answer-in-context, recall, in context)``; NaN where undefined, as :func:`validity_stats`)."""
    n, _, cov = covariances(M)
    few = n < _MIN_ROWS
    r_aic, r_rec = _r_moments(cov, 1, 2), _r_moments(cov, 1, 3)
    r2_rec = np.where(n < 3, np.nan, _r2_moments(cov, 1, [3]))
    r2_both = np.where(n < 4, np.nan, _r2_moments(cov, 1, [3, 2]))
    k_in = M[:, 0, 4]
    with np.errstate(invalid="ignore", divide="ignore"):
        in_ctx = np.where(k_in > 0, M[:, 4, 1] / k_in, np.nan)
        not_ctx = np.where(n - k_in > 0, (M[:, 0, 1] - M[:, 4, 1]) / (n - k_in), np.nan)
    out = {
        "r_aic_f1": np.where(few, np.nan, r_aic),
        "r_recall_f1": np.where(few, np.nan, r_rec),
        "r2_recall": r2_rec,
        "r2_recall_aic": r2_both,
        "delta_r2": r2_both - r2_rec,
        "mean_f1_in_context": in_ctx,
        "mean_f1_not_in_context": not_ctx,
    }
    out["r_diff"] = out["r_aic_f1"] - out["r_recall_f1"]
    return out


def _with_intervals(
    stats: dict[str, Any],
    y: np.ndarray,
    a: np.ndarray,
    r: np.ndarray,
    clusters: Sequence[Any],
    n_resamples: int,
    confidence: float,
) -> MomentAnalysis:
    """``stats`` (of the defined rows ``y, a, r``) with ``r_diff`` and every interval of :data:`INTERVAL_KEYS`
    (an analysis of :func:`~rageval.stats.moments.run_analyses`: its replicate moments are sent to it)."""
    a_ = stats["r_aic_f1"]
    b_ = stats["r_recall_f1"]
    out = dict(stats)
    out["r_diff"] = (a_ - b_) if (a_ is not None and b_ is not None) else None
    K = len(set(clusters))
    out.update({"n_clusters": K, "n_resamples": n_resamples, "confidence": confidence})
    if K < 2 or stats["n"] < _MIN_ROWS:
        for k in INTERVAL_KEYS:
            out[f"{k}_ci_low"] = out[f"{k}_ci_high"] = None
        out["r_diff_p"] = None
        out["interval_note"] = "fewer than 2 clusters or 3 rows: no interval"
        out["undefined_replicates"] = {}
        return out
    M = yield cluster_moments([y, a, r, (a >= 0.5).astype(np.float64)], clusters)
    reps = validity_replicates(M)
    undefined = interval_columns(out, reps, INTERVAL_KEYS, confidence, n_resamples)
    out["r_diff_p"] = inversion_p(reps["r_diff"]) if out["r_diff"] is not None else None
    out["interval_note"] = None
    out["undefined_replicates"] = undefined
    return out


def validity_analysis(
    f1: npt.ArrayLike,
    aic: npt.ArrayLike,
    recall: npt.ArrayLike,
    groups: Sequence[str],
    *,
    clusters: Sequence[Any] | None = None,
    seed: int | None = 0,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """``{"pooled": stats, "by_group": {group: stats}}`` (groups in first-seen order).

    ``clusters`` (one resampling unit per row: its question, or its QASPER paper) adds the cluster-bootstrap
    intervals, ``r_diff`` and its test-inversion p (``n_resamples`` replicates drawn from
    ``np.random.default_rng(seed)``, afresh for the pooled rows and for each group)."""
    keys, analyses = validity_analyses(
        f1, aic, recall, groups, clusters=clusters, n_resamples=n_resamples, confidence=confidence
    )
    return by_group(keys, run_analyses(analyses, n_resamples, seed))


def validity_analyses(
    f1: npt.ArrayLike,
    aic: npt.ArrayLike,
    recall: npt.ArrayLike,
    groups: Sequence[str],
    *,
    clusters: Sequence[Any] | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
) -> tuple[list[str | None], list[MomentAnalysis]]:
    """The analyses of :func:`validity_analysis`, not yet run (:func:`~rageval.stats.moments.group_analyses`;
    run them with :func:`~rageval.stats.moments.run_analyses`, with other analyses of the same rows)."""
    f1, aic, recall = (np.asarray(v, dtype=np.float64) for v in (f1, aic, recall))

    def one(sel: np.ndarray, cl: list[Any] | None) -> MomentAnalysis:
        y, a, r = f1[sel], aic[sel], recall[sel]
        stats = validity_stats(y, a, r)
        if cl is None:
            return stats
        ok = np.isfinite(y) & np.isfinite(a) & np.isfinite(r)
        kept = [c for c, keep in zip(cl, ok.tolist(), strict=True) if keep]
        return (yield from _with_intervals(stats, y[ok], a[ok], r[ok], kept, n_resamples, confidence))

    return group_analyses(f1.size, groups, clusters, one)


def validity_with_mediation(
    f1: npt.ArrayLike,
    aic: npt.ArrayLike,
    recall: npt.ArrayLike,
    groups: Sequence[str],
    *,
    clusters: Sequence[Any] | None = None,
    seed: int | None = 0,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(validity_analysis(f1, aic, recall, ...), mediation_analysis(recall, aic, f1, ...))`` of the same rows,
    run together: they resample the same clusters with one seed, so they share the draws (the results are those
    of the two apart)."""
    opts: dict[str, Any] = {"clusters": clusters, "n_resamples": n_resamples, "confidence": confidence}
    keys, v = validity_analyses(f1, aic, recall, groups, **opts)
    _, m = mediation_analyses(recall, aic, f1, groups, **opts)
    done = run_analyses([*v, *m], n_resamples, seed)
    return by_group(keys, done[: len(v)]), by_group(keys, done[len(v) :])
