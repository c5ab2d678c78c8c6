"""rageval.stats: checked against SciPy within Monte-Carlo error, Holm by hand."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from rageval.rundir.columns import common_cohort, metric_table
from rageval.stats import holm, paired_tests, validity_analysis, validity_stats

B = 10_000


def _quantile_tol(d: np.ndarray) -> float:
    # The SE of a 2.5% bootstrap quantile is ~0.03 SE(mean) at B=10,000; two runs -> x sqrt(2);
    # allow ~6 of those.
    return 0.25 * d.std(ddof=1) / math.sqrt(d.size)


def test_bootstrap_ci_matches_scipy_percentile_bootstrap():
    rng = np.random.default_rng(11)
    a = rng.binomial(1, 0.55, 300).astype(float)
    b = np.clip(a - rng.binomial(1, 0.2, 300) + rng.binomial(1, 0.1, 300), 0, 1)
    d = a - b
    ours = paired_tests(d, n_resamples=B, seed=1)
    ref = sps.bootstrap((d,), np.mean, n_resamples=B, method="percentile", random_state=2, vectorized=True)
    tol = _quantile_tol(d)
    assert ours.estimate[0] == pytest.approx(d.mean())
    assert ours.ci_low[0] == pytest.approx(ref.confidence_interval.low, abs=tol)
    assert ours.ci_high[0] == pytest.approx(ref.confidence_interval.high, abs=tol)


def test_cluster_bootstrap_matches_scipy_on_cluster_totals_and_stays_question_weighted():
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 9, 60)
    clusters = np.repeat(np.arange(60), sizes)
    effect = rng.normal(0.1, 0.3, 60)[clusters]  # strong within-cluster correlation
    d = effect + rng.normal(0, 0.1, clusters.size)
    ours = paired_tests(d, clusters=clusters, n_resamples=B, seed=3)
    # question-weighted: the estimate is the mean over questions, not over clusters
    assert ours.estimate[0] == pytest.approx(d.mean())
    assert ours.estimate[0] != pytest.approx(np.mean([d[clusters == k].mean() for k in range(60)]))
    sums = np.bincount(clusters, weights=d)
    counts = np.bincount(clusters).astype(float)
    ref = sps.bootstrap(
        (sums, counts),
        lambda s, c, axis=-1: s.sum(axis=axis) / c.sum(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=B,
        method="percentile",
        random_state=4,
    )
    se = ref.standard_error
    assert ours.ci_low[0] == pytest.approx(ref.confidence_interval.low, abs=0.15 * se)
    assert ours.ci_high[0] == pytest.approx(ref.confidence_interval.high, abs=0.15 * se)
    # ignoring the clusters gives a too-narrow interval
    flat = paired_tests(d, n_resamples=2000, seed=3)
    assert flat.ci_high[0] - flat.ci_low[0] < 0.7 * (ours.ci_high[0] - ours.ci_low[0])


def _scipy_signflip(d, n_resamples, seed):
    return sps.permutation_test(
        (d / 2, -d / 2),
        lambda x, y, axis=-1: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        random_state=seed,
    ).pvalue


def test_sign_flip_p_matches_scipy_permutation_test():
    rng = np.random.default_rng(8)
    d = rng.normal(0.15, 0.6, 80)
    ours = paired_tests(d, n_resamples=B, seed=1).p_value[0]
    ref = _scipy_signflip(d, B, 2)
    assert 0.01 < ref < 0.5
    assert ours == pytest.approx(ref, abs=5 * math.sqrt(ref * (1 - ref) / B) + 1e-3)


def test_sign_flip_exact_when_every_sign_vector_fits():
    d = np.array([0.3, -0.1, 0.5, 0.2, 0.0, 0.4, -0.2, 0.6])
    ours = paired_tests(d, n_resamples=1000, seed=0)
    assert ours.exact_p
    assert ours.p_value[0] == pytest.approx(_scipy_signflip(d, np.inf, 0))


def test_cluster_level_flips_match_scipy_on_cluster_sums():
    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(40), 3)
    d = rng.normal(0.05, 0.3, 40)[clusters] + rng.normal(0, 0.05, 120)
    ours = paired_tests(d, clusters=clusters, n_resamples=B, seed=9).p_value[0]
    ref = _scipy_signflip(np.bincount(clusters, weights=d), B, 10)
    assert ours == pytest.approx(ref, abs=5 * math.sqrt(ref * (1 - ref) / B) + 1e-3)


def test_p_values_are_add_one_and_never_zero():
    d = np.full(50, 1.0)
    r = paired_tests(d, n_resamples=999, seed=0)
    assert not r.exact_p
    assert r.p_value[0] == pytest.approx(1 / 1000)


def test_family_columns_are_independent_of_each_other_and_seeded():
    rng = np.random.default_rng(0)
    D = rng.normal(0, 1, (100, 4))
    r1 = paired_tests(D, n_resamples=500, seed=42)
    r2 = paired_tests(D, n_resamples=500, seed=42)
    r3 = paired_tests(D, n_resamples=500, seed=43)
    assert np.array_equal(r1.ci_low, r2.ci_low) and np.array_equal(r1.p_value, r2.p_value)
    assert not np.array_equal(r1.ci_low, r3.ci_low)
    # a column alone gets the same interval as inside the family (shared resamples),
    # whether or not it has undefined pairs, clustered or not
    D[:7, 1] = np.nan
    clusters = np.arange(100) // 4
    for cl in (None, clusters):
        fam = paired_tests(D, clusters=cl, n_resamples=500, seed=42)
        for c in (1, 2):
            alone = paired_tests(D[:, c], clusters=cl, n_resamples=500, seed=42)
            assert alone.ci_low[0] == pytest.approx(fam.ci_low[c])
            assert alone.ci_high[0] == pytest.approx(fam.ci_high[c])
            assert alone.p_value[0] == pytest.approx(fam.p_value[c])


def test_undefined_pairs_drop_out_and_are_counted():
    d = np.array([1.0, np.nan, 0.0, 1.0, np.nan, 0.5])
    r = paired_tests(d, n_resamples=500, seed=0)
    assert r.n[0] == 4 and r.n_dropped[0] == 2
    assert r.estimate[0] == pytest.approx(0.625)
    same = paired_tests(d[np.isfinite(d)], n_resamples=500, seed=0)
    assert r.p_value[0] == same.p_value[0]  # exact: blocks without a defined pair add nothing to |S @ X|
    assert r.ci_low[0] >= 0.0 and r.ci_high[0] <= 1.0


def test_bootstrap_with_undefined_pairs_matches_scipy_on_the_defined_pairs():
    rng = np.random.default_rng(21)
    d = rng.normal(0.1, 0.5, 400)
    d[rng.random(400) < 0.15] = np.nan
    ours = paired_tests(d, n_resamples=B, seed=5)
    ok = d[np.isfinite(d)]
    ref = sps.bootstrap((ok,), np.mean, n_resamples=B, method="percentile", random_state=6, vectorized=True)
    tol = _quantile_tol(ok)
    assert ours.n[0] == ok.size and ours.n_dropped[0] == 400 - ok.size
    assert ours.ci_low[0] == pytest.approx(ref.confidence_interval.low, abs=tol)
    assert ours.ci_high[0] == pytest.approx(ref.confidence_interval.high, abs=tol)


def test_all_undefined_and_single_pair_contrasts_are_undefined_not_numbers():
    D = np.array([[np.nan, 0.4, 0.1], [np.nan, np.nan, 0.2]])
    r = paired_tests(D, n_resamples=200, seed=0)
    assert math.isnan(r.estimate[0]) and math.isnan(r.ci_low[0]) and math.isnan(r.p_value[0])
    assert r.reason[0] == "no defined pair"
    assert r.estimate[1] == pytest.approx(0.4)
    assert math.isnan(r.ci_low[1]) and math.isnan(r.ci_high[1]) and math.isnan(r.p_value[1])
    assert "fewer than 2 questions" in r.reason[1]
    assert r.reason[2] is None
    assert r.row(0)["estimate"] is None and r.row(1)["p_value"] is None


def test_one_cluster_gives_no_interval():
    r = paired_tests([0.1, 0.2, 0.3], clusters=["p1", "p1", "p1"], n_resamples=200, seed=0)
    assert "fewer than 2 clusters" in r.reason[0]
    assert math.isnan(r.p_value[0])


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="n_resamples"):
        paired_tests([0.1, 0.2], n_resamples=0)
    with pytest.raises(ValueError, match="clusters has 1"):
        paired_tests([0.1, 0.2], clusters=["a"])
    with pytest.raises(ValueError, match="cluster id"):
        paired_tests([0.1, 0.2], clusters=["a", None])


def test_holm_matches_hand_computed_values():
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]).tolist() == pytest.approx([1.0, 1.0])
    assert holm([0.02]).tolist() == pytest.approx([0.02])
    # an undefined p keeps the family size (conservative) and stays undefined
    out = holm([0.01, float("nan"), 0.02])
    assert out[0] == pytest.approx(0.03) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)
    assert holm([]).size == 0
    with pytest.raises(ValueError):
        holm([1.5])


def _rec(q, s, status="ok", **metrics):
    return {
        "question_id": q,
        "setting": {"name": s, "compressor": s, "budget": None},
        "status": status,
        "metrics": metrics,
    }


def test_common_cohort_counts_what_each_setting_lost():
    recs = [
        _rec("q1", "identity"),
        _rec("q1", "ext"),
        _rec("q2", "identity"),
        _rec("q2", "ext", "reader_error"),
        _rec("q3", "identity"),  # missing in ext
        _rec("q4", "identity", "budget_check"),
        _rec("q4", "ext"),
    ]
    c = common_cohort(recs, ["identity", "ext"])
    assert c.question_ids == ("q1",)
    assert c.counts["identity"] == {
        "n_records": 4,
        "n_ok": 3,
        "n_failed": 1,
        "n_missing": 0,
        "n_cohort": 1,
        "n_excluded": 2,
    }
    assert c.counts["ext"] == {"n_records": 3, "n_ok": 2, "n_failed": 1, "n_missing": 1, "n_cohort": 1, "n_excluded": 1}


def test_duplicate_records_and_foreign_settings_are_errors():
    with pytest.raises(ValueError, match="two records for question 'q1'"):
        common_cohort([_rec("q1", "a"), _rec("q1", "a")])
    with pytest.raises(ValueError, match="not in the family"):
        common_cohort([_rec("q1", "a"), _rec("q1", "zzz")], ["a"])


def test_metric_table_aligns_on_question_and_keeps_undefined():
    recs = [_rec("q2", "a", answer_f1=0.5), _rec("q1", "a", answer_f1=None, flag=True)]
    t = metric_table(recs, ["q1", "q2"], ["a"], ["answer_f1", "flag", "absent"])
    assert math.isnan(t[("a", "answer_f1")][0]) and t[("a", "answer_f1")][1] == 0.5
    assert t[("a", "flag")][0] == 1.0 and np.isnan(t[("a", "absent")]).all()


def test_validity_matches_numpy_regressions():
    rng = np.random.default_rng(2)
    n = 300
    rec = rng.random(n)
    aic = (rng.random(n) < 0.3 + 0.5 * rec).astype(float)
    f1 = np.clip(0.6 * aic + 0.1 * rec + rng.normal(0, 0.2, n), 0, 1)
    f1[:5] = np.nan
    s = validity_stats(f1, aic, rec)
    ok = np.isfinite(f1)
    assert s["n"] == n - 5 and s["n_dropped"] == 5
    assert s["r_aic_f1"] == pytest.approx(np.corrcoef(aic[ok], f1[ok])[0, 1])
    assert s["r_recall_f1"] == pytest.approx(sps.pearsonr(rec[ok], f1[ok])[0])
    r2_rec = sps.linregress(rec[ok], f1[ok]).rvalue ** 2
    A = np.column_stack([np.ones(ok.sum()), rec[ok], aic[ok]])
    resid = f1[ok] - A @ np.linalg.lstsq(A, f1[ok], rcond=None)[0]
    r2_both = 1 - resid @ resid / ((f1[ok] - f1[ok].mean()) ** 2).sum()
    assert s["r2_recall"] == pytest.approx(r2_rec)
    assert s["delta_r2"] == pytest.approx(r2_both - r2_rec)
    assert s["delta_r2"] > 0.1
    assert s["mean_f1_in_context"] > s["mean_f1_not_in_context"]


def test_validity_per_group_and_degenerate_groups():
    out = validity_analysis([1, 0, 1, 0.5, 0.2], [1, 0, 1, 1, 0], [1, 1, 1, 0.5, 0.5], ["a", "a", "a", "b", "b"])
    assert out["pooled"]["n"] == 5
    assert out["by_group"]["a"]["r_recall_f1"] is None  # recall constant in a
    assert out["by_group"]["a"]["note"] == "a constant column: correlation undefined"
    assert out["by_group"]["b"]["r_aic_f1"] is None and "fewer than 3" in out["by_group"]["b"]["note"]


def test_replicates_without_a_defined_pair_are_counted():
    # 2 of 6 clusters hold the only defined pairs: some resamples draw neither
    d = np.array([0.2, 0.4, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan])
    r = paired_tests(d, clusters=np.arange(12) // 2, n_resamples=2000, seed=1)
    assert r.n_blocks[0] == 1 and r.reason[0] is not None  # one cluster: no interval at all
    d[2] = 0.1
    r = paired_tests(d, clusters=np.arange(12) // 2, n_resamples=2000, seed=1)
    # P(no draw of either of 2 clusters among 6 draws) = (4/6)^6 ~ 0.088
    assert 100 < r.row(0)["n_empty_replicates"] < 260
    assert r.ci_low[0] >= 0.1 and r.ci_high[0] <= 0.4
