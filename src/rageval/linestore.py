"""Lines of a JSON Lines file kept by their place, read back one by one and checked (:class:`KeptLines`).

A first pass over a file (:class:`~rageval.infiles.JsonLines`) keeps of each line it will need again only its
byte offset, its length, its line number and an 8-byte BLAKE2b digest of its bytes: 28 bytes a line, however long
the line.  Reading line ``i`` back gives its text when its bytes are still those the first pass read, else None:
the file was edited or replaced meanwhile, and the caller says so in its own words.  ``rageval score`` keeps a
generic JSONL input's lines so (:class:`~rageval.data.formats.generic.StreamedItems`), and ``rageval rescore`` a
run's records.  ``digests=False`` keeps no digest (20 bytes a line; a line read back is then checked by its length
alone): the report's view of ``records.jsonl`` (:class:`~rageval.report.load.Records`), which checks the whole
file's size, time and inode instead, so that a pass over a million records does not hash them.

A memory device, not a speed trick (docs/architecture.md, "Speed tricks"): holding the lines instead raised a
10,000-record ``rageval score``'s peak RSS from 342 MB to 415 MB, at the same time (``bench/bench_tricks.py``).

>>> import tempfile
>>> from pathlib import Path
>>> from rageval.infiles import JsonLines
>>> p = Path(tempfile.mkdtemp()) / "a.jsonl"
>>> _ = p.write_bytes(b'{"q": 1}\\n\\n{"q": 2}\\n')
>>> kept = KeptLines(JsonLines(p))
>>> for lineno, offset, raw, _ in kept.source:
...     kept.add(lineno, offset, raw)
>>> len(kept), kept.lineno(1), kept.text(1)
(2, 3, '{"q": 2}')
>>> _ = p.write_bytes(b'{"q": 1}\\n\\n{"q": 3}\\n')
>>> kept.text(1) is None  # the same length, other bytes
True
>>> kept.close()
"""

from __future__ import annotations

import hashlib
import os
import weakref
from array import array
from collections.abc import Iterator
from typing import Any, Protocol

__all__ = ["KeptLines", "LineSource"]


class LineSource(Protocol):
    """What :class:`KeptLines` reads: a :class:`~rageval.infiles.JsonLines` file, or the lines a run's record store
    holds (:class:`~rageval.rundir.export.StoreLines`)."""

    name: str

    def __iter__(self) -> Iterator[tuple[int, int, bytes, Any]]: ...

    def open(self) -> int: ...

    def line_at(self, fd: int, lineno: int, offset: int, length: int) -> tuple[bytes, str]: ...


def _check(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=8).digest()


class KeptLines:
    """Some lines of ``source``, kept by their place and read back checked (module doc).  The file stays open
    from the first read back until :meth:`close` (or until this object is gone)."""

    def __init__(self, source: LineSource, *, digests: bool = True) -> None:
        self.source, self.digests = source, digests
        self.offsets, self.lengths, self.lines = array("q"), array("q"), array("I")
        self.checks = bytearray()
        self._fd = -1
        self._closer: Any = None

    def add(self, lineno: int, offset: int, raw: bytes) -> None:
        """Keep the line ``raw`` that iterating :attr:`source` gave at ``offset`` as line ``lineno``."""
        self.offsets.append(offset)
        self.lengths.append(len(raw))
        self.lines.append(lineno)
        if self.digests:
            self.checks += _check(raw)

    def __len__(self) -> int:
        return len(self.lines)

    def lineno(self, i: int) -> int:
        """The line number of the ``i``-th line kept."""
        return self.lines[i]

    def text(self, i: int) -> str | None:
        """The ``i``-th line kept, read again (its text without the line end); None when its bytes are not those
        :meth:`add` was given (without digests: not as many)."""
        if self._fd < 0:
            self._fd = self.source.open()
            self._closer = weakref.finalize(self, os.close, self._fd)
        length = self.lengths[i]
        raw, text = self.source.line_at(self._fd, self.lines[i], self.offsets[i], length)
        if len(raw) != length or (self.digests and _check(raw) != self.checks[8 * i : 8 * i + 8]):
            return None
        return text

    def close(self) -> None:
        """Close the file (read back again, it opens again)."""
        if self._closer is not None:
            self._closer()
            self._closer, self._fd = None, -1
