"""The input formats of `rageval score` live beside the datasets (rageval.data.formats), one module per format,
and import nothing of the command's package; what they share reads text, JSON and rows naming file and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rageval.data.formats import FORMATS, ImportedFile, read_input
from rageval.data.formats.common import json_rows, read_text, whole_json
from rageval.data.formats.layout import ScoreInputError
from rageval.data.formats.registry import detection_order, formats_table

ROOT = Path(__file__).resolve().parents[1]


def test_importing_the_formats_imports_no_front_end_and_no_heavy_reader():
    code = (
        "import sys, rageval.data.formats\n"
        "print(sorted(m for m in sys.modules if m.startswith(('rageval.score', 'rageval.suite', 'rageval.run'))"
        " or m in ('datasets', 'pyarrow', 'torch')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_each_format_has_its_own_module_and_reader(tmp_path):
    import importlib

    readers = {
        "generic": "read_generic",
        "alce": "read_alce",
        "ragchecker": "read_ragchecker",
        "ragas": "read_ragas",
        "flashrag": "read_flashrag",
    }
    assert set(FORMATS) == set(readers)
    for fmt, reader in readers.items():
        assert callable(getattr(importlib.import_module(f"rageval.data.formats.{fmt}"), reader))
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps({"question": "Q?", "answer": "A.", "contexts": ["c"]}) + "\n", encoding="utf-8")
    got = read_input(str(p))
    assert isinstance(got, ImportedFile) and (got.format, len(got.items)) == ("generic", 1)


def test_shared_readers_name_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"a": 1}\n\xff\n')
    with pytest.raises(ScoreInputError, match=r"bad.jsonl line 2: not UTF-8 text \(byte 0xff at offset 9\)"):
        read_text(bad)
    with pytest.raises(ScoreInputError, match=r"x.json line 2: not valid JSON \(Expecting value at column 1\)"):
        whole_json(tmp_path / "x.json", '{"a":\n}')
    arr = tmp_path / "arr.json"
    assert list(json_rows(arr, '[{"q": 1}, 2]')) == [
        (f"{arr} item [0]", "[0]", {"q": 1}),
        (f"{arr} item [1]", "[1]", 2),
    ]
    lines = tmp_path / "l.jsonl"
    assert list(json_rows(lines, '{"q": 1}\n\n{"q": 2}\n')) == [
        (f"{lines} line 1", 1, {"q": 1}),
        (f"{lines} line 3", 3, {"q": 2}),
    ]
    with pytest.raises(ScoreInputError, match=r"l.jsonl line 2: not valid JSON"):
        list(json_rows(lines, '{"q": 1}\n{nope\n'))


def test_the_formats_are_one_registry_listed_everywhere_from_it():
    """The registry is the one list: the docs' table is rendered from it, a suite's dataset.format and the
    saved reader's format are checked against it, and detection follows the declared order (generic last)."""
    from rageval.readers.saved import SavedParams
    from rageval.suite.config import DatasetSpec

    assert detection_order() == ["alce", "ragchecker", "flashrag", "ragas", "generic"]
    doc = (ROOT / "docs" / "score.md").read_text(encoding="utf-8")
    block = doc[doc.index("<!-- formats:begin -->\n") + 23 : doc.index("<!-- formats:end -->")]
    assert block.strip() == formats_table(), "docs/score.md holds an outdated formats table: formats_table()"
    assert SavedParams.model_fields["format"].description.startswith("generic | alce | ragchecker | ragas | flashrag:")
    with pytest.raises(ValueError, match="Input should be 'generic', 'alce', 'ragchecker', 'ragas' or 'flashrag'"):
        DatasetSpec(name="x", format="ragsa", path="x.jsonl")
    assert DatasetSpec(format="flashrag", path="x.json").name == "flashrag"
