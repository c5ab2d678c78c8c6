"""Mediation of retrieval recall's effect on answer quality by answer-in-context (docs/statistics.md#mediation),
the packing paper's claim that what reaches the reader's context carries recall's effect.

Three least-squares fits with an intercept over the (question, setting) rows where all three are defined:

* a-path: ``AIC ~ recall``, slope ``a``.  Answer-in-context is binary: this is a **linear probability model**, as
  the paper reports it (not a logit);
* b-path and direct effect: ``quality ~ recall + AIC``, slopes ``c_prime`` (recall) and ``b`` (AIC);
* total effect: ``quality ~ recall``, slope ``c``.

The indirect effect is ``a * b``; with least squares on the same rows ``c = c_prime + a * b`` exactly.  The
proportion mediated ``a * b / c`` is ``None`` (with a reason) when ``|c| <= 1e-9``: a ratio to no total effect.
With ``clusters`` each quantity gets a cluster-bootstrap percentile interval (the clusters drawn with replacement,
each with all its rows: :mod:`rageval.stats.moments`, the resample engine's draws).  Pooled over every row and
per group (setting).  Correlational: the slopes are associations across questions and settings, conditional on
the reader; no causal effect is identified.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rageval.stats.moments import (
    MomentAnalysis,
    by_group,
    cluster_moments,
    covariances,
    group_analyses,
    interval_columns,
    run_analyses,
)

__all__ = ["MEDIATION_KEYS", "mediation_analyses", "mediation_analysis", "mediation_replicates", "mediation_stats"]

#: the quantities of one mediation analysis, in the order of the tables
MEDIATION_KEYS = ("a", "b", "c_prime", "indirect", "total", "proportion_mediated")

#: a total effect at most this large in magnitude leaves the proportion mediated undefined
C_ZERO = 1e-9

_MIN_ROWS = 4


def mediation_replicates(M: np.ndarray) -> dict[str, np.ndarray]:
    """Each :data:`MEDIATION_KEYS` quantity of moments ``M`` (``B x 4 x 4`` over ``(1, recall, AIC, quality)``);
    NaN where undefined (fewer than 4 rows, a constant recall, recall and AIC collinear, ``|c| <= C_ZERO``)."""
    n, _, cov = covariances(M)
    v_r, v_m, c_rm = cov[:, 1, 1], cov[:, 2, 2], cov[:, 1, 2]
    c_ry, c_my = cov[:, 1, 3], cov[:, 2, 3]
    det = v_r * v_m - c_rm * c_rm
    few = n < _MIN_ROWS
    with np.errstate(invalid="ignore", divide="ignore"):
        ok_r = (v_r > 0) & ~few
        ok_2 = ok_r & (v_m > 0) & (det > 1e-12 * v_r * v_m)
        a = np.where(ok_r, c_rm / v_r, np.nan)
        total = np.where(ok_r, c_ry / v_r, np.nan)
        c_prime = np.where(ok_2, (v_m * c_ry - c_rm * c_my) / det, np.nan)
        b = np.where(ok_2, (v_r * c_my - c_rm * c_ry) / det, np.nan)
        indirect = a * b
        prop = np.where(np.abs(total) > C_ZERO, indirect / total, np.nan)
    return {"a": a, "b": b, "c_prime": c_prime, "indirect": indirect, "total": total, "proportion_mediated": prop}


def _aligned(recall: npt.ArrayLike, aic: npt.ArrayLike, quality: npt.ArrayLike) -> tuple[np.ndarray, ...]:
    r, m, y = (np.asarray(v, dtype=np.float64) for v in (recall, aic, quality))
    if not (r.shape == m.shape == y.shape):
        raise ValueError(f"recall, aic and quality must have the same length, got {r.shape}, {m.shape}, {y.shape}")
    return r, m, y


def _reason(n: int, est: dict[str, float | None]) -> str | None:
    if n < _MIN_ROWS:
        return f"fewer than {_MIN_ROWS} rows with recall, answer-in-context and quality all defined"
    if est["a"] is None:
        return "recall is constant: no path from it"
    if est["b"] is None:
        return "answer-in-context is constant or collinear with recall: b and the direct effect undefined"
    if est["proportion_mediated"] is None:
        return f"total effect |c| <= {C_ZERO:g}: proportion mediated undefined"
    return None


def mediation_stats(
    recall: npt.ArrayLike,
    aic: npt.ArrayLike,
    quality: npt.ArrayLike,
    *,
    clusters: Sequence[Any] | None = None,
    seed: int | np.random.Generator | None = 0,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The mediation quantities of aligned arrays (NaN = undefined; such rows dropped), with cluster-bootstrap
    intervals when ``clusters`` (one per row) is given.

    >>> s = mediation_stats([0, 0, 1, 1, 1, 0], [0, 1, 1, 1, 0, 0], [0, 1, 1, 0, 1, 0])
    >>> [round(s[k], 4) for k in ("a", "b", "c_prime", "indirect", "total", "proportion_mediated")]
    [0.3333, 0.25, 0.25, 0.0833, 0.3333, 0.25]
    """
    (out,) = run_analyses([_mediation(recall, aic, quality, clusters, n_resamples, confidence)], n_resamples, seed)
    return out


