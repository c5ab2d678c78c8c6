"""A run that finished with nothing to compare exits 3 (docs/suites.md#errors-and-exit-codes): no record is ok,
or the common cohort is empty.  The summary is printed first and the records and report are kept, so CI can
tell such a run from a success without losing what it wrote."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from click.testing import CliRunner

from rageval.cli import main
from rageval.report.console import nothing_scored


def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _rows(ids):
    return [
        {"id": q, "question": f"Question {q}?", "answer": "Paris", "contexts": ["Paris is big."], "answers": ["Paris"]}
        for q in ids
    ]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed once the socket is: connections are refused


def test_the_rule_by_hand(tmp_path):
    assert nothing_scored({"reader_error": 6}, None) == "no record is ok (reader_error: 6): nothing was scored"
    assert nothing_scored({}, None) == "no record is ok (no records): nothing was scored"
    assert nothing_scored({"ok": 1, "judge_error": 12}, None) is None
    rj = tmp_path / "report.json"
    rj.write_text(json.dumps({"cohort": {"n": 0, "n_questions": 4}}))
    msg = nothing_scored({"ok": 4}, rj)
    assert msg is not None and msg.startswith("the common cohort is empty: none of the 4 questions")
    rj.write_text(json.dumps({"cohort": {"n": 1, "n_questions": 4}}))
    assert nothing_scored({"ok": 4}, rj) is None


def test_score_with_an_empty_common_cohort_exits_3_and_keeps_its_files(tmp_path):
    a = _jsonl(tmp_path / "a.jsonl", _rows(["1", "2"]))
    b = _jsonl(tmp_path / "b.jsonl", _rows(["3", "4"]))  # no question in both settings
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["score", str(a), str(b), "--out", str(out), "--no-progress"])
    assert res.exit_code == 3, res.output
    assert "common cohort is empty: none of the 4 questions is ok in every setting" in res.output
    assert "4 records (ok: 4)" in res.output  # the summary came first
    assert (out / "records.jsonl").exists() and (out / "report.json").exists()


def test_score_with_a_cohort_exits_0(tmp_path):
    a = _jsonl(tmp_path / "a.jsonl", _rows(["1", "2"]))
    b = _jsonl(tmp_path / "b.jsonl", _rows(["2", "3"]))
    res = CliRunner().invoke(main, ["score", str(a), str(b), "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 0, res.output


def test_a_suite_whose_every_answer_failed_exits_3(tmp_path):
    port = _closed_port()
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: dead\n"
        "dataset: {name: hotpotqa, limit: 2}\n"
        "settings:\n  - {compressor: identity}\n"
        f"reader: {{backend: openai, params: {{model: m, base_url: 'http://127.0.0.1:{port}/v1', max_retries: 0, "
        "timeout: 5}}\n"
    )
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["suite", str(suite), "--out", str(out), "--no-progress"])
    assert res.exit_code == 3, res.output
    assert "no record is ok (reader_error: 2): nothing was scored" in res.output
    assert (out / "records.jsonl").exists()
