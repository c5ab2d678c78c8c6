"""The gain decomposition by answer-in-context (rageval.stats.gain; docs/statistics.md#gain-decomposition):
hand-computed on a small table, its intervals against an independent resampling with the same draws, and the
columns a run writes into contrasts.csv."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.stats import GAIN_GROUPS, gain_decomposition, gain_decompositions, paired_tests

NAN = float("nan")

# q_a, q_b, aic_a, aic_b per question, and (by hand) its group and difference d = q_a - q_b
TABLE = [
    (1.0, 0.0, 1, 0),  # new, d = 1
    (1.0, 0.0, 1, 0),  # new, d = 1
    (0.5, 0.0, 1, 0),  # new, d = 0.5
    (0.0, 1.0, 0, 1),  # lost, d = -1
    (1.0, 1.0, 1, 1),  # both, d = 0
    (0.0, 0.0, 0, 0),  # neither, d = 0
    (0.5, 0.0, 0, 0),  # neither, d = 0.5
    (1.0, 0.0, NAN, 1),  # undefined (answer-in-context undefined under a), d = 1
    (NAN, 1.0, 1, 0),  # no pair: quality undefined under a (dropped)
]
CLUSTERS = ["p1", "p1", "p2", "p2", "p3", "p3", "p4", "p4", "p5"]


def _cols():
    qa, qb, aa, ab = (np.array([r[k] for r in TABLE], dtype=float) for k in range(4))
    return qa, qb, aa, ab


def test_the_parts_of_a_small_table_by_hand():
    g = gain_decomposition(*_cols(), seed=3, n_resamples=500)
    # 8 paired questions; sum d = 1 + 1 + 0.5 - 1 + 0 + 0 + 0.5 + 1 = 3
    assert (g.n, g.n_dropped) == (8, 1)
    assert g.effect == 3 / 8
    assert g.counts.tolist() == [3, 1, 1, 2, 1]
    # contributions: sum of the group's d over the 8 paired questions
    assert g.contribution.tolist() == [2.5 / 8, -1 / 8, 0.0, 0.5 / 8, 1 / 8]
    assert float(g.contribution.sum()) == g.effect  # exact here: every number is a binary fraction
    assert g.share.tolist() == pytest.approx([2.5 / 3, -1 / 3, 0.0, 0.5 / 3, 1 / 3])
    assert float(g.share.sum()) == pytest.approx(1.0)
    for k in range(len(GAIN_GROUPS)):
        assert g.ci_low[k] <= g.contribution[k] <= g.ci_high[k]
    d = g.as_dict()
    assert d["groups"]["new"] == {
        "n": 3,
        "contribution": 0.3125,
        "ci_low": float(g.ci_low[0]),
        "ci_high": float(g.ci_high[0]),
        "share": pytest.approx(2.5 / 3),
    }


def _independent(qa, qb, aa, ab, clusters, seed, B, confidence=0.95, dtype=np.uint16):
    """Percentile intervals of the group contributions, resampling the units (questions, or clusters in order of
    first appearance) with the draws rageval's bootstrap makes: 1,000 replicates a chunk, uint16 indices (uint32
    where a chunk is drawn in row blocks)."""
    d = qa - qb
    paired = np.isfinite(d)
    units = list(dict.fromkeys(clusters)) if clusters is not None else list(range(len(qa)))
    members = [[i for i in range(len(qa)) if (clusters[i] if clusters is not None else i) == u] for u in units]
    K = len(units)

    def group(i):
        if math.isnan(aa[i]) or math.isnan(ab[i]):
            return "undefined"
        return {(1, 0): "new", (0, 1): "lost", (1, 1): "both", (0, 0): "neither"}[(int(aa[i]), int(ab[i]))]

    rng = np.random.default_rng(seed)
    reps = []
    for start in range(0, B, 1000):
        drawn = rng.integers(0, K, size=(min(1000, B - start), K), dtype=dtype)
        for row in drawn:
            qs = [i for u in row for i in members[int(u)] if paired[i]]
            # a resample without a paired question has no mean: left out of the interval
            reps.append([sum(d[i] for i in qs if group(i) == g) / len(qs) if qs else NAN for g in GAIN_GROUPS])
    alpha = 1 - confidence
    return np.nanpercentile(np.array(reps), [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)


@pytest.mark.parametrize("clusters", [None, CLUSTERS])
def test_the_intervals_equal_an_independent_resampling_with_the_same_draws(clusters):
    cols = _cols()
    g = gain_decomposition(*cols, clusters=clusters, seed=11, n_resamples=1500)
    lo, hi = _independent(*cols, clusters, seed=11, B=1500)
    np.testing.assert_allclose(g.ci_low, lo, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g.ci_high, hi, rtol=1e-12, atol=1e-12)
    assert g.clustered is (clusters is not None)
    for k in range(len(GAIN_GROUPS)):
        assert g.ci_low[k] <= g.contribution[k] <= g.ci_high[k]


@pytest.mark.parametrize("clusters", [None, CLUSTERS])
def test_the_intervals_do_not_depend_on_the_row_blocks(monkeypatch, clusters):
    from rageval.stats import resample

    cols = _cols()
    K = len(set(clusters)) if clusters is not None else len(cols[0])
    got = []
    for rows in (7, 3):  # 1,000 x K cells in row blocks of 7, then 3 replicates: uint32 draws, one stream
        monkeypatch.setattr(resample, "_MAX_DRAW_CELLS", rows * K)  # a chunk no longer fits one block
        monkeypatch.setattr(resample, "_BLOCK_CELLS", rows * K)
        got.append(gain_decomposition(*cols, clusters=clusters, seed=11, n_resamples=1500))
    lo, hi = _independent(*cols, clusters, seed=11, B=1500, dtype=np.uint32)
    for g in got:
        np.testing.assert_allclose(g.ci_low, lo, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g.ci_high, hi, rtol=1e-12, atol=1e-12)
    monkeypatch.undo()  # the whole chunk in one block: numpy's uint16 draws, as before (other resamples)
    one = gain_decomposition(*cols, clusters=clusters, seed=11, n_resamples=1500)
    lo16, _ = _independent(*cols, clusters, seed=11, B=1500)
    np.testing.assert_allclose(one.ci_low, lo16, rtol=1e-12, atol=1e-12)


def test_the_parts_sum_to_the_contrast_estimate_of_the_paired_tests():
    qa, qb, aa, ab = _cols()
    g = gain_decomposition(qa, qb, aa, ab, seed=0, n_resamples=200)
    res = paired_tests(qa - qb, seed=0, n_resamples=200)
    assert float(g.contribution.sum()) == pytest.approx(float(res.estimate[0]), abs=1e-15)
    assert g.n == int(res.n[0])


def test_no_share_when_the_effect_is_zero_and_no_interval_without_two_units():
    g = gain_decomposition([1.0, 0.0], [0.0, 1.0], [1, 0], [0, 1], seed=0, n_resamples=100)
    assert g.effect == 0.0
    assert g.contribution.tolist() == [0.5, -0.5, 0.0, 0.0, 0.0]
    assert np.isnan(g.share).all()
    assert all(v["share"] is None for v in g.as_dict()["groups"].values())
    one = gain_decomposition([1.0, NAN], [0.0, 0.0], [1, 1], [0, 0], seed=0, n_resamples=100)
    assert one.n == 1 and one.effect == 1.0 and one.contribution[0] == 1.0
    assert np.isnan(one.ci_low).all() and "fewer than 2 questions" in one.reason
    none = gain_decomposition([NAN], [0.0], [1], [0], seed=0)
    assert none.n == 0 and math.isnan(none.effect) and none.reason == "no paired question"


def test_answer_in_context_must_be_an_indicator():
    with pytest.raises(ValueError, match=r"aic_b\[1\] = 0.5"):
        gain_decomposition([1, 0], [0, 0], [1, 0], [0, 0.5], seed=0)
    with pytest.raises(ValueError, match="same length"):
        gain_decomposition([1, 0], [0], [1, 0], [0, 0], seed=0)


def test_a_run_writes_the_gain_columns_into_contrasts_csv(tmp_path):
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["score", "--example", "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    with open(out / "contrasts.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    header = list(rows[0])
    assert header[: header.index("note") + 1][:3] == ["contrast", "family", "kind"]
    assert header[header.index("note") + 1 :][:5] == [
        "gain_new_n",
        "gain_new",
        "gain_new_lo",
        "gain_new_hi",
        "gain_new_share",
    ]
    answer = [r for r in rows if r["metric_a"] in ("answer_f1", "answer_em")]
    other = [r for r in rows if r["metric_a"] in ("grounded_precision", "retrieval_recall", "answer_in_context")]
    assert answer and other
    for r in answer:
        parts = [float(r[f"gain_{g}"]) for g in GAIN_GROUPS]
        assert sum(parts) == pytest.approx(float(r["effect"]), abs=5e-6)  # six decimals written
        assert sum(int(r[f"gain_{g}_n"]) for g in GAIN_GROUPS) == int(r["n"])
        for g in GAIN_GROUPS:
            assert float(r[f"gain_{g}_lo"]) <= float(r[f"gain_{g}"]) <= float(r[f"gain_{g}_hi"])
    for r in other:
        assert all(r[c] == "" for c in header if c.startswith("gain_"))
    md = (out / "contrasts.md").read_text(encoding="utf-8")
    assert "## Gain decomposition" in md and "answer in context under a only" in md
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="contrasts-1-gain"' in html


def test_which_rows_carry_a_decomposition():
    from types import SimpleNamespace

    from rageval.report.family import _gain_sides, gain_applies
    from rageval.stats.contrasts import ContrastRow

    def row(m, kind="pair"):
        return ContrastRow("x", "y" if kind == "pair" else "x", m, m if kind == "pair" else "answer_em", kind, 0)

    assert [gain_applies(row(m)) for m in ("answer_f1", "str_em", "str_hit", "rouge_lsum", "qampari_f1")] == [True] * 5
    assert not any(gain_applies(row(m)) for m in ("answer_in_context", "grounded_precision", "answer_length"))
    assert not gain_applies(row("answer_f1", kind="gap"))
    q = np.array([1.0, 0.0, 0.5])
    binary = {("x", "answer_in_context"): np.array([1.0, 0.0, NAN]), ("y", "answer_in_context"): np.zeros(3)}
    sides = _gain_sides(SimpleNamespace(values=binary), row("answer_f1"), q, np.zeros(3))
    g = gain_decomposition(*sides, seed=0, n_resamples=200).as_dict()
    assert g["groups"]["new"]["n"] == 1 and g["groups"]["undefined"]["n"] == 1 and g["effect"] == 0.5
    share = {("x", "answer_in_context"): np.array([1.0, 0.5, 0.0]), ("y", "answer_in_context"): np.zeros(3)}
    assert _gain_sides(SimpleNamespace(values=share), row("answer_f1"), q, np.zeros(3)) is None  # ASQA's
    assert _gain_sides(SimpleNamespace(values={}), row("answer_f1"), q, np.zeros(3)) is None  # no such key


@pytest.mark.parametrize("bounded", [(), ("draws",), ("draws", "gain")])
def test_decompositions_together_equal_each_alone(monkeypatch, bounded):
    """Several contrasts of one cohort (one of them without an interval, one with fewer paired questions) share
    one drawing of the counts and give, bit for bit, what each gives alone (``bounded``: one drawing each)."""
    from rageval.stats import draws, gain

    for where in bounded:  # one request per drawing: in the drawing alone, or in the caller too
        monkeypatch.setattr({"draws": draws, "gain": gain}[where], "_SHARED_CELLS", 1)
    qa, qb, aa, ab = _cols()
    rng = np.random.default_rng(5)
    sides = [
        (qa, qb, aa, ab),
        (qb, qa, ab, aa),
        (rng.random(qa.size), qa, aa, ab),
        (np.full(qa.size, NAN), qb, aa, ab),  # no paired question: no interval, no draws
    ]
    for clusters in (None, CLUSTERS):
        together = gain_decompositions(sides, clusters=clusters, seed=11, n_resamples=1500)
        for s, g in zip(sides, together, strict=True):
            alone = gain_decomposition(*s, clusters=clusters, seed=11, n_resamples=1500)
            assert g.reason == alone.reason and g.n == alone.n
            for f in ("contribution", "ci_low", "ci_high", "share"):
                assert np.array_equal(getattr(g, f), getattr(alone, f), equal_nan=True), f
    assert np.isfinite(together[0].ci_low).all() and np.isnan(together[3].ci_low).all()
