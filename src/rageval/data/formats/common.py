"""What the ``rageval score`` formats share: the :class:`ImportedFile` they return and reading a file's text,
JSON and rows with errors that name the file and the line.

>>> import tempfile
>>> p = Path(tempfile.mkdtemp()) / "out.jsonl"
>>> _ = p.write_text('{"question": "q"}\\n\\n{"question": "r"}\\n', encoding="utf-8")
>>> [(where.split()[-2:], line, row) for where, line, row in json_rows(p, read_text(p))]
[(['line', '1'], 1, {'question': 'q'}), (['line', '3'], 3, {'question': 'r'})]
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval.data.formats.layout import ScoreInputError, ScoreItem

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
    """The file's text; a :class:`ScoreInputError` when it is not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ScoreInputError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


def _json_lines(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as e:
            raise ScoreInputError(f"{path} line {lineno}: not valid JSON ({e.msg} at column {e.colno})") from None


def whole_json(path: Path, text: str) -> Any:
    """``text`` as one JSON document; a :class:`ScoreInputError` naming the line otherwise."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ScoreInputError(f"{path} line {e.lineno}: not valid JSON ({e.msg} at column {e.colno})") from None


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
