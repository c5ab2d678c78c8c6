"""Sizes and bytes (issue 41, category 5; docs/security.md#sizes-and-bytes): every size limit lives in
rageval.limits, refuses in one line naming the value and the variable that raises it (exit 2, no traceback), and
is raised by that variable; a CSV cell or a JSON string over the cell limit is refused before it costs minutes; a
run of more settings than the statistics take is refused before anything is scored.  A file or ``--out`` path
holding bytes that are not UTF-8 (a lone surrogate once ``os.fsdecode`` reads it) works through score, suite,
report, rescore, audit and calibrate, and is written into records, manifests, reports and the console with those
bytes as ``\\xNN`` escapes, never an encoding error.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rageval.cli import main
from rageval.data.formats.layout import ScoreInputError
from rageval.data.formats.read import read_input
from rageval.errors import ConfigError
from rageval.infiles import InputFileError, read_csv
from rageval.io import printable
from rageval.judges import JUDGES, CallableJudge
from rageval.limits import CELL_CHARS, INPUT_BYTES, LIMITS, SETTINGS, check_text_sizes, long_text
from rageval.run.cache import safe_name

# -- helpers ----------------------------------------------------------------------------------------------------------


def cli(*args: str | bytes | os.PathLike):
    return CliRunner().invoke(main, [os.fsdecode(a) for a in args])


def one_line_error(res, code: int, *needles: str) -> str:
    """Exit ``code``, one line on the output, no traceback; the line holds each needle."""
    assert res.exit_code == code, (res.exit_code, res.output, res.exception)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in res.output, res.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def text_of(*parts: bytes) -> str:
    """The file at the joined byte path, decoded strictly as UTF-8 (every file rageval writes is)."""
    return Path(os.fsdecode(os.path.join(*parts))).read_bytes().decode("utf-8")


def line(qid: str, system: str | None = None, context: str = "Paris is in France.") -> str:
    row = {"id": qid, "question": f"Where is {qid}?", "answer": f"{qid} is in France [1].", "contexts": [context]}
    if system is not None:
        row["system"] = system
    row["answers"] = ["France"]
    return json.dumps(row) + "\n"


def write_csv(path: Path, contexts: str) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer", "contexts", "ground_truth"])
        w.writerow(["Where is Paris?", "Paris is in France.", contexts, "France"])
        w.writerow(["Where is Lyon?", "Lyon is in France.", "Lyon is in France.", "France"])


# -- the limits: one place, one variable each -------------------------------------------------------------------------


@pytest.mark.parametrize("limit", LIMITS, ids=lambda lim: lim.variable)
def test_each_limit_has_its_default_and_its_variable(limit, monkeypatch):
    monkeypatch.delenv(limit.variable, raising=False)
    assert limit.value() == limit.default
    monkeypatch.setenv(limit.variable, "1_234")
    assert limit.value() == 1234
    monkeypatch.setenv(limit.variable, " 7 ")
    assert limit.value() == 7
    for bad in ("0", "-5", "lots", "1e9", "1.5"):
        monkeypatch.setenv(limit.variable, bad)
        with pytest.raises(ConfigError, match=re.escape(limit.variable) + ".*expected a positive number of"):
            limit.value()


def test_the_defaults_are_the_documented_ones():
    assert (INPUT_BYTES.default, CELL_CHARS.default, SETTINGS.default) == (2**30, 2**24, 500)
    assert [lim.variable for lim in LIMITS] == [
        "RAGEVAL_MAX_INPUT_BYTES",
        "RAGEVAL_MAX_CELL_CHARS",
        "RAGEVAL_MAX_SETTINGS",
    ]
    docs = Path(__file__).resolve().parents[1] / "docs"
    limits_doc = (docs / "suites.md").read_text(encoding="utf-8")
    section = limits_doc[limits_doc.index("## Limits") :]
    section = section[: section.index("\n## ", 3)]
    for lim, default in zip(LIMITS, ("1 GiB", "16 Mi", "500")):
        assert lim.variable in section and default in section, (lim.variable, default)
    assert "## Sizes and bytes" in (docs / "security.md").read_text(encoding="utf-8")


def test_a_refusal_is_one_line_with_the_value_the_limit_and_the_variable(monkeypatch):
    monkeypatch.setenv("RAGEVAL_MAX_SETTINGS", "12")
    assert SETTINGS.refusal("run/", "13 settings", "why") == (
        "run/: 13 settings over the limit of 12 settings (why); raise it with RAGEVAL_MAX_SETTINGS=<settings> "
        "if that is right"
    )


# -- one CSV cell -----------------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limit=st.integers(1, 40), delta=st.integers(-3, 3), row=st.integers(0, 2), quoted_lines=st.booleans())
def test_a_csv_cell_is_read_up_to_the_limit_and_refused_past_it(tmp_path, monkeypatch, limit, delta, row, quoted_lines):
    n = max(0, limit + delta)
    cell = ("a\nb" * n)[:n] if quoted_lines else "x" * n
    p = tmp_path / "t.csv"
    rows = [["q", "c"]] + [["abc"[i], cell if i == row else "y"] for i in range(3)]  # other cells: 1 character
    with p.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    monkeypatch.setenv("RAGEVAL_MAX_CELL_CHARS", str(limit))
    before = csv.field_size_limit()
    if n <= limit:
        header, table = read_csv(p)
        assert header == ["q", "c"] and [r["c"] for _, r in table] == [r[1] for r in rows[1:]]
    else:
        start = 2 + row  # the line its row starts on (the rows above hold no line break)
        with pytest.raises(InputFileError) as info:
            read_csv(p)
        assert str(info.value) == (
            f"{p} line {start}: a cell over the limit of {limit:,} characters; "
            "raise it with RAGEVAL_MAX_CELL_CHARS=<characters> if that is right"
        )
    assert csv.field_size_limit() == before  # the csv module's global limit is put back


def test_a_header_cell_over_the_limit_is_refused_on_line_1(tmp_path, monkeypatch):
    p = tmp_path / "h.csv"
    p.write_text("question,answer," + "c" * 50 + "\nq,a,b\n", encoding="utf-8")
    monkeypatch.setenv("RAGEVAL_MAX_CELL_CHARS", "20")
    with pytest.raises(InputFileError, match=r"h\.csv line 1: a cell over the limit of 20 characters"):
        read_csv(p)


def test_score_refuses_a_csv_cell_over_the_limit_in_one_line_and_the_variable_raises_it(tmp_path, monkeypatch):
    p = tmp_path / "big.csv"
    write_csv(p, "Paris is in France. " * 100)  # 2,000 characters
    monkeypatch.setenv("RAGEVAL_MAX_CELL_CHARS", "1999")
    one_line_error(
        cli("score", p, "--out", tmp_path / "o", "--no-progress"),
        2,
        f"{p} line 2: a cell over the limit of 1,999 characters",
        "RAGEVAL_MAX_CELL_CHARS=<characters>",
    )
    assert not (tmp_path / "o" / "records.jsonl").exists()  # refused before anything was scored
    monkeypatch.setenv("RAGEVAL_MAX_CELL_CHARS", "2000")  # exactly at the limit: read
    res = cli("score", p, "--out", tmp_path / "o", "--no-progress", "--no-report")
    assert res.exit_code == 0, res.output
    assert len((tmp_path / "o" / "records.jsonl").read_text(encoding="utf-8").splitlines()) == 2


# -- one JSON string --------------------------------------------------------------------------------------------------


_json = st.recursive(
    st.text(max_size=12) | st.integers() | st.none(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text("abc", min_size=1, max_size=3), kids, max_size=4),
    max_leaves=20,
)


def _strings(value, place=""):
    """Every string of ``value`` with its place, in document order (the oracle of long_text)."""
    if isinstance(value, str):
        yield place, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{place}.{k}" if place else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{place}[{i}]")


@settings(max_examples=200, deadline=None)
@given(value=_json, limit=st.integers(0, 12))
def test_long_text_finds_the_first_string_over_the_limit_in_document_order(value, limit):
    first = next(((p, len(s)) for p, s in _strings(value) if len(s) > limit), None)
    assert long_text(value, limit) == first


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limit=st.integers(1, 30), delta=st.integers(-2, 2), field=st.sampled_from(["answer", "contexts", "meta"]))
def test_a_json_string_over_the_limit_is_refused_naming_the_field(tmp_path, monkeypatch, limit, delta, field):
    n = max(1, limit + delta)
    row: dict = {"id": "a", "question": "q", "answer": "A", "contexts": ["c"]}  # 1 character each
    if field == "answer":
        row["answer"], place = "A" * n, "answer"
    elif field == "contexts":
        row["contexts"], place = ["c", "C" * n], "contexts[1]"
    else:
        row["meta"], place = {"notes": ["m" * n]}, "meta.notes[0]"
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps(row) + "\n", encoding="utf-8")
    monkeypatch.setenv("RAGEVAL_MAX_CELL_CHARS", str(limit))
    if n <= limit:
        assert len(read_input(str(p), "generic").items) == 1
        check_text_sizes(row, "here", error=ScoreInputError)
        return
    with pytest.raises(ScoreInputError) as info:
        list(read_input(str(p), "generic").items)
    assert str(info.value) == (
        f"{p} line 1: field {place!r} ({n:,} characters) over the limit of {limit:,} characters; "
        "raise it with RAGEVAL_MAX_CELL_CHARS=<characters> if that is right"
    )


def test_every_score_format_refuses_a_long_string(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_MAX_CELL_CHARS", "50")
    long = "w" * 51
    files = {
        "generic.jsonl": line("a", context=long),
        "generic.json": json.dumps([json.loads(line("a", context=long))]),
        "ragas.jsonl": json.dumps({"user_input": "q?", "response": "r", "retrieved_contexts": [long]}) + "\n",
        "alce.json": json.dumps(
            {"args": {}, "data": [{"question": "q?", "output": "o", "docs": [{"title": "t", "text": long}]}]}
        ),
    }
    for name, text in files.items():
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        with pytest.raises(ScoreInputError, match=r"\(51 characters\) over the limit of 50 characters"):
            imported = read_input(str(p))
            list(imported.items)


# -- the settings of one run ------------------------------------------------------------------------------------------


def _systems(path: Path, n: int, questions: int = 2) -> Path:
    path.write_text("".join(line(f"q{i}", f"sys{s}") for s in range(n) for i in range(questions)), encoding="utf-8")
    return path


def test_score_refuses_more_settings_than_the_limit_before_scoring(tmp_path, monkeypatch):
    p = _systems(tmp_path / "many.jsonl", 4)
    monkeypatch.setenv("RAGEVAL_MAX_SETTINGS", "3")
    out = tmp_path / "o"
    one_line_error(
        cli("score", p, "--out", out, "--no-progress"),
        2,
        f"{p}: 4 settings over the limit of 3 settings",
        "RAGEVAL_MAX_SETTINGS=<settings>",
    )
    assert not (out / "records.jsonl").exists()
    # records alone take any number of settings; their report is refused
    assert cli("score", p, "--out", out, "--no-progress", "--no-report").exit_code == 0
    one_line_error(cli("report", out, "--no-plots"), 2, f"{out}: 4 settings over the limit of 3", "RAGEVAL_MAX_")
    assert not (out / "summary.csv").exists()
    monkeypatch.setenv("RAGEVAL_MAX_SETTINGS", "4")  # at the limit: reported
    res = cli("report", out, "--no-plots")
    assert res.exit_code == 0, res.output
    summary = (out / "summary.csv").read_text(encoding="utf-8")
    assert all(f"sys{s}" in summary for s in range(4))


def test_a_suite_with_more_settings_than_the_limit_is_refused_before_it_runs(tmp_path, monkeypatch):
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: s\ndataset: {name: hotpotqa, limit: 2}\n"
        "settings: [{compressor: identity}, {compressor: naive, budgets: [64, 96]}]\n"
        "reader: {backend: extractive}\njudge: {spec: lexical}\ndiagnostics: [answer_f1]\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("RAGEVAL_MAX_SETTINGS", "2")
    one_line_error(
        cli("suite", suite, "--out", tmp_path / "o", "--no-progress"), 2, "3 settings over the limit of 2 settings"
    )
    assert not (tmp_path / "o" / "records.jsonl").exists()


def test_the_frontier_tests_each_relation_on_its_own_axes(tmp_path):
    """The dominance relations' tests, grouped by relation (linear, no longer relations x tests): each relation
    carries exactly the axes where its two means differ, with their test rows."""
    p = tmp_path / "f.jsonl"
    rows = []
    for s, ctx in enumerate(["Paris is in France.", "Lyon is a city.", "Nice is in France and by the sea."]):
        rows += [line(f"q{i}", f"sys{s}", ctx) for i in range(4)]
    p.write_text("".join(rows), encoding="utf-8")
    assert cli("score", p, "--out", tmp_path / "o", "--no-progress", "--no-report").exit_code == 0
    res = cli("report", tmp_path / "o", "--no-plots")
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    pairs = report["frontier"]["pairs"]
    seen = 0
    for pair in pairs:
        points = pair.get("points", {})
        for rel in pair["relations"]:
            a, b = points[rel["dominating"]], points[rel["dominated"]]
            differing = [ax for ax, x, y in zip((pair["x"], pair["y"]), a, b) if abs(x - y) > 1e-12]
            assert [t["axis"] for t in rel["axes"]] == differing
            seen += 1
    assert pairs and seen >= 0


# -- bytes that are not UTF-8 in a path -------------------------------------------------------------------------------

_name_bytes = st.binary(min_size=1, max_size=12).filter(lambda b: b"/" not in b and b"\x00" not in b)


@settings(max_examples=300, deadline=None)
@given(raw=_name_bytes)
def test_printable_shows_each_byte_that_is_not_utf8_as_an_escape(raw):
    name = os.fsdecode(raw)
    shown = printable(name)
    assert shown == raw.decode("utf-8", "backslashreplace")  # what Python's decoder shows: \xNN per bad byte
    shown.encode("utf-8")  # never an error
    if name.encode("utf-8", "surrogatepass") == raw:  # UTF-8 already: unchanged
        assert shown == name


@settings(max_examples=300, deadline=None)
@given(a=_name_bytes, b=_name_bytes)
def test_safe_name_takes_any_file_name_and_keeps_names_apart(a, b):
    na, nb = safe_name(os.fsdecode(a)), safe_name(os.fsdecode(b))
    assert re.fullmatch(r"[A-Za-z0-9._@-]+", na)
    assert (na == nb) == (a == b)


def test_printable_leaves_text_alone_and_escapes_other_lone_surrogates():
    assert printable("café ✓ 😀") == "café ✓ 😀"
    assert printable("a" + chr(0xD800) + "b") == "a\\ud800b"
    assert printable(Path(os.fsdecode(b"/tmp/r\xff"))) == "/tmp/r\\xff"


#: file and folder names: a lone continuation byte, Latin-1, a UTF-8-encoded surrogate (not UTF-8), a cut sequence
BYTE_NAMES = [b"run\xff", b"caf\xe9", b"s\xed\xa0\x80x", b"a\xe2\x82"]


@pytest.fixture()
def audit_judge():
    JUDGES.register("bytes-rule", lambda arg, o: CallableJudge(lambda p, h: [0.9] * len(p), judge_id="bytes-rule-v1"))
    yield "bytes-rule"
    JUDGES.unregister("bytes-rule")


@pytest.mark.parametrize("raw", BYTE_NAMES, ids=["xff", "latin1", "utf8-surrogate", "cut"])
def test_score_and_report_take_any_such_name(tmp_path, raw):
    src = os.path.join(os.fsencode(tmp_path), b"a" + raw + b".jsonl")
    with open(src, "w", encoding="utf-8") as fh:
        fh.write("".join(line(f"q{i}") for i in range(2)))
    out = os.path.join(os.fsencode(tmp_path), b"o" + raw)
    shown = raw.decode("utf-8", "backslashreplace")
    assert cli("score", src, "--out", out, "--no-progress", "--no-report").exit_code == 0
    res = cli("report", out, "--no-plots")
    assert res.exit_code == 0 and f"{tmp_path}/o{shown}/summary.md" in res.output, res.output
    md = text_of(out, b"summary.md")  # Markdown escapes the backslash (docs/security.md): it renders as shown
    assert f"a{shown}".replace("\\", "\\\\") in md


@pytest.mark.parametrize("raw", BYTE_NAMES[:1], ids=["xff"])
def test_score_report_rescore_and_audit_take_a_path_that_is_not_utf8(tmp_path, raw, audit_judge):
    folder = os.path.join(os.fsencode(tmp_path), b"in" + raw)
    os.mkdir(folder)
    src = os.path.join(folder, b"ans" + raw + b".jsonl")
    with open(src, "w", encoding="utf-8") as fh:
        fh.write("".join(line(f"q{i}") for i in range(3)))
    out = os.path.join(os.fsencode(tmp_path), b"out" + raw)
    shown = raw.decode("utf-8", "backslashreplace")
    label = f"ans{shown}"

    res = cli("score", src, "--out", out, "--no-progress", "--no-report")
    assert res.exit_code == 0, res.output
    assert f"records: {tmp_path}/out{shown}/records.jsonl" in " ".join(res.output.split())  # a wrapped line joined
    assert f"setting(s): {label};" in res.output
    res = cli("report", out)  # with its figures
    assert res.exit_code == 0, res.output
    assert f"{tmp_path}/out{shown}/report.html" in res.output
    records = [json.loads(x) for x in text_of(out, b"records.jsonl").splitlines()]
    assert {r["setting"]["name"] for r in records} == {label}
    assert {r["extra"]["input"]["file"] for r in records} == {printable(os.fsdecode(src))}
    manifest = json.loads(text_of(out, b"manifest.json"))
    assert manifest["origin"]["source"] == printable(os.fsdecode(src))
    for name in (b"report.html", b"summary.md", b"summary.csv", b"report.json"):
        text = text_of(out, name)  # strict: the files are UTF-8
        want = {b".json": json.dumps(label)[1:-1], b".md": label.replace("\\", "\\\\")}.get(
            os.path.splitext(name)[1], label
        )
        assert want in text, name  # JSON and Markdown escape the backslash; both read back as the label

    res = cli("rescore", out, "--judge", "lexical")
    assert res.exit_code == 0, res.output
    assert os.path.isfile(os.path.join(out, b"rescore-lexical", b"report.html"))
    res = cli("audit", out, "--judge", audit_judge, "--n", "3")
    assert res.exit_code == 0, res.output
    audit = os.path.join(out, b"audit-" + audit_judge.encode())
    json.loads(text_of(audit, b"audit.json"))

    other = os.path.join(os.fsencode(tmp_path), b"rep" + raw)
    res = cli("report", out, "--out", other, "--no-plots")
    assert res.exit_code == 0, res.output
    text_of(other, b"report.html")


@pytest.mark.parametrize("raw", BYTE_NAMES[:2], ids=["xff", "latin1"])
def test_errors_naming_such_a_path_are_one_line_with_the_escape(tmp_path, raw):
    shown = raw.decode("utf-8", "backslashreplace")
    missing = os.path.join(os.fsencode(tmp_path), b"no" + raw + b".jsonl")
    one_line_error(cli("score", missing, "--out", tmp_path / "o"), 2, f"no{shown}.jsonl: no such file")
    bad = os.path.join(os.fsencode(tmp_path), b"bad" + raw + b".jsonl")
    with open(bad, "w", encoding="utf-8") as fh:
        fh.write('{"id": "a", "question": "q?", "answer": 5}\n')
    one_line_error(cli("score", bad, "--out", tmp_path / "o"), 2, f"bad{shown}.jsonl line 1: field 'answer'")
    wice = os.path.join(os.fsencode(tmp_path), b"w" + raw + b".jsonl")
    with open(wice, "w", encoding="utf-8") as fh:
        fh.write('{"claim": "Paris is in France.", "evidence": ["Paris is in France."], "label": "supported"}\n')
    res = cli("calibrate", "--data", wice, "--judge", "lexical")
    assert res.exit_code == 0, res.output


def test_a_suite_and_its_out_dir_may_have_such_names(tmp_path):
    folder = os.path.join(os.fsencode(tmp_path), b"su\xff")
    os.mkdir(folder)
    suite = os.path.join(folder, b"s\xfe.yaml")
    with open(suite, "w", encoding="utf-8") as fh:
        fh.write(
            "name: s\ndataset: {name: hotpotqa, limit: 2}\nsettings: [{compressor: identity}, "
            "{compressor: naive, budgets: [64]}]\nreader: {backend: extractive}\njudge: {spec: lexical}\n"
            "diagnostics: [answer_f1]\n"
        )
    out = os.path.join(os.fsencode(tmp_path), b"o\xff")
    res = cli("suite", suite, "--out", out, "--no-progress")
    assert res.exit_code == 0, res.output
    assert "o\\xff" in res.output
    text_of(out, b"report.html")
    res = cli("validate", suite)
    assert res.exit_code == 0 and "su\\xff/s\\xfe.yaml" in res.output, res.output


def test_a_system_name_with_a_lone_surrogate_is_written_as_an_escape(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_text(
        "".join(line(f"q{i}", "sys\udcff") + line(f"q{i}", "plain") for i in range(2)), encoding="utf-8"
    )  # json.dumps writes "\\udcff": a lone surrogate once read
    res = cli("score", p, "--out", tmp_path / "o", "--no-progress")
    assert res.exit_code == 0, res.output
    names = {json.loads(x)["setting"]["name"] for x in (tmp_path / "o" / "records.jsonl").open(encoding="utf-8")}
    assert names == {"sys\\xff", "plain"}
    clash = tmp_path / "c.jsonl"
    clash.write_text(line("q0", "sys\udcff") + line("q0", "sys\\xff"), encoding="utf-8")
    res = cli("score", clash, "--out", tmp_path / "o2", "--no-progress")  # two settings, never one: renamed, said
    assert res.exit_code == 0, res.output
    names = {json.loads(x)["setting"]["name"] for x in (tmp_path / "o2" / "records.jsonl").open(encoding="utf-8")}
    assert names == {"sys\\xff", "sys\\xff (2)"} and "would show one name" in res.output
