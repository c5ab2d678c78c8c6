"""The audit as the paper ran it: the second judge's options (max_length and the rest) from the CLI and the
suite's ``audit:`` block, and Holm over the planned emitted - grounded gaps within a run and across runs."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from test_audit import make_run, rule

from rageval.audit.run import AuditError, audit_dir, run_audit
from rageval.audit.tables import holm_planned_gaps, planned_gap_count
from rageval.cli import main
from rageval.judges import JUDGES, CallableJudge
from rageval.judges.registry import JudgeMeta

SEEN: list[dict] = []


@pytest.fixture(autouse=True)
def capped_judge():
    def build(arg, o):
        SEEN.append({"max_length": o.max_length, "batch_size": o.batch_size})
        return CallableJudge(rule, judge_id=f"audit-cap-v1|max_length={o.max_length}")

    JUDGES.register("audit-cap", build, JudgeMeta(window=True))  # a judge that truncates at max_length
    SEEN.clear()
    yield
    JUDGES.unregister("audit-cap")


def _with_audit_block(run, block):
    m = json.loads((run / "manifest.json").read_text())
    m["suite"]["config"]["audit"] = block
    (run / "manifest.json").write_text(json.dumps(m))


def test_max_length_4096_reaches_the_second_judge_from_python_yaml_and_cli(tmp_path):
    run = make_run(tmp_path)
    res = run_audit(run, "audit-cap", n_resamples=100, judge_options={"max_length": 4096})
    assert SEEN[-1]["max_length"] == 4096
    assert res["second_judge"]["params"] == {"max_length": 4096}
    assert res["second_judge"]["id"].endswith("max_length=4096")
    assert "max_length 4096" in (audit_dir(run, "audit-cap") / "audit.md").read_text()
    # without it the judge's default (512 for a model judge) is what the factory gets
    run_audit(run, "audit-cap", n_resamples=100)
    assert SEEN[-1]["max_length"] == 512
    # the suite's audit: block (read from the run's manifest), and the CLI overriding it
    _with_audit_block(run, {"judge": "audit-cap", "params": {"max_length": 4096, "batch_size": 2}})
    out = CliRunner().invoke(main, ["audit", str(run), "--resamples", "100"])
    assert out.exit_code == 0, out.output
    assert SEEN[-1] == {"max_length": 4096, "batch_size": 2}
    out = CliRunner().invoke(main, ["audit", str(run), "--resamples", "100", "--max-length", "1024"])
    assert out.exit_code == 0, out.output
    assert SEEN[-1]["max_length"] == 1024
    out = CliRunner().invoke(main, ["audit", str(run), "--resamples", "100", "--judge-param", "batch_size=3"])
    assert out.exit_code == 0 and SEEN[-1] == {"max_length": 4096, "batch_size": 3}


def test_bad_judge_options_fail_with_one_line(tmp_path):
    run = make_run(tmp_path)
    with pytest.raises(AuditError, match=r"max_length: must be a positive integer"):
        run_audit(run, "audit-cap", judge_options={"max_length": 0})
    with pytest.raises(AuditError, match=r"max_lenght: unknown judge option. Did you mean 'max_length'"):
        run_audit(run, "audit-cap", judge_options={"max_lenght": 4096})
    out = CliRunner().invoke(main, ["audit", str(run), "--judge", "audit-cap", "--judge-param", "oops"])
    assert out.exit_code != 0 and "KEY=VALUE" in out.output and "Traceback" not in out.output


def test_the_suite_checks_the_audit_block_params(tmp_path):
    from rageval.suite.load import SuiteError, load_suite

    base = (
        "name: t\ndataset: {name: hotpotqa, limit: 2}\nsettings: [{compressor: identity}]\n"
        "audit: {judge: 'seq2seq:/models/t5_xxl_true_nli_mixture', params: {max_length: 4096}}\n"
    )
    (tmp_path / "ok.yaml").write_text(base)
    assert load_suite(tmp_path / "ok.yaml").audit.params == {"max_length": 4096}
    (tmp_path / "bad.yaml").write_text(base.replace("max_length: 4096", "max_length: -1"))
    with pytest.raises(SuiteError, match=r"audit.params.max_length: must be a positive integer"):
        load_suite(tmp_path / "bad.yaml")
    for judge in ("minilm", "lexical", "'embedding:/m/e5'"):  # they read whole premises: max_length would do nothing
        (tmp_path / "none.yaml").write_text(base.replace("'seq2seq:/models/t5_xxl_true_nli_mixture'", judge))
        with pytest.raises(SuiteError, match=r"audit.params.max_length: judge .* does not truncate at max_length"):
            load_suite(tmp_path / "none.yaml")


@pytest.mark.parametrize("judge", ["minilm", "embedding:/m/e5"])
def test_a_max_length_the_second_judge_would_ignore_is_refused(tmp_path, judge):
    run = make_run(tmp_path)
    out = CliRunner().invoke(main, ["audit", str(run), "--judge", judge, "--max-length", "4096"])
    assert out.exit_code == 2 and "does not truncate at max_length" in out.output and "Traceback" not in out.output
    assert not audit_dir(run, judge).exists()


def _gap(setting, evaluator, p, way="as_unsupported"):
    return {
        "setting": setting,
        "evaluator": evaluator,
        "abstentions": way,
        "gap": "precision",
        "p_value": p,
        "note": None,
    }


def test_holm_over_the_planned_gaps_within_a_run_and_across_runs_by_hand():
    a = [
        _gap("x", "second (fixed mappings)", 0.01),
        _gap("x", "second (re-recovery)", 0.04),
        _gap("x", "first", 0.001),
        _gap("all audited settings", "second (fixed mappings)", 0.002),
    ]
    b = [_gap("y", "second (fixed mappings)", 0.03)]
    # within run a: Holm over its 2 planned gaps: 0.01 * 2 = 0.02, max(0.02, 0.04 * 1) = 0.04
    one = [dict(r) for r in a]
    holm_planned_gaps([one], [["x"]], ["a"])
    assert [r["p_holm"] for r in one[:2]] == pytest.approx([0.02, 0.04])
    assert one[2]["p_holm"] is None and "run's own gap" in one[2]["note"]  # the first judge's: raw p only
    assert one[3]["p_holm"] is None and "pooled summary" in one[3]["note"]
    # across runs a and b: 3 rows; 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, max(0.06, 0.04 * 1) = 0.06
    two_a, two_b = [dict(r) for r in a], [dict(r) for r in b]
    holm_planned_gaps([two_a, two_b], [["x"], ["y"]], ["a", "b"])
    assert [two_a[0]["p_holm"], two_b[0]["p_holm"], two_a[1]["p_holm"]] == pytest.approx([0.03, 0.06, 0.06])
    assert two_a[0]["holm_family_size"] == 3
    # a recall gap of an audited setting is reported outside the family (the paper's are the precision gaps)
    with_recall = [dict(r) for r in a] + [{**_gap("x", "second (fixed mappings)", 0.001), "gap": "recall"}]
    holm_planned_gaps([with_recall], [["x"]], ["a"])
    assert [r["p_holm"] for r in with_recall[:2]] == pytest.approx([0.02, 0.04])  # the same family of 2
    assert with_recall[4]["p_holm"] is None and "a recall gap, reported" in with_recall[4]["note"]
    # the paper's audit: 4 settings x 2 modes per dataset, 16 over ASQA and QASPER adjusted together
    paper = ["identity", "extractive@0.25", "abstractive@0.25", "token_prune@0.25"]
    assert planned_gap_count(paper, ["fixed", "rerecover"]) == 8
    assert 2 * planned_gap_count(paper, ["fixed", "rerecover"]) == 16


def test_audits_of_two_runs_are_adjusted_together_from_the_cli(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ra, rb = make_run(tmp_path / "a"), make_run(tmp_path / "b")
    alone = run_audit(ra, "audit-cap", n_resamples=100)
    planned = [r for r in alone["gaps"] if r["planned"] and r["abstentions"] == "as_unsupported"]
    assert len(planned) == planned_gap_count(["tp@0.5"], ["fixed", "rerecover"]) == 2
    assert {r["gap"] for r in planned} == {"precision"}
    assert {r["holm_family_size"] for r in planned} == {2} and alone["gaps_holm"]["scope"] == "run"
    out = CliRunner().invoke(main, ["audit", str(ra), str(rb), "--judge", "audit-cap", "--resamples", "100"])
    assert out.exit_code == 0, out.output
    assert "planned gaps: Holm over 4 of 2 runs together" in out.output
    for run in (ra, rb):
        res = json.loads((audit_dir(run, "audit-cap") / "audit.json").read_text())
        assert res["gaps_holm"] == {
            "family_size": {"as_unsupported": 4, "left_out": 4},
            "runs": [str(ra), str(rb)],
            "scope": "runs",
        }
        rows = [r for r in res["gaps"] if r["planned"] and r["abstentions"] == "as_unsupported"]
        # Holm never lowers a p, and every planned row of the union is in the family of 4
        assert all(r["p_holm"] >= r["p_value"] and r["holm_family_size"] == 4 for r in rows)
        assert np.isfinite([r["p_value"] for r in rows]).all()
        md = (audit_dir(run, "audit-cap") / "audit.md").read_text()
        assert "Holm over the 4 planned gaps of the 2 audits" in md and "p (Holm)" in md


def test_the_report_shows_the_audit_once_one_exists(tmp_path):
    from rageval.report.audit_section import audit_blocks, load_audits

    run = make_run(tmp_path)
    assert load_audits(run) == []
    run_audit(run, "audit-cap", n_resamples=100, judge_options={"max_length": 4096})
    (block,) = audit_blocks(load_audits(run))
    assert "audit-cap" in block["head"] and "max_length 4096" in block["head"] and "Holm over 2" in block["head"]
    gaps = {(r[0], r[1], r[2]): r for r in block["gaps"]["rows"]}
    assert gaps[("tp@0.5", "first", "precision")][-1] == "not planned"
    assert gaps[("tp@0.5", "second (fixed mappings)", "precision")][-1] != "not planned"


def test_report_html_has_the_audit_section_when_an_audit_exists(tmp_path):
    from test_report import make_run as make_report_run

    from rageval.report import build_report

    run = make_report_run(tmp_path)
    html = build_report(run, n_resamples=200, plots=False)["report_html"].read_text()
    assert 'id="audit"' not in html  # no audit yet: no section
    folder = run / "audit-x"
    folder.mkdir()
    gap = {
        "setting": "s",
        "evaluator": "second (fixed mappings)",
        "abstentions": "as_unsupported",
        "gap": "precision",
        "effect": 0.25,
        "ci_low": 0.1,
        "ci_high": 0.4,
        "p_value": 0.004,
        "p_holm": 0.032,
        "planned": True,
    }
    audit = {
        "second_judge": {"spec": "x", "threshold": 0.5, "params": {"max_length": 4096}},
        "first_judge": {"spec": "lexical"},
        "questions": ["q1"],
        "settings": ["s"],
        "modes": ["fixed mappings"],
        "scores": [],
        "gaps": [gap],
        "cross_judge": [],
        "gaps_holm": {"family_size": {"as_unsupported": 16}, "runs": ["a", "b"], "scope": "runs"},
    }
    (folder / "audit.json").write_text(json.dumps(audit))
    html = build_report(run, n_resamples=200, plots=False)["report_html"].read_text()
    assert 'id="audit"' in html and "Planned gaps: Holm over 16 of 2 runs (a, b)" in html
    assert "max_length 4096" in html and "0.032" in html


def test_the_suites_audit_params_belong_to_its_audit_judge(tmp_path):
    """A suite's audit: {judge: seq2seq..., params: {max_length: 4096}} audited offline with --judge minilm: the
    block's options are its judge's, so minilm starts from none of them (it would refuse max_length)."""
    run = make_run(tmp_path)
    _with_audit_block(run, {"judge": "audit-cap", "params": {"max_length": 4096}})
    res = CliRunner().invoke(main, ["audit", str(run), "--resamples", "100"])
    assert res.exit_code == 0, res.output
    assert SEEN[-1]["max_length"] == 4096  # the block's own judge gets the block's options
    JUDGES.register("audit-plain", lambda arg, o: CallableJudge(rule, judge_id="audit-plain-v1"))
    try:
        res = CliRunner().invoke(main, ["audit", str(run), "--judge", "audit-plain", "--resamples", "100"])
        assert res.exit_code == 0, res.output
        second = json.loads((audit_dir(run, "audit-plain") / "audit.json").read_text())["second_judge"]
        assert second["params"] == {}
    finally:
        JUDGES.unregister("audit-plain")
