"""``rageval export RUN --format jsonl|parquet|csv``: jsonl is records.jsonl's bytes (from the record store when the
file is missing); parquet and csv are the ids, the status and the scalar columns, one row per record, the same from
the file or from the store; errors are one line, exit 2."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.score import score_files


def _run(tmp_path: Path) -> Path:
    rows = []
    for i in range(12):
        ctx = [f"Paris is the capital of France {i}.", f"The Seine flows through Paris {i}."]
        answer = f"Paris is the capital of France {i} [1]." if i % 3 else "I do not know."
        rows.append(
            {"id": f"q{i}", "question": f"Capital {i}?", "answer": answer, "contexts": ctx, "answers": ["Paris"]}
        )
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    score_files([str(src)], out, build_report=False)
    return out


def _export(*args: str):
    return CliRunner().invoke(main, ["export", *args])


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    return _run(tmp_path_factory.mktemp("export"))


def test_jsonl_is_the_bytes_of_records_jsonl_and_from_the_store_once_the_file_is_gone(run, tmp_path):
    expected = (run / "records.jsonl").read_bytes()
    got = _export(str(run))
    assert got.exit_code == 0 and got.stdout_bytes == expected
    csv_of_file = tmp_path / "file.csv"
    assert _export(str(run), "--format", "csv", "--out", str(csv_of_file)).exit_code == 0

    gone = tmp_path / "gone"
    shutil.copytree(run, gone)
    (gone / "records.jsonl").unlink()  # deleted by the user
    out = tmp_path / "again.jsonl"
    got = _export(str(gone), "--format", "jsonl", "--out", str(out))
    assert got.exit_code == 0, got.output
    assert out.read_bytes() == expected
    csv_of_store = tmp_path / "store.csv"
    assert _export(str(gone), "--format", "csv", "--out", str(csv_of_store)).exit_code == 0
    assert csv_of_store.read_bytes() == csv_of_file.read_bytes()


def test_parquet_holds_one_row_per_record_with_its_ids_status_and_scalar_metrics(run, tmp_path):
    out = tmp_path / "r.parquet"
    got = _export(str(run), "--format", "parquet", "--out", str(out))
    assert got.exit_code == 0, got.output
    table = pq.read_table(out)
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    assert table.num_rows == len(records) == 12
    assert table.schema.names[:4] == ["setting", "question_id", "input_hash", "status"]
    assert table.schema.field("metrics.answer_f1").type == pa.float64()
    assert table.column("question_id").to_pylist() == [r["question_id"] for r in records]
    assert table.column("status").to_pylist() == [r["status"] for r in records]
    for name in ("answer_f1", "grounded_recall"):
        want = [r["metrics"].get(name) for r in records]
        want = [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in want]
        assert table.column(f"metrics.{name}").to_pylist() == want
    ratio = [r["context"].get("achieved_ratio") for r in records]
    assert table.column("context.achieved_ratio").to_pylist() == ratio


def test_errors_are_one_line_exit_2(run, tmp_path):
    def one_line(got) -> str:
        assert got.exit_code == 2, got.output
        lines = got.output.strip().splitlines()
        assert len(lines) == 1, got.output
        return lines[0]

    assert "is missing: is" in one_line(_export(str(tmp_path)))  # not a run directory (no manifest.json)
    assert "--format 'xml' is unknown" in one_line(_export(str(run), "--format", "xml"))
    there = tmp_path / "there.csv"
    there.write_text("mine\n")
    assert "exists" in one_line(_export(str(run), "--format", "csv", "--out", str(there)))
    assert there.read_text() == "mine\n"  # untouched
    assert _export(str(run), "--format", "csv", "--out", str(there), "--force").exit_code == 0
    assert there.read_text().startswith('"setting","question_id"')
    assert "give --out" in one_line(_export(str(run), "--format", "parquet"))


def test_without_records_jsonl_or_a_completed_store_the_export_is_refused(run, tmp_path):
    bare = tmp_path / "bare"
    shutil.copytree(run, bare)
    (bare / "records.jsonl").unlink()
    shutil.rmtree(bare / "cache" / "store")
    got = _export(str(bare))
    assert got.exit_code == 2 and "store does not exist" in got.output
    assert len(got.output.strip().splitlines()) == 1


def test_a_store_row_edited_is_refused_not_exported(run, tmp_path):
    edited = tmp_path / "edited"
    shutil.copytree(run, edited)
    (edited / "records.jsonl").unlink()
    [part] = (edited / "cache" / "store").glob("part-*.arrow")
    t = pa.ipc.open_file(pa.memory_map(str(part))).read_all()
    texts = t.column("record").to_pylist()
    texts[3] = texts[3].replace('"status": "ok"', '"status": "reader_error"')
    t = t.set_column(t.schema.get_field_index("record"), "record", pa.array(texts, pa.string()))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, t.schema) as w:
        w.write_table(t)
    part.write_bytes(sink.getvalue().to_pybytes())
    out = tmp_path / "x.jsonl"
    got = _export(str(edited), "--out", str(out))
    assert got.exit_code == 2 and "(in the record store) line 4" in got.output and "edited" in got.output
    assert not out.exists()  # nothing half written


def test_rageval_help_lists_export():
    got = CliRunner().invoke(main, ["--help"])
    assert got.exit_code == 0
    assert "export           Export a run's records" in got.output


def test_csv_text_cells_are_inert_as_in_every_csv_rageval_writes(tmp_path):
    data = tmp_path / "hostile.jsonl"
    rows = [{"id": "=1+2", "question": "Q", "answer": "A", "answers": ["A"], "system": '=HYPERLINK("x")'}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "run"
    assert CliRunner().invoke(main, ["score", str(data), "--out", str(run), "--no-report"]).exit_code == 0
    got = _export(str(run), "--format", "csv")
    assert got.exit_code == 0, got.output
    lines = got.stdout.splitlines()
    assert len(lines) == 2 and "'=1+2" in lines[1] and "'=HYPERLINK" in lines[1]
    assert '"=1+2"' not in lines[1]


def test_a_part_damaged_inside_is_one_line_naming_it(run, tmp_path):
    gone = tmp_path / "gone"
    shutil.copytree(run, gone)
    (gone / "records.jsonl").unlink()
    part = max((gone / "cache" / "store").glob("part-*.arrow"))
    raw = bytearray(part.read_bytes())
    for i in range(16, len(raw) // 2):  # the body, not the footer the part is found by
        raw[i] ^= 0xFF
    part.write_bytes(bytes(raw))
    for fmt in ("jsonl", "csv"):
        got = _export(str(gone), "--format", fmt, "--out", str(tmp_path / f"x.{fmt}"))
        assert got.exit_code == 2, got.output
        assert "part-" in got.output and "Errno" not in got.output and len(got.output.strip().splitlines()) == 1
        assert not (tmp_path / f"x.{fmt}").exists()


def test_a_closed_pipe_is_quiet(run):
    import subprocess
    import sys

    proc = subprocess.run(
        f"{sys.executable} -m rageval export {run} | head -c 10 > /dev/null; exit ${{PIPESTATUS[0]}}",
        shell=True,
        check=False,
        executable="/bin/bash",
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and "Error" not in proc.stderr, proc.stderr


def test_an_edited_record_is_refused_unless_accept_edits(run, tmp_path):
    edited = tmp_path / "edited"
    shutil.copytree(run, edited)
    lines = (edited / "records.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["metrics"]["answer_f1"] = 0.123456
    lines[0] = json.dumps(rec)
    (edited / "records.jsonl").write_text("\n".join(lines) + "\n")
    got = _export(str(edited), "--format", "csv")
    assert got.exit_code == 2 and "--accept-edits" in got.output
    got = _export(str(edited), "--format", "csv", "--accept-edits")
    assert got.exit_code == 0, got.output
    assert "0.123456" in got.stdout.splitlines()[1]


def test_report_without_records_jsonl_reads_the_store_and_export_rebuilds_the_file(run, tmp_path):
    gone = tmp_path / "gone"
    shutil.copytree(run, gone)
    (gone / "records.jsonl").unlink()
    got = CliRunner().invoke(main, ["report", str(gone)])  # the run's records from its store
    assert got.exit_code == 0, got.output
    assert _export(str(gone), "--out", str(gone / "records.jsonl")).exit_code == 0
    assert (gone / "records.jsonl").read_bytes() == (run / "records.jsonl").read_bytes()


def _uncompressed_with_bad_text(part: Path) -> None:
    """Rewrite ``part`` without compression (its schema, metadata included, kept), then turn one byte of a record's
    text into 0xFF: the part still opens and its footer is whole, but that text is no longer UTF-8."""
    table = pa.ipc.open_file(pa.memory_map(str(part))).read_all()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    raw = bytearray(sink.getvalue().to_pybytes())
    at = raw.index(b'"question_id"')
    raw[at + 1] = 0xFF
    part.write_bytes(bytes(raw))


def test_a_part_whose_text_is_not_utf8_is_one_line_on_export(run, tmp_path):
    gone = tmp_path / "gone"
    shutil.copytree(run, gone)
    (gone / "records.jsonl").unlink()
    [part] = (gone / "cache" / "store").glob("part-*.arrow")
    _uncompressed_with_bad_text(part)
    for fmt in ("jsonl", "csv"):
        got = _export(str(gone), "--format", fmt, "--out", str(tmp_path / f"x.{fmt}"))
        assert got.exit_code == 2, got.output
        assert part.name in got.output and "Traceback" not in got.output
        assert len(got.output.strip().splitlines()) == 1
        assert not (tmp_path / f"x.{fmt}").exists()


def test_a_part_whose_text_is_not_utf8_is_quarantined_and_its_records_computed_again(tmp_path, caplog):
    out = _run(tmp_path)
    before = (out / "records.jsonl").read_bytes()
    [part] = (out / "cache" / "store").glob("part-*.arrow")
    _uncompressed_with_bad_text(part)
    with caplog.at_level("WARNING", logger="rageval"):
        score_files([str(tmp_path / "in.jsonl")], out, build_report=False)
    assert (out / "records.jsonl").read_bytes() == before
    assert [p.name for p in (out / "cache" / "quarantine" / "store").iterdir()] == [part.name]
    stats = json.loads((out / "run_stats.json").read_text())
    assert stats["records_computed"] == 12 and stats["records_reused"] == 0
    [warning] = [r.getMessage() for r in caplog.records if "moved to" in r.getMessage()]
    assert "held a row unfit to reuse" in warning and "ArrowInvalid" in warning


def test_csv_from_the_store_takes_the_records_values_not_an_edited_metric_column(run, tmp_path):
    from record_files import edit_rows

    gone = tmp_path / "gone"
    shutil.copytree(run, gone)
    (gone / "records.jsonl").unlink()
    [part] = (gone / "cache" / "store").glob("part-*.arrow")

    def change(row: dict) -> None:
        row["metrics.answer_f1"] = 0.999  # no digest covers a column: the export must not believe it

    edit_rows(part, change)
    out = tmp_path / "x.parquet"
    assert _export(str(gone), "--format", "parquet", "--out", str(out)).exit_code == 0
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    want = [r["metrics"].get("answer_f1") for r in records]
    assert pq.read_table(out).column("metrics.answer_f1").to_pylist() == want
    assert 0.999 not in want


def test_a_folded_part_that_cannot_be_opened_is_named_on_export(run, tmp_path):
    gone = tmp_path / "gone"
    shutil.copytree(run, gone)
    (gone / "records.jsonl").unlink()
    [part] = (gone / "cache" / "store").glob("part-*.arrow")
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])  # truncated: its footer gone
    got = _export(str(gone))
    assert got.exit_code == 2 and f"part {part.name} (" in got.output and "is unreadable" in got.output
    assert "one file each" not in got.output  # not the message of a store without a completed run


def test_report_of_a_run_killed_before_its_manifest_says_rerun_not_export(run, tmp_path):
    killed = tmp_path / "killed"
    shutil.copytree(run, killed)
    (killed / "records.jsonl").unlink()
    (killed / "manifest.json").unlink()
    got = CliRunner().invoke(main, ["report", str(killed)])
    assert got.exit_code == 2, got.output
    assert "stopped before it finished" in got.output and "rageval export" not in got.output
