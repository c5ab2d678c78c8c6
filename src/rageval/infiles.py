"""The one reader of the files a user hands rageval: JSON, JSON Lines and CSV, bounded and exact.

Every input path goes through it — a suite's ``dataset.path``, the files ``rageval score``
reads, a ``saved`` reader's answers, ``rageval calibrate --data`` (and ``--format
alce-human``), a replay judge's file, and ``records.jsonl`` read back by ``rescore``,
``report`` and ``audit``:

* **Regular files only** (:func:`read_bytes`): a FIFO, a device (``/dev/zero``), a socket
  or a folder is refused in one line naming the path, without blocking (the file is
  opened ``O_NONBLOCK`` and checked with ``fstat`` before a byte is read).
* **A size limit**: at most :func:`max_input_bytes` bytes (1 GiB; the environment
  variable ``RAGEVAL_MAX_INPUT_BYTES`` sets another, in bytes); a larger file is refused
  before it is read, and a file growing past the limit while read is refused too.  A JSON Lines
  file read line by line (:class:`JsonLines`: ``rageval score``'s generic JSONL) is never held
  whole: there the limit applies to each line (a longer one is an error naming it), not the file.
  The limits live in :mod:`rageval.limits`, with the limit of one CSV cell (below).
* **UTF-8**, a leading byte-order mark dropped (Excel's CSV); other bytes are an error
  naming the line.
* **Lines end at "\\n"** (a "\\r" before it dropped) and nowhere else: U+2028, U+2029,
  U+0085, form feeds and the other characters ``str.splitlines`` breaks at stay inside
  a JSON string or a CSV cell, as JSON and CSV allow (:func:`split_lines`).
* **JSON Lines line by line** (:class:`JsonLines`): :func:`read_json_lines`' lines, values and errors,
  each line with its byte offset and bytes, to be read again (:meth:`JsonLines.line_at`), not kept.
* **JSON** (:func:`loads`): a duplicate key in one object, nesting deeper than
  :data:`MAX_DEPTH` and a number of more than 4,300 digits (Python's limit) are errors
  naming the file and the line; never a ``RecursionError`` traceback.
* **CSV** (:func:`read_csv`): ``csv`` over the text with ``newline=""`` (quoted cells may
  hold new lines, and a U+2028 stays in its cell), a column named twice and
  a row with more cells than the header are errors naming the line (unnamed columns, such as
  pandas' index, are kept).  A cell longer than :data:`~rageval.limits.CELL_CHARS` (16 Mi characters;
  ``RAGEVAL_MAX_CELL_CHARS`` sets another) is an error naming its row's line, raised as soon as the
  reader passes the limit: the cell is never built (the text of the file, bounded by its own limit, is read).
* **List cells** (:func:`list_cell`): a CSV cell holding a list, as the writers write one — a JSON
  list, a Python list (pandas' ``to_csv``) or numpy's text of an array (Hugging Face
  ``Dataset.to_csv``: ``['a' 'b']``, no commas, lines broken inside the brackets); a cell that
  looks like a list and reads as none of them, mixes commas with juxtaposed strings, or was
  shortened by numpy (``...``) is an error, never items silently joined.

Errors are :class:`InputFileError` (a :class:`~rageval.errors.ConfigError`: the CLI prints
one line and exits with 2), or the class a caller passes as ``error``.

>>> import tempfile
>>> from pathlib import Path
>>> p = Path(tempfile.mkdtemp()) / "a.jsonl"
>>> _ = p.write_bytes('{"q": "one\\u2028two"}\\r\\n\\n{"q": 2}\\n'.encode())
>>> list(read_json_lines(p))
[(1, {'q': 'one\\u2028two'}), (3, {'q': 2})]
>>> _ = p.write_text('{"q": 1, "q": 2}\\n')
>>> list(read_json_lines(p))
Traceback (most recent call last):
...
rageval.infiles.InputFileError: ...a.jsonl line 1: duplicate key 'q' in one JSON object; keep one
"""

from __future__ import annotations

import ast
import csv
import io
import json
import os
import re
import stat
import tokenize
from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import Any

from rageval.errors import ConfigError
from rageval.limits import CELL_CHARS, INPUT_BYTES

