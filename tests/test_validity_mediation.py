"""The validity analysis with cluster-bootstrap intervals and the mediation analysis (rageval.stats.validity,
rageval.stats.mediation, rageval.stats.moments): hand computations on tables of at most 12 rows, numpy/scipy
references on random data, and the cluster bootstrap against an independent implementation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from rageval.stats import mediation_analysis, mediation_stats, validity_analysis
from rageval.stats.mediation import MEDIATION_KEYS, mediation_replicates
from rageval.stats.moments import cluster_moments, inversion_p, replicate_moments
from rageval.stats.validity import INTERVAL_KEYS, validity_replicates, validity_stats

# ---- hand computations ------------------------------------------------------------------------------------------

# six rows: quality y, answer-in-context a, recall r
Y = [1, 0, 1, 0, 1, 0]
A = [1, 0, 1, 0, 1, 1]
R = [1, 1, 0, 0, 1, 0]


def test_validity_by_hand():
    # means 1/2, 2/3, 1/2; cov(a, y) = E[ay] - 1/3 = 1/2 - 1/3 = 1/6; var a = 2/9, var y = 1/4
    # r_aic = (1/6) / sqrt(2/9 * 1/4) = 1/sqrt(2); cov(r, y) = 1/3 - 1/4 = 1/12, var r = 1/4: r_recall = 1/3
    s = validity_analysis(Y, A, R, ["s"] * 6, clusters=list("aabbcc"), seed=0, n_resamples=200)["pooled"]
    assert s["r_aic_f1"] == pytest.approx(1 / math.sqrt(2))
    assert s["r_recall_f1"] == pytest.approx(1 / 3)
    assert s["r_diff"] == pytest.approx(1 / math.sqrt(2) - 1 / 3)
    # in context: rows 0, 2, 4, 5 (y = 1, 1, 1, 0); not: rows 1, 3 (y = 0, 0)
    assert (s["mean_f1_in_context"], s["mean_f1_not_in_context"]) == (0.75, 0.0)
    assert s["r2_recall"] == pytest.approx(1 / 9)  # one predictor: r²
    assert s["n_clusters"] == 3 and s["n_resamples"] == 200
    for k in INTERVAL_KEYS:
        assert s[f"{k}_ci_low"] is None or s[f"{k}_ci_low"] <= s[f"{k}_ci_high"]


def test_replicate_moments_by_hand():
    # clusters a = rows 0-1, b = rows 2-3, c = rows 4-5: a replicate that draws b, b, c has the rows 2, 3, 2, 3, 4, 5
    M = cluster_moments(
        [np.array(Y, float), np.array(A, float), np.array(R, float), np.array(A, float)], list("aabbcc")
    )
    rep = validity_replicates((0 * M[0] + 2 * M[1] + M[2])[None])
    rows = [2, 3, 2, 3, 4, 5]
    ref = validity_stats([Y[i] for i in rows], [A[i] for i in rows], [R[i] for i in rows])
    # y = 1, 0, 1, 0, 1, 0; a = 1, 0, 1, 0, 1, 1: the same r as the full table's, 1/sqrt(2)
    assert rep["r_aic_f1"][0] == pytest.approx(1 / math.sqrt(2)) == pytest.approx(ref["r_aic_f1"])
    assert rep["r_recall_f1"][0] == pytest.approx(ref["r_recall_f1"])
    assert rep["mean_f1_in_context"][0] == pytest.approx(0.75)  # rows 2, 2, 4, 5: y = 1, 1, 1, 0


def test_mediation_by_hand():
    # recall r, answer-in-context m, quality y: means 1/2; var r = var m = 1/4, cov(r, m) = cov(r, y) = cov(m, y) = 1/12
    r, m, y = [0, 0, 1, 1, 1, 0], [0, 1, 1, 1, 0, 0], [0, 1, 1, 0, 1, 0]
    s = mediation_stats(r, m, y)
    assert s["a"] == pytest.approx(1 / 3)  # (1/12) / (1/4)
    assert s["total"] == pytest.approx(1 / 3)
    # det = 1/16 - 1/144 = 1/18; c' = (1/4 * 1/12 - 1/12 * 1/12) * 18 = 1/4; b the same by symmetry
    assert (s["c_prime"], s["b"]) == (pytest.approx(0.25), pytest.approx(0.25))
    assert s["indirect"] == pytest.approx(1 / 12)
    assert s["proportion_mediated"] == pytest.approx(0.25)
    assert s["note"] is None


def test_mediation_zero_total_effect_is_none_with_reason():
    # quality does not move with recall (cov(r, y) = 0): c = 0, the proportion mediated undefined, not 0
    r, m, y = [0, 0, 1, 1], [0, 1, 1, 0], [0, 1, 0, 1]
    s = mediation_stats(r, m, y, clusters=[1, 2, 3, 4], n_resamples=100)
    assert s["total"] == pytest.approx(0.0, abs=1e-12)
    assert s["proportion_mediated"] is None and "proportion mediated undefined" in s["note"]
    assert s["proportion_mediated_ci_low"] is None


def test_mediation_constant_recall_undefined():
    s = mediation_stats([1, 1, 1, 1, 1], [0, 1, 0, 1, 1], [0, 1, 1, 0, 1])
    assert s["a"] is None and s["total"] is None and s["note"] == "recall is constant: no path from it"


# ---- references on random data ---------------------------------------------------------------------------------


def _data(seed: int, n: int = 300):
    rng = np.random.default_rng(seed)
    r = rng.random(n)
    a = (rng.random(n) < r).astype(float)
    y = 0.4 * a + 0.3 * r + 0.5 * rng.random(n)
    return y, a, r


def _ols(y, cols):
    X = np.column_stack([np.ones(y.size), *cols])
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ coef
    return coef, 1 - resid @ resid / ((y - y.mean()) @ (y - y.mean()))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_validity_replicate_formulas_match_scipy_and_lstsq(seed):
    y, a, r = _data(seed)
    M = cluster_moments([y, a, r, (a >= 0.5).astype(float)], [0] * y.size)
    got = {k: float(v[0]) for k, v in validity_replicates(M).items()}
    assert got["r_aic_f1"] == pytest.approx(sps.pearsonr(a, y)[0], abs=1e-10)
    assert got["r_recall_f1"] == pytest.approx(sps.pearsonr(r, y)[0], abs=1e-10)
    assert got["r2_recall"] == pytest.approx(_ols(y, [r])[1], abs=1e-10)
    assert got["r2_recall_aic"] == pytest.approx(_ols(y, [r, a])[1], abs=1e-10)
    assert got["mean_f1_in_context"] == pytest.approx(y[a >= 0.5].mean())
    ref = validity_stats(y, a, r)
    for k in ("r_aic_f1", "r_recall_f1", "r2_recall", "r2_recall_aic", "delta_r2", "mean_f1_not_in_context"):
        assert got[k] == pytest.approx(ref[k], abs=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mediation_matches_lstsq(seed):
    y, m, r = _data(seed)
    s = mediation_stats(r, m, y)
    (_, a), _ = _ols(m, [r])
    (_, c_prime, b), _ = _ols(y, [r, m])
    (_, c), _ = _ols(y, [r])
    assert (s["a"], s["b"], s["c_prime"], s["total"]) == (
        pytest.approx(a, abs=1e-10),
        pytest.approx(b, abs=1e-10),
        pytest.approx(c_prime, abs=1e-10),
        pytest.approx(c, abs=1e-10),
    )
    assert s["indirect"] == pytest.approx(a * b) and s["total"] == pytest.approx(c_prime + a * b)  # c = c' + ab
    assert s["proportion_mediated"] == pytest.approx(a * b / c)


# ---- the cluster bootstrap against an independent implementation ------------------------------------------------


def _clustered(seed: int):
    """15 clusters of 1 to 6 rows each, a shared cluster effect (rows of a cluster correlated)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, size=15)
    cl = np.repeat(np.arange(15), sizes)
    u = rng.random(15)[cl]
    r = np.clip(u + 0.2 * rng.standard_normal(cl.size), 0, 1)
    a = (rng.random(cl.size) < r).astype(float)
    y = 0.5 * a + 0.2 * u + 0.3 * rng.random(cl.size)
    return y, a, r, [f"q{c}" for c in cl]


