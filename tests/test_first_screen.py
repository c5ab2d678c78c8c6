"""The first screen of a run (docs/statistics.md#the-first-screen): the judge named with its calibration figure
and the stand-ins' caveat, the headline means with their 95% intervals and n (console, summary.csv, summary.md),
where the contrasts use other questions than the means, console lines of at most 100 characters ending with the
report's path, figures with an axis that does not vary not drawn, and the question text kept for the explorer."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_score_output import console_table

from rageval.cli import main
from rageval.report.first_screen import console_blocks, elide, question_set_notes, wrap
from rageval.report.judge_note import CALIBRATION, judge_note
from rageval.report.plots import frontier_groups
from rageval.report.result import Analysis
from rageval.score.cli import EXAMPLE
from rageval.stats import paired_tests

ROOT = Path(__file__).resolve().parents[1]


def _lines(output: str) -> list[str]:
    """Every console line, a progress bar's carriage-return updates each a line of its own."""
    return [piece for line in output.split("\n") for piece in line.split("\r")]


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    out = tmp_path_factory.mktemp("example") / "o"
    res = CliRunner().invoke(main, ["score", "--example", "--out", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out, res


def test_score_example_names_the_judge_fits_100_columns_and_ends_with_the_report(example):
    out, output = example
    lines = _lines(output.stdout) + _lines(output.stderr)  # the progress bar on stderr, the rest on stdout
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    output = output.stdout
    assert output.splitlines()[-1] == f"report: {out / 'report.html'}"
    text = " ".join(output.split())  # the wrapped lines joined
    assert "Judge: lexical:v1 (model-free word overlap)" in text
    assert "balanced accuracy 0.682 (rageval calibrate --judge lexical)" in text
    assert "these numbers show the mechanics, not model quality" in text
    assert "findings (judge lexical:v1; report.html shows them after this table):" in text
    table = console_table(output.splitlines(), "headline means on the common cohort (6 of 6 questions")
    summary = {r["setting"]: r for r in csv.DictReader((out / "summary.csv").open(encoding="utf-8"))}
    for setting in ("baseline", "reranked"):
        row, cells = summary[setting], table[setting]
        want = f"{float(row['answer_f1']):.3f} [{float(row['answer_f1_ci_low']):.3f}, "
        assert cells["answer_f1"] == want + f"{float(row['answer_f1_ci_high']):.3f}]"
    assert table["baseline"]["re_attributability"] == "—"  # undefined: no unit to re-attribute in the baseline


def _values(out: Path) -> dict[tuple[str, str], list[float]]:
    """Per (setting, metric) the records' values in question order, NaN where undefined (every record is ok)."""
    vals: dict[tuple[str, str], dict[str, float]] = {}
    for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        assert rec["status"] == "ok"
        for m, v in rec["metrics"].items():
            if v is None or isinstance(v, (int, float)):
                x = math.nan if v is None else float(v)
                vals.setdefault((rec["setting"]["name"], m), {})[rec["question_id"]] = x
    return {k: [v[q] for q in sorted(v)] for k, v in vals.items()}


def test_summary_csv_intervals_are_each_settings_bootstrap_interval(example):
    out, _ = example
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    vals = _values(out)
    rows = list(csv.DictReader((out / "summary.csv").open(encoding="utf-8")))
    checked = 0
    for row in rows:
        s = row["setting"]
        for m in ("answer_f1", "emitted_precision", "unsupported_summary_checked", "re_attributability"):
            v = np.array(vals[(s, m)])
            defined = v[np.isfinite(v)]
            assert int(row[f"{m}_n"]) == defined.size  # n: the questions with a defined value
            if defined.size < 2:  # no interval from fewer than two questions: NA, never 0
                assert row[f"{m}_ci_low"] == row[f"{m}_ci_high"] == "NA"
                continue
            assert float(row[m]) == pytest.approx(defined.mean(), abs=1e-6)
            # the same engine, seed and replicates, on this metric's values alone
            r = paired_tests(v, n_resamples=report["n_resamples"], seed=report["seed"]).row(0)
            assert float(row[f"{m}_ci_low"]) == pytest.approx(r["ci_low"], abs=2e-6)
            assert float(row[f"{m}_ci_high"]) == pytest.approx(r["ci_high"], abs=2e-6)
            assert float(row[f"{m}_ci_low"]) <= float(row[m]) <= float(row[f"{m}_ci_high"])
            if np.all(defined == defined[0]):  # every resample of equal values has their mean
                assert float(row[f"{m}_ci_low"]) == float(row[f"{m}_ci_high"]) == defined[0]
            checked += 1
    assert checked >= 5
    # the existing columns keep their places: the intervals come after every one of them
    cols = list(rows[0])
    first = next(i for i, c in enumerate(cols) if c.endswith("_ci_low"))
    assert all(c.endswith(("_ci_low", "_ci_high")) for c in cols[first:])


def test_summary_md_opens_on_the_judge_the_table_and_the_findings(example):
    out, _ = example
    md = (out / "summary.md").read_text(encoding="utf-8")
    judge = md.index("Judge: `lexical:v1`")
    table = md.index("## Headline means with 95% intervals")
    findings = md.index("## Findings")
    assert judge < table < findings < md.index("## Records by status")
    assert "| baseline | 6 | 0.175 [" in md
    assert "Offline stand-ins produced these numbers" in md
    assert md[findings:].split("\n\n")[1].startswith("Judge: `lexical:v1`; offline stand-ins")
    # the contrasts of re_attributability pair no question (undefined in the baseline): said with the counts
    assert "`re_attributability`: 1 of 1 contrasts use other questions than the means" in md
    assert "pairs 0 questions (6 dropped: undefined on a side) while its means use 6 and 0" in md


def test_means_and_contrasts_on_different_questions_are_counted():
    doc = {
        "summary": [
            {"setting": "a", "n_cohort": 6, "metrics": {"m": {"mean": 0.333, "n": 6}, "x": {"mean": 1.0, "n": 6}}},
            {"setting": "b", "n_cohort": 6, "metrics": {"m": {"mean": 0.792, "n": 5}, "x": {"mean": 1.0, "n": 6}}},
        ],
        "contrasts": [
            {"a": "b", "b": "a", "metric_a": "m", "metric_b": "m", "n": 5, "n_dropped": 1},
            {"a": "b", "b": "a", "metric_a": "x", "metric_b": "x", "n": 6, "n_dropped": 0},
        ],
    }
    assert question_set_notes(doc, ["m", "x"]) == [
        (
            "`m`: 1 of 1 contrasts use other questions than the means (`b` − `a` pairs 5 questions (1 dropped: "
            "undefined on a side) while its means use 5 and 6)."
        )
    ]
    doc["summary"][1]["metrics"]["m"]["n"] = 6
    doc["contrasts"][0].update(n=6, n_dropped=0)
    assert question_set_notes(doc, ["m"]) == []  # the same questions: nothing to say


def test_the_console_table_wraps_into_blocks_of_at_most_100_columns():
    metrics = [f"metric_{i}" for i in range(9)]
    iv = {m: {"ci_low": 0.1, "ci_high": 0.9} for m in metrics}
    doc = {
        "frontier": {"intervals": {"s" * 60: iv, "b": iv}},
        "summary": [
            {"setting": name, "n_cohort": 100, "metrics": {m: {"mean": 0.5, "n": 100} for m in metrics}}
            for name in ("s" * 60, "b")
        ],
    }
    lines = console_blocks(doc, metrics)
    assert max(map(len, lines)) <= 100
    heads = [line for line in lines if line.startswith("setting")]
    assert len(heads) > 1 and sum(len(h.split()) - 2 for h in heads) == len(metrics)  # every column once
    assert elide("s" * 60) in lines[1] and len(elide("s" * 60)) == 32
    wrapped = wrap("word " * 40)
    assert wrapped[0] == ("word " * 20).strip() and all(line.startswith("  word") for line in wrapped[1:])
    assert max(map(len, wrapped)) <= 100 and " ".join(wrapped).split() == ["word"] * 40
    assert wrap("x" * 150) == ["x" * 150]  # a path stays whole


def test_judge_note_from_the_manifest():
    note = judge_note({"models": {"judge": "nli:some/model@abc", "reader": {"reader": "hf"}}})
    assert note.calibration is None and note.stand_ins == ()
    assert note.lines() == [
        (
            "Judge: `nli:some/model@abc`; no calibration figure recorded for it (measure one: "
            "`rageval calibrate --judge <spec>`)."
        )
    ]
    strict = judge_note({"models": {"judge": "lexical-strict:v1", "reader:a": {"reader": "extractive"}}})
    assert strict.calibration is CALIBRATION["lexical-strict:v1"] and strict.calibration.value == 0.669
    assert strict.stand_ins == ("the model-free strict lexical judge", "the extractive reader")


def _analysis(ratios, metric):
    rows = [
        {"setting": f"s{i}", "achieved_ratio": r, "metrics": {"answer_f1": {"mean": v, "n": 1, "n_undefined": 0}}}
        for i, (r, v) in enumerate(zip(ratios, metric))
    ]
    return Analysis.from_json({"summary": rows, "metric_names": ["answer_f1"]})


def test_an_axis_that_does_not_vary_is_not_drawn(example):
    assert _analysis([1.0, 1.0], [0.2, 0.4]).fixed_axis("achieved_ratio") == 1.0
    assert _analysis([1.0, 0.5], [0.2, 0.4]).fixed_axis("achieved_ratio") is None
    assert _analysis([1.0], [0.2]).fixed_axis("achieved_ratio") is None  # one setting: nothing to compare
    assert _analysis([1.0, None], [0.2, 0.2]).fixed_axes(["achieved_ratio", "answer_f1"]) == {"answer_f1": 0.2}
    assert frontier_groups(_analysis([1.0, 1.0], [0.2, 0.4])) == []  # the x-axis is fixed: no frontier figure
    assert frontier_groups(_analysis([1.0, 0.5], [0.2, 0.4])) == [("answer_f1", ["answer_f1"])]
    # the example: answer_in_context is 1.000 in both settings, so its Pareto figure is not drawn
    out, _ = example
    page = (out / "report.html").read_text(encoding="utf-8")
    drawn = [f["name"] for f in json.loads(page.split('id="figure-data">', 1)[1].split("</script>", 1)[0])]
    assert "pareto_achieved_ratio__answer_in_context" not in drawn  # the page draws its figures from their data
    assert "pareto_achieved_ratio__grounded_precision" in drawn
    assert "Not drawn: <code>answer_in_context</code> is 1.000 in every setting" in page


def test_score_keeps_each_questions_text_for_the_explorer(example):
    out, _ = example
    given = {}
    for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        given[item["id"]] = item["question"]
    records = [json.loads(x) for x in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["question_id"]: r["extra"]["question"] for r in records} == given
    page = (out / "report.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="explorer-data">(.*?)</script>', page, re.DOTALL).group(1))
    assert {q: v["text"] for q, v in data["questions"].items()} == given


@pytest.mark.slow
def test_the_demo_console_fits_100_columns_and_ends_with_the_report(tmp_path):
    out = tmp_path / "demo"
    res = CliRunner().invoke(main, ["suite", str(ROOT / "suites" / "demo.yaml"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    lines = _lines(res.stdout) + _lines(res.stderr)  # the progress bar on stderr, the rest on stdout
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    assert res.stdout.splitlines()[-1] == f"report: {out / 'report.html'}"
    text = " ".join(res.stdout.split())
    assert "the model-free lexical judge, the extractive reader" in text and "not model quality" in text


def test_score_json_names_the_judge(tmp_path):
    res = CliRunner().invoke(main, ["score", "--example", "--out", str(tmp_path / "o"), "--no-report", "--json"])
    assert res.exit_code == 0, res.stderr
    judge = json.loads(res.stdout)["judge"]
    assert judge["id"] == "lexical:v1" and judge["calibration"]["value"] == 0.682
    assert judge["calibration"]["command"] == "rageval calibrate --judge lexical"
    assert judge["stand_ins"] == ["the model-free lexical judge"] and "not model quality" in judge["caveat"]


def test_the_calibration_table_holds_what_its_commands_compute():
    """Each figure of the judge note's table is what its command prints today (not a number copied once)."""
    import importlib.util

    from rageval.calibrate.core import calibrate, load_wice

    lexical = calibrate(load_wice(), judge="lexical")["partial_as_not_supported"]
    cal = CALIBRATION["lexical:v1"]
    assert (round(lexical["balanced_accuracy"], 3), lexical["n"]) == (cal.value, cal.n)

    spec = importlib.util.spec_from_file_location(
        "fit_strict_judge", Path(__file__).parents[1] / "scripts/fit_strict_judge.py"
    )
    fit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit)
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fit.main([])
    row = next(line for line in out.getvalue().splitlines() if line.startswith("lexical-strict, out-of-fold"))
    n, _acc, bal = row.split()[-4:-1]
    cal = CALIBRATION["lexical-strict:v1"]
    assert (float(bal), int(n)) == (cal.value, cal.n)


@pytest.mark.parametrize("flag", [[], ["--no-progress"]])
def test_rescore_shows_a_progress_bar_on_stderr_unless_no_progress(example, tmp_path, flag):
    out, _ = example
    run = tmp_path / "run"
    shutil.copytree(out, run)
    res = CliRunner().invoke(main, ["rescore", str(run), *flag])
    assert res.exit_code == 0, res.output
    bar = [line for line in _lines(res.stderr) if "rageval:" in line and "rec" in line]
    if flag:
        assert bar == [] and "rageval:" not in res.stderr  # nothing of the bar
    else:
        assert bar and "12/12" in bar[-1]  # 2 settings x 6 questions, every record counted
    assert res.stdout.splitlines()[-1] == f"report: {run / 'rescore-lexical' / 'report.html'}"
