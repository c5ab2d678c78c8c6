"""A run written without ``records.jsonl`` (``--no-records-file``): its record store is the record file.

Every reader of a run (report, rescore, audit, label, export, ``RunDir.records``) reads the lines the store
holds, and gives the same bytes as from the file (paths aside); a rerun without the file removes an older one
(it would stand for the run), a rerun with it writes it back byte for byte; a record edited in the store or a
store replaced while it is read is refused, naming the record; :class:`~rageval.rundir.export.StoreLines` reads
rows back across batches."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.report.load import RunError, load_run
from rageval.rundir.export import StoreError, StoreLines, run_parts
from rageval.rundir.manifest import RunDir, RunDirError
from rageval.rundir.store import RUN_ROWS, part_schema
from rageval.score import score_files
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite

OFFLINE = {"judge.spec": "lexical", "judge.params": {}, "reader.backend": "extractive", "reader.params": {}}
SUITES = Path(__file__).resolve().parents[1] / "suites"


def _input(tmp_path: Path) -> Path:
    rows = []
    for system in ("A", "B"):
        for i in range(10):
            ctx = [f"Paris is the capital of France {i}.", f"The Seine flows through Paris {i}."]
            cites = "[1]" if (i + (system == "B")) % 3 else "[2]"
            answer = f"Paris is the capital of France {i} {cites}." if i % 4 else "I do not know."
            rows.append(
                {
                    "id": f"q{i}",
                    "question": f"Capital {i}?",
                    "answer": answer,
                    "contexts": ctx,
                    "answers": ["Paris"],
                    "system": system,
                }
            )
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return src


def _cli(*args: str):
    return CliRunner().invoke(main, [*args])


def _files(root: Path, was: Path | None = None) -> dict[str, bytes]:
    """Every file under ``root`` but the caches, by relative path, with ``root`` (and ``was``, the run it is a copy
    of) masked in its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes().replace(str(root).encode(), b"RUN").replace(str(was).encode(), b"RUN")
        for p in sorted(root.rglob("*"))
        if p.is_file() and "cache" not in p.relative_to(root).parts
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    """The same scores twice: with records.jsonl (``with``) and without (``without``)."""
    tmp = tmp_path_factory.mktemp("store-only")
    src = _input(tmp)
    with_file, without = tmp / "with", tmp / "without"
    score_files([str(src)], with_file)
    score_files([str(src)], without, records_file=False)
    return with_file, without


def test_no_records_file_writes_none_and_every_output_is_the_same(runs):
    with_file, without = runs
    assert (with_file / "records.jsonl").is_file() and not (without / "records.jsonl").exists()
    got, expected = _files(without), _files(with_file)
    assert got == {k: v for k, v in expected.items() if k != "records.jsonl"}
    assert "report.html" in got and "contrasts.csv" in got
    # the store holds the file's bytes: rageval export writes them
    res = _cli("export", str(without))
    assert res.exit_code == 0 and res.stdout_bytes == (with_file / "records.jsonl").read_bytes()


def test_report_rescore_audit_label_read_the_store_as_they_read_the_file(runs, tmp_path):
    with_file, without = runs
    outs = {}
    for name, run in (("with", with_file), ("without", without)):
        copy = tmp_path / name
        shutil.copytree(run, copy)
        for args in (
            ["report", str(copy)],
            ["rescore", str(copy), "--judge", "lexical-strict"],
            ["audit", str(copy), "--judge", "lexical-strict"],
            ["label", str(copy), "--n", "4", "--out", str(copy / "labels")],
        ):
            res = _cli(*args)
            assert res.exit_code == 0, (args, res.output)
        outs[name] = _files(copy, run)
    for key in ("rescore-lexical-strict/report.html", "audit-lexical-strict/audit.json", "labels/labels.jsonl"):
        assert key in outs["without"], sorted(outs["without"])
    # rescore and the audit's sample write no records.jsonl for a run without one (the audit's own table stays)
    gone = ("records.jsonl", "rescore-lexical-strict/records.jsonl", "audit-lexical-strict/scored/records.jsonl")
    assert set(outs["with"]) - set(outs["without"]) == set(gone)
    assert outs["without"] == {k: v for k, v in outs["with"].items() if k not in gone}


def test_records_of_the_run_dir_are_the_files_records(runs):
    with_file, without = runs
    assert [r.to_dict() for r in RunDir(without).records()] == [r.to_dict() for r in RunDir(with_file).records()]
    run = load_run(without)
    lines = (with_file / "records.jsonl").read_text().splitlines()
    assert len(run.records) == len(lines) == 20
    assert run.records[7]["question_id"] == json.loads(lines[7])["question_id"]
    assert run.records[7]["_line"] == 8