def _independent_replicates(cl, seed, B, stat):
    """Draw clusters as numpy's generator does (rng.integers(0, K, (B, K)), uint16), rebuild each replicate's rows
    by concatenation and compute ``stat`` on them."""
    ids = list(dict.fromkeys(cl))
    rows_of = {c: [i for i, x in enumerate(cl) if x == c] for c in ids}
    drawn = np.random.default_rng(seed).integers(0, len(ids), size=(B, len(ids)), dtype=np.uint16)
    return np.array([stat(np.concatenate([rows_of[ids[k]] for k in d])) for d in drawn])


def test_validity_cluster_bootstrap_matches_independent_implementation():
    y, a, r, cl = _clustered(3)
    B = 400
    got = validity_analysis(y, a, r, ["s"] * y.size, clusters=cl, seed=11, n_resamples=B)["pooled"]

    def stats_of(idx):
        yy, aa, rr = y[idx], a[idx], r[idx]
        ra, rr_ = sps.pearsonr(aa, yy)[0], sps.pearsonr(rr, yy)[0]
        return [ra, rr_, ra - rr_, _ols(yy, [rr])[1], _ols(yy, [rr, aa])[1], yy[aa >= 0.5].mean()]

    ref = _independent_replicates(cl, 11, B, stats_of)
    keys = ["r_aic_f1", "r_recall_f1", "r_diff", "r2_recall", "r2_recall_aic", "mean_f1_in_context"]
    for j, k in enumerate(keys):
        lo, hi = np.percentile(ref[:, j], [2.5, 97.5])
        assert (got[f"{k}_ci_low"], got[f"{k}_ci_high"]) == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9))
    assert got["r_diff_p"] == pytest.approx(_independent_p(ref[:, 2]), abs=1e-9)


