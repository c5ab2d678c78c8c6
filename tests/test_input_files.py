"""The one reader of input files (rageval.infiles), through every input path: lines end at "\\n" only (U+2028,
U+2029, U+0085 stay in their string or cell), a CSV's byte-order mark is dropped, a duplicate JSON key is an error
naming the file and the line; inputs are regular files within a size limit (a FIFO, /dev/zero or a folder is refused
at once, never read); JSON nested too deep or a number of too many digits is one line, never a traceback.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rageval.calibrate.alce import load_alce_human
from rageval.calibrate.core import load_wice
from rageval.cli import main
from rageval.data.errors import DataLoadError
from rageval.data.files import read_records
from rageval.data.formats.layout import ScoreInputError
from rageval.data.formats.read import read_input
from rageval.errors import ConfigError
from rageval.infiles import MAX_DEPTH, InputFileError, iter_json_lines, loads, read_csv, read_json_lines, split_lines
from rageval.io import dump_json_line
from rageval.judges.replay import ReplayJudge, save_replay
from rageval.readers.base import ReaderRequest
from rageval.readers.saved import SavedReader
from rageval.report.load import RunError, load_run
from rageval.rundir.manifest import RunDir, RunDirError
from rageval.types import Unit

SEPARATORS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]  # where str.splitlines breaks
DEEP = "[" * 100_000 + "]" * 100_000
DIGITS = "7" * 5000


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(res, code: int = 2, *needles: str) -> None:
    """Exit ``code`` with one line (a suite's problems: its header and one indented line each), no traceback."""
    assert res.exit_code == code, (res.exit_code, res.output, res.exception)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    _first, *rest = res.output.strip().splitlines()
    assert "Traceback" not in res.output and all(line.startswith("  ") for line in rest), res.output
    for n in needles:
        assert n in res.output, res.output


@contextmanager
def deadline(seconds: int = 10):
    """Fail (not hang) when the body blocks: a FIFO opened for reading waits for a writer forever."""

    def _raise(*_):
        raise TimeoutError(f"blocked for {seconds} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def score_line(qid: str, answer: str) -> dict:
    return {"id": qid, "question": f"What is {qid}?", "answer": answer, "contexts": ["Paris is in France."]}


# the readers of each input path, as (name, reader of a path, the error classes it may raise)
READERS: list[tuple[str, Callable[[Path], object], tuple[type[Exception], ...]]] = [
    ("score", lambda p: read_input(str(p), "generic"), (ScoreInputError,)),
    ("score-auto", lambda p: read_input(str(p)), (ScoreInputError,)),
    ("dataset", read_records, (DataLoadError,)),
    ("saved", lambda p: SavedReader(p), (InputFileError,)),
    ("replay", lambda p: ReplayJudge(p), (InputFileError,)),
    ("calibrate", lambda p: load_wice(str(p)), (InputFileError,)),
    ("alce-human", lambda p: load_alce_human(str(p)), (InputFileError,)),
    ("records", lambda p: RunDir(p.parent).records(), (RunDirError,)),
]
NAMES = [r[0] for r in READERS]


def reader(name):
    return next(r for r in READERS if r[0] == name)


# -- 1. lines end at "\n" only; BOM; duplicate keys ------------------------------------------------------------


def test_split_lines_breaks_at_newline_only():
    text = "a" + "".join(SEPARATORS) + "b\r\nc\rd\n\ne\n"
    assert list(split_lines(text)) == [(1, "a" + "".join(SEPARATORS) + "b"), (2, "c\rd"), (3, ""), (4, "e")]
    assert list(split_lines("")) == [] and list(split_lines("x")) == [(1, "x")]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(exclude_categories=["Cs"]), max_size=40) | st.sampled_from(SEPARATORS))
