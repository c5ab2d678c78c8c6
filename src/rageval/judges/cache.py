"""The judges' disk cache: one sqlite file per judge id, keyed by :func:`pair_key`.

:class:`~rageval.judges.base.JudgeRunner` answers what it can from here before
running its judge and stores every batch it runs, each batch committed in its own
transaction, so a killed process loses at most the batch in flight.

Schema: table ``judgements(key TEXT PRIMARY KEY, prob REAL NOT NULL)`` holds
probabilities, exactly as before abstentions existed, and table
``abstentions(key TEXT PRIMARY KEY)`` holds the keys answered NaN (sqlite
would store NaN as NULL, which that column refuses).  A pair is in at most one
of the two.  New files create both tables ``WITHOUT ROWID`` (sqlite 3.8.2 or
later; same columns, same SQL): the key is stored once, in the table's b-tree,
not again in a primary-key index, so the 22,000 rows of a 2,000-record
benchmark run take 1.9 MB (89 bytes a row), not 3.6 MB (164).  The key stays
the 64-character hex text: a 32-byte BLOB key would take about 53 bytes a row,
but a reader that knows the text keys would find nothing in the file.  Other
page sizes save at most 1%, so sqlite's default stays.  Older cache files are
read and written as they are, never rewritten (rowid tables; the second table
is added, empty, ``WITHOUT ROWID``); a reader that knows only ``judgements``
sees an abstention as a miss and scores the pair again, never as a probability.

A cache file sqlite cannot read (not a database, a malformed image) is moved to ``quarantine/``
beside it with a one-line warning and rebuilt empty (:attr:`DiskCache.rebuilt`
counts it); it never stops a run.  A symbolic link at the cache file, at one of
its ``-wal``/``-shm``/``-journal`` companions or at ``quarantine/`` is refused
(:class:`~rageval.io.UnsafePathError`, one line): sqlite would follow it and add
rageval's tables to whatever database it names.  Any other sqlite error (the file
locked past the 60 s busy timeout, read-only, the disk full, a file-size limit, a
folder that cannot be written) stops the run with :class:`JudgeCacheError`, one line
naming the file, sqlite's words and the fix (exit 1): the records computed so far are kept.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import math
import os
import sqlite3
import stat
import threading
from pathlib import Path

from rageval.errors import RunFailure
from rageval.io import UnsafePathError, utf8

__all__ = ["DiskCache", "JudgeCacheError", "cache_file", "is_corruption", "pair_key", "refuse_links"]


def pair_key(judge_id: str, premise: str, hypothesis: str) -> str:
    """The cache key of one pair: sha256 over judge id, premise and hypothesis (length-prefixed)."""
    h = hashlib.sha256()
    for part in (judge_id, premise, hypothesis):
        b = utf8(part)
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def cache_file(cache_dir: str | os.PathLike, judge_id: str) -> Path:
    """The cache file of ``judge_id`` in ``cache_dir``: ``judge-<first 16 hex of sha256(judge id)>.sqlite``."""
    safe = hashlib.sha256(utf8(judge_id)).hexdigest()[:16]
    return Path(cache_dir) / f"judge-{safe}.sqlite"


_COMPANIONS = ("-wal", "-shm", "-journal")


def refuse_links(path: Path) -> None:
    """Refuse a symbolic link (or anything but a file) at the cache file or one of sqlite's companion files."""
    for p in [path] + [path.with_name(path.name + s) for s in _COMPANIONS]:
        try:
            mode = os.lstat(p).st_mode
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(mode):
            what = "a symbolic link" if stat.S_ISLNK(mode) else "not a file"
            raise UnsafePathError(
                f"{p} is {what}; remove it (rageval never opens a judge cache through a link: sqlite would write "
                "into the database it names)"
            )


_CORRUPT_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB (primary codes)


