"""Run directories that notice edits (issue 41, category 3): each record's digest, written in one place
(:func:`rageval.rundir.records.record_text`) and checked by every reader (:class:`RecordChecks`): the report,
``rescore``, ``audit`` and the record cache; the catalog's declared bounds; a run whose records vanished; a file
of blank lines refused at once."""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rageval.cli import main
from rageval.diagnostics import CATALOG
from rageval.report.load import RunError, load_run
from rageval.rundir.manifest import FORMAT, RunDir, RunDirError
from rageval.rundir.records import (
    DIGEST,
    DIGESTS_FROM,
    MAX_BLANK_LINES,
    RecordChecks,
    digest_problem,
    record_digest,
    record_text,
)

EXAMPLE = Path(__file__).resolve().parents[1] / "src" / "rageval" / "data" / "samples" / "score" / "example.jsonl"
OLD = Path(__file__).parent / "fixtures" / "run-0.1.0"


def _cli(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    """The shipped example scored (2 systems x 6 questions, lexical judge), no report."""
    out = tmp_path_factory.mktemp("digests") / "run"
    res = _cli("score", str(EXAMPLE), "--out", str(out), "--no-progress", "--no-report")
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture
def run(scored, tmp_path) -> Path:
    """A copy of the scored run, to edit."""
    d = tmp_path / "run"
    shutil.copytree(scored, d)
    return d


def _lines(run: Path) -> list[str]:
    return (run / "records.jsonl").read_text(encoding="utf-8").splitlines()


def _write(run: Path, lines: list[str]) -> None:
    (run / "records.jsonl").write_text("".join(x + "\n" for x in lines), encoding="utf-8")


def _edit(run: Path, i: int, change) -> dict:
    """Change record ``i`` (its dict, in place) and write it back as JSON: its digest left as it was."""
    lines = _lines(run)
    rec = json.loads(lines[i])
    change(rec)
    lines[i] = json.dumps(rec, sort_keys=True)
    _write(run, lines)
    return rec


def _one_line(res) -> str:
    assert "Traceback" not in res.output
    lines = [x for x in res.output.strip().splitlines() if not x.startswith("rageval: note")]
    assert len(lines) == 1, res.output
    return lines[0]


# -- what is written ---------------------------------------------------------------------------------------------


def test_every_record_carries_its_digest_and_the_manifest_the_new_format(scored):
    assert DIGESTS_FROM == 3 and FORMAT == 4  # format 4: answer_in_context 2.0.0 (the packed context)
    assert json.loads((scored / "manifest.json").read_text())["format"] == 4
    lines = _lines(scored)
    assert len(lines) == 12
    for line in lines:
        rec = json.loads(line)
        assert line.endswith(f'"{DIGEST}": "{rec[DIGEST]}"}}')  # the last field
        # by hand: sha256 of the canonical JSON of the record without its digest
        body = {k: v for k, v in rec.items() if k != DIGEST}
        import hashlib

        canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
        assert rec[DIGEST] == "sha256:" + hashlib.sha256(canon).hexdigest()


def test_the_cache_entry_holds_the_very_text_of_the_line(scored):
    [part] = (scored / "cache" / "store").glob("part-*.arrow")  # the record store: one part between runs
    table = pa.ipc.open_file(pa.memory_map(str(part))).read_all()
    assert {json.loads(x)[DIGEST] for x in table.column("record").to_pylist()} == {
        json.loads(x)[DIGEST] for x in _lines(scored)
    }
    assert table.column("record").to_pylist() == _lines(scored)  # the very text, in the run's order
    assert table.column("digest").to_pylist() == [json.loads(x)[DIGEST] for x in _lines(scored)]


def test_an_unedited_run_reads_without_note_or_edit(scored, caplog):
    with caplog.at_level(logging.WARNING, logger="rageval"):
        run = load_run(scored)
    assert run.accepted_edits is None and len(run.columns) == 12
    assert not [r for r in caplog.records if "cannot be detected" in r.getMessage()]


# -- report, rescore, audit refuse an edit -----------------------------------------------------------------------


def _metric_edit(rec: dict) -> None:
    key = "answer_f1" if "answer_f1" in rec["metrics"] else next(iter(rec["metrics"]))
    v = rec["metrics"][key]
    rec["metrics"][key] = 0.25 if v != 0.25 else 0.5  # in bounds: only the digest tells


def test_an_edited_metric_is_refused_by_the_report_naming_the_record(run):
    rec = _edit(run, 4, _metric_edit)
    res = _cli("report", str(run), "--no-plots")
    assert res.exit_code == 2, res.output
    line = _one_line(res)
    assert "records.jsonl line 5" in line and repr(rec["question_id"]) in line
    assert repr(rec["setting"]["name"]) in line and "edited after rageval wrote it" in line
    assert "--accept-edits" in line
    assert not (run / "summary.csv").exists()


def test_accept_edits_reads_and_the_manifest_says_which(run):
    rec = _edit(run, 4, _metric_edit)
    res = _cli("report", str(run), "--no-plots", "--accept-edits")
    assert res.exit_code == 0, res.output
    manifest = json.loads((run / "manifest.json").read_text())
    acc = manifest["accepted_edits"]
    assert acc["records"] == 1 and acc["command"] == "rageval report"
    assert acc["listed"] == [
        {
            "line": 5,
            "question_id": rec["question_id"],
            "setting": rec["setting"]["name"],
            "why": "its digest does not match its content",
        }
    ]
    report = json.loads((run / "report.json").read_text())
    assert any("read with --accept-edits" in n for n in report["notes"])
    assert manifest["format"] == FORMAT  # written back as it was, with the section added
    # the edit is not forgiven: without the flag the run is still refused
    assert _cli("report", str(run), "--no-plots").exit_code == 2


def test_a_line_without_a_digest_in_a_digested_run_is_an_edit(run):
    _edit(run, 0, lambda r: r.pop(DIGEST))
    res = _cli("report", str(run), "--no-plots")
    assert res.exit_code == 2 and "it has no digest" in _one_line(res)


def test_an_edited_answer_is_refused_by_rescore(run):
    rec = _edit(run, 2, lambda r: r["answer"].__setitem__("text", r["answer"]["text"] + " Really."))
    res = _cli("rescore", str(run))
    assert res.exit_code == 2, res.output
    line = _one_line(res)
    assert "line 3" in line and repr(rec["question_id"]) in line and "edited after rageval wrote it" in line
    assert not (run / "rescore-lexical").exists()


def test_rescore_with_accept_edits_lists_them_in_the_new_runs_manifest(run):
    _edit(run, 2, lambda r: r["answer"].__setitem__("text", r["answer"]["text"] + " Really."))
    res = _cli("rescore", str(run), "--accept-edits")
    assert res.exit_code == 0, res.output
    new = json.loads((run / "rescore-lexical" / "manifest.json").read_text())
    assert new["accepted_edits"]["records"] == 1 and new["accepted_edits"]["listed"][0]["line"] == 3
    assert "accepted_edits" not in json.loads((run / "manifest.json").read_text())  # the run itself unchanged
    # the rescored records are new records, with digests of their own
    assert all(digest_problem(json.loads(x)) is None for x in _lines(run / "rescore-lexical"))


def test_audit_refuses_an_edit_and_accept_edits_lists_it(run):
    _edit(run, 0, _metric_edit)
    res = _cli("audit", str(run), "--judge", "minilm", "--resamples", "50")
    assert res.exit_code == 2, res.output
    assert "edited after rageval wrote it" in _one_line(res)
    assert not (run / "audit-minilm").exists()


# -- bounds ------------------------------------------------------------------------------------------------------


def test_every_catalog_record_output_declares_bounds():
    for spec in CATALOG.values():
        for o in spec.outputs:
            assert o.bounds is not None, o.key
            assert o.bounds in ((0.0, 1.0), (0.0, math.inf)), (o.key, o.bounds)
    assert CATALOG["answer_f1"].outputs[0].bounds == (0.0, 1.0)
    assert dict(CATALOG.bounds())["answer_length"] == (0.0, math.inf)


def test_an_out_of_bounds_metric_is_refused_even_with_a_matching_digest(run):
    def bump(rec):
        rec["metrics"]["answer_f1"] = 7.5
        rec[DIGEST] = record_digest(rec)  # a forger who digests again: the bounds still hold

    rec = _edit(run, 1, bump)
    for args in (["report", str(run), "--no-plots"], ["report", str(run), "--no-plots", "--accept-edits"]):
        res = _cli(*args)
        assert res.exit_code == 2, res.output
        line = _one_line(res)
        assert "answer_f1 = 7.5" in line and "[0, 1]" in line and repr(rec["question_id"]) in line
    res = _cli("rescore", str(run))
    assert res.exit_code == 2 and "answer_f1 = 7.5" in _one_line(res)


@pytest.mark.parametrize(
    ("value", "refused"),
    [(0.0, False), (1.0, False), (None, False), (True, False), (1.0000001, True), (-0.1, True), (math.inf, True)],
)
def test_bounds_by_hand(value, refused, tmp_path):
    checks = RecordChecks(tmp_path / "r.jsonl", digests=False)
    rec = {"question_id": "q", "setting": {"name": "s"}, "metrics": {"answer_f1": value, "answer_length": 10**6}}
    assert (checks.problem(rec, 1) is not None) is refused
    nan = {"question_id": "q", "setting": {"name": "s"}, "metrics": {"answer_f1": math.nan}}
    assert checks.problem(nan, 1) is None  # undefined stays allowed
    neg = {"question_id": "q", "setting": {"name": "s"}, "metrics": {"answer_length": -1}}
    assert "outside its declared bounds [0, inf]" in str(checks.problem(neg, 1))


# -- the cache ---------------------------------------------------------------------------------------------------


def test_an_edited_cache_entry_is_recomputed_not_reused(run):
    [part] = (run / "cache" / "store").glob("part-*.arrow")
    table = pa.ipc.open_file(pa.memory_map(str(part))).read_all()
    texts = table.column("record").to_pylist()
    record = json.loads(texts[0])
    qid = record["question_id"]
    record["metrics"] = {k: (0.0 if isinstance(v, float) else v) for k, v in record["metrics"].items()}
    record["answer"]["text"] = "edited"  # its digest left as it was
    texts[0] = json.dumps(record, sort_keys=True)
    table = table.set_column(table.schema.get_field_index("record"), "record", pa.array(texts, pa.string()))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    part.write_bytes(sink.getvalue().to_pybytes())
    before = _lines(run)
    res = _cli("score", str(EXAMPLE), "--out", str(run), "--no-progress", "--no-report")
    assert res.exit_code == 0, res.output
    assert "1 computed, 11 reused" in res.output, res.output
    after = _lines(run)
    assert after == before  # recomputed: the edit never reaches records.jsonl
    assert all(json.loads(x)["answer"]["text"] != "edited" for x in after if json.loads(x)["question_id"] == qid)


# -- vanished records, blank lines -------------------------------------------------------------------------------


@pytest.mark.parametrize("content", ["", "\n", "  \n\t\n\r\n"])
@pytest.mark.parametrize("command", ["report", "rescore"])
def test_records_that_vanished_are_an_error_not_an_empty_report(run, content, command):
    (run / "records.jsonl").write_text(content, encoding="utf-8")
    res = _cli(command, str(run), *(["--no-plots"] if command == "report" else []))
    assert res.exit_code == 2, res.output
    assert "holds no record" in _one_line(res) and "records vanished" in res.output


def test_a_missing_records_file_is_an_error_when_no_record_store_holds_the_run(run):
    (run / "records.jsonl").unlink()
    assert _cli("report", str(run), "--no-plots").exit_code == 0  # the run's records from its record store
    shutil.rmtree(run / "cache" / "store")
    res = _cli("report", str(run), "--no-plots")
    assert res.exit_code == 2 and "is missing" in _one_line(res)


def test_a_file_of_blank_lines_is_refused_at_once(run, tmp_path):
    """200 MB of blank lines: refused after MAX_BLANK_LINES of them, never read to the end (seconds, not minutes)."""
    with (run / "records.jsonl").open("wb") as fh:
        block = b"\n" * (1 << 20)
        for _ in range(200):
            fh.write(block)
    t0 = time.perf_counter()
    res = _cli("report", str(run), "--no-plots")
    took = time.perf_counter() - t0
    assert res.exit_code == 2, res.output
    assert f"more than {MAX_BLANK_LINES:,} blank lines" in _one_line(res)
    assert took < 30, took


def test_a_few_blank_lines_are_skipped(run):
    lines = _lines(run)
    _write(run, ["", *lines[:6], "   ", "", *lines[6:]])
    res = _cli("report", str(run), "--no-plots")
    assert res.exit_code == 0, res.output


# -- runs written before digests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["suite", "score"])
def test_a_run_written_before_digests_reads_with_a_note(kind, tmp_path, caplog):
    d = tmp_path / kind
    shutil.copytree(OLD / kind, d)
    with caplog.at_level(logging.WARNING, logger="rageval"):
        run = load_run(d)
    assert len(run.columns) > 0 and run.accepted_edits is None
    notes = [r.getMessage() for r in caplog.records if "cannot be detected" in r.getMessage()]
    assert len(notes) == 1 and "run-directory format 1" in notes[0]
    # an edit there cannot be noticed: it reads (the note says so), the bounds still hold
    _edit(d, 0, _metric_edit)
    assert len(load_run(d).columns) == len(run.columns)


def test_a_format_2_run_reads_with_a_note(run, caplog):
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["format"] = 2
    (run / "manifest.json").write_text(json.dumps(manifest))
    _write(run, [json.dumps({k: v for k, v in json.loads(x).items() if k != DIGEST}) for x in _lines(run)])
    with caplog.at_level(logging.WARNING, logger="rageval"):
        assert len(load_run(run).columns) == 12
    assert any("run-directory format 2" in r.getMessage() for r in caplog.records)


def test_rundir_record_lines_checks_with_the_one_check(run):
    _edit(run, 7, _metric_edit)
    rd = RunDir(run)
    with pytest.raises(RunDirError, match=r"line 8: the record of question .* was edited after rageval wrote it"):
        list(rd.record_lines(rd.record_checks()))
    checks = rd.record_checks(accept_edits=True)
    assert len(list(rd.record_lines(checks))) == 12 and checks.n_edits == 1
    with pytest.raises(RunError):
        load_run(run)


# -- properties --------------------------------------------------------------------------------------------------

_json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
_json = st.recursive(
    _json_scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12,
)
_records = st.fixed_dictionaries(
    {
        "question_id": st.text(min_size=1, max_size=8),
        "setting": st.fixed_dictionaries({"name": st.text(min_size=1, max_size=8)}),
        "status": st.sampled_from(["ok", "reader_error"]),
        "metrics": st.dictionaries(st.text(min_size=1, max_size=8), _json_scalar, max_size=5),
        "extra": st.dictionaries(st.text(max_size=6), _json, max_size=4),
    }
)


def _paths(value, prefix=()):
    """Every (path, leaf) of a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))
    if prefix:
        yield prefix, value


def _changed(v):
    """A value JSON tells apart from ``v``."""
    if v is None:
        return 0
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1 if abs(v) < 1e15 else v / 2 if v else 1
    if isinstance(v, str):
        return v + "x"
    if isinstance(v, list):
        return [*v, None]
    return {**v, "added-key": None}  # longer than any key drawn


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_records, st.data())
def test_any_single_field_edit_is_detected(rec, data):
    value = json.loads(record_text(rec))
    assert digest_problem(value) is None
    paths = [p for p, _ in _paths({k: v for k, v in value.items() if k != DIGEST})]
    path = data.draw(st.sampled_from(paths))
    target = value
    for k in path[:-1]:
        target = target[k]
    edit = data.draw(st.sampled_from(["change", "delete"]))
    if edit == "delete" and not isinstance(target, list):
        del target[path[-1]]
    else:
        target[path[-1]] = _changed(target[path[-1]])
    edited = json.loads(json.dumps(value))  # as a reader reads the edited line back
    assert digest_problem(edited) == "its digest does not match its content"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_records, st.randoms(use_true_random=False), st.sampled_from([None, 0, 2, "\t"]), st.booleans())
def test_a_reserialised_unedited_record_is_not_flagged(rec, rnd, indent, ascii_only):
    value = json.loads(record_text(rec))

    def shuffled(v):
        if isinstance(v, dict):
            items = list(v.items())
            rnd.shuffle(items)
            return {k: shuffled(x) for k, x in items}
        if isinstance(v, list):
            return [shuffled(x) for x in v]
        return v

    text = json.dumps(shuffled(value), indent=indent, ensure_ascii=ascii_only, separators=None)
    assert digest_problem(json.loads(text)) is None


@settings(max_examples=100, deadline=None)
@given(_records)
def test_the_digest_is_that_of_the_content_as_read_back(rec):
    """The writer takes the digest of the text as JSON reads it back (NaN written null, tuples as lists)."""
    rec = {**rec, "metrics": {**rec["metrics"], "undefined": math.nan}, "extra": {**rec["extra"], "t": (1, 2)}}
    value = json.loads(record_text(rec))
    assert value["metrics"]["undefined"] is None and value["extra"]["t"] == [1, 2]
    assert digest_problem(value) is None
