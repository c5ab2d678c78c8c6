"""The sign-flip test's resolution matches its Holm family (docs/statistics.md#resolution).

The replicate setting (``auto`` | ``paper`` | a count) of ``rageval report``, ``score``, ``audit`` and a suite's
``statistics.resamples``; the floor m/(B+1) and its warning; metrics identical in every setting left out of the
family; the engine's chunks (exact enumeration, column blocks of the bootstrap) giving the same numbers.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.report.family import constant_metrics, family_contrasts
from rageval.stats import resample
from rageval.stats.contrasts import ContrastRow
from rageval.stats.resample import paired_tests
from rageval.stats.resolution import (
    MAX_TEST_RESAMPLES,
    Replicates,
    auto_test_resamples,
    holm_floor,
    parse_resamples,
    replicates_for,
    resolution,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"


# ---------------------------------------------------------------- the sizing rule, by hand


@pytest.mark.parametrize(
    ("m", "expected"),
    [
        (0, 10_000),
        (1, 10_000),
        (50, 10_000),  # 10 * 50 / 0.05 = 10,000: the paper's count already reaches alpha / 10
        (51, 11_000),  # 10,200 rounded up to a whole chunk of 1,000
        (198, 40_000),  # the demo's family (252 rows, 54 left out): 39,600 -> 40,000
        (396, 80_000),  # two demo runs: 79,200 -> 80,000
        (504, 101_000),  # 100,800 -> 101,000
        (5_000, 1_000_000),
        (5_001, MAX_TEST_RESAMPLES),  # capped
    ],
)
def test_auto_sizes_the_test_for_the_family(m, expected):
    assert auto_test_resamples(m) == expected
    if m and expected < MAX_TEST_RESAMPLES:
        assert m / (expected + 1) <= 0.05 / 10  # the floor is at most alpha / 10


def test_auto_at_another_alpha_and_the_floor_by_hand():
    assert auto_test_resamples(100, alpha=0.01) == 100_000  # 10 * 100 / 0.01
    assert holm_floor(252, 10_000) == 252 / 10_001  # the demo's 32 "significant" rows sat exactly here
    assert holm_floor(148, 10_000) == pytest.approx(0.0148, abs=1e-5)  # the paper's p_Holm
    assert holm_floor(504, 10_000) == pytest.approx(0.0504, abs=1e-4)
    assert holm_floor(3, 0, exact=True, n_blocks=4) == 3 * 2 / 16
    assert holm_floor(10**6, 10) == 1.0


def test_settings_parse_and_paper_is_ten_thousand():
    assert parse_resamples("auto") == "auto" and parse_resamples(" AUTO ") == "auto"
    assert parse_resamples("paper") == 10_000 and parse_resamples("10000") == 10_000
    assert parse_resamples("10_000") == 10_000 and parse_resamples(7) == 7
    for bad in ("0", 0, -3, True, "many", 2.5, None):
        with pytest.raises(ValueError, match="resamples must be"):
            parse_resamples(bad)
    assert replicates_for("auto", 198) == Replicates(10_000, 40_000, "auto")
    assert replicates_for("paper", 198) == Replicates(10_000, 10_000, "fixed")
    assert replicates_for(2000, 198) == Replicates(2000, 2000, "fixed")


def test_the_warning_names_m_b_and_the_floor():
    res = resolution(396, Replicates(10_000, 10_000, "fixed"))
    assert res["floor"] == pytest.approx(396 / 10_001)
    assert "m = 396" in res["warning"] and "B = 10,000" in res["warning"] and "0.0396" in res["warning"]
    assert "within a factor 10 of alpha" in res["warning"] and "--resamples auto" in res["warning"]
    assert "no contrast can reach alpha" in resolution(504, Replicates(10_000, 10_000, "fixed"))["warning"]
    assert resolution(396, replicates_for("auto", 396))["warning"] is None  # 396 / 80,001 < 0.005
    assert resolution(40, Replicates(10_000, 10_000, "fixed"))["warning"] is None  # 0.004 < 0.005
    exact = resolution(20, Replicates(10_000, 2**8, "auto"), exact=True, n_blocks=8)
    assert exact["floor"] == 20 * 2 / 256 and "2/2^8" in exact["warning"]


# ---------------------------------------------------------------- the engine: same numbers in chunks


def test_the_test_draws_its_own_count_after_the_same_bootstrap():
    rng = np.random.default_rng(5)
    D = rng.normal(0.05, 1, size=(40, 6))
    paper = paired_tests(D, n_resamples=10_000, seed=1)
    more = paired_tests(D, n_resamples=10_000, n_test_resamples=30_000, seed=1)
    np.testing.assert_array_equal(paper.ci_low, more.ci_low)  # the bootstrap is the same
    np.testing.assert_array_equal(paper.ci_high, more.ci_high)
    assert more.n_test_resamples == 30_000 and paper.n_test_resamples == 10_000 and more.p_method == "monte-carlo"
    # the first 10,000 sign vectors are the paper's: the counts can only grow
    assert np.all(more.p_value * 30_001 - 1 >= paper.p_value * 10_001 - 1 - 1e-6)


def test_a_large_family_is_bootstrapped_in_column_blocks_with_the_same_numbers(monkeypatch):
    rng = np.random.default_rng(2)
    D = rng.normal(0, 1, size=(30, 7))
    D[3, 2] = np.nan
    whole = paired_tests(D, n_resamples=2000, seed=4)
    monkeypatch.setattr(resample, "_MAX_CELLS", 2000 * 3)  # 3 columns per block
    blocks = paired_tests(D, n_resamples=2000, seed=4)
    for f in ("p_value", "n_empty_replicates"):  # the sign-flip stream starts where it did
        np.testing.assert_array_equal(getattr(whole, f), getattr(blocks, f))
    for f in ("ci_low", "ci_high"):  # the same resamples; float32 products of another shape round alike to 1e-7
        np.testing.assert_allclose(getattr(whole, f), getattr(blocks, f), rtol=1e-6)


def test_exact_enumeration_in_chunks_matches_the_whole_enumeration():
    rng = np.random.default_rng(3)
    X = rng.normal(0.3, 1, size=(12, 4))  # 4,096 sign vectors: 5 chunks
    r = paired_tests(X, n_resamples=5000, seed=0)
    assert r.exact_p and r.p_method == "exact" and r.n_test_resamples == 4096
    S = resample._all_signs(12)
    want = (np.abs(S @ X) >= np.abs(X.sum(axis=0)) - 1e-9 * np.abs(X).sum(axis=0)).sum(axis=0) / 4096
    np.testing.assert_array_equal(r.p_value, want)


# ---------------------------------------------------------------- constant metrics, by hand


def _table(values: dict[tuple[str, str], list[float]]):
    settings = sorted({s for s, _ in values})
    n = len(next(iter(values.values())))
    return SimpleNamespace(
        settings=settings,
        qids=[f"q{i}" for i in range(n)],
        values={k: np.array(v, dtype=float) for k, v in values.items()},
    )


def test_a_metric_identical_everywhere_is_left_out_of_the_family():
    nan = float("nan")
    t = _table(
        {
            ("a", "recall"): [1, 0.5, nan, 0],
            ("b", "recall"): [1, 0.5, nan, 0],  # identical, undefined where undefined: constant
            ("a", "f1"): [0.2, 0.4, 0.6, 0.8],
            ("b", "f1"): [0.1, 0.1, 0.1, 0.1],
            ("a", "never"): [nan] * 4,  # undefined throughout: keeps its place (ranked p = 1)
            ("b", "never"): [nan] * 4,
            ("a", "almost"): [1, 1, 1, 1],
            ("b", "almost"): [1, 1, 1, nan],  # one side undefined once: not identical
        }
    )
    assert constant_metrics(t, ["recall", "f1", "never", "almost"]) == ["recall"]
    rows = [ContrastRow("a", "b", m, m, "pair", 0) for m in ("recall", "f1", "never")]
    out, _res = family_contrasts(t, rows, None, seed=0, reps=Replicates(200, 200, "fixed"), constant=["recall"])
    recall, f1, never = out
    assert recall["p_value"] == 1.0 and recall["p_holm"] is None and not recall["in_holm_family"]
    assert "left out of the Holm family" in recall["note"]
    # m = 2 (f1 and the undefined row): 4 questions, 16 sign vectors, exact; f1's differences all share a sign
    assert f1["p_method"] == "exact" and f1["p_resamples"] == 16
    assert f1["p_value"] == 2 / 16 and f1["p_holm"] == 2 * 2 / 16 and f1["in_holm_family"]
    assert never["p_value"] is None and never["note"] == "no defined pair"


# ---------------------------------------------------------------- the demo suite, twice (the case)


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    """Two separate runs of the demo suite (records only; the reports below are built by ``rageval report``)."""
    from rageval.suite.load import load_suite
    from rageval.suite.run import run_suite

    base = tmp_path_factory.mktemp("demo-twice")
    runs = []
    for name in ("a", "b"):
        run_suite(load_suite(ROOT / "suites" / "demo.yaml"), base / name, progress=False, build_report=False)
        runs.append(base / name)
    return runs


def _csv(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return {r["contrast"]: r for r in csv.DictReader(f)}


TARGET = "token_prune@0.5 - identity: grounded_precision"


def test_the_union_of_two_demo_runs_finds_the_difference_with_auto(demo_runs):
    a, b = demo_runs
    res = CliRunner().invoke(main, ["report", str(a), str(b), "--no-plots"])
    assert res.exit_code == 0, res.output
    row = _csv(a / "contrasts.csv")[TARGET]
    assert float(row["effect"]) == pytest.approx(-0.55, abs=1e-6)
    assert float(row["p_holm"]) < 0.05 and row["p_resamples"] == "94000" and row["p_method"] == "monte-carlo"
    holm = json.loads((a / "report.json").read_text())["holm"]
    # 2 x 288 rows (claim_support's two rates: 36 of them per run), 54 per run left out: m = 468, B = 10 m / 0.05
    assert holm["family_sizes"] == {"all": 468} and holm["resolution"]["n_resamples"] == 94_000
    assert holm["resolution"]["warning"] is None and "WARNING" not in res.output
    assert holm["left_out"] == {"metrics": ["all_gold", "answer_em", "retrieval_recall"], "n_rows": 54}
    assert "Left out of the Holm family: 54 rows of all_gold, answer_em, retrieval_recall" in res.output
    assert "Left out of the Holm family" in (a / "summary.md").read_text()


def test_a_fixed_ten_thousand_on_the_union_warns_of_the_floor(demo_runs):
    a, b = demo_runs
    res = CliRunner().invoke(main, ["report", str(a), str(b), "--no-plots", "--resamples", "10000"])
    assert res.exit_code == 0, res.output
    floor = "Holm floor 0.0468"  # 468 / 10,001
    assert "WARNING: " + floor in res.output and "m = 468" in res.output and "B = 10,000" in res.output
    for f in ("summary.md", "contrasts.md", "report.html"):
        assert floor in (b / f).read_text(), f
    assert json.loads((b / "report.json").read_text())["holm"]["resolution"]["floor"] == pytest.approx(468 / 10_001)
    assert float(_csv(a / "contrasts.csv")[TARGET]["p_holm"]) == pytest.approx(468 / 10_001, abs=1e-6)


def test_the_paper_protocol_keeps_the_demo_numbers(demo_runs, tmp_path):
    """``--resamples paper`` on one demo run: every effect, interval and raw p as before B became an option
    (tests/fixtures/demo_contrasts_paper.csv: the demo's contrasts.csv from the code before B became an option, on the
    demo's current data: 0c26d38); the rows claim_support added later (issue 26: its two rates, 36 rows) come
    after them in the same plan and are the only new ones."""
    out = tmp_path / "paper"
    res = CliRunner().invoke(
        main, ["report", str(demo_runs[0]), "--no-plots", "--resamples", "paper", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    got, want = _csv(out / "contrasts.csv"), _csv(FIXTURES / "demo_contrasts_paper.csv")
    new = [k for k in got if k not in want]
    assert [k for k in got if k in want] == list(want)
    assert len(new) == 36 and all(k.endswith((": claim_support_emitted", ": claim_support_grounded")) for k in new)
    for k, w in want.items():
        assert {f: got[k][f] for f in w} == w, k
    assert {r["p_resamples"] for r in got.values()} == {"10000"}
    assert "WARNING: Holm floor 0.0234" in res.output  # m = 234 of 288 (54 left out), B = 10,000


def test_a_suite_names_its_replicates_outside_the_hash():
    from rageval.suite.config import suite_hash
    from rageval.suite.load import load_suite

    auto, paper = load_suite("demo"), load_suite("demo", **{"statistics.resamples": "paper"})
    assert auto.statistics.resamples == "auto" and paper.statistics.resamples == 10_000
    assert suite_hash(auto) == suite_hash(paper)  # it changes no record
    with pytest.raises(ValueError, match="resamples must be"):
        load_suite("demo", **{"statistics.resamples": 0})


def test_the_report_takes_the_suites_setting_unless_told(demo_runs, tmp_path):
    from rageval.report.family import resamples_setting

    config = {"config": {"statistics": {"resamples": 10_000}}}
    assert resamples_setting(config, None) == 10_000 and resamples_setting(config, "auto") == "auto"
    assert resamples_setting({}, None) == "auto"  # a run written before the option: auto
    res = CliRunner().invoke(main, ["report", str(demo_runs[0]), "--no-plots", "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    assert "B = 47,000 (auto); Holm floor m/(B+1) = 0.004979 for m = 234" in " ".join(res.output.split())
