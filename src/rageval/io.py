"""The one file writer of rageval's outputs: atomic, never through a symbolic link, with the user's umask.

Every file a run, ``rescore`` or ``report`` writes (cached records,
``records.jsonl``, ``manifest.json``, tables, plots, ``report.html``,
``report.json``) goes through :func:`write_bytes_atomic`:

* **Atomic**: the bytes go to a temporary file in the same folder, are
  ``fsync``'ed, and the file is renamed over the target, so a kill or a full
  disk leaves the old file or the new one, never half of one (the temporary
  file is removed on any error).
* **Never through a link**: the rename replaces whatever is at the target path
  — a symbolic link placed there is replaced by the new file, never followed,
  so its target is not touched.  With ``root=``, every folder between ``root``
  and the file must be a real folder, not a link (``UnsafePathError``).  The
  commands refuse a link anywhere rageval writes in a run directory before they
  write at all (:mod:`rageval.rundir.claim`); this is the writer's own guard.
* **Permissions**: the file gets ``0666`` minus the process umask (``0644``
  with the usual umask ``022``), as ``open()`` would give; ``tempfile`` alone
  gives ``0600``.

``durable=False`` skips the ``fsync``: the rename is still atomic for a killed
process (the kernel keeps what was written); only an operating-system crash
could then leave a truncated file, which a reader that checks what it reads
(the record cache quarantines and recomputes it) must tolerate.  ``rageval
score`` writes its per-record cache files this way (one ``fsync`` per record
cost more than scoring it with the lexical judge: ``bench/bench_score.py``).

Errors are ``OSError`` s whose ``filename`` is the target path (a full disk:
``ENOSPC``; a read-only folder: ``EROFS``/``EACCES``); the CLI turns them into
one line with the fix.

>>> import tempfile, stat
>>> d = Path(tempfile.mkdtemp())
>>> write_text_atomic(d / "a.txt", "hello\\n")
>>> (d / "a.txt").read_text(), oct(stat.S_IMODE((d / "a.txt").stat().st_mode)) == oct(0o666 & ~current_umask())
('hello\\n', True)
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "atomic_file",
    "TEMP_NAME",
    "remove_stale_temps",
    "remove_temps",
    "UnsafePathError",
    "check_folders",
    "move_aside",
    "current_umask",
    "dump_json_line",
    "json_text",
    "printable",
    "scrub_surrogates",
    "utf8",
    "write_bytes_atomic",
    "write_json_atomic",
    "write_text_atomic",
]


class UnsafePathError(OSError):
    """A folder between the output root and a file is a symbolic link (rageval never writes through one)."""


def current_umask() -> int:
    """The process umask, read without changing it where the system says it (Linux), else set and restored."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # pragma: no cover - not Linux
    os.umask(mask)  # pragma: no cover
    return mask  # pragma: no cover


def check_folders(parent: str | os.PathLike, root: str | os.PathLike) -> None:
    """Refuse a symbolic link among the folders from ``root`` (excluded) down to ``parent`` (included)."""
    parent, root = Path(parent), Path(root)
    try:
        rel = parent.relative_to(root)
    except ValueError:
        raise UnsafePathError(f"{parent} is outside the output directory {root}") from None
    current = root
    for part in rel.parts:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return  # created below by mkdir, as a real folder
        if stat.S_ISLNK(st.st_mode):
            raise UnsafePathError(
                f"{current} is a symbolic link inside the output directory; remove it (rageval never writes "
                "through a link)"
            )


class _Writer:
    """The file :func:`atomic_file` yields: ``write(bytes)``, buffered up to 1 MiB, through ``os.write``."""

    def __init__(self, fd: int):
        self.fd, self.buf, self.written = fd, bytearray(), 0

    def write(self, data: bytes) -> None:
        self.buf += data
        self.written += len(data)
        if len(self.buf) >= 1 << 20:
            self.flush()

    def tell(self) -> int:
        """The bytes written so far (a writer of a format with offsets, Arrow's IPC file, asks)."""
        return self.written

    @property
    def closed(self) -> bool:
        """Open for the block's length (its file is :func:`atomic_file`'s to close; a file-like's reader asks)."""
        return False

    def flush(self) -> None:
        with memoryview(self.buf) as view:
            done = 0
            while done < len(view):
                done += os.write(self.fd, view[done:])
        self.buf.clear()


def move_aside(path: Path, dest: Path, root: Path) -> Path:
    """Move ``path`` to ``dest`` (a quarantine), never over an earlier file there (``dest.1``, ``dest.2``, … then)
    and through no link among ``dest``'s folders under ``root``; the path it went to."""
    check_folders(dest.parent, root)
    dest.parent.mkdir(parents=True, exist_ok=True)
    free, n = dest, 1
    while free.exists():
        free = dest.with_name(f"{dest.name}.{n}")
        n += 1
    os.replace(path, free)
    return free