def test_any_json_string_round_trips_through_every_jsonl_writer_and_reader(tmp_path, text):
    """Every JSON Lines writer of rageval (the canonical line of records.jsonl and the caches, the replay file)
    and every reader of a JSON Lines input (score, dataset, saved answers, replay, calibrate, records)."""
    answer = f"x{text}"
    row = {"question_id": "q1", "answer": answer}
    lines = tmp_path / "lines.jsonl"
    lines.write_text(dump_json_line(row) + "\n" + json.dumps(row, ensure_ascii=False) + "\r\n", encoding="utf-8")
    assert [v for _, v in read_json_lines(lines)] == [row, row]
    assert read_records(lines) == [row, row]
    one = tmp_path / "one.jsonl"
    one.write_text(dump_json_line(row) + "\n", encoding="utf-8")
    saved = SavedReader(one).generate([ReaderRequest("q1", "Q?", (Unit("ctx"),))])
    assert saved[0].text == answer
    gen = tmp_path / "g.jsonl"
    gen.write_text(dump_json_line(score_line("q1", answer)) + "\n", encoding="utf-8")
    assert [it.answer for it in read_input(str(gen)).items] == [answer]
    wice = tmp_path / "w.jsonl"
    wice.write_text(dump_json_line({"claim": answer, "evidence": [text], "label": "supported"}) + "\n")
    assert load_wice(str(wice))[0]["claim"] == answer

    class Runner:
        def __init__(self):
            self._memo = {(f"p{text}", answer): 0.25}

    replay = tmp_path / "r.jsonl"
    save_replay(replay, Runner())
    assert ReplayJudge(replay).predict([f"p{text}"], [answer]) == [0.25]