def _independent_p(d):
    """The test-inversion p found by bisection on np.percentile: the smallest alpha whose interval excludes 0."""

    def excludes(alpha):
        lo, hi = np.percentile(d, [50 * alpha, 100 - 50 * alpha])
        return lo > 0 or hi < 0

    if not excludes(1.0):
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if excludes(mid) else (mid, hi)
    return hi


def test_mediation_cluster_bootstrap_matches_independent_implementation():
    y, m, r, cl = _clustered(4)
    B = 300
    got = mediation_analysis(r, m, y, ["s"] * y.size, clusters=cl, seed=5, n_resamples=B)["pooled"]

    def stats_of(idx):
        (_, a), _ = _ols(m[idx], [r[idx]])
        (_, cp, b), _ = _ols(y[idx], [r[idx], m[idx]])
        (_, c), _ = _ols(y[idx], [r[idx]])
        return [a, b, cp, a * b, c, a * b / c]

    ref = _independent_replicates(cl, 5, B, stats_of)
    for j, k in enumerate(MEDIATION_KEYS):
        lo, hi = np.percentile(ref[:, j], [2.5, 97.5])
        assert (got[f"{k}_ci_low"], got[f"{k}_ci_high"]) == (pytest.approx(lo, abs=1e-8), pytest.approx(hi, abs=1e-8))


def test_replicates_of_one_seed_are_the_resample_engines_draws():
    # the same seed gives the same replicates; chunks of 1,000 continue one stream (B = 1,500 = two chunks)
    y, a, r, cl = _clustered(5)
    M = cluster_moments([y, a, r], cl)
    one = replicate_moments(M, 1500, 7)
    assert np.array_equal(one, replicate_moments(M, 1500, 7))
    rng = np.random.default_rng(7)
    K = M.shape[0]
    first = rng.integers(0, K, size=(1000, K), dtype=np.uint16)
    second = rng.integers(0, K, size=(500, K), dtype=np.uint16)
    for i, d in [(0, first[0]), (999, first[999]), (1000, second[0]), (1499, second[499])]:
        assert np.allclose(one[i], M[d].sum(axis=0))


@pytest.mark.parametrize("seed", range(5))
def test_inversion_p_is_where_the_interval_starts_to_exclude_zero(seed):
    rng = np.random.default_rng(seed)
    d = rng.normal(0.3 * seed, 1.0, size=101)
    p = inversion_p(d)
    assert p is not None and 0 < p <= 1
    lo, hi = np.percentile(d, [50 * (p * 1.0001), 100 - 50 * (p * 1.0001)])
    if p < 1:
        assert lo > 0 or hi < 0  # just above p: excludes 0
    lo, hi = np.percentile(d, [50 * (p * 0.9999), 100 - 50 * (p * 0.9999)])
    assert lo <= 0 <= hi  # just below p: includes 0
    assert p == pytest.approx(_independent_p(d), abs=1e-9)


