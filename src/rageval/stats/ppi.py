"""Judge-error correction: prediction-powered inference for a mean and a paired contrast
(docs/statistics.md#judge-error).

Every judge-based number rageval reports is the judge's: its interval assumes the judge is right.  With human
labels on a uniform random sample of the cohort's questions, prediction-powered inference (PPI; Angelopoulos,
Bates, Fannjiang, Jordan, Zrnic, *Science* 2023) corrects the judge's mean by the judge's error measured on the
labelled questions, and PPI++ (Angelopoulos, Duchi, Zrnic, arXiv:2311.01453, 2023) weights the judge by a
power-tuning ``lam`` in ``[0, 1]`` so that the interval is never wider (asymptotically) than the human-only one:

    theta_hat(lam) = lam * mean(yhat_unlabelled) + mean(y_labelled - lam * yhat_labelled)
    Var(theta_hat)  = Var(y - lam * yhat) / n + lam**2 * Var(yhat) / N

with ``n`` labelled and ``N`` unlabelled questions (two independent samples of the same cohort: the
unlabelled questions are the cohort's questions *without* a human label).  ``lam = 1`` is plain PPI, ``lam = 0``
the human-only mean; ``lam=None`` estimates the variance-minimizing value
``Cov(y, yhat) / ((1 + n/N) Var(yhat))`` (clipped to ``[0, 1]``).  Intervals are normal (z) intervals; the
p-value is two-sided for ``H0: mean = 0`` (a paired difference of no effect).

Without clusters the estimate, interval and p-value are ppi_py's (``ppi_mean_pointestimate``, ``ppi_mean_ci``,
``ppi_mean_pval``, the ``ppi`` extra, imported when called), all three with the same ``lam``: ppi_py's own
p-value with ``lam=None`` tunes an unclipped ``lam``, its interval a clipped one; here the clipped one serves
both, so the p-value and the interval agree.  Variances follow ppi_py's convention (``1/n``, ``np.std``).

With clusters (QASPER: a paper's questions) the same estimator's variance is the cluster-robust (sandwich)
one: with ``e_c`` the sum over cluster ``c`` of each question's deviation from its own sample's mean,

    Var(theta_hat) = sum_c ( lam * e_c(yhat, unlabelled) / N + e_c(y - lam * yhat, labelled) / n )**2

which lets a cluster hold labelled and unlabelled questions at once (questions drawn for labelling one by one),
equals an intercept-only regression's cluster-robust variance without small-sample correction, and is exactly
ppi_py's variance when every question is its own cluster.  ``lam=None`` then minimizes this variance
(clipped to ``[0, 1]``).  It is a large-sample approximation in the number of clusters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

from rageval.errors import require
from rageval.stats.holm import holm

__all__ = ["Interval", "PPIEstimate", "ppi_mean", "ppi_paired", "ppi_holm", "plan_labels"]

ArrayLike = npt.ArrayLike


@dataclass(frozen=True)
class Interval:
    """A point estimate and its ``1 - alpha`` normal interval (NaN where undefined)."""

    estimate: float
    ci_low: float
    ci_high: float

    @property
    def width(self) -> float:
        return self.ci_high - self.ci_low


@dataclass(frozen=True)
class PPIEstimate:
    """A judge-error-corrected mean (PPI++) beside the judge-only and human-only ones.

    * ``estimate``, ``ci_low``, ``ci_high``: the PPI++ estimate and its ``1 - alpha`` interval (NaN with fewer
      than two labelled questions, or two clusters holding labelled ones);
    * ``p_value``: two-sided, ``H0: mean = 0`` (meaningful for a paired difference);
    * ``lam``: the power-tuning weight used (tuned when ``lam=None`` was passed; 0 without unlabelled questions);
    * ``n_labelled``, ``n_unlabelled``: questions with and without a human label; ``n_clusters``: clusters over
      both (None without clusters);
    * ``judge_only``: the judge's mean over *all* ``n_labelled + n_unlabelled`` questions and its classical
      interval (the interval that assumes the judge is right);
    * ``human_only``: the human labels' mean over the labelled questions and its classical interval;
    * ``bias``: ``mean(human - judge)`` over the labelled questions (the judge's estimated bias);
    * ``effective_n``: the number of human-labelled questions that would give the PPI interval's width without
      the judge, ``n_labelled * (width(human_only) / width(PPI))**2`` (NaN when the PPI width is 0 or undefined).
    """

    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    lam: float
    n_labelled: int
    n_unlabelled: int
    judge_only: Interval
    human_only: Interval
    bias: float
    effective_n: float
    alpha: float
    n_clusters: int | None = None

    @property
    def width(self) -> float:
        return self.ci_high - self.ci_low

    def as_dict(self) -> dict[str, Any]:
        """Plain values, None where undefined (NaN), the two reference intervals as nested dicts."""

        def clean(x: Any) -> Any:
            if isinstance(x, dict):
                return {k: clean(v) for k, v in x.items()}
            if isinstance(x, float) and not math.isfinite(x):
                return None
            return x

        return clean(asdict(self))  # type: ignore[no-any-return]


_NAN_INTERVAL = Interval(math.nan, math.nan, math.nan)


def _ppi_py() -> Any:
    """ppi_py (the ``ppi`` extra), imported on first use: its import loads numba, statsmodels and scikit-learn.
    Without it: :class:`~rageval.errors.ModelUnavailable`, one line naming the extra (the commands print it as
    such)."""
    require("ppi_py", what="judge-error correction (PPI)")
    import ppi_py

    return ppi_py


def _vector(name: str, values: ArrayLike) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has {int(np.sum(~np.isfinite(a)))} undefined (NaN or infinite) values: drop them")
    return a


def _z(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    return NormalDist().inv_cdf(1 - alpha / 2)


def _interval(estimate: float, se: float, alpha: float) -> Interval:
    h = _z(alpha) * se
    return Interval(float(estimate), float(estimate - h), float(estimate + h))


def _two_sided_p(estimate: float, se: float) -> float:
    """Two-sided normal p-value for ``H0: mean = 0``; the standard error is floored at 1e-16 (as ppi_py does)."""
    return math.erfc(abs(estimate) / max(se, 1e-16) / math.sqrt(2))


def _codes(
    clusters_labelled: ArrayLike | None, clusters_unlabelled: ArrayLike | None, n: int, n_unl: int
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """Integer cluster codes for the labelled and unlabelled questions (one numbering over both), or None."""
    if clusters_labelled is None and clusters_unlabelled is None:
        return None
    if clusters_labelled is None or clusters_unlabelled is None:
        raise ValueError("clusters_labelled and clusters_unlabelled go together: give both or neither")
    cl, cu = np.asarray(clusters_labelled), np.asarray(clusters_unlabelled)
    if cl.shape != (n,) or cu.shape != (n_unl,):
        raise ValueError(
            f"clusters_labelled has shape {cl.shape} for {n} labelled questions, "
            f"clusters_unlabelled {cu.shape} for {n_unl} unlabelled ones"
        )
    _, inverse = np.unique(np.concatenate([cl.astype(str), cu.astype(str)]), return_inverse=True)
    inverse = inverse.ravel()
    return inverse[:n], inverse[n:], int(inverse.max()) + 1 if inverse.size else 0


def _cluster_sums(values: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray:
    """Per cluster, the sum of the values' deviations from their mean."""
    if values.size == 0:
        return np.zeros(k)
    return np.bincount(codes, weights=values - values.mean(), minlength=k)


def _lam_ppi_py(y: np.ndarray, yhat: np.ndarray, yhat_unl: np.ndarray) -> float:
    """ppi_py's power-tuning for a mean (``_calc_lam_glm`` with ``clip=True``):
    ``Cov(y, yhat) / ((1 + n/N) Var(yhat over both samples))``, ``Cov`` with ``1/n``, ``Var`` with ``1/(n+N-1)``;
    0 when the judge is constant."""
    n, n_unl = y.size, yhat_unl.size
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var = float(np.var(np.concatenate([yhat, yhat_unl]), ddof=1))
    if var <= 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / n_unl) * var), 0.0, 1.0))


