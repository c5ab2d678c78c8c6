"""Output injection (docs/security.md#files-rageval-writes-escaping-per-output-kind): a setting, system, question
id, title or judge spec is text someone else wrote, and every file rageval writes passes it through the rule of
its kind (:mod:`rageval.escape`): CSV cells (no formula, every line break quoted), Markdown text (no link, raw
HTML, emphasis or cell boundary), HTML (autoescape for the whole page), console text (no control or
bidirectional character).  The rules one by one over arbitrary text (hypothesis), then a walk over every file of a
run built from hostile names, its report and its audit."""

from __future__ import annotations

import csv
import html.parser
import io
import json
import re
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from rageval.cli import main
from rageval.escape import BIDI_CONTROLS, FORMULA_START, console_text, csv_cell, csv_text, md_code, md_text
from rageval.judges import JUDGES, CallableJudge

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "src" / "rageval" / "data" / "samples" / "score" / "example.jsonl"
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")

#: text as hostile as a name can be: formula starts, line breaks, the Markdown and HTML metacharacters, ESC,
#: C1 controls and the bidirectional controls, among ordinary letters
HOSTILE = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("=+-@\t\r\n\"',;|\\[]()<>*_`~&#!:^/ ax1.\x1b\x07\x9b\x9d\x7f\u202e\u2066\u200f")),
        st.characters(),
    ),
    max_size=40,
)


def _controls(s: str, keep: str = "") -> list[str]:
    return [ch for ch in s if ch not in keep and (unicodedata.category(ch) == "Cc" or ch in BIDI_CONTROLS)]


# ---------------------------------------------------------------- CSV


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ('=HYPERLINK("x")', '\'=HYPERLINK("x")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-0.389", "-0.389"),
        ("+1e-3", "+1e-3"),
        ("-", "'-"),
        ("-inf", "'-inf"),
        ("naive@96", "naive@96"),
        ("full_context", "full_context"),
        ("", ""),
    ],
)
def test_csv_cell_cases(cell, written):
    assert csv_cell(cell) == written


def test_csv_numbers_are_never_escaped():
    # a number written as a number (a negative effect) stays a number; only text cells are escaped
    assert csv_text([[-0.389, -2, None, "-x"]], lambda v: "NA" if v is None else f"{v:.6f}") == (
        "-0.389000,-2.000000,NA,'-x\n"
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(HOSTILE, min_size=1, max_size=4), min_size=1, max_size=4))
def test_csv_text_round_trips_and_never_starts_a_formula(rows):
    text = csv_text(rows)
    back = list(csv.reader(io.StringIO(text, newline="")))
    assert len(back) == len(rows)  # a \r or \n in a cell never splits a row
    for got, row in zip(back, rows):
        assert got == [csv_cell(c) for c in row]
        for cell in got:
            assert not cell.startswith(FORMULA_START) or NUMBER.match(cell)
    assert text.endswith("\n") and not text.endswith("\r\n")  # the line end is \n, as before


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.text(alphabet=st.characters(blacklist_characters="\r")), min_size=1), min_size=1))
def test_csv_text_is_the_csv_writers_bytes_without_cr(rows):
    rows = [[c.lstrip("=+-@\t") for c in r] for r in rows]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    assert csv_text(rows) == buf.getvalue()


# ---------------------------------------------------------------- Markdown


def _md():
    markdown_it = pytest.importorskip("markdown_it")
    return markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, list]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)