def is_corruption(err: sqlite3.DatabaseError) -> bool:
    """True when sqlite says the file itself is broken (not locked, not read-only, not missing)."""
    code = getattr(err, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _CORRUPT_CODES
    msg = str(err).lower()
    return "not a database" in msg or "malformed" in msg


class JudgeCacheError(RunFailure):
    """The judge cache cannot be used for a reason other than a broken file (module doc): exit 1, one line."""


#: sqlite primary result codes -> what to do (https://sqlite.org/rescode.html)
_FIXES = {
    5: "another process holds it past the 60 s busy timeout; wait for that run to finish or choose another --out",
    6: "another process holds it past the 60 s busy timeout; wait for that run to finish or choose another --out",
    8: "it is read-only; make it and its folder writable or choose another --out",
    10: "a disk I/O error (a full disk, a file-size limit or a failing device); free space or lift the limit, then rerun",
    13: "the disk is full; free space or choose another --out, then rerun (finished records are kept)",
    14: "it cannot be opened; check that its folder exists and is writable",
    23: "access was denied; check the permissions of the file and its folder",
}


def unusable(path: Path, err: sqlite3.Error) -> JudgeCacheError:
    """The one-line :class:`JudgeCacheError` for a sqlite error that is not corruption."""
    code = getattr(err, "sqlite_errorcode", None)
    fix = _FIXES.get(code & 0xFF) if isinstance(code, int) else None
    words = " ".join(str(err).split())[:200] or type(err).__name__
    return JudgeCacheError(f"judge cache {path}: {words}; {fix or 'check the file, or remove it to judge again'}")


def _create(path: Path) -> None:
    """Create the cache file (empty: an empty sqlite database) when it is missing, with ``0666`` minus the umask as
    every file rageval writes (sqlite itself creates a database ``0644``, whatever the umask); sqlite gives its
    ``-wal`` and ``-shm`` files the database's permissions.  Never through a link (``O_NOFOLLOW``)."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnsafePathError(
                f"{path} is a symbolic link; remove it (rageval never opens a judge cache through a link)"
            ) from None
        return  # a folder that cannot be written, ...: sqlite's own open says what, with the fix (JudgeCacheError)
    os.close(fd)


class DiskCache:
    """sqlite key -> probability or NaN; WAL journal, one transaction per stored batch.

    ``judgements(key, prob REAL NOT NULL)`` holds probabilities (the schema of
    cache files written before abstentions existed, read unchanged);
    ``abstentions(key)`` holds the keys answered NaN.  :meth:`put_many` keeps a
    key in at most one of the two.  A new file's tables are ``WITHOUT ROWID``;
    an older file's rowid tables are used as they are.

    A file sqlite cannot read (not a database, a malformed image; checked with
    ``PRAGMA quick_check`` on opening, and on every read and write) is moved to
    ``quarantine/`` beside it with a one-line warning on the ``rageval`` logger and
    the cache starts empty (:attr:`rebuilt` counts it): its pairs are judged again.
    """

    #: seconds sqlite waits for another process's lock before the cache is :class:`JudgeCacheError`
    busy_timeout = 60.0

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        refuse_links(path)
        self.path = path
        self._lock = threading.Lock()
        self.rebuilt = 0
        self.quarantined: list[Path] = []
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as err:
            if not is_corruption(err):
                raise unusable(path, err) from None
            self._rebuild(err)
        except sqlite3.Error as err:
            raise unusable(path, err) from None

    def _open(self) -> sqlite3.Connection:
        _create(self.path)
        db = sqlite3.connect(str(self.path), timeout=self.busy_timeout, check_same_thread=False)
        try:
            with contextlib.suppress(sqlite3.OperationalError):
                db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS judgements (key TEXT PRIMARY KEY, prob REAL NOT NULL) WITHOUT ROWID")
            db.execute("CREATE TABLE IF NOT EXISTS abstentions (key TEXT PRIMARY KEY) WITHOUT ROWID")
            db.commit()
            (verdict,) = db.execute("PRAGMA quick_check(1)").fetchone()
            if verdict != "ok":
                raise sqlite3.DatabaseError(f"database disk image is malformed: {verdict}")
        except BaseException:
            db.close()
            raise
        return db

    def _rebuild(self, err: sqlite3.DatabaseError) -> None:
        """Move the broken file (and its -wal/-shm/-journal companions) aside, warn, start an empty cache."""
        db = getattr(self, "_db", None)
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()
        qdir = self.path.parent / "quarantine"
        if qdir.is_symlink():
            raise UnsafePathError(f"{qdir} is a symbolic link; remove it (rageval never moves a file through a link)")
        qdir.mkdir(parents=True, exist_ok=True)
        dest, n = qdir / self.path.name, 1
        while dest.exists():
            dest, n = qdir / f"{self.path.name}.{n}", n + 1
        if self.path.exists():
            os.replace(self.path, dest)
        for suffix in ("-wal", "-shm", "-journal"):
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                os.replace(side, dest.with_name(dest.name + suffix))
        self.quarantined.append(dest)
        self.rebuilt += 1
        logging.getLogger("rageval").warning(
            "rageval: warning: judge cache %s is unreadable (%s); moved to %s, rebuilding it (its pairs are judged again)",
            self.path,
            " ".join(str(err).split())[:200],
            dest,
        )
        try:
            self._db = self._open()
        except sqlite3.Error as fresh:
            raise unusable(self.path, fresh) from None

    def get_many(self, keys: list[str]) -> dict[str, float]:
        with self._lock:
            try:
                return self._get_many(keys)
            except sqlite3.DatabaseError as err:
                if not is_corruption(err):
                    raise unusable(self.path, err) from None
                self._rebuild(err)
                return {}
            except sqlite3.Error as err:
                raise unusable(self.path, err) from None

    def _get_many(self, keys: list[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for (k,) in self._db.execute(f"SELECT key FROM abstentions WHERE key IN ({marks})", chunk):
                out[k] = math.nan
            for k, p in self._db.execute(f"SELECT key, prob FROM judgements WHERE key IN ({marks})", chunk):
                out[k] = float(p)
        return out

    def put_many(self, items: list[tuple[str, float]]) -> None:
        with self._lock:
            try:
                self._put_many(items)
            except sqlite3.DatabaseError as err:
                if not is_corruption(err):
                    raise unusable(self.path, err) from None
                self._rebuild(err)
                self._put_many(items)
            except sqlite3.Error as err:
                raise unusable(self.path, err) from None

    def _put_many(self, items: list[tuple[str, float]]) -> None:
        decided = [(k, p) for k, p in items if not math.isnan(p)]
        abstained = [(k,) for k, p in items if math.isnan(p)]
        with self._db:
            if decided:
                self._db.executemany("INSERT OR REPLACE INTO judgements (key, prob) VALUES (?, ?)", decided)
                self._db.executemany("DELETE FROM abstentions WHERE key = ?", [(k,) for k, _ in decided])
            if abstained:
                self._db.executemany("INSERT OR REPLACE INTO abstentions (key) VALUES (?)", abstained)
                self._db.executemany("DELETE FROM judgements WHERE key = ?", abstained)

    def close(self) -> None:
        with self._lock:
            self._db.close()