def test_a_rerun_without_the_file_removes_an_older_one_and_a_rerun_with_it_writes_it_back(runs, tmp_path):
    with_file, _ = runs
    src = _input(tmp_path)
    run = tmp_path / "run"
    shutil.copytree(with_file, run)
    expected = (run / "records.jsonl").read_bytes()
    score_files([str(src)], run, build_report=False, records_file=False)
    assert not (run / "records.jsonl").exists()  # an older file would stand for the run
    score_files([str(src)], run, build_report=False)
    assert (run / "records.jsonl").read_bytes() == expected


def test_the_suite_command_takes_the_option(tmp_path):
    suite = load_suite(SUITES / "demo.yaml", **OFFLINE, **{"dataset.limit": 3})
    a, b = tmp_path / "a", tmp_path / "b"
    run_suite(suite, a, progress=False, build_report=False)
    run_suite(suite, b, progress=False, build_report=False, records_file=False)
    assert not (b / "records.jsonl").exists()
    assert "\n".join(_texts(b)) + "\n" == (a / "records.jsonl").read_text()
    res = _cli("suite", "--help")
    assert "--no-records-file" in res.output and "--no-records-file" in _cli("score", "--help").output


def _texts(run: Path) -> list[str]:
    return [raw.decode().rstrip("\n") for _, _, raw, _ in StoreLines(run)]


def _edit_store(run: Path, row: int, edit) -> None:
    """Rewrite the run's folded part with record ``row``'s text changed by ``edit`` (schema and metadata kept)."""
    part, _, _ = run_parts(run)
    table = pa.ipc.open_file(pa.memory_map(str(part))).read_all()
    texts = table.column("record").to_pylist()
    texts[row] = edit(texts[row])
    table = table.set_column(table.schema.get_field_index("record"), "record", pa.array(texts, pa.string()))
    with pa.OSFile(str(part), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)


def _new_metric_value(text: str) -> str:
    rec = json.loads(text)
    rec["metrics"]["answer_f1"] = 0.123456
    return json.dumps(rec)


def test_a_record_edited_in_the_store_is_refused_naming_it(runs, tmp_path):
    _, without = runs
    run = tmp_path / "edited"
    shutil.copytree(without, run)
    _edit_store(run, 2, _new_metric_value)
    for args in (
        ["report", str(run)],
        ["rescore", str(run)],
        ["label", str(run), "--n", "4", "--out", str(tmp_path / "l")],
    ):
        res = _cli(*args)
        assert res.exit_code != 0, (args, res.output)
        assert "(in the record store) line 3" in res.output and "edited" in res.output, (args, res.output)
    res = _cli("report", str(run), "--accept-edits")
    assert res.exit_code == 0, res.output
    assert json.loads((run / "manifest.json").read_text())["accepted_edits"]["records"] == 1


def test_a_store_line_that_is_not_json_is_one_line(runs, tmp_path):
    _, without = runs
    run = tmp_path / "broken"
    shutil.copytree(without, run)
    _edit_store(run, 0, lambda text: text[:40])
    res = _cli("report", str(run))
    assert res.exit_code == 2 and "(in the record store) line 1" in res.output, res.output
    assert "Traceback" not in res.output


def test_a_store_replaced_after_the_run_was_loaded_is_refused(runs, tmp_path):
    _, without = runs
    run = tmp_path / "replaced"
    shutil.copytree(without, run)
    loaded = load_run(run)
    assert loaded.records[0]["question_id"] == "q0"
    part, _, _ = run_parts(run)
    shutil.copy(part, part.with_suffix(".tmp"))
    part.with_suffix(".tmp").replace(part)  # another inode: a later fold
    with pytest.raises(RunError, match=r"in the record store\) changed since the run was loaded"):
        loaded.records[0]


def test_no_file_and_no_completed_run_in_the_store_is_one_line(tmp_path):
    run = tmp_path / "run"
    (run / "cache" / "store").mkdir(parents=True)
    (run / "manifest.json").write_text(json.dumps({"format": 5, "origin": {}, "suite": {"name": "x"}}))
    with pytest.raises(RunDirError, match="records.jsonl is missing and .* holds no completed run"):
        RunDir(run).records_source()
    shutil.rmtree(run / "cache")
    with pytest.raises(RunDirError, match=r"records.jsonl is missing and .*store does not exist .*: rerun"):
        RunDir(run).records_source()  # a run written (its manifest): the store is what is gone
    (run / "manifest.json").unlink()
    with pytest.raises(RunDirError, match="records.jsonl is missing: run the command that writes it first"):
        RunDir(run).records_source()


