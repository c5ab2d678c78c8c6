"""Bad input and reproducibility of build_report / `rageval report`."""

import json

import pytest
from click.testing import CliRunner
from test_report import make_records, make_run, read_csv

from rageval.report import build_report
from rageval.report.cli import report_cmd
from rageval.report.load import RunError


def _build(run, **kw):
    return build_report(run, n_resamples=200, plots=False, **kw)


def test_records_from_another_suite_are_rejected(tmp_path):
    recs = make_records(n=5)
    alien = dict(recs[0], setting={"name": "rerank@0.5", "compressor": "rerank", "budget": 0.5, "reader": None})
    run = make_run(tmp_path / "r", records=recs + [alien])
    with pytest.raises(RunError, match=r"line 21: setting 'rerank@0.5' is not a setting of suite 'toy'.*mixed"):
        _build(run)


def test_same_setting_name_with_other_budget_is_rejected(tmp_path):
    recs = make_records(n=5)
    recs[7] = dict(recs[7], setting=dict(recs[7]["setting"], budget=0.3))
    with pytest.raises(RunError, match="budget=0.3 but suite 'toy' declares 0.5"):
        _build(make_run(tmp_path / "r", records=recs))


def test_record_with_another_suite_hash_is_rejected(tmp_path):
    recs = make_records(n=5)
    recs[2] = dict(recs[2], extra={"suite_hash": "zzz"})
    with pytest.raises(RunError, match="suite hash 'zzz'"):
        _build(make_run(tmp_path / "r", records=recs))


def test_duplicate_question_setting_is_rejected(tmp_path):
    recs = make_records(n=5)
    with pytest.raises(ValueError, match="two records for question 'q000' in setting 'identity'"):
        _build(make_run(tmp_path / "r", records=recs + [recs[0]]))


def test_inconsistent_cluster_ids_are_rejected(tmp_path):
    recs = make_records(n=6, clusters=True)
    recs[0] = dict(recs[0], extra={"cluster_id": "elsewhere"})
    with pytest.raises(RunError, match="question 'q000' has cluster_id"):
        _build(make_run(tmp_path / "r", records=recs, cluster_key="cluster_id"))


def test_missing_cluster_ids_are_rejected(tmp_path):
    with pytest.raises(RunError, match="carry no extra.cluster_id"):
        _build(make_run(tmp_path / "r", n=6, cluster_key="cluster_id"))


def test_contrast_naming_unknown_setting_fails_with_did_you_mean(tmp_path):
    run = make_run(tmp_path / "r", n=5, contrasts=[{"a": "extractive@0.52", "b": "identity"}])
    with pytest.raises(ValueError, match="Did you mean 'extractive@0.5'"):
        _build(run)


def test_unparseable_line_and_bad_status_name_the_line(tmp_path):
    run = make_run(tmp_path / "r", n=3)
    with (run / "records.jsonl").open("a") as fh:
        fh.write('{"question_id": "q9", "setting": {"name": "identity"}, "status": "exploded"}\n')
    with pytest.raises(RunError, match="line 13: status 'exploded'"):
        _build(run)
    (run / "records.jsonl").write_text('{"question_id": "q1", "setti\n')
    with pytest.raises(RunError, match="line 1: not valid JSON"):
        _build(run)


def test_missing_files_are_clear(tmp_path):
    with pytest.raises(RunError, match="does not exist"):
        _build(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunError, match="records.jsonl is missing"):
        _build(tmp_path / "empty")


def test_one_question_cohort_gives_undefined_intervals_not_numbers(tmp_path):
    fails = [(f"q{i:03d}", "extractive@0.25", "prompt_overflow") for i in range(1, 4)]
    run = make_run(tmp_path / "r", n=4, failures=fails, contrasts={"vs": "identity", "metrics": ["answer_f1"]})
    written = _build(run)
    rows = read_csv(written["contrasts_csv"])
    assert len(rows) == 3
    for r in rows:
        assert r["n"] == "1" and r["ci_low"] == r["ci_high"] == r["p_value"] == r["p_holm"] == "NA"
        assert "fewer than 2 questions" in r["note"]
    summ = {r["setting"]: r for r in read_csv(written["summary_csv"])}
    assert summ["extractive@0.25"]["n_prompt_overflow"] == "3" and summ["identity"]["n_cohort"] == "1"
    assert "undefined" in written["contrasts_md"].read_text()