def _tags(page: str) -> _Tags:
    p = _Tags()
    p.feed(page)
    p.close()
    return p


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("[x](javascript:alert(1))", "[x\\](javascript:alert(1))"),
        ("<img src=x onerror=alert(1)>", "\\<img src=x onerror=alert(1)>"),
        ("a|b", "a\\|b"),
        ("*bold* _em_ `code` ~~s~~", "\\*bold\\* \\_em\\_ \\`code\\` \\~\\~s\\~\\~"),
        ("a\nb\rc", "a b c"),
        ("&lt;", "\\&lt;"),
        ("full_context naive@96 [+0.120, +0.340] p < 0.05", "full_context naive@96 [+0.120, +0.340] p < 0.05"),
    ],
)
def test_md_text_cases(text, written):
    assert md_text(text) == written


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_md_text_renders_as_plain_text(text):
    md = _md()
    out = md_text(text)
    assert "\n" not in out and "\r" not in out
    page = md.render(f"x {out} x")  # where it is written: in a sentence or a table cell, never at a line start
    tags = _tags(page)
    # one paragraph of text: no link, image, raw HTML, emphasis, code span, strikethrough, line break
    assert [t for t, _ in tags.tags] == ["p"], (text, page)


@settings(max_examples=200, deadline=None)
@given(st.lists(HOSTILE, min_size=2, max_size=3), st.dictionaries(HOSTILE, st.integers(0, 99), min_size=1, max_size=3))
def test_the_holm_sentence_writes_run_and_family_names_by_the_markdown_rule(runs, families):
    """The Holm sentence of summary.md and contrasts.md names runs (a multi-run report) and families: in
    Markdown each name is written by md_text, so the sentence stays one paragraph of text."""
    from types import SimpleNamespace

    from rageval.report.tables import family_counts_line

    for scope in ("family", "suite"):
        holm = {"runs": runs, "families": families, "family_sizes": families, "scope": scope}
        line = family_counts_line(SimpleNamespace(holm=holm, contrasts=[]), md_text)  # type: ignore[arg-type]
        assert [t for t, _ in _tags(_md().render(line)).tags] == ["p"], (runs, families, line)


@settings(max_examples=200, deadline=None)
@given(st.lists(HOSTILE, min_size=1, max_size=4))
def test_md_table_cells_keep_the_table_shape(cells):
    from rageval.report.tables import to_markdown

    md = _md()
    table = to_markdown(["setting", *[f"c{i}" for i in range(1, len(cells))]], [cells])
    tags = _tags(md.render(table))
    names = [t for t, _ in tags.tags]
    assert names.count("td") == len(cells), table  # no cell split or swallowed by a `|` or a line break
    assert set(names) <= {"table", "thead", "tbody", "tr", "th", "td"}, table


@settings(max_examples=200, deadline=None)
@given(HOSTILE)
def test_md_code_is_one_code_span_of_the_text(text):
    md = _md()
    tags = _tags(md.render("x " + md_code(text) + " x"))
    flat = "".join(" " if _controls(ch) else ch for ch in text)
    if not flat:
        assert md_code(text) == "``" and [t for t, _ in tags.tags] == ["p"]
        return
    assert [t for t, _ in tags.tags] == ["p", "code"]
    assert "".join(tags.text)[2:-3] == flat  # the span shows the text, nothing in it interpreted


# ---------------------------------------------------------------- console


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("\x1b[2J", "\\x1b[2J"),
        ("\x1b]8;;http://e\x1b\\L\x1b]8;;\x1b\\", "\\x1b]8;;http://e\\x1b\\L\\x1b]8;;\\x1b\\"),
        ("a\rb", "a\\rb"),
        ("\u202eevil", "\\u202eevil"),
        ("\x9b2J\x07", "\\u009b2J\\x07"),
        ("one\n\ttwo", "one\n\ttwo"),
        ("naive@96 — undefined", "naive@96 — undefined"),
    ],
)
def test_console_text_cases(text, written):
    assert console_text(text) == written


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_console_text_has_no_control_or_bidi_character(text):
    out = console_text(text)
    assert _controls(out, "\n\t") == []
    if not _controls(text, "\n\t"):
        assert out == text  # ordinary text is printed as it is


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(HOSTILE, HOSTILE, max_size=3))
def test_console_text_of_json_reads_back_the_same_data(data):
    for ensure_ascii in (True, False):
        text = json.dumps(data, ensure_ascii=ensure_ascii)
        assert json.loads(console_text(text)) == data