@pytest.mark.parametrize("damage", ["store gone", "store a file", "part truncated", "part not arrow"])
def test_every_reader_names_a_lost_or_damaged_store_in_one_line(runs, tmp_path, damage):
    _, without = runs
    run = tmp_path / "run"
    shutil.copytree(without, run)
    part, _, _ = run_parts(run)
    if damage == "store gone":
        shutil.rmtree(run / "cache" / "store")
        want = "store does not exist"
    elif damage == "store a file":
        shutil.rmtree(run / "cache" / "store")
        (run / "cache" / "store").write_text("not a folder")
        want = r"store (is not a folder|is a file where rageval writes a).*remove it"
    elif damage == "part truncated":
        part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
        want = r"part-000001\.arrow \(ArrowInvalid"
    else:
        part.write_bytes(b"not arrow at all\n" * 100)
        want = r"part-000001\.arrow \(ArrowInvalid"
    for args in (
        ["report", str(run)],
        ["rescore", str(run)],
        ["label", str(run), "--n", "2", "--out", str(tmp_path / "l")],
        ["audit", str(run), "--judge", "lexical-strict"],
        ["export", str(run)],
    ):
        res = _cli(*args)
        assert res.exit_code == 2, (args, res.output)
        assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1, (args, res.output)
        assert re.search(want, res.output) and "stopped before it finished" not in res.output, (args, res.output)


def test_a_rerun_that_removes_records_jsonl_says_so(runs, tmp_path, caplog):
    with_file, _ = runs
    run = tmp_path / "run"
    shutil.copytree(with_file, run)
    res = _cli("score", str(_input(tmp_path)), "--out", str(run), "--no-report", "--no-progress", "--no-records-file")
    assert res.exit_code == 0, res.output
    assert f"note: removed {run / 'records.jsonl'}" in caplog.text and not (run / "records.jsonl").exists()


def _part(folder: Path, texts: list[str], batch: int, run_rows: int) -> None:
    """A folded part of ``texts`` in batches of ``batch`` rows, its first ``run_rows`` the run's."""
    schema = part_schema([], {RUN_ROWS: str(run_rows).encode()})
    folder.mkdir(parents=True)
    with pa.OSFile(str(folder / "part-000001.arrow"), "wb") as sink, pa.ipc.new_file(sink, schema) as w:
        for start in range(0, len(texts), batch):
            chunk = texts[start : start + batch]
            cols = {n: pa.array([f"{n}{start + i}" for i in range(len(chunk))]) for n in schema.names[:5]}
            cols["record"] = pa.array(chunk)
            cols |= {n: pa.array([None] * len(chunk), pa.float64()) for n in schema.names[6:]}
            w.write_batch(pa.record_batch([cols[n] for n in schema.names], schema=schema))


def test_store_lines_read_rows_back_across_batches(tmp_path):
    texts = [json.dumps({"n": i, "pad": "x" * i}) for i in range(11)]
    _part(tmp_path / "cache" / "store", texts, batch=3, run_rows=8)  # the last 3 rows: not the run's
    lines = StoreLines(tmp_path)
    got = list(lines)
    assert [(n, row) for n, row, _, _ in got] == [(i + 1, i) for i in range(8)]
    assert [v for *_, v in got] == [json.loads(t) for t in texts[:8]]
    assert all(raw == (t + "\n").encode() for (_, _, raw, _), t in zip(got, texts))
    fd = lines.open()
    try:
        for row in (7, 0, 4, 3, 6, 2, 5, 1):  # across the batches, out of order
            raw, text = lines.line_at(fd, row + 1, row, len(got[row][2]))
            assert text == texts[row] and raw == (texts[row] + "\n").encode()
    finally:
        os.close(fd)
    shutil.rmtree(tmp_path / "cache")  # the part replaced by a shorter one after the rows were counted
    _part(tmp_path / "cache" / "store", texts[:4], batch=4, run_rows=4)
    for row in (7, 5):  # past the new part's end: one line, or not the text read first (the caller compares)
        try:
            assert lines.line_at(-1, row + 1, row, 0)[1] != texts[row]
        except StoreError as err:
            assert "is unreadable" in str(err)


class _Stop(Exception):
    pass


def test_a_run_stopped_midway_resumes_to_the_same_records_without_the_file(tmp_path):
    src = _input(tmp_path)
    run = tmp_path / "run"
    seen = []

    def stop_after_twelve(rec) -> None:
        seen.append(rec)
        if len(seen) == 12:
            raise _Stop

    with pytest.raises(_Stop):
        score_files([str(src)], run, build_report=False, records_file=False, on_record=stop_after_twelve)
    assert not (run / "records.jsonl").exists() and not (run / "manifest.json").exists()
    res = _cli("report", str(run))  # no completed run yet: one line, the rerun resumes
    assert res.exit_code == 2 and "stopped before it finished" in res.output, res.output
    again = score_files([str(src)], run, build_report=False, records_file=False)
    assert again.reused >= 1 and not (run / "records.jsonl").exists()
    res = _cli("export", str(run))
    ref = tmp_path / "ref"  # the same input file, one run, with the file
    score_files([str(src)], ref, build_report=False)
    assert res.exit_code == 0 and res.stdout_bytes == (ref / "records.jsonl").read_bytes()
