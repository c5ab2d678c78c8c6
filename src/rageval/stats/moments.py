"""The cluster bootstrap of statistics that are functions of cross-product moments
(docs/statistics.md#validity-with-intervals, #mediation).

Pearson correlations, the R² and coefficients of a least-squares fit with an intercept, and a mean over a subset
are functions of the rows' cross-product moments ``M = Z^T Z`` (``Z``: a column of ones, then the variables).
Rows are grouped into clusters (a question with all its (question, setting) rows; a QASPER paper with all its
questions'); a bootstrap replicate draws ``K`` clusters with replacement and takes every row of each drawn
cluster.  Its moments are ``sum_k w_k M_k`` (``w_k``: how often cluster ``k`` was drawn), so one product
``W @ M`` gives every replicate's moments, from which :mod:`rageval.stats.validity` and
:mod:`rageval.stats.mediation` compute their statistics.

The draws are :mod:`rageval.stats.resample`'s (``_counts``: ``np.random.default_rng(seed)``, chunks of 1,000
replicates of ``rng.integers(0, K, size=(b, K))``, uint16 up to 4,194 clusters, past that uint32 row blocks of
one stream whatever the block size), so a seed fixes every replicate, and replicate ``i`` takes the
clusters ``rng.integers`` drew in its row.  Intervals are the percentile intervals of the defined replicates
(numpy's linear rule, :func:`rageval.stats.resample.percentile_columns`); a replicate where a statistic is
undefined (a constant column in the resample) is left out and counted.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any

import numpy as np

from rageval.stats.draws import _SHARED_CELLS, RowRequest, replicate_rows
from rageval.stats.resample import _factorize, percentile_columns

__all__ = [
    "cluster_moments",
    "covariances",
    "interval_columns",
    "inversion_p",
    "moment_ci",
    "by_group",
    "group_analyses",
    "pooled_and_by_group",
    "replicate_moments",
    "run_analyses",
]

#: a variance at most this fraction of the mean square is a constant column (the rounding of E[x²] - E[x]²)
_CONSTANT = 1e-12


def cluster_moments(columns: Sequence[np.ndarray], clusters: Sequence[Any]) -> np.ndarray:
    """``K x p x p`` (``p = 1 + len(columns)``): per cluster (first-seen order) the sum over its rows of
    ``z z^T``, ``z = (1, columns...)``."""
    Z = np.column_stack([np.ones(len(clusters)), *[np.asarray(c, dtype=np.float64) for c in columns]])
    codes, K = _factorize(list(clusters))
    out = np.zeros((K, Z.shape[1], Z.shape[1]))
    np.add.at(out, codes, Z[:, :, None] * Z[:, None, :])
    return out


def replicate_moments(moments: np.ndarray, n_resamples: int, seed: int | np.random.Generator | None) -> np.ndarray:
    """``B x p x p``: each bootstrap replicate's moments (``K`` clusters drawn with replacement, the resample
    engine's draws)."""
    ((_, out),) = replicate_rows([_request(moments, n_resamples)], n_resamples, seed)
    return out.reshape(n_resamples, *moments.shape[1:])


def _request(moments: np.ndarray, n_resamples: int) -> RowRequest:
    """The :func:`~rageval.stats.draws.replicate_rows` request of the replicate moments of ``moments``."""
    K, p, _ = moments.shape
    flat = moments.reshape(K, p * p)
    return K, p * p, flat.size, lambda W: W.astype(np.float64) @ flat


#: an analysis that needs replicate moments (:func:`run_analyses`): a generator that yields its clusters' moments
#: (``K x p x p``, at most once), is sent their replicate moments (``B x p x p``) and returns its result
MomentAnalysis = Generator[np.ndarray, np.ndarray, dict[str, Any]]


def run_analyses(
    analyses: Sequence[MomentAnalysis], n_resamples: int, seed: int | np.random.Generator | None
) -> list[dict[str, Any]]:
    """Each analysis' result, the replicate moments of all of them computed together: those of the same
    clusters' count share one drawing of the counts (:func:`~rageval.stats.draws.replicate_rows`: each gets
    the draws :func:`replicate_moments` makes for it alone, so the results are those of one analysis at a
    time).  The analyses are started in order and resumed as their moments are ready, at most
    ``_SHARED_CELLS`` cells of moments and replicates waiting at once (then those are computed first)."""
    results: list[dict[str, Any] | None] = [None] * len(analyses)
    waiting: dict[int, np.ndarray] = {}

    def resume() -> None:
        idx = list(waiting)
        requests = [_request(waiting[j], n_resamples) for j in idx]
        for i, reps in replicate_rows(requests, n_resamples, seed):
            j = idx[i]
            M = waiting.pop(j)
            results[j] = _finish(analyses[j], reps.reshape(n_resamples, *M.shape[1:]))

    cells = 0
    for j, a in enumerate(analyses):
        try:
            M = next(a)
        except StopIteration as done:
            results[j] = done.value
            continue
        need = M.size + n_resamples * M.shape[1] * M.shape[2]
        if waiting and cells + need > _SHARED_CELLS:
            resume()
            cells = 0
        waiting[j] = M
        cells += need
    resume()
    return results  # type: ignore[return-value]


def _finish(analysis: MomentAnalysis, reps: np.ndarray) -> dict[str, Any]:
    try:
        analysis.send(reps)
    except StopIteration as done:
        return done.value
    raise RuntimeError("an analysis asked for replicate moments twice")


