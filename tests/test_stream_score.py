"""``rageval score`` in bounded memory (docs/score.md#how-inputs-are-read): a generic JSONL input is read line by
line, never whole, each item made again from its line when the run reaches it (the same item, checked against the
bytes first read), and the engine holds no list of the run's items; the same records, cache and errors as before.

The byte-identity of whole runs against the code that held everything was checked when this was built (generic,
multi-file, multi-system, unmatched and id-less inputs, a killed and resumed run); here each piece is checked
against values worked out by hand."""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pytest

from rageval.data.formats import read_input
from rageval.data.formats.common import EMPTY_ANSWER, MARKERS, SELF_SOURCED, json_rows, read_text
from rageval.data.formats.generic import StreamedItems
from rageval.data.formats.layout import ScoreInputError, to_item, validate_record
from rageval.infiles import JsonLines, read_json_lines
from rageval.judges import CallableJudge, JudgeRunner
from rageval.run.cache import RecordCache
from rageval.run.plan import sha
from rageval.rundir.records import RecordsFile
from rageval.score import ScoreOptions, score_files
from rageval.types import Record, Setting


def _row(i: int, **kw) -> dict:
    return {
        "id": f"q{i}",
        "question": f"Question {i}?",
        "answer": "Paris [1].",
        "contexts": [f"Paris is in France ({i})."],
        "answers": ["Paris"],
        **kw,
    }


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _records(out: Path) -> list[tuple[str, str]]:
    lines = (out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return [(r["setting"]["name"], r["question_id"]) for r in map(json.loads, lines)]


# -- reading line by line --------------------------------------------------------------------------------------------


def test_json_lines_gives_the_lines_values_and_byte_places_of_the_whole_read(tmp_path):
    p = tmp_path / "a.jsonl"
    raw = (
        b"\xef\xbb\xbf"  # a byte-order mark: dropped from line 1
        + '{"q": "one\u2028two"}\r\n'.encode()  # 3 + 10 + 3 (U+2028) + 5 + 2 = 23 bytes with the mark
        + b"\n"  # line 2, blank (offset 23)
        + b"  \t\n"  # line 3, blank (offset 24)
        + b'{"q": 2}\n'  # line 4 at offset 28, 9 bytes
        + '{"q": "\u00e9"}'.encode()  # line 5 at offset 37, no final line end
    )
    p.write_bytes(raw)
    got = list(JsonLines(p))
    assert [(n, v) for n, _, _, v in got] == list(read_json_lines(p))
    assert [(n, offset, v) for n, offset, _, v in got] == [
        (1, 0, {"q": "one\u2028two"}),
        (4, 28, {"q": 2}),
        (5, 37, {"q": "é"}),
    ]
    assert [line for _, offset, line, _ in got] == [raw[0:23], raw[28:37], raw[37:]]
    assert JsonLines(p).first_line() == '{"q": "one\u2028two"}'
    (tmp_path / "blank.jsonl").write_bytes(b" \n\t\r\n")
    assert JsonLines(tmp_path / "blank.jsonl").first_line() is None


def test_the_size_limit_applies_to_each_line_of_a_streamed_file_and_to_a_file_read_whole(tmp_path, monkeypatch):
    rows = [_row(i) for i in range(20)]
    p = _write(tmp_path / "many.jsonl", rows)
    arr = tmp_path / "many.json"
    arr.write_text(json.dumps(rows))
    monkeypatch.setenv("RAGEVAL_MAX_INPUT_BYTES", "1000")  # every line is under 200 bytes, each file over 2,000
    assert p.stat().st_size > 2000 and len(read_input(str(p)).items) == 20  # streamed: the file is not limited
    with pytest.raises(ScoreInputError, match="many.json: the score input is larger than the input limit of 1,000"):
        read_input(str(arr))  # a JSON array is read whole: limited as a file
    rows[6]["answer"] = "x" * 1500
    _write(p, rows)
    with pytest.raises(ScoreInputError, match=r"many\.jsonl line 7: the line is larger than the input limit of 1,000"):
        read_input(str(p))


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_a_byte_that_is_not_utf8_is_named_as_a_whole_read_names_it_even_after_a_bad_line(tmp_path, bom):
    p = tmp_path / "bad.jsonl"
    line = (json.dumps(_row(1)) + "\n").encode()
    p.write_bytes(bom + line + line.replace(b"q1", b"q2") + b'{"id": "q3", "question": "caf\xe9"}\n')
    at = len(bom) + 2 * len(line) + len(b'{"id": "q3", "question": "caf')  # the byte's offset in the file
    expected = f"{p} line 3: not UTF-8 text (byte 0xe9 at offset {at}); save the score input as UTF-8"
    with pytest.raises(ScoreInputError) as whole:
        read_text(p)
    with pytest.raises(ScoreInputError) as streamed:
        read_input(str(p))
    assert str(whole.value) == str(streamed.value) == expected
    # line 2 breaks the layout, line 3 is not UTF-8: the byte is named first, as when the file was decoded whole
    p.write_bytes(bom + line + b'{"id": "q2"}\n' + b'{"id": "q3", "question": "caf\xe9"}\n')
    with pytest.raises(ScoreInputError, match="line 3: not UTF-8 text"):
        read_input(str(p))


def test_the_item_made_again_from_its_line_is_the_item_the_first_pass_read(tmp_path):
    rows = [
        _row(1),
        {
            "id": 7,
            "question": "Who wrote Hamlet?",
            "answer": "Shakespeare [1][2].",
            "units": [{"text": "Hamlet is a play.", "source_ids": ["d1"]}, {"text": "By Shakespeare.", "title": "T"}],
            "sources": [{"id": "d1", "text": "Hamlet is a play by Shakespeare.", "paragraph_id": 3}],
            "qa_pairs": [{"short_answers": ["Shakespeare"], "question": "who?"}, ["W. S."]],
            "reference": ["William Shakespeare wrote it.", "  "],
            "system": "s",
            "setting": "v2",
            "input_tokens": 42,
        },
        _row(3, answer="   ", contexts=["é\u2028x", {"text": "y", "title": "Y"}], answers="Paris"),
    ]
    p = tmp_path / "in.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(json.dumps(r, ensure_ascii=False).encode() for r in rows) + b"\r\n")
    got = read_input(str(p))
    assert isinstance(got.items, StreamedItems) and len(got.items) == 3
    eager = [  # what reading the whole text made (the code before streaming)
        to_item(validate_record(row, where), where, file_line=(str(p), line))
        for where, line, row in json_rows(p, read_text(p))
    ]
    assert list(got.items) == eager and got.items[1] == eager[1] and got.items[-1] == eager[2]
    assert [got.where(i) for i in range(3)] == [f"{p} line {n}" for n in (1, 2, 3)]
    assert [got.question(i) for i in range(3)] == ["Question 1?", "Who wrote Hamlet?", "Question 3?"]
    index = got.index
    assert (
        index.ids == ["q1", "7", "q3"]
        and index.system_ids == [(None, None), ("s", "v2")]
        and list(index.systems) == [0, 1, 0]
    )
    assert list(index.flags) == [SELF_SOURCED | MARKERS, MARKERS, SELF_SOURCED | EMPTY_ANSWER]
    assert index.gold == {"answers", "qa_pairs", "reference"}


# -- the run ---------------------------------------------------------------------------------------------------------


def test_an_error_on_line_n_of_a_large_file_stops_the_run_before_anything_is_written(tmp_path):
    rows = [_row(i) for i in range(5000)]
    rows[4320]["question"] = "  "  # line 4321
    p = _write(tmp_path / "big.jsonl", rows)
    out = tmp_path / "out"
    with pytest.raises(ScoreInputError, match=r"big\.jsonl line 4321: field 'question' is empty"):
        score_files([str(p)], out, build_report=False)
    assert not out.exists()


@pytest.mark.parametrize("edit", ["same length", "shorter", "truncated"])
def test_a_line_edited_during_the_run_is_an_error_naming_it_never_a_record(tmp_path, edit):
    rows = [_row(i) for i in range(300)]
    p = _write(tmp_path / "in.jsonl", rows)
    raw = p.read_bytes()
    start = sum(len(json.dumps(r)) + 1 for r in rows[:199])  # line 200: question q199, in the second batch
    line = raw[start : start + len(json.dumps(rows[199])) + 1]
    new = {
        "same length": line.replace(b"Question 199?", b"Question 991?"),
        "shorter": line.replace(b"Question 199?", b"Q?"),
        "truncated": b"",
    }[edit]
    edited: list[int] = []

    def on_record(rec: Record) -> None:
        if not edited:  # the first record is on disk: the file is changed under the run
            p.write_bytes(raw[:start] + new + (raw[start + len(line) :] if new else b""))
            edited.append(1)

    out = tmp_path / "out"
    with pytest.raises(ScoreInputError, match=r"in\.jsonl line 200: changed since the run read it first"):
        score_files([str(p)], out, build_report=False, on_record=on_record)
    assert not (out / "records.jsonl").exists()
    [part] = (out / "cache" / "store").glob("part-*.arrow")
    cached = pa.ipc.open_file(pa.memory_map(str(part))).read_all().column("question_id").to_pylist()
    assert cached == [f"q{i}" for i in range(16)]  # the first batch only: nothing of line 200 or after


def test_records_go_in_question_order_and_the_record_store_in_the_same_order(tmp_path):
    a = _write(tmp_path / "A.jsonl", [_row(1), _row(2), _row(3)])
    b = _write(tmp_path / "B.jsonl", [_row(3), _row(1), _row(9)])  # q9 is B's own; q2 missing in B
    out = tmp_path / "out"
    got = score_files([str(a), str(b)], out, build_report=False)
    assert _records(out) == [("A", "q1"), ("A", "q2"), ("A", "q3"), ("B", "q1"), ("B", "q3"), ("B", "q9")]
    [part] = (out / "cache" / "store").glob("part-*.arrow")  # folded in the run's order (B computed q3, q1, q9)
    table = pa.ipc.open_file(pa.memory_map(str(part))).read_all()
    assert list(zip(table.column("setting").to_pylist(), table.column("question_id").to_pylist())) == _records(out)
    assert [(u.question_id, u.question, u.missing) for u in got.unmatched] == [
        ("q2", "Question 2?", ("B",)),
        ("q9", "Question 9?", ("A",)),
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    questions = [["q1", "Question 1?"], ["q2", "Question 2?"], ["q3", "Question 3?"], ["q9", "Question 9?"]]
    assert manifest["inputs"] == {"questions": 4, "questions_hash": sha(questions)[:32]}
    assert manifest["score"]["files"][1]["lines"] == 3


def test_two_files_settings_that_would_share_a_name_stay_two_each_read_from_its_own_file(tmp_path):
    # file a's system "b/x" and file b's "x" (also in file c, so qualified "b/x") would show one name: two settings
    a = _write(tmp_path / "a.jsonl", [_row(1, system="b/x"), _row(2, system="b/x")])
    b = _write(tmp_path / "b.jsonl", [_row(3, system="x")])
    c = _write(tmp_path / "c.jsonl", [_row(1, system="x"), _row(3, system="x")])
    out = tmp_path / "out"
    got = score_files([str(a), str(b), str(c)], out, build_report=False)
    assert got.settings == ["b/x", "b/x (2)", "c/x"]
    assert _records(out) == [("b/x", "q1"), ("b/x", "q2"), ("b/x (2)", "q3"), ("c/x", "q1"), ("c/x", "q3")]
    lines = [json.loads(x)["extra"]["input"] for x in (out / "records.jsonl").read_text().splitlines()[:3]]
    assert lines == [{"file": str(a), "line": 1}, {"file": str(a), "line": 2}, {"file": str(b), "line": 1}]


def test_an_id_less_question_repeated_in_its_first_80_characters_only_is_no_duplicate(tmp_path):
    stem = "Which of the following statements about the history of the city of Paris is true, " * 2
    rows = [{k: v for k, v in _row(i).items() if k != "id"} | {"question": f"{stem}({i})"} for i in range(2)]
    p = _write(tmp_path / "long.jsonl", rows)
    assert score_files([str(p)], tmp_path / "out", build_report=False).n_records == 2
    _write(p, [rows[0], rows[0]])
    with pytest.raises(ScoreInputError, match=r"long\.jsonl line 2: duplicate question text \(no id\).* line 1"):
        score_files([str(p)], tmp_path / "out2", build_report=False)


@pytest.mark.slow
def test_the_score_steps_memory_grows_by_far_less_than_the_records(tmp_path):
    """The peak of the score step's Python allocations (tracemalloc, in-process ``score_files`` without the
    report) for 2,000 and 12,000 generated records, one diagnostic (no judge: seconds, not minutes), after a small
    run has imported what scoring imports.

    What grows now is the index: per line its place in the file (28 bytes), its question (id string, position:
    some 70), its entry in the pack cache's index (some 80): about 150 bytes a record measured at the peak.
    Holding every item, as the code did before streaming, cost some 7,300 bytes a record here.  1,000 bytes a
    record is six times what grows now and a seventh of what grew then."""

    def peak(n: int) -> int:
        p = _write(tmp_path / f"in{n}.jsonl", [_row(i) for i in range(n)])
        options = ScoreOptions(diagnostics=["answer_f1"])
        tracemalloc.start()
        try:
            score_files([str(p)], tmp_path / f"out{n}", build_report=False, options=options)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    peak(100)  # what scoring imports, imported before the measured runs
    small, large = peak(2000), peak(12000)
    per_record = (large - small) / 10_000
    assert per_record < 1000, f"{per_record:.0f} bytes per record"


# -- the engine's parts ----------------------------------------------------------------------------------------------


def test_records_file_takes_the_announced_order_only_as_far_as_it_writes(tmp_path):
    cache = RecordCache(tmp_path)
    taken: list[str] = []

    def order():
        for i in range(1000):
            taken.append(f"q{i}")
            yield f"q{i}", None  # the hash comes with the record

    def text(q: str) -> tuple[str, str]:
        rec = Record(question_id=q, setting=Setting("s", "c"), status="ok")
        return cache.write("s", q, f"h{q}", rec), f"h{q}"

    texts = {q: text(q) for q in ("q0", "q1", "q2", "q3")}
    missing = pytest.raises(RuntimeError, match="no record of setting 's', question 'q4'")
    with missing, RecordsFile.open(cache, keep=0) as out:  # keep=0: each text let go at once, read back when due
        out.expect("s", order())
        out.put("s", "q1", *texts["q1"])
        out.put("s", "q0", *texts["q0"])
        assert out.count == 2 and taken == ["q0", "q1", "q2"]  # taken up to the first line not ready
        out.put("s", "q3", *texts["q3"])
        out.put("s", "q2", *texts["q2"])
        assert out.count == 4 and len(taken) == 5
    assert not (tmp_path / "records.jsonl").exists()  # q4.. never came: the old file (none) kept


def test_a_runs_judge_forgets_pairs_only_when_its_disk_cache_holds_them(tmp_path):
    calls: list[int] = []

    def judge(premises, hypotheses):
        calls.append(len(premises))
        return [0.25 + 0.5 * (p == h) for p, h in zip(premises, hypotheses)]

    pairs = (["a", "b", "c"], ["a", "x", "c"])
    cached = JudgeRunner(CallableJudge(judge, judge_id="t:1"), cache_dir=tmp_path)
    cached.bound_memory(2)
    assert cached(*pairs) == [0.75, 0.25, 0.75] and calls == [3]
    assert cached(*pairs) == [0.75, 0.25, 0.75] and calls == [3]  # forgotten, read back from the disk cache
    s = cached.stats()
    assert (s["executed"], s["memory_hits"], s["cache_hits"]) == (3, 0, 3)
    memory_only = JudgeRunner(CallableJudge(judge, judge_id="t:1"))
    memory_only.bound_memory(2)
    memory_only(*pairs)
    memory_only(*pairs)
    assert calls == [3, 3] and memory_only.stats()["memory_hits"] == 3  # no disk: every value kept, none judged twice


def test_streamed_items_close_their_file_and_reopen_it_when_read_again(tmp_path):
    p = _write(tmp_path / "in.jsonl", [_row(i) for i in range(3)])
    items = read_input(str(p)).items
    assert isinstance(items, StreamedItems)
    assert items[2].id == "q2" and items.kept._fd >= 0
    items.close()
    assert items.kept._fd == -1 and items[0].id == "q0"
    items.close()
    time.sleep(0)  # nothing left open: the finalizer ran once
