"""Contrast plans as data: families expanded by hand, Holm within a family and over a union of runs,
validation at load time (rageval validate), and the counts printed per family."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from test_report import make_run

from rageval.cli import main
from rageval.report import build_report
from rageval.report.analysis import analyze, holm_family_counts
from rageval.report.build import build_reports
from rageval.report.load import RunError, load_run
from rageval.report.tables import holm_note
from rageval.report.union import adjust_union, describe_holm, union_family_size
from rageval.stats.contrasts import expand_plan, parse_contrasts
from rageval.stats.holm import holm, holm_grouped
from rageval.suite.config import SuiteError, suite_hash

# identity, two compressors at three budgets, one at two (tokens for the last, to keep the kinds apart)
from rageval.suite.load import load_suite

SETTINGS = [
    {"name": "identity", "compressor": "identity", "budget": None},
    {"name": "rerank@0.5", "compressor": "rerank", "budget": 0.5},
    {"name": "rerank@0.25", "compressor": "rerank", "budget": 0.25},
    {"name": "rerank@0.1", "compressor": "rerank", "budget": 0.1},
    {"name": "ext@0.5", "compressor": "ext", "budget": 0.5},
    {"name": "ext@0.25", "compressor": "ext", "budget": 0.25},
    {"name": "ext@0.1", "compressor": "ext", "budget": 0.1},
    {"name": "ecr@0.25", "compressor": "ecr", "budget": 0.25},
    {"name": "ecr@0.5", "compressor": "ecr", "budget": 0.5},
    {"name": "naive@96", "compressor": "naive", "budget": 96},
]
PLAN = {
    "holm": "family",
    "families": {
        "vs_identity": [{"vs": "identity"}],
        "emitted_vs_grounded": {
            "gap": [["emitted_precision", "grounded_precision"], ["emitted_recall", "grounded_recall"]],
            "compressors": ["ext"],
        },
        "same_budget": {"pairs": "same_budget"},
        "budget_steps": {"pairs": "budget_steps"},
    },
}


def _pairs(plan, family):
    return [(r.a, r.b, r.metric_a, r.metric_b) for r in plan.rows if r.family == family]


def test_families_expand_as_written_by_hand():
    plan = expand_plan(PLAN, SETTINGS, default_metrics=["answer_f1"])
    assert plan.holm == "family"
    assert plan.families == ("vs_identity", "emitted_vs_grounded", "same_budget", "budget_steps")
    names = [s["name"] for s in SETTINGS]
    assert _pairs(plan, "vs_identity") == [(s, "identity", "answer_f1", "answer_f1") for s in names[1:]]
    assert _pairs(plan, "emitted_vs_grounded") == [
        (s, s, m1, m2)
        for m1, m2 in (("emitted_precision", "grounded_precision"), ("emitted_recall", "grounded_recall"))
        for s in ("ext@0.5", "ext@0.25", "ext@0.1")
    ]
    # same nominal budget, different compressors, earlier setting first; naive@96 (tokens) pairs with nothing
    assert [(a, b) for a, b, _, _ in _pairs(plan, "same_budget")] == [
        ("rerank@0.5", "ext@0.5"),
        ("rerank@0.5", "ecr@0.5"),
        ("rerank@0.25", "ext@0.25"),
        ("rerank@0.25", "ecr@0.25"),
        ("rerank@0.1", "ext@0.1"),
        ("ext@0.5", "ecr@0.5"),
        ("ext@0.25", "ecr@0.25"),
    ]
    # loose -> tight within each compressor, whatever the suite order (ecr lists 0.25 before 0.5)
    assert [(a, b) for a, b, _, _ in _pairs(plan, "budget_steps")] == [
        ("rerank@0.25", "rerank@0.5"),
        ("rerank@0.1", "rerank@0.25"),
        ("ext@0.25", "ext@0.5"),
        ("ext@0.1", "ext@0.25"),
        ("ecr@0.25", "ecr@0.5"),
    ]
    assert plan.counts() == {"vs_identity": 9, "emitted_vs_grounded": 6, "same_budget": 7, "budget_steps": 5}


def test_names_alone_are_read_as_compressor_at_budget():
    names = ["identity", "a@0.5", "a@0.25", "b@0.5", "b@96"]
    rows = parse_contrasts({"pairs": "same_budget"}, names, default_metrics=["m"])
    assert [(r.a, r.b) for r in rows] == [("a@0.5", "b@0.5")]
    rows = parse_contrasts({"pairs": "budget_steps"}, names, default_metrics=["m"])
    assert [(r.a, r.b) for r in rows] == [("a@0.25", "a@0.5")]


def test_filters_narrow_an_item():
    plan = expand_plan(
        {"vs": "identity", "compressors": ["rerank"], "budgets": [0.1, 0.5]}, SETTINGS, default_metrics=["m"]
    )
    assert [r.a for r in plan.rows] == ["rerank@0.5", "rerank@0.1"]
    plan = expand_plan({"pairs": "same_budget", "budgets": 0.1}, SETTINGS, default_metrics=["m"])
    assert [(r.a, r.b) for r in plan.rows] == [("rerank@0.1", "ext@0.1")]


def test_a_plain_list_is_one_family_adjusted_over_the_suite():
    plan = expand_plan(["every setting vs identity"], SETTINGS[:3], default_metrics=["m"])
    assert plan.families == ("contrasts",) and plan.holm == "suite" and plan.counts() == {"contrasts": 2}


@pytest.mark.parametrize(
    "spec, msg",
    [
        ({"pairs": "same_budgets"}, r"Unknown pairs 'same_budgets'.*Did you mean 'same_budget'"),
        ({"vs": "identity", "compressors": ["rernk"]}, r"Unknown compressor 'rernk'.*Did you mean 'rerank'"),
        ({"vs": "identity", "budgets": [0.3]}, r"Unknown budget 0.3 in contrasts\[0\].budgets\[0\]"),
        ({"pairs": "same_budget", "compressors": ["rerank"]}, "expands to no pair"),
        ({"pairs": "budget_steps", "compressors": ["naive"]}, "expands to no pair"),
        ({"vs": "identity", "compressors": "identity"}, "selects no setting besides the reference"),
        ({"holm": "everything", "families": {"f": {"vs": "identity"}}}, "contrasts.holm must be"),
        ({"holm": "family", "familes": {}}, r"Unknown key 'familes'.*Did you mean 'families'"),
        ({"holm": "family"}, "contrasts.families must map"),
        ({"families": {"f": []}}, "declares no item"),
        (
            {"families": {"f": {"vs": "identity"}, "g": "ext@0.5 vs identity"}},
            (
                r"contrasts.families.g\[0\] declares 'ext@0.5 - identity: m' again "
                r"\(already in contrasts.families.f\[0\]\)"
            ),
        ),
        ({"families": {"f": {"vs": "identty"}}}, r"Unknown setting 'identty' in contrasts.families.f\[0\].vs"),
        ({"gap": [["emitted_precision"]]}, "two metric names"),
        ({"a": "ext@0.5", "b": "identity", "budgets": [0.5]}, "'budgets' applies to"),
    ],
)
def test_bad_plans_raise_clear_errors(spec, msg):
    with pytest.raises(ValueError, match=msg):
        expand_plan(spec, SETTINGS, default_metrics=["m"])


def test_named_metrics_are_checked_against_the_catalog_before_any_record_exists():
    with pytest.raises(
        ValueError, match=r"Unknown metric 'grounded_precison'.*no diagnostic writes it.*grounded_precision"
    ):
        expand_plan(
            {"gap": ["emitted_precision", "grounded_precison"]},
            SETTINGS,
            known_metrics=["emitted_precision", "grounded_precision"],
        )


# ------------------------------------------------------------------ Holm within a family


def test_holm_grouped_by_hand():
    p = [0.01, 0.04, 0.03, 0.005, None]
    # family a: 0.01 -> 2 x 0.01 = 0.02, 0.04 -> max(0.02, 1 x 0.04) = 0.04
    # family b: 0.005 -> 3 x 0.005 = 0.015 (the undefined one counts, ranked last), 0.03 -> 2 x 0.03 = 0.06
    out = holm_grouped(p, ["a", "a", "b", "b", "b"])
    assert out[:4].round(6).tolist() == [0.02, 0.04, 0.06, 0.015] and np.isnan(out[4])
    assert holm_grouped(p).round(6)[:4].tolist() == holm(p).round(6)[:4].tolist()
    # one family of five: 0.005 x 5, 0.01 x 4, 0.03 x 3, 0.04 x 2
    assert holm(p)[:4].round(6).tolist() == [0.04, 0.09, 0.09, 0.025]
    with pytest.raises(ValueError, match="groups has 2 labels for 5"):
        holm_grouped(p, ["a", "b"])


TOY_PLAN = {
    "families": {
        "vs_identity": {"vs": "identity", "metrics": ["answer_f1", "emitted_precision"]},
        "gaps": {"gap": ["emitted_precision", "grounded_precision"]},
    }
}


def _toy(tmp_path, name, scope):
    return make_run(tmp_path / name, contrasts={"holm": scope, **TOY_PLAN}, n=12)


@pytest.mark.parametrize("scope", ["family", "suite"])
def test_analyze_adjusts_within_each_family_or_over_the_suite(tmp_path, scope):
    an = analyze(load_run(_toy(tmp_path, "r", scope)), n_resamples=400)
    rows = an.contrasts
    assert [r["family"] for r in rows] == ["vs_identity"] * 6 + ["gaps"] * 4
    p = [r["p_value"] for r in rows]
    if scope == "family":
        expect = np.concatenate([holm(p[:6]), holm(p[6:])])
        assert an.holm["family_sizes"] == {"vs_identity": 6, "gaps": 4}
    else:
        expect = holm(p)
        assert an.holm["family_sizes"] == {"all": 10}
    got = np.array([np.nan if r["p_holm"] is None else r["p_holm"] for r in rows])
    np.testing.assert_allclose(got, expect)
    assert an.holm["families"] == {"vs_identity": 6, "gaps": 4} and an.holm["scope"] == scope


def test_union_of_two_runs_adjusts_over_every_row(tmp_path):
    a, b = _toy(tmp_path, "a", "suite"), _toy(tmp_path, "b", "suite")
    an_a = analyze(load_run(a), n_resamples=400)
    an_b = analyze(load_run(b), n_resamples=400, seed=3)
    raw = [r["p_value"] for r in an_a.contrasts + an_b.contrasts]
    own = [r["p_holm"] for r in an_a.contrasts], an_a.holm
    new_a, new_b = adjust_union([an_a, an_b], names=["a", "b"])
    assert ([r["p_holm"] for r in an_a.contrasts], an_a.holm) == own  # new values: the given ones unchanged
    an_a, an_b = new_a, new_b
    got = [r["p_holm"] for r in an_a.contrasts + an_b.contrasts]
    np.testing.assert_allclose(np.array(got, dtype=float), holm(raw))
    assert an_a.holm["family_sizes"] == {"all": 20} and an_a.holm["runs"] == ["a", "b"]
    # per family name across the runs
    an_a = analyze(load_run(a), n_resamples=400)
    an_b = analyze(load_run(b), n_resamples=400, seed=3)
    an_a, an_b = adjust_union([an_a, an_b], scope="family", names=["a", "b"])
    assert an_b.holm["family_sizes"] == {"vs_identity": 12, "gaps": 8}
    vs = [r["p_value"] for an in (an_a, an_b) for r in an.contrasts if r["family"] == "vs_identity"]
    got = [r["p_holm"] for an in (an_a, an_b) for r in an.contrasts if r["family"] == "vs_identity"]
    np.testing.assert_allclose(np.array(got, dtype=float), holm(vs))
    lines = describe_holm(an_b.holm)
    assert lines[0] == "contrasts: 10 in 2 families" and "  gaps: 4" in lines
    one = describe_holm({**an_b.holm, "families": {"gaps": 4}, "family_order": ["gaps"]})
    assert one[0] == "contrasts: 4 in 1 family (gaps)" and not one[1].startswith("  ")  # the count said once
    scope_line = next(x for x in lines if x.startswith("Holm scope"))
    assert "Holm scope: family" in scope_line and "of 2 runs (a, b)" in scope_line


def test_a_separate_family_is_adjusted_on_its_own_in_a_run_and_in_a_union(tmp_path):
    plan = {
        "holm": "suite",
        "families": {"vs_identity": {"vs": "identity", "metrics": ["answer_f1", "emitted_precision"]}},
        "separate": {"gaps": {"gap": ["emitted_precision", "grounded_precision"]}},
    }
    a = make_run(tmp_path / "a", contrasts=plan, n=12)
    b = make_run(tmp_path / "b", contrasts=plan, n=12)
    an_a = analyze(load_run(a), n_resamples=400)
    p = [r["p_value"] for r in an_a.contrasts]
    assert [r["family"] for r in an_a.contrasts] == ["vs_identity"] * 6 + ["gaps"] * 4
    # the suite-wide family holds the 6 planned rows; the 4 gaps are a family of their own
    got = np.array([np.nan if r["p_holm"] is None else r["p_holm"] for r in an_a.contrasts])
    np.testing.assert_allclose(got, np.concatenate([holm(p[:6]), holm(p[6:])]))
    assert an_a.holm["family_sizes"] == {"all": 6, "gaps": 4} and an_a.holm["separate"] == ["gaps"]
    assert "Holm adjustment over all 6 contrasts as one family; gaps (4) adjusted on its own, outside it" in (
        holm_note(an_a)
    )
    an_b = analyze(load_run(b), n_resamples=400, seed=3)
    u_a, u_b = adjust_union([an_a, an_b], names=["a", "b"])
    rows = list(u_a.contrasts) + list(u_b.contrasts)
    raw = [r["p_value"] for r in an_a.contrasts + an_b.contrasts]
    planned = [i for i, r in enumerate(rows) if r["family"] == "vs_identity"]
    gaps = [i for i, r in enumerate(rows) if r["family"] == "gaps"]
    expect = np.full(len(rows), np.nan)
    expect[planned] = holm([raw[i] for i in planned])  # 12 rows over the two runs
    expect[gaps] = holm([raw[i] for i in gaps])  # 8 rows over the two runs, by the family's name
    np.testing.assert_allclose(np.array([r["p_holm"] for r in rows], dtype=float), expect)
    assert u_a.holm["family_sizes"] == {"all": 12, "gaps": 8}
    assert union_family_size([holm_family_counts(load_run(a)), holm_family_counts(load_run(b))], None) == 12
    assert "one family: all 12 rows of 2 runs (a, b); gaps: 8 rows adjusted on its own" in " ".join(
        describe_holm(u_a.holm)
    )
    # a separate family named as a planned one, or 'all', is refused
    with pytest.raises(ValueError, match="a family of that name is in contrasts.families"):
        expand_plan({**plan, "separate": {"vs_identity": {"vs": "identity"}}}, SETTINGS, default_metrics=["f1"])
    with pytest.raises(ValueError, match="'all' names the suite-wide Holm family"):
        expand_plan({**plan, "separate": {"all": {"vs": "identity"}}}, SETTINGS, default_metrics=["f1"])


def test_runs_that_disagree_on_the_scope_need_a_choice(tmp_path):
    a, b = _toy(tmp_path, "a", "suite"), _toy(tmp_path, "b", "family")
    with pytest.raises(RunError, match="different Holm scopes.*--holm suite or --holm family"):
        build_reports([a, b], n_resamples=200, plots=False)
    with pytest.raises(RunError, match="given twice"):
        build_reports([a, a], n_resamples=200, plots=False)


def test_report_cli_takes_several_runs_and_prints_the_families(tmp_path):
    a, b = _toy(tmp_path, "a", "suite"), _toy(tmp_path, "b", "family")
    res = CliRunner().invoke(main, ["report", str(a), str(b), "--holm", "suite", "--resamples", "200", "--no-plots"])
    assert res.exit_code == 0, res.output
    assert "contrasts: 10 in 2 families" in res.output
    assert "Holm scope: suite (one family: all 20 rows of 2 runs" in res.output
    rep = json.loads((b / "report.json").read_text())
    assert rep["holm"]["scope"] == "suite" and rep["holm"]["family_sizes"] == {"all": 20}
    md = (b / "contrasts.md").read_text()
    assert "20 contrasts of 2 runs" in md
    res = CliRunner().invoke(main, ["report", str(a), str(b), "--out", str(tmp_path / "x")])
    assert res.exit_code != 0 and "--out takes one run" in res.output
    # one run alone is adjusted within itself again
    written = build_report(a, n_resamples=200, plots=False)
    assert json.loads(written["report_json"].read_text())["holm"]["family_sizes"] == {"all": 10}


# ------------------------------------------------------------------ the suite loader validates the study

BASE = """\
name: t
dataset: {name: hotpotqa, limit: 3}
settings:
  - {compressor: identity}
  - {compressor: naive, budgets: [50, 0.5]}
  - {compressor: extractive, budgets: [0.5]}
