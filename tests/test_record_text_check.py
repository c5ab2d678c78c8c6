"""A line as rageval wrote it is checked against its digest by hashing the line (``as_written``), not by encoding
its record again; every other line falls to the full check, and the two always agree.

The categories: every text the writer makes (characters past ASCII, past the Basic Multilingual Plane, DEL,
control characters, lone surrogates, NaN, nesting) passes the quick check; an edit of any kind fails it and is
caught by the full one (a value changed in the writer's own format, the digest changed, a field moved after the
digest); a line re-serialised or written by an earlier rageval fails it and passes the full one; and the readers
(report, rescore, export, RunDir) take the quick path for an unedited run and the full one for an edited line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rageval.rundir.records as records_mod
from rageval.cli import main
from rageval.report.load import RunError, load_run
from rageval.rundir.manifest import RunDir, RunDirError
from rageval.rundir.records import DIGEST, as_written, canonical, digest_problem, record_digest, record_text

EXAMPLE = Path(__file__).resolve().parents[1] / "src" / "rageval" / "data" / "samples" / "score" / "example.jsonl"
MISMATCH = "its digest does not match its content"

# any character a string may hold: past ASCII, past the BMP, DEL, controls, lone surrogates
_chars = st.characters(blacklist_categories=())
_text = st.text(alphabet=_chars, max_size=10)
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=False),
    _text,
    st.sampled_from(["caf\u00e9", "\U0001f600", "\x7f", "a\u2028b", "\ud800", "\\u00e9", '"}', ',"digest":"x"}']),
)
_json = st.recursive(
    _scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_text, inner, max_size=4)),
    max_leaves=14,
)
_records = st.fixed_dictionaries(
    {"question_id": _text, "setting": st.fixed_dictionaries({"name": _text}), "extra": _json},
    optional={"metrics": st.dictionaries(_text, _scalar, max_size=4)},
)


def _writer_format(value: dict, digest: str) -> str:
    """``value`` written as the writer writes a record (compact, sorted, UTF-8 kept), ``digest`` as its last
    field: what a script that copies rageval's own format writes after an edit."""
    body = {k: v for k, v in value.items() if k != DIGEST}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text[:-1] + f',"{DIGEST}":"{digest}"}}'


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_records, st.sampled_from(["", "\n", "\r\n"]))
def test_every_written_text_passes_the_quick_check_and_the_full_one_agrees(rec, end):
    text = record_text(rec)
    value = json.loads(text)
    assert as_written(text + end, value[DIGEST]) and as_written((text + end).encode("utf-8"), value[DIGEST])
    assert digest_problem(value, text + end) is None and digest_problem(value) is None
    assert value[DIGEST] == record_digest(value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_records, st.data())
def test_an_edit_in_the_writers_own_format_fails_both_checks(rec, data):
    text = record_text(rec)
    value = json.loads(text)
    key = data.draw(st.sampled_from(sorted(k for k in value if k != DIGEST)))
    edited = dict(value)
    same = json.dumps(value[key], sort_keys=True)
    edited[key] = data.draw(_json.filter(lambda v: json.dumps(v, sort_keys=True) != same))
    raw = _writer_format(json.loads(json.dumps(edited)), value[DIGEST])
    assert not as_written(raw, value[DIGEST])
    assert digest_problem(json.loads(raw), raw) == MISMATCH


@given(_records)
@settings(max_examples=100, deadline=None)
def test_a_changed_digest_or_a_field_after_it_fails(rec):
    text = record_text(rec)
    value = json.loads(text)
    other = "sha256:" + ("0" if value[DIGEST][7] != "0" else "1") + value[DIGEST][8:]
    forged = text.replace(value[DIGEST], other)
    assert not as_written(forged, other) and digest_problem(json.loads(forged), forged) == MISMATCH
    moved = text[:-1] + ',"zz":1}'  # a field after the digest: not as written, and an edit
    assert not as_written(moved, value[DIGEST]) and digest_problem(json.loads(moved), moved) == MISMATCH


