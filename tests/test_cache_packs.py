"""The record cache (every command's: suite, score, rescore, audit) in the run directory's record store
(rageval.rundir.store): typed columns, one Arrow IPC part per flush (when a batch is done, at most about once a
second), the last row of a question the one that counts, folded into one part in the run's order when a run
completes; a part that cannot be read (truncated, not Arrow, another schema) or a row edited after it was written is
quarantined and computed again, never fatal; packs and per-record files of the layouts before are still read (a run
directory from before resumes to the same bytes); and a score run SIGKILLed at random moments resumes to the same
bytes."""

from __future__ import annotations

import json
import logging
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from record_files import as_record_files

import rageval.run.cache as cache_module
from rageval.run.cache import FLUSH_SECONDS, RecordCache, _entry_prefix, safe_name
from rageval.rundir.export import run_texts
from rageval.rundir.store import RUN_ROWS
from rageval.types import Record, Setting


def _rec(qid: str, status: str = "ok", h: str = "h1", metrics: dict | None = None) -> Record:
    return Record(question_id=qid, setting=Setting("s", "identity"), status=status, input_hash=h, metrics=metrics or {})


def _parts(out: Path) -> list[Path]:
    return sorted((out / "cache" / "store").glob("part-*.arrow"))


def _table(part: Path) -> pa.Table:
    return pa.ipc.open_file(pa.memory_map(str(part))).read_all()


def test_rows_go_out_at_flush_typed_and_the_last_one_of_a_question_counts(tmp_path):
    cache = RecordCache(tmp_path)
    text = cache.write("s", "q1", "h1", _rec("q1", metrics={"m": 0.25, "flag": True, "none": None, "list": [1]}))
    cache.write("s", "q2", "h1", _rec("q2"))
    assert _parts(tmp_path) == []  # nothing written before the batch is flushed
    assert cache.read_line("s", "q1", "h1") == text  # read back before the flush: the pending row
    cache.flush()
    [part] = _parts(tmp_path)
    cache.close(complete=False)
    t = _table(part)
    assert t.num_rows == 2
    assert t.schema.field("record").type == pa.string() and t.schema.field("metrics.m").type == pa.float64()
    row = t.slice(0, 1).to_pylist()[0]
    # the record column is the text records.jsonl gets; the digest column its digest; bools count 0/1, None and
    # a list (not a scalar) are null; a metric another record lacks is null there
    assert row["record"] == text and row["digest"] == json.loads(text)["digest"]
    assert (row["setting"], row["question_id"], row["input_hash"], row["status"]) == ("s", "q1", "h1", "ok")
    assert (row["metrics.m"], row["metrics.flag"], row["metrics.none"], row["metrics.list"]) == (0.25, 1.0, None, None)
    assert t.column("metrics.m").to_pylist() == [0.25, None]

    again = RecordCache(tmp_path)
    assert again.read_entry("s", "q1", "h1")[1] == text
    assert again.read_entry("s", "q1", "h2") is None  # another input: computed again
    again.write("s", "q1", "h2", _rec("q1", "judge_error", "h2"))
    again.close(complete=True)  # two parts folded into one with each question's last row
    [folded] = _parts(tmp_path)
    assert folded.name == "part-000001.arrow"  # the only part: the same name however the run went
    t = _table(folded)
    assert sorted(zip(t.column("question_id").to_pylist(), t.column("input_hash").to_pylist())) == [
        ("q1", "h2"),
        ("q2", "h1"),
    ]
    third = RecordCache(tmp_path)
    assert third.read_entry("s", "q1", "h2")[0].status == "judge_error"
    assert third.read_entry("s", "q2", "h1")[0].status == "ok"


