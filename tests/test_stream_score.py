"""Bounded memory (issue 28): a JSON Lines input read line by line (:class:`rageval.infiles.JsonLines`: the lines,
values and errors of reading it whole, each line's place in the file, a byte that is not UTF-8 named where it is),
and ``records.jsonl`` written from an order taken only as far as it gets (:class:`rageval.run.cache.RecordsFile`)."""

from __future__ import annotations

import json

import pytest

from rageval.data.formats import read_input
from rageval.data.formats.common import read_text
from rageval.data.formats.layout import ScoreInputError
from rageval.infiles import JsonLines, read_json_lines
from rageval.run.cache import RecordCache, RecordsFile
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