def test_separators_inside_strings_are_read_by_every_path(tmp_path):
    """The issue's examples: valid files holding U+2028/U+2029/U+0085 raw, as rageval itself writes them."""
    text = "one\u2028two\u2029three\x85four"
    gen = tmp_path / "g.jsonl"
    gen.write_text("".join(dump_json_line(score_line(q, text)) + "\n" for q in ("a", "b")), encoding="utf-8")
    out = tmp_path / "out"
    res = cli("score", gen, "--out", out, "--no-progress")
    assert res.exit_code == 0, res.output
    recs = [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").split("\n") if line]
    assert len(recs) == 2 and "\u2028" in (out / "records.jsonl").read_text(encoding="utf-8")
    assert len(RunDir(out).records()) == 2 and len(load_run(out).records) == 2
    res = cli("rescore", out)  # the run's own records.jsonl, read back
    assert res.exit_code == 0, res.output
    res = cli("report", out)
    assert res.exit_code == 0, res.output


def test_a_ragas_csv_cell_holding_u2028_stays_one_cell(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text(
        "question_id,user_input,response,retrieved_contexts\n"
        'q1,"Where\u2028is it?",Paris\u2029[1],"[""Paris is\u2028in France.""]"\n'
        "q2,Why?,Because\x85so,[]\n",
        encoding="utf-8",
    )
    items = read_input(str(p)).items
    assert [it.answer for it in items] == ["Paris\u2029[1]", "Because\x85so"]
    assert items[0].question == "Where\u2028is it?" and len(items) == 2


def test_a_csv_with_a_byte_order_mark_keeps_its_first_column(tmp_path):
    p = tmp_path / "excel.csv"
    p.write_bytes("\ufeffid,question,answer\r\nq7,Q?,A\r\n".encode())
    header, rows = read_csv(p)
    assert header == ["id", "question", "answer"] and rows == [(2, {"id": "q7", "question": "Q?", "answer": "A"})]
    assert [it.id for it in read_input(str(p)).items] == ["q7"]
    tsv = tmp_path / "t.tsv"
    tsv.write_bytes("\ufeffquestion_id\tquestion\tanswer\nq8\tQ?\tA\n".encode())
    assert [it.id for it in read_input(str(tsv)).items] == ["q8"]
    bom = tmp_path / "bom.jsonl"  # a JSON file saved with a BOM reads too
    bom.write_bytes("\ufeff".encode() + dump_json_line(score_line("q9", "A")).encode() + b"\n")
    assert [it.id for it in read_input(str(bom)).items] == ["q9"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a,b,a\n1,2,3\n", "line 1: the header names column 'a' twice"),
        ("a,b\n1,2\n3,4,5\n", "line 3: 3 cells but the header names 2 columns"),
        ('a,b\n1,"2\n3,4\n', "not valid CSV"),
        ("", "has no header row"),
    ],
)
def test_a_broken_csv_is_one_error_naming_the_line(tmp_path, text, words):
    p = tmp_path / "x.csv"
    p.write_text(text)
    with pytest.raises(InputFileError, match=words):
        read_csv(p)
    with pytest.raises(ScoreInputError, match=words):
        read_input(str(p))


def test_multi_line_cells_keep_the_line_where_their_row_starts(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text('question,answer\n"two\nlines",a\nq,b\n')
    assert [line for line, _ in read_csv(p)[1]] == [2, 4]
    assert read_csv(p)[1][0][1]["question"] == "two\nlines"


DUPLICATES = {
    "score": '{"id": "a", "question": "q", "answer": "x", "answer": "y"}\n',
    "score-auto": '{"id": "a", "question": "q", "answer": "x"}\n{"id": "b", "id": "c", "question": "q", "answer": "x"}\n',
    "dataset": '{"id": "a", "question": "q"}\n{"id": "b", "question": "q", "question": "r"}\n',
    "saved": '{"question_id": "a", "answer": "x", "answer": "y"}\n',
    "replay": '{"premise": "p", "hypothesis": "h", "probability": 0.5, "probability": 0.9}\n',
    "calibrate": '{"claim": "c", "evidence": [], "label": "supported", "label": "not_supported"}\n',
    "alce-human": '{"asqa": {}, "asqa": {}}',
    "records": '{"status": "ok", "status": "ok"}\n',
}


@pytest.mark.parametrize("name", NAMES)
def test_a_duplicate_key_is_an_error_naming_the_file_and_line(tmp_path, name):
    _, read, errors = reader(name)
    p = tmp_path / ("records.jsonl" if name == "records" else "d.json" if name == "alce-human" else "d.jsonl")
    p.write_text(DUPLICATES[name])
    with pytest.raises(errors, match="duplicate key '(answer|id|question|probability|label|asqa|status)'") as info:
        read(p)
    line = DUPLICATES[name].count("\n") if name != "alce-human" else None
    assert str(p) in str(info.value) and (line is None or f"{p.name}" in str(info.value))
    if line is not None:
        assert f" line {line}" in str(info.value) or f":{line}:" in str(info.value), str(info.value)


def test_a_duplicate_key_is_one_line_at_the_cli(tmp_path):
    p = tmp_path / "dup.jsonl"
    p.write_text('{"id": "a", "question": "q", "answer": "x", "answer": "y"}\n')
    one_line_error(cli("score", p, "--out", tmp_path / "o", "--no-progress"), 2, "dup.jsonl line 1: duplicate key")
    w = tmp_path / "w.jsonl"
    w.write_text('{"claim": "c", "claim": "d", "evidence": [], "label": "supported"}\n')
    one_line_error(cli("calibrate", "--data", w, "--judge", "lexical"), 2, "w.jsonl:1: duplicate key 'claim'")


# -- 2. regular files only, within a size limit -----------------------------------------------------------------


def _special(tmp_path: Path, kind: str, name: str) -> Path:
    if kind == "fifo":
        p = tmp_path / name
        os.mkfifo(p)
        return p
    if kind == "dir":
        p = tmp_path / name
        p.mkdir()
        return p
    link = tmp_path / name  # /dev/zero under the name the reader expects (a link to it: the device is read)
    link.symlink_to("/dev/zero")
    return link


KINDS = {"fifo": "a FIFO", "zero": "a device", "dir": "a folder"}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", NAMES)
def test_a_fifo_a_device_or_a_folder_is_refused_at_once(tmp_path, name, kind):
    _, read, errors = reader(name)
    fname = "records.jsonl" if name == "records" else "in.json" if name == "alce-human" else "in.jsonl"
    p = _special(tmp_path, kind, fname)
    with deadline(), pytest.raises(errors, match=f"is {KINDS[kind]}.*must be a regular file") as info:
        read(p)
    assert str(p) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet", ".json"])
def test_a_fifo_in_any_score_format_is_refused(tmp_path, suffix):
    p = _special(tmp_path, "fifo", f"in{suffix}")
    with deadline(), pytest.raises(ScoreInputError, match="is a FIFO"):
        read_input(str(p))


def test_the_cli_refuses_a_fifo_in_one_line_without_hanging(tmp_path):
    fifo = _special(tmp_path, "fifo", "pipe.jsonl")
    with deadline(60):
        one_line_error(cli("score", fifo, "--out", tmp_path / "o", "--no-progress"), 2, "pipe.jsonl: is a FIFO")
        one_line_error(cli("calibrate", "--data", fifo, "--judge", "lexical"), 2, "is a FIFO")
        one_line_error(cli("calibrate", "--format", "alce-human", fifo, "--judge", "lexical"), 2, "is a FIFO")
        one_line_error(cli("score", "/dev/zero", "--format", "generic", "--no-progress"), 2, "/dev/zero: is a device")
    suite = tmp_path / "s.yaml"
    suite.write_text(
        f"name: f\ndataset: {{name: hotpotqa, path: {fifo}}}\nsettings: [{{compressor: identity}}]\n"
        "reader: {backend: extractive}\njudge: {spec: lexical}\ndiagnostics: [answer_f1]\n"
    )
    with deadline(60):
        one_line_error(cli("validate", suite), 2, "is a FIFO")
        one_line_error(cli("suite", suite, "--out", tmp_path / "so", "--no-progress"), 2, "is a FIFO")


def test_the_size_limit_refuses_a_larger_file_before_reading(tmp_path, monkeypatch):
    p = tmp_path / "big.jsonl"
    p.write_text(dump_json_line(score_line("a", "x" * 200)) + "\n")
    assert read_records(p)
    monkeypatch.setenv("RAGEVAL_MAX_INPUT_BYTES", "100")
    for name in ("score", "dataset", "saved", "replay", "calibrate"):
        _, read, errors = reader(name)
        with pytest.raises(errors, match="larger than the input limit of 100 bytes.*RAGEVAL_MAX_INPUT_BYTES"):
            read(p)
    one_line_error(cli("score", p, "--out", tmp_path / "o", "--no-progress"), 2, "larger than the input limit")
    monkeypatch.setenv("RAGEVAL_MAX_INPUT_BYTES", str(p.stat().st_size))
    assert read_records(p)  # exactly at the limit: read
    for bad in ("-1", "0", "lots", "1e9"):
        monkeypatch.setenv("RAGEVAL_MAX_INPUT_BYTES", bad)
        with pytest.raises(ConfigError, match="RAGEVAL_MAX_INPUT_BYTES"):
            read_records(p)


def test_a_missing_file_is_still_named_as_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="dataset file not found"):
        read_records(tmp_path / "nope.jsonl")
    with pytest.raises(FileNotFoundError, match="replay judge file not found"):
        ReplayJudge(tmp_path / "nope.jsonl")
    with pytest.raises(ScoreInputError, match="no such file"):
        read_input(str(tmp_path / "nope.jsonl"))


# -- 3. bounded recursion and digits ------------------------------------------------------------------------------

HOSTILE = {
    "deep": (DEEP, f"nested deeper than {MAX_DEPTH} levels"),
    "just-too-deep": ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nested deeper than"),
    "deep-object": ('{"a": ' * 5000 + "1" + "}" * 5000, "nested deeper than"),
    "digits": (DIGITS, "more digits than Python reads"),
}


def _wrap(name: str, value: str) -> str:
    """``value`` where the reader ``name`` reads a field of its first line (or its document)."""
    return {
        "score": f'{{"id": {value}, "question": "q", "answer": "a"}}\n',
        "score-auto": f'{{"id": "a", "question": "q", "answer": "a", "x": {value}}}\n',
        "dataset": f'{{"id": "a", "question": "q", "x": {value}}}\n',
        "saved": f'{{"question_id": "a", "answer": "x", "input_tokens": {value}}}\n',
        "replay": f'{{"premise": "p", "hypothesis": "h", "probability": {value}}}\n',
        "calibrate": f'{{"claim": "c", "evidence": {value}, "label": "supported"}}\n',
        "alce-human": f'{{"asqa": {value}}}',
        "records": f'{{"status": "ok", "metrics": {value}}}\n',
    }[name]


@pytest.mark.parametrize("case", list(HOSTILE))
@pytest.mark.parametrize("name", NAMES)
def test_deep_nesting_and_long_numbers_are_one_error_never_a_traceback(tmp_path, name, case):
    _, read, errors = reader(name)
    value, words = HOSTILE[case]
    p = tmp_path / ("records.jsonl" if name == "records" else "in.json" if name == "alce-human" else "in.jsonl")
    p.write_text(_wrap(name, value))
    with pytest.raises(errors, match=words) as info:
        read(p)
    assert str(p) in str(info.value) and len(str(info.value)) < 400


def test_nesting_within_the_bound_reads(tmp_path):
    value = "[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2)
    p = tmp_path / "d.jsonl"
    p.write_text(f'{{"id": "a", "question": "q", "x": {value}}}\n{{"id": 5000, "question": "{DIGITS}"}}\n')
    assert [r["id"] for r in read_records(p)] == ["a", 5000]


def test_the_depth_bound_counts_levels_not_brackets():
    # the bracket count only spares the walk: many brackets side by side or inside strings are one level deep;
    # the bound itself is exact (MAX_DEPTH levels read, one more refused), with or without other brackets around
    wide = "[" + ",".join(["[]"] * (3 * MAX_DEPTH)) + "]"
    stringy = '"' + "[{" * (2 * MAX_DEPTH) + '"'
    assert loads(wide, "w") == [[]] * (3 * MAX_DEPTH) and len(loads(stringy, "s")) == 4 * MAX_DEPTH
    nest = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads(f"[{nest[1:-1]}, {wide}, {stringy}]", "x") is not None  # MAX_DEPTH levels
    with pytest.raises(InputFileError, match="nested deeper than"):
        loads(f"[{nest}, {stringy}]", "x")  # MAX_DEPTH + 1 levels
    with pytest.raises(InputFileError, match="nested deeper than"):
        loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "x")  # just over, nothing else


