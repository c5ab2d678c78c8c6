"""The generic format of ``rageval score``: JSON lines (or a JSON array) in the generic layout
(:mod:`rageval.data.formats.layout`), one question answered by one system per line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rageval.data.formats.common import ImportedFile, json_rows, read_text
from rageval.data.formats.layout import ScoreItem, to_item, validate_record

__all__ = ["read_generic"]


def _items(lines: Iterator[tuple[str, int | str, Any]], path: Path) -> list[ScoreItem]:
    return [to_item(validate_record(row, where), where, file_line=(str(path), line)) for where, line, row in lines]


def read_generic(path: Path) -> ImportedFile:
    """The items of a generic-layout file, one per line."""
    items = _items(json_rows(path, read_text(path)), path)
    return ImportedFile(str(path), "generic", items)