@contextmanager
def atomic_file(
    path: str | os.PathLike, *, root: str | os.PathLike | None = None, durable: bool = True
) -> Iterator[_Writer]:
    """A file (its ``write(bytes)``) whose bytes replace ``path`` atomically when the block ends without an
    error (the temporary file removed otherwise), never following a link there; see the module doc.

    For a file written in pieces (``records.jsonl`` as a run's records are finished): what is written is not
    held in memory beyond a 1 MiB buffer, and a reader never sees half of it.
    """
    path = Path(path)
    if root is not None:
        check_folders(path.parent, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        out = _Writer(fd)
        yield out
        out.flush()
        os.fchmod(fd, 0o666 & ~current_umask())
        if durable:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException as err:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(err, OSError) and err.errno is not None and err.filename in (None, tmp):
            err.filename = str(path)
        raise


def write_bytes_atomic(
    path: str | os.PathLike, data: bytes, *, root: str | os.PathLike | None = None, durable: bool = True
) -> None:
    """Write ``data`` to ``path`` atomically, replacing (never following) a link there; see the module doc."""
    with atomic_file(path, root=root, durable=durable) as fh:
        fh.write(data)


#: what write_bytes_atomic's mkstemp names look like: ``.<name>.<8 characters>.tmp`` (``name``: the target's)
TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8}\.tmp$")


def remove_temps(entries: Iterable[os.DirEntry]) -> list[Path]:
    """Delete those of ``entries`` that are a writer's temporary file (:data:`TEMP_NAME`, a regular file, not
    a link); return them.  Call it only while holding the folder's writer lock: then no write is in flight, so
    every such file is a leftover of a killed process."""
    out: list[Path] = []
    for e in entries:
        if TEMP_NAME.match(str(e.name)) and e.is_file(follow_symlinks=False):
            try:
                os.unlink(e.path)
                out.append(Path(e.path))
            except FileNotFoundError:
                pass
    return out


def remove_stale_temps(folder: str | os.PathLike) -> list[Path]:
    """Delete the temporary files a killed writer left in ``folder`` (not recursive; :func:`remove_temps`)."""
    try:
        entries = list(os.scandir(os.fspath(folder)))
    except FileNotFoundError:
        return []
    return remove_temps(entries)


def write_text_atomic(
    path: str | os.PathLike, text: str, *, root: str | os.PathLike | None = None, durable: bool = True
) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically; see :func:`write_bytes_atomic`.  A lone
    surrogate in ``text`` (a path's byte that is not UTF-8, as ``os.fsdecode`` reads it) is written as an escape
    (:func:`printable`): the file is always UTF-8, never an encoding error."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = printable(text).encode("utf-8")
    write_bytes_atomic(path, data, root=root, durable=durable)


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(obj: Any, *, sort_keys: bool = True, indent: int | None = None, **options: Any) -> str:
    """``json.dumps(obj, ensure_ascii=False)`` that can always be encoded as UTF-8 and read by any JSON reader: a
    lone surrogate (``"\\ud800"``: valid JSON, not Unicode) is written as its ``\\uXXXX`` escape, so it reads back
    as it was; a NaN or an infinity (not JSON: a bare ``NaN`` breaks strict readers) is written as ``null``, what
    rageval writes for undefined.

    >>> json_text({"p": float("nan"), "q": [1.5, float("inf")]})
    '{"p": null, "q": [1.5, null]}'

    >>> lone = chr(0xD800)
    >>> json_text({"a": "é " + lone}) == '{"a": "é ' + chr(92) + 'ud800"}', json.loads(json_text([lone])) == [lone]
    (True, True)
    """
    strict = options.pop("allow_nan", None) is False  # the caller wants a NaN refused (a request payload)
    try:
        text = json.dumps(obj, sort_keys=sort_keys, ensure_ascii=False, indent=indent, allow_nan=False, **options)
    except ValueError:  # a NaN or an infinity: undefined, written as null (bare NaN is not JSON)
        if strict:
            raise
        text = json.dumps(_finite(obj), sort_keys=sort_keys, ensure_ascii=False, indent=indent, **options)
    return text if text.isascii() else _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _finite(obj: Any) -> Any:
    """``obj`` with every NaN and infinity replaced by None, containers copied (tuples become lists, as in JSON)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def scrub_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (a split pair joined), so it encodes as UTF-8.

    >>> scrub_surrogates("a" + chr(0xD800)) == "a" + chr(0xFFFD), scrub_surrogates(chr(0xD83D) + chr(0xDE00)) == "😀"
    (True, True)
    """
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def printable(text: str | os.PathLike) -> str:
    """``text`` (or a path) with each lone surrogate written as an escape, so it encodes as UTF-8 anywhere (JSON, HTML,
    the console): U+DC80 … U+DCFF, a byte of a file name that is not UTF-8 as ``os.fsdecode`` reads it, as that byte
    (``\\xff``, as ``ls`` shows it), any other as ``\\uXXXX``.  Text that encodes as UTF-8 is returned unchanged.

    >>> import os
    >>> printable(os.fsdecode(b"run\\xff/a.csv")), printable("caf\\xe9"), printable("a" + chr(0xD800))
    ('run\\\\xff/a.csv', 'café', 'a\\\\ud800')
    """
    text = os.fspath(text)
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(_escape, text)


def utf8(text: str) -> bytes:
    """``text`` as UTF-8 bytes for a hash, lone surrogates kept distinct (``surrogatepass``), never an error."""
    return text.encode("utf-8", "surrogatepass")


def dump_json_line(obj: Any) -> str:
    """The canonical JSON of rageval's files: sorted keys, UTF-8 kept (lone surrogates escaped: :func:`json_text`)."""
    return json_text(obj)


def write_json_atomic(
    path: str | os.PathLike,
    obj: Any,
    *,
    indent: int | None = None,
    root: str | os.PathLike | None = None,
    durable: bool = True,
) -> None:
    text = json_text(obj, indent=indent) + "\n"
    write_text_atomic(path, text, root=root, durable=durable)