@pytest.mark.parametrize("case", ["deep", "digits"])
def test_hostile_json_at_the_cli_is_one_line_exit_2(tmp_path, case):
    value = HOSTILE[case][0]
    gen = tmp_path / "g.jsonl"
    gen.write_text(f'{{"id": {value}, "question": "q", "answer": "a"}}\n')
    one_line_error(cli("score", gen, "--out", tmp_path / "o", "--no-progress"), 2, "g.jsonl")
    whole = tmp_path / "g.json"  # one JSON document (an array) in the generic layout
    whole.write_text(f'[{{"id": "a", "question": "q", "answer": "a", "x": {value}}}]')
    one_line_error(cli("score", whole, "--out", tmp_path / "o2", "--no-progress"), 2, "g.json")
    csv_file = tmp_path / "r.csv"  # a RAGAS list cell
    csv_file.write_text(f'user_input,response,retrieved_contexts\nq,a,"[{value}]"\n')
    one_line_error(cli("score", csv_file, "--out", tmp_path / "o3", "--no-progress"), 2, "r.csv line 2")
    w = tmp_path / "w.jsonl"
    w.write_text(f'{{"claim": "c", "evidence": {value}, "label": "supported"}}\n')
    one_line_error(cli("calibrate", "--data", w, "--judge", "lexical"), 2, "w.jsonl:1")
    a = tmp_path / "a.json"
    a.write_text(f'{{"asqa": {value}}}')
    one_line_error(cli("calibrate", "--format", "alce-human", a, "--judge", "lexical"), 2, "a.json")
    res = cli("calibrate", "--judge", "lexical", "--limit", "2", "--judge-param", f"x={value}")
    one_line_error(res, 1, "takes no parameters")  # parsed as text, then refused by the judge


