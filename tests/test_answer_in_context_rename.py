"""A run directory written before answer_in_context 2.0.0 reads under today's names, with a one-line note: its
``answer_in_context`` (a match inside one unit) is ``answer_in_context_unit``, its ``answer_in_context_packed``
(1.2.0, the packed context) is ``answer_in_context``."""

import json
import logging
import math
import shutil
from pathlib import Path

from rageval.report.load import load_run
from rageval.rundir.manifest import RunDir
from rageval.rundir.records import OLD_NAMES_NOTE, record_text

FIXTURE = Path(__file__).parent / "fixtures" / "run-0.1.0" / "suite"


def _values(x) -> list:
    return [None if math.isnan(v) else v for v in x]


def _written(tmp_path: Path, metrics: list[dict], fmt: int = 3) -> Path:
    """The 0.1.0 fixture as a run of run-directory format ``fmt`` (digests written as rageval writes them) whose
    four records carry ``metrics`` (hand-set) in place of their answer-in-context values."""
    run = tmp_path / "run"
    run.mkdir()
    manifest = {**RunDir(FIXTURE).read_manifest_data(), "format": fmt}  # migrated: today's shape
    (run / "manifest.json").write_text(json.dumps(manifest))
    lines = []
    for line, m in zip((FIXTURE / "records.jsonl").read_text().splitlines(), metrics):
        rec = json.loads(line)
        kept = {k: v for k, v in rec["metrics"].items() if not k.startswith("answer_in_context")}
        rec["metrics"] = {**kept, **m}
        lines.append(record_text(rec))
    (run / "records.jsonl").write_text("\n".join(lines) + "\n")
    return run


# answer_in_context 1.2.0 as it wrote them: the unit variant and the packed one (record 3: the answer crosses a
# unit boundary, so packed 1 and unit 0; records 2 and 4: yes/no gold, undefined)
OLD = [
    {"answer_in_context": 1.0, "answer_in_context_packed": 1.0},
    {"answer_in_context": None, "answer_in_context_packed": None},
    {"answer_in_context": 0.0, "answer_in_context_packed": 1.0},
    {"answer_in_context": None, "answer_in_context_packed": None},
]


def test_a_run_of_answer_in_context_1_2_reads_under_today_s_names_with_one_note(tmp_path):
    run = load_run(_written(tmp_path, OLD))
    assert _values(run.columns.column("answer_in_context")) == [1.0, None, 1.0, None]  # the packed context's
    assert _values(run.columns.column("answer_in_context_unit")) == [1.0, None, 0.0, None]
    assert "answer_in_context_packed" not in run.columns.metrics
    notes = [n for n in run.manifest["notes"] if OLD_NAMES_NOTE in n]
    assert len(notes) == 1 and notes[0].startswith(str(tmp_path / "run" / "records.jsonl"))
    assert "answer_in_context_unit" in notes[0] and "\n" not in notes[0]
    # the records read again (the examples, the explorer) carry the same names
    assert [r["metrics"].get("answer_in_context_unit") for r in run.records] == [1.0, None, 0.0, None]
    assert [r["metrics"].get("answer_in_context") for r in run.records] == [1.0, None, 1.0, None]


def test_rescore_and_audit_read_old_records_under_today_s_names_noted_once(tmp_path, caplog):
    rundir = RunDir(_written(tmp_path, OLD))
    with caplog.at_level(logging.WARNING, logger="rageval"):
        records = rundir.records()
    assert [r.metrics.get("answer_in_context") for r in records] == [1.0, None, 1.0, None]
    assert [r.metrics.get("answer_in_context_unit") for r in records] == [1.0, None, 0.0, None]
    assert all("answer_in_context_packed" not in r.metrics for r in records)
    assert rundir.old_names_read
    assert sum(OLD_NAMES_NOTE in m for m in caplog.messages) == 1  # one note for the run, not one per record


def test_a_0_1_0_run_s_answer_in_context_is_the_unit_variant(tmp_path):
    run_dir = tmp_path / "old"
    shutil.copytree(FIXTURE, run_dir)
    old = [json.loads(line)["metrics"].get("answer_in_context") for line in (FIXTURE / "records.jsonl").open()]
    run = load_run(run_dir)
    assert _values(run.columns.column("answer_in_context_unit")) == old == [1.0, None, 1.0, None]
    assert "answer_in_context" not in run.columns.metrics  # 0.1.0 never scored the packed context: absent, not 0
    assert sum(OLD_NAMES_NOTE in n for n in run.manifest["notes"]) == 1


def test_a_format_3_run_s_answer_in_context_without_the_packed_value_is_the_unit_variant(tmp_path):
    # answer_in_context 1.1.0 in a format-3 run: one value, the unit variant; the packed one was never scored
    run = load_run(_written(tmp_path, [{"answer_in_context": v} for v in (1.0, None, 0.0, None)]))
    assert _values(run.columns.column("answer_in_context_unit")) == [1.0, None, 0.0, None]
    assert "answer_in_context" not in run.columns.metrics
    assert sum(OLD_NAMES_NOTE in n for n in run.manifest["notes"]) == 1


def test_a_hand_made_manifest_naming_no_version_is_read_as_today_s(tmp_path):
    run_dir = tmp_path / "hand"
    shutil.copytree(FIXTURE, run_dir)
    manifest = json.loads((FIXTURE / "manifest.json").read_text())
    del manifest["package"]  # no format, no rageval version: not written by a command
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    run = load_run(run_dir)
    assert _values(run.columns.column("answer_in_context")) == [1.0, None, 1.0, None]
    assert "answer_in_context_unit" not in run.columns.metrics
    assert not any(OLD_NAMES_NOTE in n for n in run.manifest.get("notes") or [])


def test_today_s_records_are_read_as_written_without_a_note(tmp_path):
    new = [{"answer_in_context": v, "answer_in_context_unit": u} for v, u in ((1.0, 1.0), (None, None), (1.0, 0.0))]
    run = load_run(_written(tmp_path, [*new, {"answer_in_context": 0.0}], fmt=4))
    assert _values(run.columns.column("answer_in_context")) == [1.0, None, 1.0, 0.0]
    assert _values(run.columns.column("answer_in_context_unit")) == [1.0, None, 0.0, None]
    assert not any(OLD_NAMES_NOTE in n for n in run.manifest.get("notes") or [])
    rundir = RunDir(tmp_path / "run")
    records = rundir.records()
    assert [r.metrics.get("answer_in_context_unit") for r in records] == [1.0, None, 0.0, None]
    assert [r.metrics.get("answer_in_context") for r in records] == [1.0, None, 1.0, 0.0]
    assert not rundir.old_names_read
