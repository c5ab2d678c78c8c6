"""The study in one command: a suite with a contrast plan, an audit: section and a setting whose weights are
missing, run offline; the family counts, the audit and the report's left-out line come out of `rageval suite`."""

import json

import pytest
from click.testing import CliRunner
from test_audit import rule

from rageval.cli import main

SUITE = """\
name: study
dataset: {name: hotpotqa, limit: 4}
retrieval: {method: bm25, k: 5}
settings:
  - {compressor: identity}
  - {compressor: token_prune, budgets: [0.5]}
  - {compressor: extractive, budgets: [0.5]}
%(extra_setting)s
reader: {backend: extractive}
judge: {spec: lexical}
contrasts:
  families:
    - vs_identity: {vs: identity, metrics: [grounded_precision, answer_f1]}
    - emitted_vs_grounded: {gap: [emitted_precision, grounded_precision], compressors: [token_prune]}
    - same_budget: {pairs: same_budget, metrics: [grounded_precision]}
audit: {judge: %(audit_judge)s, n: 3}
seed: 0
"""
MISSING = "  - {compressor: abstractive, budgets: [0.5], params: {model: /nonexistent/recomp}}"


@pytest.fixture(autouse=True)
def judge():
    from rageval.judges import JUDGES, CallableJudge

    JUDGES.register("study-rule", lambda arg, o: CallableJudge(rule, judge_id="study-rule-v1"))
    yield
    JUDGES.unregister("study-rule")


def _suite(tmp_path, *, missing=True, audit_judge="study-rule"):
    p = tmp_path / "study.yaml"
    p.write_text(SUITE % {"extra_setting": MISSING if missing else "", "audit_judge": audit_judge})
    return p


def test_suite_runs_the_plan_the_audit_and_reports_what_was_left_out(tmp_path):
    out = tmp_path / "run"
    res = CliRunner().invoke(
        main, ["suite", str(_suite(tmp_path)), "--out", str(out), "--allow-unavailable", "--no-progress"]
    )
    assert res.exit_code == 0, res.output
    # 3 settings ran (identity, token_prune@0.5, extractive@0.5): vs identity 2 x 2, one gap, one same-budget pair
    # (abstractive@0.5 did not run: its rows are left out of the family)
    assert "contrasts: 6 in 3 families" in res.output
    assert "  vs_identity: 4" in res.output and "  emitted_vs_grounded: 1" in res.output
    assert "  same_budget: 1" in res.output
    assert "Holm scope: suite" in res.output
    assert "audit of" in res.output and "3 questions x 3 settings = 9 records" in res.output
    assert (out / "audit-study-rule" / "audit.md").is_file()
    audit = json.loads((out / "audit-study-rule" / "audit.json").read_text())
    assert audit["settings_left_out"] == ["abstractive@0.5"]
    html = (out / "report.html").read_text()
    assert 'id="audit"' in html and "study-rule" in html  # the report is rebuilt after the audit
    assert "report (with the audit):" in res.output
    assert 'id="left-out"' in html and "abstractive@0.5" in html
    assert 'id="pareto-1"' in html and "Contrasts: 6 in 3 families" in html


def test_an_unavailable_second_judge_is_skipped_only_when_allowed(tmp_path):
    suite = _suite(tmp_path, missing=False, audit_judge="nli:/nonexistent/true-judge")
    res = CliRunner().invoke(
        main, ["suite", str(suite), "--out", str(tmp_path / "a"), "--allow-unavailable", "--no-progress"]
    )
    assert res.exit_code == 0, res.output
    assert "audit: second judge 'nli:/nonexistent/true-judge' is unavailable" in res.output and "skipped" in res.output
    assert not [p for p in (tmp_path / "a").iterdir() if p.name.startswith("audit-")]  # no empty audit folder
    res = CliRunner().invoke(main, ["suite", str(suite), "--out", str(tmp_path / "b"), "--no-progress"])
    assert res.exit_code != 0 and "rageval audit" in res.output and "Traceback" not in res.output
    # the run itself is complete: the audit can follow with another judge
    res = CliRunner().invoke(main, ["audit", str(tmp_path / "b"), "--judge", "study-rule", "--resamples", "100"])
    assert res.exit_code == 0, res.output