def covariances(M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(n, means, cov)`` of moments ``M`` (``... x p x p``): the row count, each variable's mean (``... x p``,
    the first the constant 1) and their covariance matrix (divisor ``n``; a constant column's variance set to
    exactly 0)."""
    n = M[..., 0, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        means = M[..., 0, :] / n[..., None]
        cov = M / n[..., None, None] - means[..., :, None] * means[..., None, :]
    p = M.shape[-1]
    diag = np.arange(p)
    with np.errstate(invalid="ignore", divide="ignore"):
        sq = M[..., diag, diag] / n[..., None]
    var = cov[..., diag, diag]
    flat = ~(var > _CONSTANT * np.maximum(sq, 1e-300))
    cov[..., diag, diag] = np.where(flat, 0.0, var)
    return n, means, cov


def moment_ci(values: np.ndarray, confidence: float) -> tuple[float | None, float | None, int]:
    """``(low, high, n_undefined)``: the percentile interval of the finite replicate values."""
    alpha = 1.0 - confidence
    (lo, hi), n_valid = percentile_columns(
        np.asarray(values, dtype=np.float64)[:, None], [50 * alpha, 100 - 50 * alpha]
    )
    ok = int(n_valid[0]) >= 2
    return (float(lo[0]) if ok else None), (float(hi[0]) if ok else None), int(values.size - n_valid[0])


def interval_columns(
    out: dict[str, Any], reps: Mapping[str, np.ndarray], keys: Sequence[str], confidence: float, n_resamples: int
) -> dict[str, int]:
    """Write each key's ``<key>_ci_low``/``<key>_ci_high`` into ``out`` (:func:`moment_ci` of its replicates
    ``reps[key]``; None when ``out[key]``, the estimate, is undefined) and return each key's count of undefined
    replicates (all ``n_resamples`` for an undefined estimate)."""
    undefined: dict[str, int] = {}
    for k in keys:
        lo, hi, n_undef = moment_ci(reps[k], confidence) if out.get(k) is not None else (None, None, n_resamples)
        out[f"{k}_ci_low"], out[f"{k}_ci_high"] = lo, hi
        undefined[k] = n_undef
    return undefined


def _sup_at_most(s: np.ndarray) -> float:
    """For sorted ``s``: the largest ``q`` in [0, 1] whose linear-rule percentile ``100 q`` is <= 0."""
    n = s.size
    if s[-1] <= 0:
        return 1.0
    j = int(np.argmax(s > 0))
    if j == 0:
        return 0.0
    return ((j - 1) + (0.0 - s[j - 1]) / (s[j] - s[j - 1])) / (n - 1)


def inversion_p(values: np.ndarray) -> float | None:
    """The test-inversion p of 0: the smallest ``alpha`` at which the ``(1 - alpha)`` percentile interval
    (numpy's linear rule) of the finite ``values`` excludes 0 (1 when none does; 0 when every replicate lies on
    one side of 0: below the resolution, ``1 / B``).  ``None`` with fewer than two finite values.

    >>> inversion_p(np.array([-1.0, 1.0, 2.0, 3.0, 4.0]))  # the 2.5th-percentile bound is 0 at alpha = 0.25
    0.25
    """
    v = np.sort(np.asarray(values, dtype=np.float64))
    v = v[np.isfinite(v)]
    if v.size < 2:
        return None
    low = _sup_at_most(v)  # the lower bound at alpha/2 <= low is <= 0
    high = 1.0 - _sup_at_most(-v[::-1])  # the upper bound at 1 - alpha/2 >= high is >= 0
    return float(min(1.0, 2.0 * min(low, 1.0 - high)))


def pooled_and_by_group(
    n: int,
    groups: Sequence[str],
    clusters: Sequence[Any] | None,
    one: Callable[[np.ndarray, list[Any] | None], MomentAnalysis],
    n_resamples: int,
    seed: int | None,
) -> dict[str, Any]:
    """``{"pooled": one(every row), "by_group": {group: one(its rows)}}`` over ``n`` aligned rows (groups in
    first-seen order): ``one(selection, the selected rows' clusters or None)`` is one analysis
    (:data:`MomentAnalysis`), as the validity and mediation analyses are per setting and pooled; they run
    together (:func:`run_analyses`)."""
    keys, analyses = group_analyses(n, groups, clusters, one)
    return by_group(keys, run_analyses(analyses, n_resamples, seed))


def group_analyses(
    n: int,
    groups: Sequence[str],
    clusters: Sequence[Any] | None,
    one: Callable[[np.ndarray, list[Any] | None], MomentAnalysis],
) -> tuple[list[str | None], list[MomentAnalysis]]:
    """The analyses of :func:`pooled_and_by_group`, not yet run: ``(their groups, None for the pooled one; the
    analyses)``."""
    g = list(groups)
    if len(g) != n:
        raise ValueError(f"groups has {len(g)} entries, the metrics {n}")
    if clusters is not None and len(clusters) != n:
        raise ValueError(f"clusters has {len(clusters)} entries, the metrics {n}")
    garr = np.array(g, dtype=object)
    carr = np.array(list(clusters), dtype=object) if clusters is not None else None

    def analysis(sel: np.ndarray) -> MomentAnalysis:
        return one(sel, carr[sel].tolist() if carr is not None else None)

    keys: list[str | None] = [*dict.fromkeys(g), None]
    return keys, [analysis(garr == k if k is not None else np.ones(n, dtype=bool)) for k in keys]


def by_group(keys: Sequence[str | None], results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The results of :func:`group_analyses`' analyses as ``{"pooled": ..., "by_group": {group: ...}}``."""
    found = dict(zip(keys, results, strict=True))
    pooled = found.pop(None)
    return {"pooled": pooled, "by_group": found}
