"""The generic format of ``rageval score``: JSON lines (or a JSON array) in the generic layout
(:mod:`rageval.data.formats.layout`), one question answered by one system per line.

A JSON Lines file is read line by line, never whole (docs/score.md#how-inputs-are-read): a first pass validates
every line (an error stops the run before anything is written) and keeps per line only its place in the file (byte
offset, length, line number), a digest of its bytes and the few facts planning needs
(:class:`~rageval.data.formats.common.LineIndex`); an item is made again from its line when the run reaches it
(:class:`StreamedItems`), by the same code, and a line whose bytes changed since the first pass (the file edited
during the run) is an error naming the file and the line, never a record of other inputs.  The input size limit
(``RAGEVAL_MAX_INPUT_BYTES``) applies to each line, not to the file.  A JSON array file is read whole (the limit
applies to the file), its items kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rageval.data.formats.common import ImportedFile, LazyItems, LineIndex, json_lines, json_rows, read_text
from rageval.data.formats.layout import ScoreInputError, ScoreItem, to_item, validate_record
from rageval.data.formats.registry import Peek
from rageval.infiles import loads
from rageval.linestore import KeptLines

__all__ = ["StreamedItems", "read_generic", "sniff_generic"]


def sniff_generic(peek: Peek) -> bool:
    """The generic layout, tried last: a first row with ``question`` or ``answer`` (validation names a missing
    field)."""
    row = peek.row
    return row is not None and ("question" in row or "answer" in row)


def _item(row: Any, where: str, path: Path, line: int | str) -> ScoreItem:
    return to_item(validate_record(row, where), where, file_line=(str(path), line))


class StreamedItems(LazyItems):
    """The items of a JSON Lines file in the generic layout, made again from their lines when read (module doc).

    Per line: its place and a digest of its bytes, 28 bytes (:class:`~rageval.linestore.KeptLines`).  The file
    stays open from the first read until :meth:`close` (or until this object is gone)."""

    def __init__(self, path: Path) -> None:
        self.path, self.name = path, str(path)
        self.source = json_lines(path)
        self.kept = KeptLines(self.source)

    def add(self, lineno: int, offset: int, raw: bytes) -> None:
        self.kept.add(lineno, offset, raw)

    def __len__(self) -> int:
        return len(self.kept)

    def where(self, i: int) -> str:
        return f"{self.name} line {self.kept.lineno(i)}"

    def _row(self, i: int) -> Any:
        """Line ``i`` read again as JSON; an error naming it when its bytes are not those the first pass read."""
        text = self.kept.text(i)
        if text is None:
            raise ScoreInputError(
                f"{self.where(i)}: changed since the run read it first (the file was edited or replaced during the "
                "run); nothing of the new text is scored: rerun to score the file as it is now"
            )
        return loads(text, self.where(i), error=ScoreInputError)

    def read(self, indexes: Iterable[int]) -> Iterator[ScoreItem]:
        for i in indexes:
            yield _item(self._row(i), self.where(i), self.path, self.kept.lineno(i))

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return list(self.read(range(len(self))[i]))
        return next(self.read([range(len(self))[i]]))

    def __iter__(self) -> Iterator[ScoreItem]:
        return self.read(range(len(self)))

    def question(self, i: int) -> str:
        return self._row(i)["question"]  # the line is the one validated: its question is a string

    def close(self) -> None:
        self.kept.close()


def _streamed(path: Path) -> ImportedFile:
    """A JSON Lines file read line by line (module doc)."""
    items, index = StreamedItems(path), LineIndex()
    lines = items.source
    offset = 0
    try:
        for lineno, offset, raw, row in lines:
            index.add(_item(row, f"{path} line {lineno}", path, lineno))
            items.add(lineno, offset, raw)
    except ScoreInputError:
        lines.raise_undecodable(offset)  # a byte that is not UTF-8 further on is named first, as a whole read does
        raise
    return ImportedFile(str(path), "generic", items, index=index)


def read_generic(path: Path) -> ImportedFile:
    """The items of a generic-layout file, one per line (a JSON Lines file streamed: module doc)."""
    head = json_lines(path).first_line()
    if head is None or not head.startswith("["):
        return _streamed(path)
    items = [_item(row, where, path, line) for where, line, row in json_rows(path, read_text(path))]
    return ImportedFile(str(path), "generic", items)