def _unclustered(
    y: np.ndarray, yhat: np.ndarray, yhat_unl: np.ndarray, alpha: float, lam: float | None
) -> tuple[float, float, float, float, float]:
    """(estimate, ci_low, ci_high, p_value, lam) from ppi_py."""
    ppi = _ppi_py()
    lam = _lam_ppi_py(y, yhat, yhat_unl) if lam is None else float(lam)
    est = float(np.asarray(ppi.ppi_mean_pointestimate(y, yhat, yhat_unl, lam=lam)).ravel()[0])
    lo, hi = (float(np.asarray(b).ravel()[0]) for b in ppi.ppi_mean_ci(y, yhat, yhat_unl, alpha=alpha, lam=lam))
    p = float(np.asarray(ppi.ppi_mean_pval(y, yhat, yhat_unl, null=0, lam=lam)).ravel()[0])
    return est, lo, hi, p, lam


def _clustered(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unl: np.ndarray,
    codes: tuple[np.ndarray, np.ndarray, int],
    alpha: float,
    lam: float | None,
) -> tuple[float, float, float, float, float]:
    """(estimate, ci_low, ci_high, p_value, lam) with the cluster-robust variance of the module docstring."""
    gl, gu, k = codes
    n, n_unl = y.size, yhat_unl.size
    b = _cluster_sums(y, gl, k) / n
    d = _cluster_sums(yhat, gl, k) / n
    a = _cluster_sums(yhat_unl, gu, k) / n_unl if n_unl else np.zeros(k)
    # Var(lam) = sum_c (b_c - lam * (d_c - a_c))**2, minimized at lam = sum b (d - a) / sum (d - a)**2
    if lam is None:
        denom = float(np.sum((d - a) ** 2))
        lam = float(np.clip(np.sum(b * (d - a)) / denom, 0.0, 1.0)) if denom > 0 and n_unl else 0.0
    lam = float(lam)
    est = (lam * float(yhat_unl.mean()) if n_unl else 0.0) + float(np.mean(y - lam * yhat))
    se = math.sqrt(float(np.sum((b - lam * (d - a)) ** 2)))
    ci = _interval(est, se, alpha)
    return est, ci.ci_low, ci.ci_high, _two_sided_p(est, se), lam