def test_a_part_when_a_batch_is_done_at_most_once_a_second_the_first_at_once(tmp_path, monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(cache_module.time, "monotonic", lambda: clock[0])
    cache = RecordCache(tmp_path)
    cache.batch_done()  # nothing computed yet: no part
    assert _parts(tmp_path) == []
    cache.write("s", "a", "h1", _rec("a"))
    cache.batch_done()  # the first computed batch: on disk at once
    assert len(_parts(tmp_path)) == 1
    clock[0] += FLUSH_SECONDS / 2
    cache.write("s", "b", "h1", _rec("b"))
    cache.batch_done()  # half the interval since the last part: the batch waits
    assert len(_parts(tmp_path)) == 1
    clock[0] += FLUSH_SECONDS / 2
    cache.write("s", "c", "h1", _rec("c"))
    cache.batch_done()  # the interval has passed: both waiting batches in one part
    assert [_table(p).column("question_id").to_pylist() for p in _parts(tmp_path)] == [["a"], ["b", "c"]]
    cache.write("s", "d", "h1", _rec("d"))
    cache.close(complete=False)  # the end of a run, however it ends: what waits is written
    assert [_table(p).column("question_id").to_pylist() for p in _parts(tmp_path)][-1] == ["d"]


def test_the_same_rows_fold_into_the_same_file_however_many_parts_held_them(tmp_path):
    folded = []
    for name, cuts in (("one", ()), ("many", (100, 800, 1250))):
        cache = RecordCache(tmp_path / name)
        for i in range(1300):  # 1300 rows: two batches of 512 rows and one of 276, whatever the parts were
            cache.write("s", f"q{i:04d}", "h1", _rec(f"q{i:04d}", metrics={"m": i / 1300}))
            if i + 1 in cuts:
                cache.flush()
            cache.written("s", f"q{i:04d}")
        cache.close(complete=True)
        [part] = _parts(tmp_path / name)
        assert part.name == "part-000001.arrow"
        folded.append(part.read_bytes())
    assert folded[0] == folded[1]
    reader = pa.ipc.open_file(pa.py_buffer(folded[1]))
    assert [reader.get_batch(b).num_rows for b in range(reader.num_record_batches)] == [512, 512, 276]


def test_the_fold_puts_the_run_in_its_order_first_and_a_rerun_leaves_it(tmp_path):
    cache = RecordCache(tmp_path)
    texts = {q: cache.write("s", q, "h1", _rec(q)) for q in ("a", "b", "c")}
    cache.flush()
    cache.write("s", "old", "h1", _rec("old"))  # a question this run does not list (another input's)
    for q in ("c", "a", "b"):  # records.jsonl's order (RecordsFile tells each line)
        cache.written("s", q)
    cache.close(complete=True)
    [part] = _parts(tmp_path)
    t = _table(part)
    assert t.schema.metadata[RUN_ROWS] == b"3"
    assert t.column("question_id").to_pylist() == ["c", "a", "b", "old"]
    assert list(run_texts(tmp_path)) == [texts["c"], texts["a"], texts["b"]]

    again = RecordCache(tmp_path)  # the same run read back in the same order: nothing written
    for q in ("c", "a", "b"):
        assert again.read_entry("s", q, "h1") is not None
        again.written("s", q)
    again.close(complete=True)
    assert _parts(tmp_path) == [part]


@pytest.mark.parametrize("damage", ["truncated", "not arrow", "other schema"])
def test_a_part_that_cannot_be_read_is_quarantined_and_its_records_computed_again(tmp_path, caplog, damage):
    cache = RecordCache(tmp_path)
    for q in ("q1", "q2"):
        cache.write("s", q, "h1", _rec(q))
    cache.close(complete=True)
    [part] = _parts(tmp_path)
    raw = part.read_bytes()
    if damage == "truncated":
        part.write_bytes(raw[: len(raw) // 2])
    elif damage == "not arrow":
        part.write_bytes(b'{"input_hash": "h1"}\n')
    else:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, pa.schema([("question_id", pa.int64())])) as w:
            w.write_batch(pa.record_batch([pa.array([1])], names=["question_id"]))
        part.write_bytes(sink.getvalue().to_pybytes())
    with caplog.at_level(logging.WARNING, logger="rageval"):
        again = RecordCache(tmp_path)
        assert [again.read_entry("s", q, "h1") for q in ("q1", "q2")] == [None, None]
    warnings = [r.getMessage() for r in caplog.records if r.name == "rageval"]
    assert len(warnings) == 1 and f"cache part cache/store/{part.name} is unreadable" in warnings[0]
    assert again.quarantined == [tmp_path / "cache" / "quarantine" / "store" / part.name]
    assert _parts(tmp_path) == []


def _edited(part: Path, row: int, change) -> None:
    """Rewrite ``part`` with the record text of ``row`` changed by ``change`` (a valid Arrow part still)."""
    t = _table(part)
    texts = t.column("record").to_pylist()
    texts[row] = change(texts[row])
    t = t.set_column(t.schema.get_field_index("record"), "record", pa.array(texts, pa.string()))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, t.schema) as w:
        w.write_table(t)
    part.write_bytes(sink.getvalue().to_pybytes())


@pytest.mark.parametrize(
    "change, why",
    [
        (lambda text: text.replace('"status": "ok"', '"status": "reader_error"'), "not to trust"),  # digest
        (lambda text: text.replace('"status": "ok"', '"status": "exploded"'), "not a valid record"),
        (lambda text: text[:-5], "not JSON"),
    ],
)
def test_a_row_edited_after_it_was_written_is_not_trusted_and_its_part_quarantined(tmp_path, caplog, change, why):
    cache = RecordCache(tmp_path)
    texts = [cache.write("s", q, "h1", _rec(q)) for q in ("q1", "q2")]
    cache.close(complete=True)
    [part] = _parts(tmp_path)
    _edited(part, 0, change)
    with caplog.at_level(logging.WARNING, logger="rageval"):
        again = RecordCache(tmp_path)
        assert again.read_entry("s", "q1", "h1") is None  # computed again
        assert again.read_entry("s", "q2", "h1")[1] == texts[1]  # its neighbour is checked on its own
    [warning] = [r.getMessage() for r in caplog.records if r.name == "rageval"]
    assert "the row of question 'q1', setting 's' is unfit" in warning and why in warning
    again.write("s", "q1", "h1", _rec("q1"))
    again.written("s", "q1")
    again.written("s", "q2")
    again.close(complete=True)  # the fold keeps the rows read and checked; the part goes to the quarantine
    assert again.quarantined == [tmp_path / "cache" / "quarantine" / "store" / part.name]
    assert list(run_texts(tmp_path)) == texts


def _old_pack(out: Path, setting: str, entries: list[tuple[str, str]]) -> Path:
    """A pack of the layout before the store: ``{"input_hash", "record"}`` lines (the record's text)."""
    folder = out / "cache" / "records" / safe_name(setting)
    folder.mkdir(parents=True, exist_ok=True)
    pack = folder / "pack-000001.jsonl"
    pack.write_text("".join(_entry_prefix(h) + text + "}\n" for h, text in entries))
    return pack


def test_packs_and_record_files_of_the_layouts_before_are_read_and_moved_into_the_store(tmp_path):
    writer = RecordCache(tmp_path / "w")  # the texts an older run wrote
    a, b = writer.write("s", "a", "h1", _rec("a")), writer.write("s", "b", "h1", _rec("b"))
    pack = _old_pack(tmp_path, "s", [("h1", a)])
    old_file = RecordCache(tmp_path).path("s", "b")  # a per-record file, as a suite wrote it before the store
    old_file.write_text(_entry_prefix("h1") + b + "}\n")

    cache = RecordCache(tmp_path)
    assert cache.read_entry("s", "a", "h1")[1] == a  # from the pack
    assert cache.read_entry("s", "b", "h1")[1] == b  # from its file
    assert cache.read_line("s", "a", "h1") == a  # this run's record of it: the store's row
    cache.written("s", "a")
    cache.written("s", "b")
    cache.close(complete=True)
    assert not pack.exists()  # the run completed: what it read of the pack is in the store
    assert not old_file.exists() and not (tmp_path / "cache" / "records").exists()  # and of the file
    assert list(run_texts(tmp_path)) == [a, b]


def _rows(n: int) -> str:
    words = "river city capital museum tower bridge painter novel planet island mountain king queen".split()
    rng = random.Random(0)
    out = []
    for i in range(n):
        ctx = [" ".join(rng.choice(words) for _ in range(12)) + "." for _ in range(3)]
        answer = f"{ctx[0][:-1]} [1]. {' '.join(rng.choice(words) for _ in range(6))} [2][3]."
        row = {"id": f"q{i}", "question": f"Question {i}?", "answer": answer, "contexts": ctx}
        out.append(json.dumps({**row, "answers": [rng.choice(words)]}))
    return "\n".join(out) + "\n"


def _score(src: Path, out: Path, **kw) -> subprocess.Popen:
    args = [sys.executable, "-m", "rageval.cli", "score", str(src), "--out", str(out), "--no-report"]
    return subprocess.Popen(args + ["--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)


def _done(proc: subprocess.Popen) -> None:
    assert proc.wait(timeout=600) == 0, proc.stderr.read().decode()[-2000:] if proc.stderr else ""


def test_a_run_directory_of_the_pack_layout_resumes_to_the_same_bytes(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(_rows(40))
    out = tmp_path / "out"
    _done(_score(src, out))
    expected = (out / "records.jsonl").read_bytes()
    # the run as the layout before the store left it: the records in a pack, no store, records.jsonl lost
    t = _table(_parts(out)[0])
    rows = t.select(["setting", "input_hash", "record"]).to_pylist()
    [setting] = {r["setting"] for r in rows}
    pack = _old_pack(out, setting, [(r["input_hash"], r["record"]) for r in rows])
    for p in _parts(out):
        p.unlink()
    (out / "records.jsonl").unlink()
    _done(_score(src, out))
    assert (out / "records.jsonl").read_bytes() == expected
    stats = json.loads((out / "run_stats.json").read_text())
    assert (stats["records_reused"], stats["records_computed"]) == (40, 0)
    assert not pack.exists() and len(_parts(out)) == 1
    assert "\n".join(run_texts(out)) + "\n" == expected.decode()


def test_score_sigkilled_at_random_moments_resumes_to_the_same_bytes(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(_rows(3000))
    ref = tmp_path / "ref"
    _done(_score(src, ref))
    expected = (ref / "records.jsonl").read_bytes()
    rng = random.Random(7)
    killed_mid_run = 0
    kept_parts = 0
    for trial in range(2):
        out = tmp_path / f"trial{trial}"
        for _ in range(rng.randint(1, 3)):
            proc = _score(src, out)
            time.sleep(rng.uniform(0.5, 4.0))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed_mid_run += 1
                kept_parts += len(_parts(out))  # a killed run keeps every batch it finished
            proc.wait(timeout=600)
        _done(_score(src, out))
        assert (out / "records.jsonl").read_bytes() == expected, f"trial {trial}: records.jsonl differs"
        assert len(_parts(out)) == 1 and "\n".join(run_texts(out)) + "\n" == expected.decode()
    assert killed_mid_run >= 1, "no kill landed mid-run: the test did not exercise resume"


# -- suites ----------------------------------------------------------------------------------------------------

SUITE = """\
name: kill
dataset: {name: hotpotqa, limit: 100}
retrieval: {method: bm25, k: 5}
settings:
  - {compressor: identity}
  - {compressor: naive, budgets: [96, 160]}
  - {compressor: extractive, budgets: [96, 160]}
  - {compressor: submodular, budgets: [96, 160]}
  - {compressor: focused, budgets: [96, 160]}
reader: {backend: extractive}
judge: {spec: lexical}
diagnostics: [answer_f1, answer_in_context, emitted_precision, grounded_precision, retrieval_recall]
contrasts: [{vs: identity}]
seed: 0
"""


def _suite(path: Path, out: Path) -> subprocess.Popen:
    args = [sys.executable, "-m", "rageval.cli", "suite", str(path), "--out", str(out), "--no-progress"]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _keys(out: Path) -> set[tuple[str, str]]:
    """The (setting, question) rows of the run directory's store parts."""
    keys = set()
    for part in _parts(out):
        t = _table(part)
        keys |= set(zip(t.column("setting").to_pylist(), t.column("question_id").to_pylist()))
    return keys


@pytest.mark.slow
def test_a_suite_sigkilled_at_random_moments_reuses_every_written_part_and_ends_with_the_same_bytes(tmp_path):
    suite = tmp_path / "kill.yaml"
    suite.write_text(SUITE)
    ref = tmp_path / "ref"
    _done(_suite(suite, ref))
    expected = (ref / "records.jsonl").read_bytes()
    total = expected.count(b"\n")
    rng = random.Random(11)
    killed_mid_run = 0
    for trial in range(2):
        out = tmp_path / f"trial{trial}"
        for _ in range(rng.randint(1, 2)):
            proc = _suite(suite, out)
            while proc.poll() is None and not _parts(out):  # the first part: the records are being computed
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 2.0))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed_mid_run += not (out / "records.jsonl").exists()
            proc.wait(timeout=600)
        kept = _keys(out)  # the records in the parts the last run wrote before it was killed
        _done(_suite(suite, out))
        stats = json.loads((out / "run_stats.json").read_text())
        # every record a part held is reused, and only those are computed again
        assert (stats["records_reused"], stats["records_computed"]) == (len(kept), total - len(kept))
        assert (out / "records.jsonl").read_bytes() == expected, f"trial {trial}: records.jsonl differs"
        assert len(_parts(out)) == 1 and "\n".join(run_texts(out)) + "\n" == expected.decode()
        assert _parts(out)[0].read_bytes() == _parts(ref)[0].read_bytes()  # the same store as an uninterrupted run's
        assert not (out / "cache" / "records").exists()  # one record cache: no file per record
    assert killed_mid_run >= 1, "no kill landed mid-run: the test did not exercise resume"


@pytest.mark.slow
def test_a_suite_run_directory_of_per_record_files_resumes_to_the_same_bytes(tmp_path):
    """A suite run written before the record store (a file per record), killed: the files are read, moved into
    the store and removed; the run ends with the same bytes."""
    suite = tmp_path / "kill.yaml"
    suite.write_text(SUITE.replace("limit: 100", "limit: 12"))
    out = tmp_path / "out"
    _done(_suite(suite, out))
    expected = (out / "records.jsonl").read_bytes()
    files = as_record_files(out)
    assert len(files) == expected.count(b"\n") == 108
    for path in files[::3]:  # the records an older run had not finished when it was killed
        path.unlink()
    (out / "records.jsonl").unlink()
    _done(_suite(suite, out))
    stats = json.loads((out / "run_stats.json").read_text())
    assert (stats["records_reused"], stats["records_computed"]) == (72, 36)
    assert (out / "records.jsonl").read_bytes() == expected
    assert not (out / "cache" / "records").exists() and len(_parts(out)) == 1
    assert "\n".join(run_texts(out)) + "\n" == expected.decode()