def test_inversion_p_by_hand():
    # sorted -1, 1, 2, 3, 4: the linear-rule percentile reaches 0 at q = 0.5 / 4 = 0.125, so alpha = 0.25
    assert inversion_p(np.array([4.0, -1.0, 2.0, 1.0, 3.0])) == pytest.approx(0.25)
    assert inversion_p(np.array([1.0, 2.0, 3.0])) == 0.0  # every replicate on one side
    assert inversion_p(np.array([1.0, np.nan])) is None


def test_validity_without_clusters_is_unchanged():
    s = validity_analysis(Y, A, R, ["s"] * 6)["pooled"]
    assert "r_diff" not in s and s == validity_stats(Y, A, R)


def test_mediation_replicates_undefined_rows():
    M = cluster_moments([np.zeros(3), np.zeros(3), np.zeros(3)], [0, 0, 0])
    assert all(np.isnan(v[0]) for v in mediation_replicates(M).values())


def test_quality_metric_follows_the_datasets_convention():
    from rageval.report.analysis import _answer_metric

    both = ["answer_f1", "str_em", "answer_in_context"]
    assert _answer_metric(both, {"name": "asqa"}) == "str_em"  # ALCE's ASQA metric
    assert _answer_metric(both, {"name": "hotpotqa"}) == "answer_f1"
    assert _answer_metric(both, None) == "answer_f1"
    assert _answer_metric(["answer_f1"], {"name": "asqa"}) == "answer_f1"  # the other when the records lack it
    assert _answer_metric(["retrieval_recall"], {"name": "qasper"}) is None


def test_r2_of_collinear_or_constant_predictors_is_least_squares():
    # answer-in-context equal to recall (collinear), then constant: R² of both is R² of recall alone, as lstsq gives
    y, _, r = _data(7, 40)
    for a in (r.copy(), np.ones_like(r)):
        got = validity_replicates(cluster_moments([y, a, r, (a >= 0.5).astype(float)], [0] * y.size))
        assert got["r2_recall_aic"][0] == pytest.approx(_ols(y, [r, a])[1], abs=1e-9)
        assert got["r2_recall_aic"][0] == pytest.approx(got["r2_recall"][0], abs=1e-9)


@pytest.mark.parametrize("bounded", [(), ("draws",), ("draws", "moments")])
def test_validity_with_mediation_equals_the_two_apart(monkeypatch, bounded):
    """The two analyses of every setting and pooled, run together (one drawing of the counts per unit count;
    ``bounded``: one drawing each), give bit for bit what each gives alone; the settings resample different
    numbers of questions (a question with an undefined row leaves a setting)."""
    from rageval.stats import draws, moments
    from rageval.stats.validity import validity_with_mediation

    for where in bounded:  # one request per drawing: in the drawing alone, or in the caller too
        monkeypatch.setattr({"draws": draws, "moments": moments}[where], "_SHARED_CELLS", 1)
    rng = np.random.default_rng(3)
    n_q, settings = 30, ["a", "b", "c"]
    groups = [s for s in settings for _ in range(n_q)]
    clusters = [f"q{i}" for _ in settings for i in range(n_q)]
    y, r = rng.random(3 * n_q), rng.random(3 * n_q)
    a = (rng.random(3 * n_q) < 0.5).astype(float)
    y[n_q + 4], y[2 * n_q + 7], y[2 * n_q + 9] = np.nan, np.nan, np.nan  # b: 29 questions, c: 28
    opts = {"clusters": clusters, "seed": 7, "n_resamples": 700}
    v, m = validity_with_mediation(y, a, r, groups, **opts)
    assert (v, m) == (validity_analysis(y, a, r, groups, **opts), mediation_analysis(r, a, y, groups, **opts))
    assert [v["by_group"][s]["n_clusters"] for s in settings] == [30, 29, 28]
    assert v["pooled"]["r_aic_f1_ci_low"] is not None and m["pooled"]["a_ci_low"] is not None