def _classical(values: np.ndarray, codes: np.ndarray | None, k: int, alpha: float) -> Interval:
    """The mean and its normal interval (``np.std / sqrt(n)``, or the cluster-robust standard error)."""
    if values.size < 2:
        return _NAN_INTERVAL
    if codes is None:
        se = float(values.std()) / math.sqrt(values.size)
    else:
        if np.unique(codes).size < 2:
            return _NAN_INTERVAL
        se = math.sqrt(float(np.sum((_cluster_sums(values, codes, k) / values.size) ** 2)))
    return _interval(float(values.mean()), se, alpha)


def ppi_mean(
    y_labelled: ArrayLike,
    yhat_labelled: ArrayLike,
    yhat_unlabelled: ArrayLike,
    *,
    alpha: float = 0.05,
    clusters_labelled: ArrayLike | None = None,
    clusters_unlabelled: ArrayLike | None = None,
    lam: float | None = None,
) -> PPIEstimate:
    """The PPI++ estimate of a mean from human labels on some questions and the judge's values on all.

    ``y_labelled``: the human-based per-question values on the labelled questions; ``yhat_labelled``: the judge's
    values on the same questions (same order); ``yhat_unlabelled``: the judge's values on the cohort's other
    questions (no human label).  The labelled questions must be a uniform random sample of the cohort; every
    value finite (drop undefined questions first and count them).  ``lam=None``: PPI++ power tuning; ``lam=1``:
    plain PPI; ``lam=0``: the human-only mean.  ``clusters_labelled``/``clusters_unlabelled``: a cluster label per
    question (e.g. the paper of a QASPER question), one numbering over both; the variance is then the
    cluster-robust one (module docstring).  Without unlabelled questions ``lam`` is 0 (the human-only mean).

    >>> r = ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1], lam=1.0)
    >>> round(r.estimate, 4), round(r.bias, 4), r.judge_only.estimate
    (0.9167, 0.25, 0.6)
    """
    y = _vector("y_labelled", y_labelled)
    yhat = _vector("yhat_labelled", yhat_labelled)
    yhat_unl = _vector("yhat_unlabelled", yhat_unlabelled)
    if y.size != yhat.size:
        raise ValueError(f"y_labelled has {y.size} values, yhat_labelled {yhat.size}: one of each per question")
    if lam is not None and not 0 <= lam <= 1:
        raise ValueError(f"lam must lie in [0, 1] or be None (tuned), got {lam}")
    _z(alpha)
    n, n_unl = y.size, yhat_unl.size
    codes = _codes(clusters_labelled, clusters_unlabelled, n, n_unl)
    k = codes[2] if codes else 0
    yhat_all = np.concatenate([yhat, yhat_unl])
    judge_only = _classical(yhat_all, None if codes is None else np.concatenate(codes[:2]), k, alpha)
    human_only = _classical(y, None if codes is None else codes[0], k, alpha)
    bias = float(np.mean(y - yhat)) if n else math.nan
    n_clusters = None if codes is None else int(np.unique(np.concatenate(codes[:2])).size)
    if not math.isfinite(human_only.estimate):  # fewer than 2 labelled questions (or clusters holding them)
        est, lo, hi, p, used = math.nan, math.nan, math.nan, math.nan, math.nan if lam is None else float(lam)
    elif n_unl == 0:
        if lam not in (None, 0, 0.0):
            raise ValueError("without unlabelled questions the estimate is the human-only mean: lam must be 0 or None")
        est, lo, hi, used = human_only.estimate, human_only.ci_low, human_only.ci_high, 0.0
        p = _two_sided_p(est, (hi - lo) / (2 * _z(alpha)))
    elif codes is None:
        est, lo, hi, p, used = _unclustered(y, yhat, yhat_unl, alpha, lam)
    else:
        est, lo, hi, p, used = _clustered(y, yhat, yhat_unl, codes, alpha, lam)
    width = hi - lo
    eff = n * (human_only.width / width) ** 2 if math.isfinite(width) and width > 0 else math.nan
    return PPIEstimate(
        estimate=est,
        ci_low=lo,
        ci_high=hi,
        p_value=p,
        lam=used,
        n_labelled=n,
        n_unlabelled=n_unl,
        judge_only=judge_only,
        human_only=human_only,
        bias=bias,
        effective_n=float(eff),
        alpha=alpha,
        n_clusters=n_clusters,
    )