# ---------------------------------------------------------------- HTML


def test_no_template_marks_data_safe():
    templates = ROOT / "src" / "rageval" / "report" / "templates"
    for p in templates.glob("*.j2"):
        assert not re.search(r"\|\s*safe\b", p.read_text(encoding="utf-8")), p.name
    src = (ROOT / "src" / "rageval" / "report" / "html.py").read_text(encoding="utf-8")
    assert "autoescape=True" in src


# ---------------------------------------------------------------- a hostile run, every file

#: the systems (settings) of the hostile run; the audit's judge and question ids are hostile too
SYSTEMS = {
    "baseline": ['=HYPERLINK("http://x","y")', "a\rb", "[x](javascript:alert(1))", "-2+3"],
    "reranked": ["s<img src=x onerror=alert(1)>", "\x1b[2J\x1b]8;;http://e\x1b\\L\x1b]8;;\x1b\\\u202e@SUM(1)"],
}
JUDGE = "=j<svg onload=alert(1)>"
XSS_TAGS = {"img", "svg", "iframe", "object", "embed", "i"}


def _hostile_jsonl(path: Path) -> None:
    src = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    keep = {r["id"] for r in src[:3]}
    rows = []
    for r in src:
        if r["id"] not in keep:
            continue
        for name in SYSTEMS[r["system"]]:
            units = [dict(u, title="=t<i>|x</i>") for u in r["units"]]
            rows.append(dict(r, system=name, id=f"+{r['id']}<b>", units=units))
    rows.append(dict(src[0], id="=cmd|' /C calc'!A0", system=SYSTEMS["baseline"][0]))  # an unmatched question
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    STOP = {"the", "is", "in", "it", "a", "of"}

    def rule(premises, hypotheses):
        def words(t):
            return {w for w in re.findall(r"[a-z0-9]+", t.lower()) if w not in STOP}

        return [len(words(h) & words(p)) / max(1, len(words(h))) for p, h in zip(premises, hypotheses)]

    JUDGES.register(JUDGE, lambda arg, o: CallableJudge(rule, judge_id="hostile-rule-v1"))
    try:
        tmp = tmp_path_factory.mktemp("hostile")
        inp = tmp / "h.jsonl"
        _hostile_jsonl(inp)
        run = tmp / "run"
        runner = CliRunner()
        outs = []
        for args in (
            ["score", str(inp), "--out", str(run), "--no-progress", "--no-report"],
            ["audit", str(run), "--judge", JUDGE, "--resamples", "50"],
            ["report", str(run), "--no-plots", "--resamples", "50"],
        ):
            res = runner.invoke(main, args)
            assert res.exit_code == 0, (args, res.output)
            outs.append(res.output)
        yield run, outs
    finally:
        JUDGES.unregister(JUDGE)


def _files(run: Path) -> list[Path]:
    return sorted(p for p in run.rglob("*") if p.is_file() and "cache" not in p.relative_to(run).parts)


def test_hostile_run_writes_every_kind(hostile_run):
    run, _ = hostile_run
    kinds = {p.suffix for p in _files(run)}
    assert {".csv", ".md", ".html", ".json", ".jsonl"} <= kinds
    names = {p.name for p in _files(run)}
    assert {"summary.csv", "contrasts.csv", "unmatched.csv", "summary.md", "contrasts.md", "audit.md"} <= names
    assert {"scores.csv", "gaps.csv", "cross_judge.csv", "agreement.csv", "abstentions.csv"} <= names


