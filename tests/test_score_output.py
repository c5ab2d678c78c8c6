"""What `rageval score` and `rageval suite` print at the end: the headline means per setting as a compact table,
the summary as JSON on stdout with --json (every other line on stderr), and --example (the shipped example, a
path that works from a wheel)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from rageval.cli import main
from rageval.report.headline import headline_table
from rageval.score.cli import EXAMPLE

PEERS = Path(__file__).resolve().parent / "fixtures" / "peers"


def _invoke(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def console_table(lines: list[str], title: str) -> dict[str, dict[str, str]]:
    """The headline table printed after the line starting with ``title``: ``{setting: {column: cell}}``, its
    blocks of columns joined (columns are two or more spaces apart; a cell holds single spaces only)."""
    i = next(k for k, line in enumerate(lines) if line.startswith(title)) + 1
    out: dict[str, dict[str, str]] = {}
    while i < len(lines) and lines[i].startswith("setting "):
        header = re.split(r"\s{2,}", lines[i].strip())
        i += 1
        while i < len(lines) and len(cells := re.split(r"\s{2,}", lines[i].strip())) == len(header):
            out.setdefault(cells[0], {}).update(zip(header, cells))
            i += 1
        i += 1 if i < len(lines) and not lines[i].strip() else 0
    return out


def test_score_prints_the_headline_means_per_setting(tmp_path):
    res = _invoke(["score", str(PEERS / "ragas_pandas.csv"), "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 0, res.output
    table = console_table(res.output.splitlines(), "headline means on the common cohort (2 of 2")
    values = table["ragas_pandas"]
    assert list(values)[:3] == ["setting", "n", "answer_f1"] and "emitted_precision" in values
    # answer F1 2/3 and 2/9 (tests/test_peer_files.py) -> mean 4/9 = 0.444; every citation supported -> 1.000
    # (and its interval [1.000, 1.000]: every resample of two 1s)
    assert values["n"] == "2" and values["answer_f1"].split()[0] == "0.444"
    assert values["emitted_precision"] == "1.000 [1.000, 1.000]"


def test_score_json_is_the_summary_on_stdout(tmp_path):
    out = tmp_path / "o"
    res = CliRunner().invoke(
        main, ["score", str(PEERS / "flashrag_refine_intermediate_data.json"), "--out", str(out), "--json"]
    )
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)  # stdout is the JSON alone
    assert "records:" in res.stderr and "note:" in res.stderr
    assert doc["settings"] == ["flashrag_refine_intermediate_data"] and doc["n_records"] == 2
    row = doc["summary"][0]
    # test_0 and test_1: answer-in-context 0 and 0 (the refiner dropped the gold); grounded recall 0 and 1
    assert row["metrics"]["answer_in_context"] == {"mean": 0.0, "n": 2, "n_undefined": 0}
    assert row["metrics"]["grounded_recall"]["mean"] == 0.5 and row["metrics"]["emitted_recall"]["mean"] == 0.0
    assert "grounded_recall" in doc["headline"] and doc["files"]["report_html"].endswith("report.html")
    # the same numbers as summary.csv
    import csv

    with (out / "summary.csv").open(encoding="utf-8") as fh:
        csv_row = next(csv.DictReader(fh))
    assert float(csv_row["grounded_recall"]) == row["metrics"]["grounded_recall"]["mean"]


def test_score_json_without_the_report(tmp_path):
    res = CliRunner().invoke(
        main, ["score", str(PEERS / "ragas_datasets.csv"), "--out", str(tmp_path / "o"), "--no-report", "--json"]
    )
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["summary"][0]["metrics"]["answer_f1"]["mean"] == (2 / 3 + 2 / 9) / 2 and doc["files"] == {}


def test_score_example_runs_the_shipped_example_from_the_package(tmp_path):
    assert EXAMPLE.is_file() and EXAMPLE.parent.parent.parent.name == "data"  # package data: in the wheel too
    res = _invoke(["score", "--example", "--out", str(tmp_path / "o"), "--no-report", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "in 2 setting(s): baseline, reranked" in res.output
    # without the report no interval is computed: the means alone
    table = console_table(res.output.splitlines(), "headline means on the common cohort (6 of 6 questions;")
    assert [table["baseline"][k] for k in ("n", "answer_f1")] == ["6", "0.175"]
    bad = CliRunner().invoke(main, ["score", "--example", str(EXAMPLE)])
    assert bad.exit_code == 2 and "give no FILE with it" in bad.output


def test_the_table_marks_undefined_means_and_leaves_out_metrics_no_setting_has():
    rows = [
        {"setting": "a", "n_cohort": 3, "metrics": {"answer_f1": {"mean": 1.0}, "emitted_recall": {"mean": None}}},
        {"setting": "bb", "n_cohort": 3, "metrics": {"answer_f1": {"mean": None}, "emitted_recall": {"mean": 0.25}}},
    ]
    got = headline_table({"metric_names": ["answer_f1", "emitted_recall", "judge_inputs"], "summary": rows})
    assert got.splitlines() == [
        "setting  n  answer_f1  emitted_recall",
        "a        3  1.000      —",
        "bb       3  —          0.250",
    ]


def test_suite_ends_with_the_headline_table(tmp_path):
    from suite_files import one_setting_suite

    suite = one_setting_suite(tmp_path, "{backend: extractive}")
    res = _invoke(["suite", str(suite), "--no-progress"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    row = console_table(lines, "headline means on the common cohort (2 of 2")["identity"]
    assert list(row)[:3] == ["setting", "n", "answer_f1"] and row["n"] == "2"
    summary = (tmp_path / "out" / "summary.csv").read_text(encoding="utf-8").splitlines()
    import csv

    first = next(csv.DictReader(summary))
    low, high = float(first["answer_f1_ci_low"]), float(first["answer_f1_ci_high"])
    assert row["answer_f1"] == f"{float(first['answer_f1']):.3f} [{low:.3f}, {high:.3f}]"
    assert lines[-1] == f"report: {tmp_path / 'out' / 'report.html'}"  # the report's path last