__all__ = [
    "MAX_DEPTH",
    "InputFileError",
    "JsonLines",
    "check_file",
    "decode",
    "iter_json_lines",
    "list_cell",
    "loads",
    "max_input_bytes",
    "read_bytes",
    "read_csv",
    "read_json",
    "read_json_lines",
    "read_text",
    "split_lines",
]

#: the default size limit of one input file (``RAGEVAL_MAX_INPUT_BYTES`` sets another: :data:`rageval.limits.INPUT_BYTES`)
DEFAULT_MAX_INPUT_BYTES = INPUT_BYTES.default
#: the deepest nesting of arrays and objects a JSON input may have (rageval's own formats need under 10)
MAX_DEPTH = 200

ErrorType = Callable[[str], Exception]


class InputFileError(ConfigError):
    """An input file rageval cannot read as given (not a regular file, too large, not UTF-8, not JSON, ...)."""


def max_input_bytes() -> int:
    """The size limit of one input file: ``RAGEVAL_MAX_INPUT_BYTES`` (a positive integer) or 1 GiB."""
    return INPUT_BYTES.value()


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"  # pragma: no cover - doors, whiteouts


def _too_large(path: str, limit: int, what: str) -> str:
    return (
        f"{path}: {what} is larger than the input limit of {limit:,} bytes; "
        "raise it with RAGEVAL_MAX_INPUT_BYTES=<bytes> if the file is right"
    )


def _open_checked(name: str, what: str, error: ErrorType, *, whole: bool = True) -> tuple[int, int]:
    """``(fd, limit)``: ``name`` opened without blocking, checked to be a regular file within the limit (``whole``:
    the file's size; else the caller reads it line by line and checks each line)."""
    limit = max_input_bytes()
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{name}: is {_kind(st.st_mode)}; {what} must be a regular file")
        if whole and st.st_size > limit:
            raise error(_too_large(name, limit, what))
    except BaseException:
        os.close(fd)
        raise
    return fd, limit


def check_file(path: str | os.PathLike, *, what: str = "the input file", error: ErrorType = InputFileError) -> None:
    """Refuse ``path`` unless it is a regular file within the size limit, before another library reads it
    (Parquet); a missing file raises the ``OSError``."""
    fd, _ = _open_checked(os.fspath(path), what, error)
    os.close(fd)


def read_bytes(path: str | os.PathLike, *, what: str = "the input file", error: ErrorType = InputFileError) -> bytes:
    """The bytes of the regular file ``path``, at most :func:`max_input_bytes` (module doc); never blocks.

    A missing or unreadable file raises the ``OSError`` (``FileNotFoundError``, ...) naming it.
    """
    name = os.fspath(path)
    fd, limit = _open_checked(name, what, error)
    try:
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 24, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise error(_too_large(name, limit, what))
        return b"".join(chunks)
    finally:
        os.close(fd)


def decode(raw: bytes, path: str | os.PathLike, *, what: str = "the file", error: ErrorType = InputFileError) -> str:
    """``raw`` as UTF-8 (a leading byte-order mark dropped); an error naming the line of a bad byte."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        at = err.start + (3 if raw.startswith(_BOM) else 0)  # the decoder counts from after a byte-order mark
        raise error(_not_utf8(path, raw[:at].count(b"\n") + 1, raw[at], at, what)) from None


_BOM = b"\xef\xbb\xbf"


def _not_utf8(path: str | os.PathLike, line: int, byte: int, offset: int, what: str) -> str:
    return f"{os.fspath(path)} line {line}: not UTF-8 text (byte 0x{byte:02x} at offset {offset}); save {what} as UTF-8"


def _decode_line(raw: bytes, name: str, lineno: int, offset: int, what: str, error: ErrorType) -> str:
    """Line ``lineno``'s bytes (from byte ``offset`` of the file) as the text :func:`decode` and :func:`split_lines`
    make of it (its line end dropped; at offset 0 a byte-order mark), with :func:`decode`'s error."""
    try:
        text = raw.decode("utf-8-sig" if offset == 0 else "utf-8")
    except UnicodeDecodeError as err:
        at = err.start + (3 if offset == 0 and raw.startswith(_BOM) else 0)
        raise error(_not_utf8(name, lineno, raw[at], offset + at, what)) from None
    return text.removesuffix("\n").removesuffix("\r")