def ppi_paired(
    y_a_labelled: ArrayLike,
    y_b_labelled: ArrayLike,
    yhat_a_labelled: ArrayLike,
    yhat_b_labelled: ArrayLike,
    yhat_a_unlabelled: ArrayLike,
    yhat_b_unlabelled: ArrayLike,
    *,
    alpha: float = 0.05,
    clusters_labelled: ArrayLike | None = None,
    clusters_unlabelled: ArrayLike | None = None,
    lam: float | None = None,
) -> PPIEstimate:
    """The PPI++ estimate of a paired contrast ``A - B``: :func:`ppi_mean` over per-question differences (the
    human differences on the labelled questions, the judge's differences on all).  The labelled questions carry
    labels on both sides; the p-value tests ``A - B = 0``."""
    names = ("y_a_labelled", "y_b_labelled", "yhat_a_labelled", "yhat_b_labelled")
    ya, yb, ha, hb = (
        _vector(nm, v) for nm, v in zip(names, (y_a_labelled, y_b_labelled, yhat_a_labelled, yhat_b_labelled))
    )
    ua, ub = _vector("yhat_a_unlabelled", yhat_a_unlabelled), _vector("yhat_b_unlabelled", yhat_b_unlabelled)
    if not ya.size == yb.size == ha.size == hb.size or ua.size != ub.size:
        raise ValueError(
            f"paired values differ in length: labelled {ya.size}/{yb.size}/{ha.size}/{hb.size}, "
            f"unlabelled {ua.size}/{ub.size}"
        )
    return ppi_mean(
        ya - yb,
        ha - hb,
        ua - ub,
        alpha=alpha,
        clusters_labelled=clusters_labelled,
        clusters_unlabelled=clusters_unlabelled,
        lam=lam,
    )


def ppi_holm(estimates: Sequence[PPIEstimate]) -> np.ndarray:
    """Holm-adjusted PPI p-values of one family of contrasts (:func:`rageval.stats.holm`, in input order; an
    undefined p-value counts in the family and stays undefined)."""
    return holm([e.p_value for e in estimates])


def _planning_moments(
    y: np.ndarray, yhat: np.ndarray, yhat_unl: np.ndarray, codes: tuple[np.ndarray, np.ndarray, int] | None
) -> tuple[float, float, float, float]:
    """Per-question ``Var(y)``, ``Cov(y, yhat)``, ``Var(yhat)`` on the labelled questions and ``Var(yhat)`` on
    all; with clusters, ``n`` times the cluster-robust variance of the mean (a design effect folded in)."""
    if codes is None:
        yc, hc, ac = y - y.mean(), yhat - yhat.mean(), np.concatenate([yhat, yhat_unl])
        return float(np.mean(yc * yc)), float(np.mean(yc * hc)), float(np.mean(hc * hc)), float(np.var(ac))
    gl, gu, k = codes
    b, d = _cluster_sums(y, gl, k), _cluster_sums(yhat, gl, k)
    all_codes = np.concatenate([gl, gu])
    e = _cluster_sums(np.concatenate([yhat, yhat_unl]), all_codes, k)
    n, m = y.size, y.size + yhat_unl.size
    return float(b @ b / n), float(b @ d / n), float(d @ d / n), float(e @ e / m)