def test_hostile_run_csv_files(hostile_run):
    run, _ = hostile_run
    seen = set()
    for p in _files(run):
        if p.suffix != ".csv":
            continue
        rows = list(csv.reader(io.StringIO(p.read_bytes().decode("utf-8"), newline="")))
        assert rows, p
        assert {len(r) for r in rows} == {len(rows[0])}, p  # no row split by a \r
        for r in rows:
            for cell in r:
                assert not cell.startswith(FORMULA_START) or NUMBER.match(cell), (p.name, cell)
                seen.add(cell)
    # the hostile names are there, escaped (and the one with a \r kept whole)
    assert '\'=HYPERLINK("http://x","y")' in seen
    assert "a\rb" in seen and "'-2+3" in seen
    assert any(c.startswith("'=cmd|") for c in seen)  # unmatched.csv's question id


def test_hostile_run_markdown_files(hostile_run):
    md = _md()
    run, _ = hostile_run
    for p in _files(run):
        if p.suffix != ".md":
            continue
        text = p.read_text(encoding="utf-8")
        assert "\r" not in text and "\x1b" not in text and "\u202e" not in text, p
        page = md.render(text)
        tags = _tags(page)
        names = {t for t, _ in tags.tags}
        assert not names & (XSS_TAGS | {"a", "script"}), (p.name, names & (XSS_TAGS | {"a", "script"}))
        # every table row has its header's number of cells
        for table in re.findall(r"<table>.*?</table>", page, re.DOTALL):
            head = len(re.findall(r"<th[ >]", table.split("</thead>")[0]))
            for row in re.findall(r"<tr>(.*?)</tr>", table.split("</thead>")[1], re.DOTALL):
                assert len(re.findall(r"<td[ >]", row)) == head, p.name


def test_hostile_run_html_report(hostile_run):
    run, _ = hostile_run
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "Second-evaluator audit" in page  # the audit's heading, with its judge spec and settings, is there
    tags = _tags(page)
    names = {t for t, _ in tags.tags}
    assert not names & XSS_TAGS, names & XSS_TAGS
    # every element and attribute of the page is one the templates write: none came from a name
    templates = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "src/rageval/report/templates").glob("*.j2"))
    assert names <= set(re.findall(r"<([a-z][a-z0-9]*)", templates)) | {"wbr"}, names
    written = set(re.findall(r"\s([a-z][a-z-]*)=", templates))
    for tag, attrs in tags.tags:
        for k, v in attrs:
            assert k in written, (tag, k)
            assert not k.startswith("on") or f'{k}="{v}"' in templates, (tag, k, v)  # the page's own handlers
            assert not (v or "").lower().lstrip().startswith("javascript:"), (tag, k, v)
    assert "&lt;svg onload=alert(1)&gt;" in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, re.DOTALL)
    assert all("<" not in s for s in scripts if s.lstrip().startswith("{"))  # the embedded JSON holds no "<"


def test_hostile_run_json_keeps_the_text(hostile_run):
    run, _ = hostile_run
    strings: set[str] = set()

    def walk(v):
        if isinstance(v, dict):
            strings.update(v)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            strings.add(v)

    walk(json.loads((run / "report.json").read_bytes()))
    for name in (*SYSTEMS["baseline"], *SYSTEMS["reranked"]):
        assert name in strings  # data: verbatim, quoted by the JSON encoder
    for p in _files(run):
        if p.suffix == ".jsonl":
            for line in p.read_text(encoding="utf-8").splitlines():
                json.loads(line)


def test_hostile_run_console(hostile_run):
    _, outs = hostile_run
    for out in outs:
        assert _controls(out, "\n\t") == [], out
    assert "\\x1b[2J" in "".join(outs)  # shown, not acted on


def test_headline_table_aligns_escaped_names():
    from rageval.report.headline import headline_table

    metric = {"answer_f1": {"mean": 0.5, "n": 2, "n_undefined": 0}}
    rows = [{"setting": s, "n_cohort": 2, "metrics": metric} for s in ("base", "\x1b[2J\u202ex", "a\rb")]
    lines = headline_table({"metric_names": ["answer_f1"], "summary": rows}).splitlines()
    assert [line.index("0.500") for line in lines[1:]] == [lines[0].index("answer_f1")] * 3
    assert lines[2].startswith("\\x1b[2J\\u202ex")