def read_text(path: str | os.PathLike, *, what: str = "the input file", error: ErrorType = InputFileError) -> str:
    """The UTF-8 text of the regular file ``path`` (:func:`read_bytes`, :func:`decode`)."""
    return decode(read_bytes(path, what=what, error=error), path, what=what, error=error)


def split_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of ``text``: lines end at "\\n" only (a "\\r" before it dropped); the last one
    is left out when empty.

    >>> list(split_lines("a\\u2028b\\r\\nc\\x85d\\n"))
    [(1, 'a\\u2028b'), (2, 'c\\x85d')]
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, line in enumerate(lines, 1):
        yield i, line.removesuffix("\r")


class _DuplicateKey(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _too_deep(value: Any) -> bool:
    """Whether ``value`` (as JSON reads it: dicts, lists and scalars) nests arrays and objects deeper than
    :data:`MAX_DEPTH` (a level at a time: no recursion)."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return True
        inner: list[Any] = []
        for v in level:
            inner.extend([x for x in (v.values() if type(v) is dict else v) if type(x) is dict or type(x) is list])
        level = inner
    return False


def _deep(where: str) -> str:
    return f"{where}: JSON nested deeper than {MAX_DEPTH} levels of arrays and objects; no rageval input needs that"


def loads(
    text: str,
    where: str,
    *,
    error: ErrorType = InputFileError,
    line_of_doc: bool = False,
    syntax_error: ErrorType | None = None,
) -> Any:
    """``text`` as one JSON value; every failure an ``error`` whose message starts with ``where``.

    ``line_of_doc``: ``text`` is a whole file, so a syntax error names its line (``where line N``);
    ``syntax_error``: the error raised for a syntax error, when the caller tries another reading then.
    """
    try:
        value = json.loads(text, object_pairs_hook=_pairs)
    except json.JSONDecodeError as e:
        at = f" line {e.lineno}" if line_of_doc else ""
        raise (syntax_error or error)(f"{where}{at}: not valid JSON ({e.msg} at column {e.colno})") from None
    except _DuplicateKey as e:
        raise error(f"{where}: duplicate key {e.args[0]!r} in one JSON object; keep one") from None
    except RecursionError:
        raise error(_deep(where)) from None
    except ValueError:  # Python's limit on the digits of an integer (4,300)
        raise error(f"{where}: a JSON number has more digits than Python reads (4,300); write it as a string") from None
    if _too_deep(value):
        raise error(_deep(where))
    return value


def read_json(path: str | os.PathLike, *, what: str = "the input file", error: ErrorType = InputFileError) -> Any:
    """The one JSON document of the regular file ``path``; errors name the file and the line."""
    return loads(read_text(path, what=what, error=error), os.fspath(path), error=error, line_of_doc=True)


def _blank(line: str) -> bool:
    return not line.strip(" \t\r\n")


def iter_json_lines(
    text: str, src: str, *, error: ErrorType = InputFileError, where: Callable[[str, int], str] | None = None
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of the JSON Lines ``text`` read from ``src``.

    ``where(src, lineno)`` names a line in messages (default ``"<src> line <n>"``).
    """
    name = where or (lambda s, n: f"{s} line {n}")
    for lineno, line in split_lines(text):
        if _blank(line):
            continue
        yield lineno, loads(line, name(src, lineno), error=error)


def read_json_lines(
    path: str | os.PathLike, *, what: str = "the input file", error: ErrorType = InputFileError
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of the JSON Lines file ``path`` (module doc)."""
    text = read_text(path, what=what, error=error)
    yield from iter_json_lines(text, os.fspath(path), error=error)


class JsonLines:
    """The JSON Lines file ``path`` read line by line, never whole (module doc): iterating it gives ``(line number,
    offset, bytes, value)`` of each non-blank line, the lines, values and errors of :func:`read_json_lines`, with
    each line's byte offset and bytes (its line end included) so that it can be read again (:meth:`line_at`).

    A line is at most :func:`max_input_bytes` bytes (the file is not limited).  A byte that is not UTF-8 is an
    error naming its line; when a caller fails on a line, :meth:`raise_undecodable` names such a byte further on
    first, as reading the whole file first would have.

    >>> import tempfile
    >>> from pathlib import Path
    >>> p = Path(tempfile.mkdtemp()) / "a.jsonl"
    >>> _ = p.write_bytes(b'{"q": 1}\\r\\n\\n{"q": 2}')
    >>> [(n, offset, value) for n, offset, _, value in JsonLines(p)]
    [(1, 0, {'q': 1}), (3, 11, {'q': 2})]
    """

    def __init__(self, path: str | os.PathLike, *, what: str = "the input file", error: ErrorType = InputFileError):
        self.path, self.what, self.error = path, what, error
        self.name = os.fspath(path)

    def _lines(self, start: int = 0, *, over: str = "line") -> Iterator[tuple[int, int, bytes, str]]:
        """``(line number, offset, bytes, text)`` of each line from byte ``start`` on; a line over the limit (besides
        its ``"\\n"``) is, before more of it is read, an error naming it (``over="file"``: naming the file, then
        too large to read whole as well; ``"stop"``: the end)."""
        fd, limit = _open_checked(self.name, self.what, self.error, whole=False)
        with os.fdopen(fd, "rb", buffering=1 << 20) as fh:
            lineno, offset = 0, 0
            while raw := fh.readline(limit + 1):
                lineno += 1
                if len(raw) > limit and not raw.endswith(b"\n"):
                    if over == "stop":
                        return
                    where = self.name if over == "file" else f"{self.name} line {lineno}"
                    raise self.error(_too_large(where, limit, self.what if over == "file" else "the line"))
                if offset >= start:
                    yield lineno, offset, raw, _decode_line(raw, self.name, lineno, offset, self.what, self.error)
                offset += len(raw)

    def __iter__(self) -> Iterator[tuple[int, int, bytes, Any]]:
        for lineno, offset, raw, line in self._lines():
            if not _blank(line):
                yield lineno, offset, raw, loads(line, f"{self.name} line {lineno}", error=self.error)

    def first_line(self) -> str | None:
        """The first line of the file's text with its leading white space dropped (``text.lstrip()`` up to its
        first ``"\\n"``), reading no further than that line; None when the file holds only white space."""
        for _, _, _, line in self._lines(over="file"):
            if line.lstrip():  # white space, U+2028 and the like included, as str.lstrip drops them
                return line.lstrip()
        return None

    def open(self) -> int:
        """A read descriptor of the file (checked to be a regular one, not its size) for :meth:`line_at`; the
        caller closes it."""
        return _open_checked(self.name, self.what, self.error, whole=False)[0]

    def line_at(self, fd: int, lineno: int, offset: int, length: int) -> tuple[bytes, str]:
        """``(bytes, text)`` of the line iterating gave at ``offset``, ``length`` bytes (fewer when the file shrank
        since: the caller compares), read from ``fd`` (:meth:`open`)."""
        raw = os.pread(fd, length, offset)
        return raw, _decode_line(raw, self.name, lineno, offset, self.what, self.error)

    def raise_undecodable(self, start: int = 0) -> None:
        """The error of the first byte that is not UTF-8 from byte ``start`` on, if there is one (up to a line over
        the limit, if any: that line is not read)."""
        for _ in self._lines(start, over="stop"):
            pass


def read_csv(
    path: str | os.PathLike, *, delimiter: str = ",", what: str = "the input file", error: ErrorType = InputFileError
) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """``(header, [(line number, row)])`` of the CSV (or TSV) file ``path``; a row's line is where it starts.

    A row with fewer cells than the header leaves the last columns out of its dict.
    """
    name = os.fspath(path)
    text = read_text(path, what=what, error=error)
    limit = CELL_CHARS.value()
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows: list[tuple[int, dict[str, str]]] = []
    header: list[str] | None = None
    start = 1
    previous = csv.field_size_limit(limit)  # the reader stops at the first character past it
    try:
        for cells in reader:
            if header is None:
                header = _header(cells, name, error)
            elif cells:
                if len(cells) > len(header):
                    raise error(
                        f"{name} line {start}: {len(cells)} cells but the header names {len(header)} columns; "
                        "quote the cells that hold the delimiter"
                    )
                rows.append((start, dict(zip(header, cells))))
            start = reader.line_num + 1
    except csv.Error as err:
        if str(err).startswith("field larger than field limit"):
            raise error(CELL_CHARS.refusal(f"{name} line {start}", "a cell")) from None
        raise error(f"{name} line {reader.line_num}: not valid CSV ({err})") from None
    finally:
        csv.field_size_limit(previous)
    if header is None:
        raise error(f"{name}: the CSV file has no header row")
    return header, rows


def _header(cells: list[str], name: str, error: ErrorType) -> list[str]:
    seen: set[str] = set()
    for cell in cells:
        if cell and cell in seen:  # an unnamed column (pandas' index) may come more than once
            raise error(f"{name} line 1: the header names column {cell!r} twice; name each column once")
        seen.add(cell)
    return list(cells)


#: a cell that starts like a list of values: "[" then a quote, a number, a bracket, None/True/False or "]"
_LISTLIKE = re.compile(r"\[\s*(?:[-+\d.'\"\[\](){]|[bBuUrR]{1,2}['\"]|(?:None|True|False)\b)")
_VALUE_TOKENS = (tokenize.STRING, tokenize.NUMBER)
_SKIPPED_TOKENS = (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)


def _list_error(where: str, why: str) -> str:
    return (
        f"{where}: cannot be read unambiguously as a list ({why}); "
        "write it as a JSON list ([\"a\", \"b\"]) or a Python list ('a', 'b' with commas)"
    )


def _tokens(text: str, where: str, error: ErrorType) -> list[tokenize.TokenInfo]:
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError) as err:  # an unterminated string or bracket
        why = err.args[0] if err.args else type(err).__name__
        raise error(_list_error(where, f"not Python or numpy text: {why}")) from None
    return [t for t in toks if t.type not in _SKIPPED_TOKENS]


def _literal(text: str, where: str, error: ErrorType) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError) as err:
        raise error(_list_error(where, f"not a literal: {type(err).__name__}")) from None


def list_cell(text: str, where: str, *, error: ErrorType = InputFileError) -> list[Any] | None:
    """The items of a list-valued CSV cell ``text`` (module doc), or ``None`` when the cell is plain text.

    A cell is a list when it starts with ``[`` followed by a value (a quote, a number, a bracket, ...)
    and ends with ``]``; it is read as JSON, else as a Python list, else as numpy's text of an array
    (values separated by blanks and line breaks, each a Python literal).  Juxtaposed strings inside a
    Python list (``['a' 'b', 'c']``, which Python would join), numpy's ``...`` and anything else that
    does not read are errors starting with ``where``.

    >>> list_cell("['a' 'b'\\n 'c']", "row 1")
    ['a', 'b', 'c']
    >>> list_cell('["a", "b"]', "row 1"), list_cell("['a', 'b']", "row 1"), list_cell("[citation needed]", "row 1")
    (['a', 'b'], ['a', 'b'], None)
    >>> list_cell("['a' 'b', 'c']", "row 1")
    Traceback (most recent call last):
    ...
    rageval.infiles.InputFileError: row 1: cannot be read unambiguously as a list (strings side by side ...
    """
    s = text.strip()
    if not (s.endswith("]") and _LISTLIKE.match(s)):
        return None
    try:
        value = json.loads(s, object_pairs_hook=_pairs)
        if isinstance(value, list):
            return value
    except json.JSONDecodeError:
        pass
    except _DuplicateKey as err:
        raise error(f"{where}: duplicate key {err.args[0]!r} in one JSON object; keep one") from None
    except (RecursionError, ValueError):  # nested too deep, too many digits: in the JSON reader's words
        loads(s, where, error=error)
    toks = _tokens(s, where, error)
    inner = toks[1:-1]
    if any(t.type == tokenize.OP and t.string == "..." for t in inner):
        raise error(_list_error(where, "numpy shortened the array with '...': items are missing"))
    side_by_side = any(a.type in _VALUE_TOKENS and b.type in _VALUE_TOKENS for a, b in pairwise(inner))
    if side_by_side:
        if all(t.type in _VALUE_TOKENS for t in inner):  # numpy's text of a 1-d array: ['a' 'b']
            return [_literal(t.string, where, error) for t in inner]
        raise error(_list_error(where, "strings side by side mixed with commas or brackets, which Python would join"))
    value = _literal(s, where, error)
    if not isinstance(value, list):  # pragma: no cover - a "[...]" literal is a list
        raise error(_list_error(where, f"a {type(value).__name__}, not a list"))
    return value
