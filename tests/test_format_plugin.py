"""A new input format of `rageval score` is one registry entry: a reader and a sniffer registered here, with no
other edit, are read by `rageval score FILE` (detected) and by `--format NAME`, listed by `--format`'s choices
and by the error that recognises no format, and gone again once unregistered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.data.formats import FORMATS, FormatMeta, ImportedFile, Peek, detect, read_input
from rageval.data.formats.layout import ScoreInputError, to_item, validate_record

QA_TEXT = """\
Q: What is the capital of France?
A: Paris.
C: Paris is the capital of France.
G: Paris

Q: Which river is the longest?
A: The Nile.
C: The Nile is a long river.
G: Amazon
"""


def sniff_qa_text(peek: Peek) -> bool:
    """A plain-text file of ``Q:``/``A:``/``C:``/``G:`` blocks (not JSON: the sniffer reads the file itself)."""
    return peek.document is None and peek.path.read_text(encoding="utf-8").startswith("Q: ")


def read_qa_text(path: Path) -> ImportedFile:
    """One item per blank-line-separated block: question, answer, contexts and gold answers."""
    items = []
    for k, block in enumerate(path.read_text(encoding="utf-8").strip().split("\n\n"), start=1):
        fields: dict[str, list[str]] = {}
        for line in block.splitlines():
            tag, _, text = line.partition(": ")
            fields.setdefault(tag, []).append(text)
        row = {
            "id": f"b{k}",
            "question": fields["Q"][0],
            "answer": fields["A"][0],
            "contexts": fields.get("C", []),
            "answers": fields.get("G", []),
        }
        where = f"{path} block {k}"
        items.append(to_item(validate_record(row, where), where, file_line=(str(path), k)))
    return ImportedFile(str(path), "qa_text", items)


@pytest.fixture
def qa_text():
    FORMATS.register("qa_text", read_qa_text, FormatMeta("a Q:/A: text file", sniff_qa_text))
    yield "qa_text"
    FORMATS.unregister("qa_text")


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]


def test_a_registered_reader_and_sniffer_are_read_detected_and_named(qa_text, tmp_path):
    p = tmp_path / "sys.txt"
    p.write_text(QA_TEXT, encoding="utf-8")
    assert detect(str(p)) == "qa_text"
    got = read_input(str(p))
    assert (got.format, [it.question for it in got.items]) == (
        "qa_text",
        ["What is the capital of France?", "Which river is the longest?"],
    )
    runs = {}
    for name, extra in (("auto", []), ("named", ["--format", "qa_text"])):
        out = tmp_path / name
        res = CliRunner().invoke(
            main,
            ["score", str(p), *extra, "--out", str(out), "--no-report", "--no-progress", "--diagnostics", "answer_f1"],
        )
        assert res.exit_code == 0, res.output
        runs[name] = _records(out)
    assert runs["auto"] == runs["named"]
    # answer F1 by hand: "Paris." against "Paris" is 1; "The Nile." against "Amazon" shares no token, 0
    by_id = {r["question_id"]: r["metrics"]["answer_f1"] for r in runs["auto"]}
    assert sorted(by_id.values()) == [0.0, 1.0] and len(by_id) == 2
    # the error that recognises no format lists it with the built-in ones
    odd = tmp_path / "odd.json"
    odd.write_text('{"x": 1}', encoding="utf-8")
    with pytest.raises(ScoreInputError, match=r"or a Q:/A: text file; pass --format generic\|.*\|flashrag\|qa_text$"):
        detect(str(odd))
    help_text = CliRunner().invoke(main, ["score", "--help"]).output
    assert "qa_text" in help_text


def test_an_unregistered_format_is_no_choice(tmp_path):
    assert "qa_text" not in FORMATS
    p = tmp_path / "sys.txt"
    p.write_text(QA_TEXT, encoding="utf-8")
    with pytest.raises(ScoreInputError, match="cannot tell its format"):
        detect(str(p))
    res = CliRunner().invoke(main, ["score", str(p), "--format", "qa_text", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "'qa_text' is not one of 'auto', 'generic'" in res.output