def _mediation(
    recall: npt.ArrayLike,
    aic: npt.ArrayLike,
    quality: npt.ArrayLike,
    clusters: Sequence[Any] | None,
    n_resamples: int,
    confidence: float,
) -> MomentAnalysis:
    """:func:`mediation_stats` as an analysis of :func:`~rageval.stats.moments.run_analyses`."""
    r, m, y = _aligned(recall, aic, quality)
    ok = np.isfinite(r) & np.isfinite(m) & np.isfinite(y)
    r, m, y = r[ok], m[ok], y[ok]
    n = int(ok.sum())
    point = mediation_replicates(cluster_moments([r, m, y], [0] * n)) if n else None
    est = {k: (float(point[k][0]) if point is not None and np.isfinite(point[k][0]) else None) for k in MEDIATION_KEYS}
    out: dict[str, Any] = {"n": n, "n_dropped": int((~ok).sum()), **est, "note": _reason(n, est)}
    if clusters is None:
        return out
    if len(clusters) != ok.size:
        raise ValueError(f"clusters has {len(clusters)} entries, the metrics {ok.size}")
    cl = [c for c, keep in zip(clusters, ok.tolist(), strict=True) if keep]
    K = len(set(cl))
    out.update({"n_clusters": K, "n_resamples": n_resamples, "confidence": confidence})
    if K < 2 or n < _MIN_ROWS:
        out.update({f"{k}_ci_{s}": None for k in MEDIATION_KEYS for s in ("low", "high")})
        out["undefined_replicates"] = {}
        return out
    reps = mediation_replicates((yield cluster_moments([r, m, y], cl)))
    out["undefined_replicates"] = interval_columns(out, reps, MEDIATION_KEYS, confidence, n_resamples)
    return out


def mediation_analysis(
    recall: npt.ArrayLike,
    aic: npt.ArrayLike,
    quality: npt.ArrayLike,
    groups: Sequence[str],
    *,
    clusters: Sequence[Any] | None = None,
    seed: int | None = 0,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """``{"pooled": stats, "by_group": {group: stats}}`` of :func:`mediation_stats` (groups in first-seen order;
    each analysis draws its replicates from ``np.random.default_rng(seed)`` afresh)."""
    keys, analyses = mediation_analyses(
        recall, aic, quality, groups, clusters=clusters, n_resamples=n_resamples, confidence=confidence
    )
    return by_group(keys, run_analyses(analyses, n_resamples, seed))


def mediation_analyses(
    recall: npt.ArrayLike,
    aic: npt.ArrayLike,
    quality: npt.ArrayLike,
    groups: Sequence[str],
    *,
    clusters: Sequence[Any] | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
) -> tuple[list[str | None], list[MomentAnalysis]]:
    """The analyses of :func:`mediation_analysis`, not yet run (as
    :func:`~rageval.stats.validity.validity_analyses`)."""
    r, m, y = _aligned(recall, aic, quality)

    def one(sel: np.ndarray, cl: list[Any] | None) -> MomentAnalysis:
        return _mediation(r[sel], m[sel], y[sel], cl, n_resamples, confidence)

    return group_analyses(r.size, groups, clusters, one)