@pytest.mark.parametrize("case", ["deep", "digits"])
def test_a_run_whose_records_hold_hostile_json_is_refused_by_report_and_rescore(tmp_path, case):
    gen = tmp_path / "g.jsonl"
    gen.write_text(dump_json_line(score_line("a", "Paris [1].")) + "\n")
    out = tmp_path / "out"
    assert cli("score", gen, "--out", out, "--no-progress").exit_code == 0
    rec = out / "records.jsonl"
    rec.write_text(rec.read_text() + f'{{"status": "ok", "x": {HOSTILE[case][0]}}}\n')
    for command in (["report"], ["rescore"], ["audit", "--judge", "lexical"]):
        res = cli(*command, out)
        assert "Traceback" not in res.output and res.exit_code == 2, (command, res.output, res.exception)
        assert "records.jsonl line 2" in res.output, (command, res.output)
    with pytest.raises(RunError, match="records.jsonl line 2"):
        load_run(out)


def test_the_json_lines_reader_skips_blank_lines_but_not_separator_lines():
    assert list(iter_json_lines("1\n \t\r\n\n2\n", "x")) == [(1, 1), (4, 2)]
    with pytest.raises(InputFileError, match="x line 1: not valid JSON"):
        list(iter_json_lines("\u2028\n", "x"))


