"""rageval.stats.ppi (docs/statistics.md#judge-error): PPI / PPI++ by hand on ten rows, agreement with ppi_py
where both apply, the clustered variance against an independent implementation (a cluster-robust regression in
statsmodels) and a simulation, and plan_labels reaching its width."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from rageval.errors import ModelUnavailable
from rageval.stats.holm import holm
from rageval.stats.ppi import Interval, PPIEstimate, plan_labels, ppi_holm, ppi_mean, ppi_paired

ppi_py = pytest.importorskip("ppi_py")

Z = 1.959963984540054  # z_{0.975}

# ten rows: four labelled (human y, judge yhat), six unlabelled (judge only)
Y = [1.0, 0.0, 1.0, 1.0]
YHAT = [1.0, 0.0, 0.0, 1.0]
YHAT_UNL = [1.0, 1.0, 0.0, 1.0, 0.0, 1.0]


def test_plain_ppi_by_hand():
    r = ppi_mean(Y, YHAT, YHAT_UNL, lam=1.0)
    # estimate = mean(unlabelled yhat) + mean(y - yhat) = 4/6 + [0, 0, 1, 0].mean() = 2/3 + 1/4 = 11/12
    assert r.estimate == pytest.approx(11 / 12)
    # Var = var(yhat_unl)/N + var(y - yhat)/n = (2/3 * 1/3)/6 + (1/4 * 3/4)/4 = 1/27 + 3/64 = 145/1728
    se = math.sqrt(145 / 1728)
    assert (r.ci_low, r.ci_high) == pytest.approx((11 / 12 - Z * se, 11 / 12 + Z * se))
    assert r.p_value == pytest.approx(math.erfc((11 / 12) / se / math.sqrt(2)))
    assert r.lam == 1.0 and (r.n_labelled, r.n_unlabelled) == (4, 6) and r.n_clusters is None
    # the judge over all ten questions: 6 of 10 ones, var 0.24, se sqrt(0.24/10)
    assert r.judge_only.estimate == pytest.approx(0.6)
    assert r.judge_only.ci_high - 0.6 == pytest.approx(Z * math.sqrt(0.024))
    # the humans alone: 3 of 4, var 3/16, se sqrt(3/64)
    assert r.human_only.estimate == pytest.approx(0.75)
    assert r.human_only.ci_high - 0.75 == pytest.approx(Z * math.sqrt(3 / 64))
    assert r.bias == pytest.approx(0.25)  # mean(y - yhat)
    # effective n = 4 * (width human / width PPI)^2 = 4 * (3/64) / (145/1728)
    assert r.effective_n == pytest.approx(4 * (3 / 64) / (145 / 1728))


def test_tuned_ppi_by_hand():
    r = ppi_mean(Y, YHAT, YHAT_UNL)
    # lam = Cov(y, yhat) / ((1 + n/N) Var(yhat over all ten, ddof 1))
    # Cov: deviations y [.25, -.75, .25, .25], yhat [.5, -.5, -.5, .5]: products sum .5, / 4 = 1/8
    # Var: 6 ones in 10 -> 0.24 * 10/9 = 4/15; (1 + 4/6) * 4/15 = 4/9; lam = (1/8) / (4/9) = 9/32
    assert r.lam == pytest.approx(9 / 32)
    # estimate = 9/32 * 2/3 + mean(y - 9/32 yhat) = 3/16 + (3/4 - 9/64) = 51/64
    assert r.estimate == pytest.approx(51 / 64)
    # Var = lam^2 var(yhat_unl)/N + var(y - lam yhat)/n
    #     = (81/1024)(2/9)/6 + var([23/32, 0, 1, 23/32])/4
    #     = 3/1024 + ((7^2 + 39^2 + 25^2 + 7^2)/64^2 / 4)/4 = 48/16384 + 561/16384 = 609/16384
    se = math.sqrt(609 / 16384)
    assert r.ci_high - r.estimate == pytest.approx(Z * se)
    assert r.estimate - r.ci_low == pytest.approx(Z * se)
    assert r.effective_n == pytest.approx(4 * (3 / 64) / (609 / 16384))
    # lam = 0 is the human-only mean and interval
    r0 = ppi_mean(Y, YHAT, YHAT_UNL, lam=0.0)
    assert (r0.estimate, r0.ci_low, r0.ci_high) == pytest.approx(
        (r0.human_only.estimate, r0.human_only.ci_low, r0.human_only.ci_high)
    )
    assert r0.effective_n == pytest.approx(4)


def _draw(seed: int, n: int = 80, n_unl: int = 500, shift: float = 0.1):
    rng = np.random.default_rng(seed)
    truth = rng.random(n + n_unl)
    y = (rng.random(n + n_unl) < truth).astype(float)
    yhat = np.clip(truth + shift + rng.normal(0, 0.2, n + n_unl), 0, 1)
    return y[:n], yhat[:n], yhat[n:]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("lam", [None, 1.0, 0.4, 0.0])
def test_agrees_with_ppi_py(seed, lam):
    y, yhat, yhat_unl = _draw(seed)
    r = ppi_mean(y, yhat, yhat_unl, alpha=0.1, lam=lam)
    assert r.estimate == pytest.approx(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_unl, lam=lam)[0], rel=1e-12)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_unl, alpha=0.1, lam=lam)
    assert (r.ci_low, r.ci_high) == pytest.approx((lo[0], hi[0]), rel=1e-12)
    assert r.p_value == pytest.approx(ppi_py.ppi_mean_pval(y, yhat, yhat_unl, lam=r.lam)[0], rel=1e-9)
    if lam is None and 0 < r.lam < 1:  # not clipped: ppi_py's own tuned p-value is the same
        assert r.p_value == pytest.approx(ppi_py.ppi_mean_pval(y, yhat, yhat_unl)[0], rel=1e-9)
    lo, hi = ppi_py.classical_mean_ci(y, alpha=0.1)
    assert (r.human_only.ci_low, r.human_only.ci_high) == pytest.approx((lo, hi), rel=1e-12)
    all_yhat = np.concatenate([yhat, yhat_unl])
    lo, hi = ppi_py.classical_mean_ci(all_yhat, alpha=0.1)
    assert (r.judge_only.ci_low, r.judge_only.ci_high) == pytest.approx((lo, hi), rel=1e-12)


def test_paired_is_ppi_py_on_the_differences():
    ya, ha, ua = _draw(10, shift=0.15)
    yb, hb, ub = _draw(11, shift=0.0)
    r = ppi_paired(ya, yb, ha, hb, ua, ub)
    d, dh, du = ya - yb, ha - hb, ua - ub
    assert r.estimate == pytest.approx(ppi_py.ppi_mean_pointestimate(d, dh, du)[0], rel=1e-12)
    lo, hi = ppi_py.ppi_mean_ci(d, dh, du, alpha=0.05)
    assert (r.ci_low, r.ci_high) == pytest.approx((lo[0], hi[0]), rel=1e-12)
    assert r.p_value == pytest.approx(ppi_py.ppi_mean_pval(d, dh, du, lam=r.lam)[0], rel=1e-9)
    assert r.bias == pytest.approx(np.mean(d - dh))
    with pytest.raises(ValueError, match="paired values differ in length"):
        ppi_paired(ya, yb[:-1], ha, hb, ua, ub)


def test_holm_over_ppi_p_values_is_rageval_holm():
    rs = [ppi_paired(*_draw(s)[:2], *_draw(s + 50)[:2], _draw(s)[2], _draw(s + 50)[2]) for s in range(4)]
    assert np.array_equal(ppi_holm(rs), holm([r.p_value for r in rs]))


def test_singleton_clusters_are_ppi_py():
    y, yhat, yhat_unl = _draw(5)
    n, m = y.size, yhat_unl.size
    for lam in (1.0, 0.3):
        a = ppi_mean(y, yhat, yhat_unl, lam=lam)
        c = ppi_mean(y, yhat, yhat_unl, lam=lam, clusters_labelled=np.arange(n), clusters_unlabelled=-1 - np.arange(m))
        assert (c.estimate, c.ci_low, c.ci_high, c.p_value) == pytest.approx(
            (a.estimate, a.ci_low, a.ci_high, a.p_value)
        )
        assert c.n_clusters == n + m
        assert (c.human_only.ci_low, c.judge_only.ci_high) == pytest.approx((a.human_only.ci_low, a.judge_only.ci_high))
    # tuned: the clustered lam minimizes the variance estimate itself, ppi_py's uses the pooled Var(yhat) -- close
    a = ppi_mean(y, yhat, yhat_unl)
    c = ppi_mean(y, yhat, yhat_unl, clusters_labelled=np.arange(n), clusters_unlabelled=-1 - np.arange(m))
    assert c.lam == pytest.approx(a.lam, abs=0.05)
    assert c.width == pytest.approx(a.width, rel=0.01)


def _clustered_data(rng, k: int = 60, size: int = 6, label_share: float = 0.3):
    """Clusters with a shared effect on truth and judge; labelled questions drawn one by one (clusters span)."""
    effect = rng.normal(0, 0.25, k)
    g = np.repeat(np.arange(k), size)
    p = np.clip(0.5 + effect[g] + rng.normal(0, 0.1, g.size), 0.02, 0.98)
    y = (rng.random(g.size) < p).astype(float)
    yhat = np.clip(p + 0.08 + rng.normal(0, 0.1, g.size) + 0.1 * effect[g], 0, 1)
    lab = rng.random(g.size) < label_share
    return y[lab], yhat[lab], yhat[~lab], g[lab], g[~lab]


@pytest.mark.parametrize("lam", [1.0, 0.6])
def test_clustered_variance_is_a_cluster_robust_regression(lam):
    """Independent check: theta = b_U + b_L, the two coefficients of a regression of lam*yhat (unlabelled rows)
    and y - lam*yhat (labelled rows) on the two sample indicators; statsmodels' cluster-robust covariance
    (no small-sample correction) gives Var(theta) = [1 1] V [1 1]'."""
    sm = pytest.importorskip("statsmodels.api")
    y, yhat, yhat_unl, gl, gu = _clustered_data(np.random.default_rng(7))
    n, m = y.size, yhat_unl.size
    v = np.concatenate([lam * yhat_unl, y - lam * yhat])
    x = np.zeros((n + m, 2))
    x[:m, 0] = 1
    x[m:, 1] = 1
    fit = sm.OLS(v, x).fit(cov_type="cluster", cov_kwds={"groups": np.concatenate([gu, gl]), "use_correction": False})
    se = math.sqrt(float(np.ones(2) @ fit.cov_params() @ np.ones(2)))
    r = ppi_mean(y, yhat, yhat_unl, lam=lam, clusters_labelled=gl, clusters_unlabelled=gu)
    assert r.estimate == pytest.approx(float(fit.params.sum()))
    assert r.ci_high - r.estimate == pytest.approx(Z * se)
    assert r.p_value == pytest.approx(math.erfc(abs(r.estimate) / se / math.sqrt(2)))
    assert r.n_clusters == 60
    # the human-only and judge-only intervals: intercept-only regressions, clustered the same way
    h = sm.OLS(y, np.ones(n)).fit(cov_type="cluster", cov_kwds={"groups": gl, "use_correction": False})
    assert r.human_only.ci_high - r.human_only.estimate == pytest.approx(Z * float(h.bse[0]))
    # the tuned lam minimizes the clustered variance: no explicit lam nearby gives a narrower interval
    t = ppi_mean(y, yhat, yhat_unl, clusters_labelled=gl, clusters_unlabelled=gu)
    for other in (max(t.lam - 0.05, 0), min(t.lam + 0.05, 1)):
        assert ppi_mean(y, yhat, yhat_unl, lam=other, clusters_labelled=gl, clusters_unlabelled=gu).width >= t.width


