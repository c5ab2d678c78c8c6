"""What the ``rageval score`` formats share: the :class:`ImportedFile` they return and reading a file's text,
JSON and rows with errors that name the file and the line.

>>> import tempfile
>>> p = Path(tempfile.mkdtemp()) / "out.jsonl"
>>> _ = p.write_text('{"question": "q"}\\n\\n{"question": "r"}\\n', encoding="utf-8")
>>> [(where.split()[-2:], line, row) for where, line, row in json_rows(p, read_text(p))]
[(['line', '1'], 1, {'question': 'q'}), (['line', '3'], 3, {'question': 'r'})]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval.data.formats.layout import ScoreInputError, ScoreItem
from rageval.infiles import iter_json_lines, loads
from rageval.infiles import read_text as _read_text

__all__ = ["HF_PREFIX", "ImportedFile", "json_rows", "read_text", "whole_json"]

#: a source written ``hf:<id>`` is a Hugging Face dataset (read as RAGAS-style columns)
HF_PREFIX = "hf:"


@dataclass
class ImportedFile:
    """One input file: its items (one per line and system), the format it was read as, notes for the summary."""

    path: str
    format: str
    items: list[ScoreItem]
    notes: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def read_text(path: Path) -> str:
    """The text of the regular file ``path`` (:mod:`rageval.infiles`: size limit, UTF-8); a
    :class:`ScoreInputError` otherwise."""
    return _read_text(path, what="the score input", error=ScoreInputError)


def _json_lines(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    return iter_json_lines(text, str(path), error=ScoreInputError)


def whole_json(path: Path, text: str) -> Any:
    """``text`` as one JSON document; a :class:`ScoreInputError` naming the line otherwise."""
    return loads(text, str(path), error=ScoreInputError, line_of_doc=True)


def json_rows(path: Path, text: str) -> Iterator[tuple[str, int | str, Any]]:
    """``(where, line, row)`` of a JSONL file or of a JSON array file."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        data = whole_json(path, text)
        for i, row in enumerate(data):
            yield f"{path} item [{i}]", f"[{i}]", row
        return
    for lineno, row in _json_lines(path, text):
        yield f"{path} line {lineno}", lineno, row
