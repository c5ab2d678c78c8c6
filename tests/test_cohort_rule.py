"""The paper's cohort rule (docs/design.md#common-cohort): the common cohort is the questions ``ok`` in identity and
in every setting that ran; a wholly ``unavailable`` setting is reported with its counts and left out of the cohort
and of the contrast family, with a line in the summary."""

import csv
import json
import random

from click.testing import CliRunner

from rageval.cli import main
from rageval.rundir.columns import common_cohort, wholly_unavailable


def _recs(table):
    """``{setting: "status status ..."}`` for questions q0, q1, ... -> records (``-`` = no record)."""
    out = []
    for s, statuses in table.items():
        for i, st in enumerate(statuses.split()):
            if st != "-":
                out.append({"question_id": f"q{i}", "setting": {"name": s}, "status": st})
    return out


def test_a_wholly_unavailable_setting_is_left_out_of_the_cohort():
    recs = _recs(
        {
            "identity": "ok ok ok ok",
            "ext@0.5": "ok ok reader_error ok",
            "abs@0.5": "unavailable unavailable unavailable unavailable",
        }
    )
    c = common_cohort(recs)
    # q2 failed in a setting that ran -> out; abs@0.5 did not run -> it defines nothing
    assert c.question_ids == ("q0", "q1", "q3")
    assert c.left_out == ("abs@0.5",) and c.family == ("identity", "ext@0.5")
    assert c.counts["abs@0.5"] == {
        "n_records": 4,
        "n_ok": 0,
        "n_failed": 4,
        "n_missing": 0,
        "n_cohort": 0,
        "n_excluded": 0,
    }
    assert c.counts["identity"]["n_cohort"] == 3 and c.counts["identity"]["n_excluded"] == 1
    # the former rule (ok in every setting) gives the empty cohort the issue reported
    old = common_cohort(recs, leave_out_unavailable=False)
    assert old.question_ids == () and old.left_out == ()


def test_a_partly_unavailable_setting_ran_and_stays_in():
    recs = _recs({"identity": "ok ok ok", "abs@0.5": "ok unavailable ok"})
    c = common_cohort(recs)
    assert c.left_out == () and c.question_ids == ("q0", "q2")


def test_missing_records_plus_unavailable_is_still_wholly_unavailable():
    recs = _recs({"identity": "ok ok ok", "abs@0.5": "unavailable - unavailable"})
    c = common_cohort(recs)
    assert c.left_out == ("abs@0.5",) and c.question_ids == ("q0", "q1", "q2")
    assert c.counts["abs@0.5"]["n_missing"] == 1
    assert wholly_unavailable(["unavailable", None]) and not wholly_unavailable([None, None])
    assert not wholly_unavailable(["unavailable", "ok"]) and not wholly_unavailable([])


def test_the_rule_on_one_setting_is_the_rule_the_cohort_applies():
    rng = random.Random(2)
    for _ in range(200):
        table = {s: " ".join(rng.choice(["ok", "unavailable", "reader_error", "-"]) for _ in range(4)) for s in "abc"}
        recs = _recs(table)
        if not recs:
            continue
        c = common_cohort(recs, list(table))
        for s, statuses in table.items():
            per_question = [None if st == "-" else st for st in statuses.split()]
            assert wholly_unavailable(per_question) == (s in c.left_out), table


def test_every_setting_unavailable_gives_an_empty_cohort_not_an_error():
    c = common_cohort(_recs({"a": "unavailable unavailable", "b": "unavailable unavailable"}))
    assert c.question_ids == () and c.left_out == ("a", "b") and c.family == ()


SUITE = """\
name: cohort-rule
dataset: {{name: hotpotqa, limit: 3}}
retrieval: {{method: bm25, k: 3}}
settings:
  - {{compressor: identity}}
  - {{compressor: naive, budgets: [64]}}
  - {{compressor: abstractive, budgets: [0.5], params: {{model: {missing}}}}}
reader: {{backend: extractive}}
judge: {{spec: lexical}}
diagnostics: [answer_in_context, retrieval_recall]
contrasts: [{{vs: identity}}, {{a: abstractive@0.5, b: naive@64, metrics: [retrieval_recall]}}]
output_dir: {out}
seed: 0
"""


def test_suite_with_a_setting_whose_weights_are_missing_reports_a_real_cohort(tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.format(missing=tmp_path / "no-such-model", out=tmp_path / "run"))
    res = CliRunner().invoke(main, ["suite", str(suite), "--allow-unavailable", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "common cohort: 3 of 3 questions ok in every setting that ran" in res.output
    assert "Left out of the common cohort and the contrasts" in res.output
    assert "abstractive@0.5 (3 of 3 records unavailable)" in res.output
    run = tmp_path / "run"
    report = json.loads((run / "report.json").read_text())
    assert report["cohort"]["n"] == 3
    assert report["cohort"]["left_out"] == [{"setting": "abstractive@0.5", "n_records": 3, "n_unavailable": 3}]
    # vs identity over 3 directed metrics (retrieval_recall, all_gold, answer_in_context): naive's 3 rows
    # stay; abstractive's 3 rows and the explicit abstractive - naive row are left out of the family (and Holm)
    pairs = list(report["contrasts"])
    assert {c["a"] for c in pairs} == {"naive@64"} and {c["b"] for c in pairs} == {"identity"} and len(pairs) == 3
    assert report["cohort"]["n_contrast_rows_left_out"] == 4
    # means are real numbers over the 3 questions for the settings that ran; the left-out one stays undefined
    rows = {r["setting"]: r for r in csv.DictReader((run / "summary.csv").read_text().splitlines(keepends=True))}
    assert rows["identity"]["retrieval_recall_n"] == "3" and rows["identity"]["retrieval_recall"] != "NA"
    assert rows["abstractive@0.5"]["left_out"] == "true" and rows["identity"]["left_out"] == "false"
    assert rows["abstractive@0.5"]["n_cohort"] == "0" and rows["abstractive@0.5"]["retrieval_recall"] == "NA"
    md = (run / "summary.md").read_text()
    assert "Common cohort: **3** of 3 questions are `ok` in every setting that ran." in md
    assert "abstractive@0.5 (3 of 3 records unavailable); 4 contrast rows left out." in md