def test_empty_cohort_is_said_and_every_mean_is_undefined(tmp_path):
    fails = [(f"q{i:03d}", "abstractive@0.25", "reader_error") for i in range(3)]
    run = make_run(tmp_path / "r", n=3, failures=fails, contrasts="every setting vs identity")
    written = build_report(run, n_resamples=100, plots=False)
    summ = read_csv(written["summary_csv"])
    assert all(r["answer_f1"] == "NA" and r["n_cohort"] == "0" for r in summ)
    assert all(r["effect"] == "NA" for r in read_csv(written["contrasts_csv"]))
    assert "common cohort is empty" in written["summary_md"].read_text()
    assert "common cohort is empty" in written["report_html"].read_text()


def test_no_contrasts_declared_still_reports(tmp_path):
    written = _build(make_run(tmp_path / "r", n=5, contrasts=None))
    assert read_csv(written["contrasts_csv"]) == []
    assert "declares no contrasts" in written["contrasts_md"].read_text()


def test_same_records_and_seed_give_byte_identical_outputs(tmp_path):
    keep = {"answer_f1", "emitted_precision", "grounded_precision"}
    recs = [dict(r, metrics={k: v for k, v in r["metrics"].items() if k in keep}) for r in make_records(n=12)]
    run = make_run(tmp_path / "r", records=recs, contrasts=["every setting vs identity"])
    a = build_report(run, n_resamples=300, out_dir=tmp_path / "a", figures="png,svg")
    b = build_report(run, n_resamples=300, out_dir=tmp_path / "b", figures="png,svg")
    assert sorted(a) == sorted(b)
    assert {"frontier_citation_precision_svg", "frontier_answer_f1_png", "sweep_svg"} <= set(a)
    for k in a:
        assert a[k].read_bytes() == b[k].read_bytes(), k
    c = build_report(run, n_resamples=300, out_dir=tmp_path / "c", seed=123, plots=False)
    assert c["contrasts_csv"].read_bytes() != a["contrasts_csv"].read_bytes()
    # the suite seed is the default
    report = json.loads(a["report_json"].read_text())
    assert report["seed"] == 7


def test_report_cmd_rebuilds_and_reports_errors(tmp_path):
    run = make_run(tmp_path / "r", n=5)
    res = CliRunner().invoke(report_cmd, [str(run), "--resamples", "100", "--no-plots"])
    assert res.exit_code == 0, res.output
    assert "report_html:" in res.output and (run / "report.html").is_file()
    bad = make_run(tmp_path / "bad", n=3, contrasts=[{"a": "identty", "b": "extractive@0.5"}])
    res = CliRunner().invoke(report_cmd, [str(bad), "--no-plots"])
    assert res.exit_code != 0 and "Did you mean 'identity'" in res.output


def test_rageval_report_subcommand_is_wired(tmp_path):
    from rageval.cli import main

    run = make_run(tmp_path / "r", n=4)
    res = CliRunner().invoke(main, ["report", str(run), "--resamples", "50", "--no-plots", "--seed", "3"])
    assert res.exit_code == 0, res.output
    assert json.loads((run / "report.json").read_text())["seed"] == 3


def test_run_where_every_record_failed_still_reports_failures(tmp_path):
    fails = [
        (f"q{i:03d}", s, "reader_error")
        for i in range(3)
        for s in ("identity", "extractive@0.5", "extractive@0.25", "abstractive@0.25")
    ]
    written = _build(make_run(tmp_path / "r", n=3, failures=fails))
    summ = read_csv(written["summary_csv"])
    assert all(r["n_reader_error"] == "3" and r["n_cohort"] == "0" for r in summ)
    assert "expand to no rows" in written["contrasts_md"].read_text()
    assert "expand to no rows" in written["report_html"].read_text()