# ---------------------------------------------------------------- list cells (every CSV writer's text of a list)

LIST_CELLS = [
    ('["a", "b"]', ["a", "b"]),  # JSON
    ("['a', \"it's\"]", ["a", "it's"]),  # Python (pandas' to_csv)
    ("['a' 'b' 'c']", ["a", "b", "c"]),  # numpy's text of an array (Hugging Face Dataset.to_csv)
    ("['first line of a long one'\n 'second' \"it's\"]", ["first line of a long one", "second", "it's"]),
    ("['only one']", ["only one"]),
    ("[]", []),
    ("[1 2 3]", [1, 2, 3]),
    ('[{"text": "t", "title": "T"}]', [{"text": "t", "title": "T"}]),
]


@pytest.mark.parametrize(("cell", "items"), LIST_CELLS)
def test_every_writers_list_cell_reads_as_its_items(cell, items):
    from rageval.infiles import list_cell

    assert list_cell(cell, "x.csv line 2") == items


@pytest.mark.parametrize("cell", ["[citation needed]", "plain text", "[1] says so", ""])
def test_plain_text_is_not_a_list_cell(cell):
    from rageval.infiles import list_cell

    assert list_cell(cell, "x.csv line 2") is None


@pytest.mark.parametrize(
    ("cell", "why"),
    [
        ("['a' 'b', 'c']", "side by side"),  # Python would join 'a' 'b' silently
        ("['a' 'b' ... 'y' 'z']", "numpy shortened"),
        ("['unterminated]", "not a literal"),
        ("['a' b]", "not a literal"),
    ],
)
def test_an_ambiguous_list_cell_is_an_error_never_a_join(cell, why):
    from rageval.infiles import list_cell

    with pytest.raises(InputFileError, match=rf"^x.csv line 2: cannot be read unambiguously as a list \(.*{why}"):
        list_cell(cell, "x.csv line 2")


def test_a_ragas_csv_with_an_ambiguous_cell_names_the_line_and_column(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("user_input,response,retrieved_contexts\nQ?,A [1].,\"['a' 'b', 'c']\"\n", encoding="utf-8")
    with pytest.raises(ScoreInputError, match=r"r.csv line 2: column 'retrieved_contexts': list cell: cannot be read"):
        read_input(str(p))