def test_clustered_interval_covers_where_the_unclustered_one_does_not():
    """The target: the superpopulation mean of y (0.5 by the symmetric cluster effects, clipped symmetrically).
    400 seeded data sets: the clustered PPI interval covers near 95%, the interval that ignores clusters less."""
    rng = np.random.default_rng(2024)
    cover_c = cover_u = 0
    reps = 400
    for _ in range(reps):
        y, yhat, yhat_unl, gl, gu = _clustered_data(rng, k=80, size=8)
        c = ppi_mean(y, yhat, yhat_unl, clusters_labelled=gl, clusters_unlabelled=gu)
        u = ppi_mean(y, yhat, yhat_unl)
        cover_c += c.ci_low <= 0.5 <= c.ci_high
        cover_u += u.ci_low <= 0.5 <= u.ci_high
    assert 0.92 <= cover_c / reps <= 0.98
    assert cover_u / reps < cover_c / reps - 0.04


def test_undefined_and_degenerate_inputs():
    r = ppi_mean([1.0], [1.0], [0.0, 1.0])
    assert math.isnan(r.estimate) and math.isnan(r.ci_low) and math.isnan(r.p_value)
    assert r.judge_only.estimate == pytest.approx(2 / 3)
    assert r.as_dict()["estimate"] is None and r.as_dict()["judge_only"]["estimate"] == pytest.approx(2 / 3)
    # no unlabelled question: the human-only mean, lam 0
    r = ppi_mean(Y, YHAT, [])
    assert (r.lam, r.estimate, r.ci_low) == (0.0, r.human_only.estimate, r.human_only.ci_low)
    with pytest.raises(ValueError, match="undefined"):
        ppi_mean([1.0, float("nan")], [1.0, 0.0], [0.0])
    with pytest.raises(ValueError, match="one of each per question"):
        ppi_mean([1.0, 0.0], [1.0], [0.0])
    with pytest.raises(ValueError, match="give both or neither"):
        ppi_mean(Y, YHAT, YHAT_UNL, clusters_labelled=[0, 0, 1, 1])
    with pytest.raises(ValueError, match="lam must lie"):
        ppi_mean(Y, YHAT, YHAT_UNL, lam=1.5)
    assert isinstance(ppi_mean(Y, YHAT, YHAT_UNL), PPIEstimate)
    assert Interval(0.0, -1.0, 2.0).width == 3.0