def plan_labels(
    y_labelled: ArrayLike,
    yhat_labelled: ArrayLike,
    yhat_unlabelled: ArrayLike,
    *,
    half_width: float,
    alpha: float = 0.05,
    clusters_labelled: ArrayLike | None = None,
    clusters_unlabelled: ArrayLike | None = None,
) -> int:
    """How many labelled questions *in total* give a PPI++ interval of half-width ``half_width``.

    The cohort is fixed: ``M = n_labelled + n_unlabelled`` questions, of which ``n`` would be labelled and
    ``M - n`` not.  From the labels so far (or a pilot) it estimates ``V_y = Var(y)``, ``C = Cov(y, yhat)``,
    ``V_l = Var(yhat)`` on the labelled questions and ``V_h = Var(yhat)`` on all, and uses the PPI++ variance of
    a mean (Angelopoulos, Duchi, Zrnic 2023, arXiv:2311.01453, the mean-estimation example):

        sigma2(n, lam) = (V_y - 2 lam C + lam**2 V_l) / n + lam**2 V_h / (M - n)
        lam*(n)       = (C / n) / (V_l / n + V_h / (M - n))      (clipped to [0, 1]; 0 at n = M)

    and returns the smallest ``n >= 2`` with ``z_(1 - alpha/2) * sqrt(sigma2(n, lam*(n))) <= half_width``.  With
    ``V_l = V_h`` and no clipping, ``sigma2 = V_y (1 - rho**2) / n + rho**2 V_y / M`` (``rho`` the human-judge
    correlation): the judge buys the ``rho**2`` share of the variance.  With clusters the three moments are
    ``n`` times the cluster-robust variances of the means (future labels assumed to cluster as the present
    ones do).  ppi_py's ``ppi_power`` optimizes the unlabelled sample's size as well (at a cost per
    prediction); here the unlabelled questions are the rest of a fixed cohort, so the formula is solved directly.

    Raises ValueError when even labelling all ``M`` questions would not reach ``half_width`` (the message gives
    the smallest reachable half-width).
    """
    y = _vector("y_labelled", y_labelled)
    yhat = _vector("yhat_labelled", yhat_labelled)
    yhat_unl = _vector("yhat_unlabelled", yhat_unlabelled)
    if y.size != yhat.size:
        raise ValueError(f"y_labelled has {y.size} values, yhat_labelled {yhat.size}: one of each per question")
    if y.size < 2:
        raise ValueError(f"planning needs at least 2 labelled questions, got {y.size}")
    if not half_width > 0:
        raise ValueError(f"half_width must be positive, got {half_width}")
    z = _z(alpha)
    codes = _codes(clusters_labelled, clusters_unlabelled, y.size, yhat_unl.size)
    v_y, c, v_l, v_h = _planning_moments(y, yhat, yhat_unl, codes)
    m_total = y.size + yhat_unl.size
    n = np.arange(2, m_total + 1, dtype=np.float64)
    rest = m_total - n
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = v_l / n + np.where(rest > 0, v_h / np.where(rest > 0, rest, 1), 0.0)
        lam = np.where((rest > 0) & (denom > 0), np.clip((c / n) / denom, 0.0, 1.0), 0.0)
        imputed = np.where(rest > 0, lam**2 * v_h / np.where(rest > 0, rest, 1), 0.0)
    sigma2 = np.maximum(v_y - 2 * lam * c + lam**2 * v_l, 0.0) / n + imputed
    reached = np.flatnonzero(z * np.sqrt(sigma2) <= half_width)
    if reached.size == 0:
        best = float(z * np.sqrt(sigma2.min()))
        raise ValueError(
            f"half-width {half_width} is out of reach in a cohort of {m_total} questions: labelling all of them "
            f"gives about {best:.4g}"
        )
    return int(n[reached[0]])