@given(_records, st.sampled_from(["spaced", "indented", "ascii", "reordered"]))
@settings(max_examples=200, deadline=None)
def test_a_reserialised_or_older_line_fails_the_quick_check_and_passes_the_full_one(rec, how):
    value = json.loads(record_text(rec))
    if how == "spaced":  # as rageval wrote records before its lines lost their spaces
        body = json.dumps({k: v for k, v in value.items() if k != DIGEST}, sort_keys=True, ensure_ascii=False)
        raw = body[:-1] + f', "{DIGEST}": "{value[DIGEST]}"}}'
    elif how == "indented":
        raw = json.dumps(value, indent=1, ensure_ascii=False)
    elif how == "ascii":
        raw = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    else:
        raw = json.dumps(dict(reversed(list(value.items()))), separators=(",", ":"), ensure_ascii=False)
    read = json.loads(raw)
    if as_written(raw, value[DIGEST]):  # only a line whose text before its digest is the canonical JSON itself
        assert how == "ascii" and raw.rsplit(f',"{DIGEST}":', 1)[0] + "}" == canonical(read).decode()
    else:
        assert how != "ascii" or raw.rsplit(f',"{DIGEST}":', 1)[0] + "}" != canonical(read).decode()
    assert digest_problem(read, raw) is None


def test_the_written_line_is_compact_and_keeps_its_characters():
    text = record_text({"question_id": "q1", "answer": "caf\u00e9 \U0001f600", "metrics": {"m": float("nan")}})
    assert text.startswith('{"answer":"caf\u00e9 \U0001f600","metrics":{"m":null},"question_id":"q1","digest":"sha256:')
    canonical = json.dumps(
        {"answer": "caf\u00e9 \U0001f600", "metrics": {"m": None}, "question_id": "q1"},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    )
    assert '"\\u00e9 \\ud83d\\ude00"' not in text and "caf\\u00e9 \\ud83d\\ude00" in canonical
    import hashlib

    assert json.loads(text)[DIGEST] == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()  # by hand


# -- the readers take the quick path for an unedited run, the full one for an edit -------------------------------


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("quick") / "run"
    res = CliRunner().invoke(main, ["score", str(EXAMPLE), "--out", str(out), "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture
def full_checks(monkeypatch) -> list[int]:
    """How many records were checked by encoding them again (the full check)."""
    calls: list[int] = []
    real = records_mod.record_digest

    def counted(value):
        calls.append(1)
        return real(value)

    monkeypatch.setattr(records_mod, "record_digest", counted)
    return calls


def _read_everywhere(run: Path, out: Path) -> None:
    """The run read by the report, RunDir and export (rescore reads as RunDir does, and writes records: their
    digests are taken, so it is left out of the count)."""
    load_run(run)
    rd = RunDir(run)
    list(rd.record_lines(rd.record_checks()))
    res = CliRunner().invoke(main, ["export", str(run), "--format", "csv", "--out", str(out / "x.csv")])
    assert res.exit_code == 0, res.output


def test_an_unedited_run_is_checked_by_hashing_its_lines(scored, tmp_path, full_checks):
    _read_everywhere(scored, tmp_path)
    assert full_checks == []  # every line read by the report, RunDir and export passed the quick check


def test_an_older_format_line_is_checked_in_full_and_read(scored, tmp_path, full_checks):
    run = tmp_path / "run"
    shutil.copytree(scored, run)
    lines = (run / "records.jsonl").read_text(encoding="utf-8").splitlines()
    value = json.loads(lines[3])
    body = json.dumps({k: v for k, v in value.items() if k != DIGEST}, sort_keys=True, ensure_ascii=False)
    lines[3] = body[:-1] + f', "{DIGEST}": "{value[DIGEST]}"}}'  # spaced, as earlier rageval wrote it
    (run / "records.jsonl").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    load_run(run)
    assert len(full_checks) == 1


def test_an_edit_in_the_writers_format_is_refused_by_every_reader(scored, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(scored, run)
    lines = (run / "records.jsonl").read_text(encoding="utf-8").splitlines()
    value = json.loads(lines[5])
    value["question_id"] = value["question_id"] + "x"
    lines[5] = _writer_format(value, value[DIGEST])
    (run / "records.jsonl").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    with pytest.raises(RunError, match="line 6: .* was edited after rageval wrote it"):
        load_run(run)
    rd = RunDir(run)
    with pytest.raises(RunDirError, match="line 6: .* was edited after rageval wrote it"):
        list(rd.record_lines(rd.record_checks()))
    res = CliRunner().invoke(main, ["export", str(run), "--format", "csv", "--out", str(tmp_path / "x.csv")])
    assert res.exit_code == 2 and "was edited after rageval wrote it" in res.output
    res = CliRunner().invoke(main, ["rescore", str(run)])
    assert res.exit_code == 2 and "was edited after rageval wrote it" in res.output