def test_without_ppi_py_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ppi_py", None)
    with pytest.raises(
        ModelUnavailable, match=r"^judge-error correction \(PPI\) needs ppi-python, .*pip install 'rageval\[ppi\]'"
    ):
        ppi_mean(Y, YHAT, YHAT_UNL)


def test_plan_labels_closed_form():
    """V_l = V_h (the labelled judge values are all the judge values' spread) and no clipping:
    sigma2(n) = V_y (1 - rho^2)/n + rho^2 V_y / M, solved for the half-width."""
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    yhat = np.array([1.0, 0.0, 0.2, 0.9, 0.6, 0.7])
    unl = np.tile(yhat, 99)  # same spread as the labelled; M = 600
    v_y = float(np.var(y))
    c = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    assert c / float(np.var(yhat)) < 1  # lam* = C (M - n) / (V M) < 1: never clipped
    rho2 = c * c / (v_y * float(np.var(yhat)))
    w = 0.08
    need = v_y * (1 - rho2) / ((w / Z) ** 2 - rho2 * v_y / 600)
    assert plan_labels(y, yhat, unl, half_width=w) == math.ceil(need)
    with pytest.raises(ValueError, match="out of reach"):
        plan_labels(y, yhat, unl, half_width=0.001)


@pytest.mark.parametrize("w", [0.06, 0.04])
def test_plan_labels_reaches_the_width(w):
    """A cohort of 3,000; a pilot of 40 labels; label the planned n (uniform draws), average the half-width."""
    rng = np.random.default_rng(3)
    m = 3000
    truth = rng.random(m)
    y = (rng.random(m) < truth).astype(float)
    yhat = np.clip(truth - 0.1 + rng.normal(0, 0.15, m), 0, 1)
    pilot = rng.choice(m, 40, replace=False)
    rest = np.setdiff1d(np.arange(m), pilot)
    n = plan_labels(y[pilot], yhat[pilot], yhat[rest], half_width=w)
    assert 40 < n < m
    half = []
    for _ in range(200):
        lab = rng.choice(m, n, replace=False)
        unl = np.setdiff1d(np.arange(m), lab)
        r = ppi_mean(y[lab], yhat[lab], yhat[unl])
        half.append(r.width / 2)
    assert np.mean(half) == pytest.approx(w, rel=0.2)