"""


def write(tmp_path, text):
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "extra, message",
    [
        ("contrasts: [{vs: identiy}]\n", "Unknown setting 'identiy' in contrasts[0].vs. Did you mean 'identity'?"),
        (
            "contrasts: {families: {g: {gap: [emitted_precision, grounded_precison]}}}\n",
            "Unknown metric 'grounded_precison' in contrasts.families.g[0].gap[1]: no diagnostic writes it.",
        ),
        ("contrasts: {holm: family, families: {s: {pairs: budget_steps}}}\n", "expands to no pair"),
        ("audit: {judge: minilm, settings: [naive@05]}\n", "audit.settings[0]: unknown setting 'naive@05'"),
        ("audit: {judge: minilm, nn: 5}\n", "audit.nn: unknown key. Did you mean 'n'?"),
        ("frontier: {axes: [[achieved_ratio, answer_f2]]}\n", "frontier.axes[0][1]: unknown metric 'answer_f2'"),
        ("frontier: {axes: [[achieved_ratio, judge_abstentions]]}\n", "'judge_abstentions' has no direction"),
    ],
)
def test_validate_reports_study_problems_before_the_run(tmp_path, extra, message):
    with pytest.raises(SuiteError) as err:
        load_suite(write(tmp_path, BASE + extra))
    assert message in str(err.value)
    res = CliRunner().invoke(main, ["validate", str(tmp_path / "s.yaml")])
    assert res.exit_code != 0 and message in res.output and "Traceback" not in res.output


def test_validate_prints_the_plan_per_family(tmp_path):
    text = BASE + (
        "contrasts:\n  holm: family\n  families:\n    vs_identity: {vs: identity}\n"
        "    same_budget: {pairs: same_budget, metrics: [answer_f1, answer_em]}\n"
    )
    res = CliRunner().invoke(main, ["validate", str(write(tmp_path, text))])
    assert res.exit_code == 0, res.output
    assert "contrasts (Holm scope: family):" in res.output
    assert "  vs_identity: 3 pairs x the default metrics" in res.output
    assert "  same_budget: 2 rows" in res.output  # naive@0.5 - extractive@0.5 on two metrics


def test_audit_and_frontier_leave_the_suite_hash_alone(tmp_path):
    plain = load_suite(write(tmp_path, BASE))
    study = load_suite(write(tmp_path, BASE + "audit: {judge: minilm, n: 5}\nfrontier: {alpha: 0.1}\n"))
    assert suite_hash(plain) == suite_hash(study)
    assert study.audit.modes == ["fixed", "rerecover"] and study.frontier.axes[0] == (
        "achieved_ratio",
        "grounded_precision",
    )


def test_a_list_of_families_keeps_its_order_through_the_manifest(tmp_path):
    spec = {
        "families": [
            {"z_last_alphabetically": {"vs": "identity", "compressors": ["rerank"]}},
            {"a_first": "ext@0.5 vs identity"},
        ]
    }
    plan = expand_plan(json.loads(json.dumps(spec, sort_keys=True)), SETTINGS, default_metrics=["m"])
    assert plan.families == ("z_last_alphabetically", "a_first")
    for bad, msg in (
        ({"families": [{"a": {"vs": "identity"}, "b": {"vs": "identity"}}]}, r"families\[0\] must be one mapping"),
        ({"families": [{"a": {"vs": "identity"}}, {"a": "ext@0.5 vs identity"}]}, "names a family twice"),
        ({"families": []}, "contrasts.families must map"),
    ):
        with pytest.raises(ValueError, match=msg):
            expand_plan(bad, SETTINGS, default_metrics=["m"])
    run = make_run(
        tmp_path / "r",
        contrasts={
            "families": [
                {"zz": {"vs": "identity", "metrics": ["answer_f1"]}},
                {"aa": {"gap": ["emitted_precision", "grounded_precision"]}},
            ]
        },
        n=8,
    )
    written = build_report(run, n_resamples=100, plots=False)
    holm_info = json.loads(written["report_json"].read_text())["holm"]
    assert holm_info["family_order"] == ["zz", "aa"]
    assert describe_holm(holm_info)[1:3] == ["  zz: 3", "  aa: 4"]
