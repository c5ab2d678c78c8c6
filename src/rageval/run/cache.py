"""The record cache of a run directory: one entry per (setting, question), keyed by an input hash.

The entries are rows of the run directory's record store
(:class:`~rageval.rundir.store.RecordStore`, ``cache/store/part-<n>.arrow``: typed
columns, the record's text one of them), for every command that computes records
(``rageval suite``, ``score``, ``rescore``, ``audit``: one record cache).  A record
is reused only when its input hash matches (:func:`rageval.suite.plan.record_hash`).

A part is written when a batch is done (:meth:`RecordCache.batch_done`) and at
least :data:`FLUSH_SECONDS` have passed since the last part (the first computed
batch's at once), and at the end of the run, however it ends; when the run
completes its parts are folded into one in the run's order.  A batch's records
are computed together (compressed, read in one reader call, scored in one call:
:mod:`rageval.run.execute`), so a killed run loses the batch in flight — as it
did when each record was a file of its own — and at most the batches finished in
the second before the kill (a run whose batches take longer than that writes a
part per batch).

The layouts before the store are still read, so a run directory written so
resumes: a setting's packs (``cache/records/<setting>/pack-<n>.jsonl``, an older
``rageval score``'s: :class:`Pack`) and per-record files
(``cache/records/<setting>/<question>.json``, ``{"input_hash", "record"}``, an
older suite's).  An entry read there is moved into the store; when the run
completes, the packs and the per-record files of the records it holds in the
store are removed.  A record whose setting or question cannot be a string
column (a lone surrogate: a byte of a file name that is not UTF-8) is still
written as a per-record file.

``records.jsonl`` is streamed (:class:`RecordsFile`): each record's JSON is
encoded once, written to its cache entry and to ``records.jsonl`` as soon as the
records before it in the run's order (suite setting order, then dataset question
order) are written, so no run holds its records in memory.  A reused record's
line is the exact text its cache entry holds, and a computed one's the text just
written there, so a resumed run ends with the same bytes as an uninterrupted one.
Records finished out of order wait in a bounded buffer; beyond it they are read
back from the cache when their turn comes, and an entry that another
process changed meanwhile stops the run (:class:`CacheChanged`) instead of
entering ``records.jsonl``.

What a rerun reuses (docs/suites.md#statuses): a record whose status is
*transient* (:data:`TRANSIENT_STATUSES`: ``reader_error``, ``judge_error`` — an
outage, a timeout) is computed again unless the run is told not to retry
failures; every other status (``ok``, ``budget_check``, ``prompt_overflow``,
``compressor_error``, ``unavailable``) is deterministic and reused.

An entry that cannot be read — not UTF-8, not JSON, ``null``, not the shape of a
valid record, or a record whose digest does not match its content (edited after
it was written, or written before records carried digests:
:mod:`rageval.rundir.records`) — is never trusted and never fatal: a per-record
file is moved to ``cache/quarantine/records/``, a part of the store to
``cache/quarantine/store/`` (named in a one-line warning on the ``rageval``
logger, counted in :attr:`RecordCache.quarantined`) and the record is computed
again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from pathlib import Path
from typing import Any

from rageval.errors import RunFailure
from rageval.io import check_folders, dump_json_line, move_aside, utf8, write_text_atomic
from rageval.run.packs import Pack
from rageval.rundir.claim import mark_run
from rageval.rundir.records import DIGEST, digest_problem, record_text, text_digest
from rageval.rundir.store import RecordStore
from rageval.types import Record

__all__ = ["CacheChanged", "CacheTally", "FLUSH_SECONDS", "RecordCache", "TRANSIENT_STATUSES", "safe_name"]

#: Statuses a rerun computes again (by default): the failure may not happen twice.
TRANSIENT_STATUSES = frozenset({"reader_error", "judge_error"})

#: a part of the store is written when a batch is done and this many seconds have passed since the last part (see the
#: module doc): a kill loses the batch in flight and at most this long of finished batches
FLUSH_SECONDS = 1.0

log = logging.getLogger("rageval")


class CacheChanged(RunFailure):
    """A cache file changed under the run (it holds a record of other inputs): refused, never mixed in."""


def safe_name(name: str) -> str:
    """A file-system-safe, collision-free name for a setting or question id (a lone surrogate, such as a byte of a
    file name that is not UTF-8, hashed as it is: never an error)."""
    return re.sub(r"[^A-Za-z0-9._@-]+", "_", name)[:80] + "-" + hashlib.sha1(utf8(name)).hexdigest()[:8]


class CacheTally:
    """What a run holds: records by status (reused and computed), the records over their budget per setting,
    and what it took from the cache (reused records, transient failures sent back to compute)."""

    def __init__(self) -> None:
        self.status_counts: dict[str, int] = {}
        #: setting -> {"records", "ok", "tokens", "max"}: the records whose context is over its budget (the
        #: record's ``extra["budget_overshoot"]``): how many, how many of them ok (a best-effort compressor's
        #: misses), the tokens over in all and at most
        self.over_budget: dict[str, dict[str, int]] = {}
        #: setting -> how many of its answers the reader cut at its token limit (``extra["truncated"]``)
        self.truncated: dict[str, int] = {}
        #: setting -> {"budget_check", "prompt_overflow"}: its records whose context is over the context limit
        #: (``extra["context_over_limit"]``) and those whose prompt the reader refused as too long
        self.context_failures: dict[str, dict[str, int]] = {}
        self.reused = 0
        self.retried = 0

    def reuse(
        self, cache: RecordCache, setting: str, question_id: str, input_hash: str, *, retry_failed: bool
    ) -> str | None:
        """The JSON text of the cached record of (setting, question) with this input hash when it is reused as it
        is, else None.

        A cached transient failure (:data:`TRANSIENT_STATUSES`) is computed again when ``retry_failed``.
        """
        entry = cache.read_entry(setting, question_id, input_hash)
        if entry is None:
            return None
        cached, text = entry
        if retry_failed and cached.status in TRANSIENT_STATUSES:
            self.retried += 1  # a failure that may not happen twice: computed again
            return None
        self.reused += 1
        self.count(cached)
        return text

    def count(self, record: Record) -> None:
        """Count ``record`` (its status, its overshoot when its context is over its budget, a truncated answer, a
        context over the context limit or a prompt too long for the reader)."""
        self.status_counts[record.status] = self.status_counts.get(record.status, 0) + 1
        over = (record.extra or {}).get("budget_overshoot")
        if over:
            c = self.over_budget.setdefault(record.setting.name, {"records": 0, "ok": 0, "tokens": 0, "max": 0})
            c["records"] += 1
            c["ok"] += record.status == "ok"
            c["tokens"] += over
            c["max"] = max(c["max"], over)
        if (record.extra or {}).get("truncated") is True:
            self.truncated[record.setting.name] = self.truncated.get(record.setting.name, 0) + 1
        limit = record.status == "budget_check" and bool((record.extra or {}).get("context_over_limit"))
        if limit or record.status == "prompt_overflow":
            c = self.context_failures.setdefault(record.setting.name, {"budget_check": 0, "prompt_overflow": 0})
            c[record.status] += 1


class RecordCache:
    """The ``cache/`` folder of one run directory."""

    def __init__(self, out_dir: Path, *, durable: bool = True):
        self.out_dir = Path(out_dir)
        self.durable = durable  # False: parts (and files) renamed into place without fsync (rageval.io)
        self.root = self.out_dir / "cache" / "records"  # the layouts before the store (and a key it cannot hold)
        self.quarantine_root = self.out_dir / "cache" / "quarantine" / "records"
        self.quarantined: list[Path] = []  # where each unreadable file was moved, in this invocation
        self._packs: dict[str, Pack] = {}  # an older layout's packs and per-record files, read only
        self._store: RecordStore | None = None
        self._flushed: float | None = None  # when the last part was written (time.monotonic)
        #: the per-record files (an older layout's) of the records this run holds in the store: removed when it completes
        self._stale: list[tuple[str, str]] = []

    def path(self, setting: str, question_id: str) -> Path:
        """The per-record file of (setting, question): the layout before the store, and a key it cannot hold."""
        return self.root / safe_name(setting) / f"{safe_name(question_id)}.json"

    def read(self, setting: str, question_id: str, input_hash: str) -> Record | None:
        """The cached record if its input hash matches, else None.

        A file that cannot be read as a record is quarantined (see the module docstring) and None returned.
        """
        entry = self.read_entry(setting, question_id, input_hash)
        return entry[0] if entry is not None else None

    def read_entry(self, setting: str, question_id: str, input_hash: str) -> tuple[Record, str] | None:
        """``(record, its JSON text)`` when the cached record's input hash matches, else None (see :meth:`read`).

        The text is the record's line of ``records.jsonl``: the very text the file holds after its input hash.
        """
        store = self.store
        row = store.read(setting, question_id)
        if row is not None:
            found_hash, digest, text = row
            if found_hash != input_hash:
                return None  # an older input: computed again
            checked = _record_of(text, question_id, setting)
            if isinstance(checked, str) or checked[1].get(DIGEST) != digest:
                store.drop(setting, question_id, checked if isinstance(checked, str) else "not its digest")
                return None
            return checked[0], text
        pack = self._pack(setting)
        found = pack.read(question_id)
        if found is not None:
            entry = _entry(found[0], question_id, setting, input_hash)
            if isinstance(entry, tuple):
                return self._moved(setting, question_id, input_hash, entry)
            if entry is not None:  # the line reads as JSON but not as this question's record
                pack.drop(question_id, entry)
            return None  # an older input, or a line not to trust: computed again
        if not pack.has_files:
            return None
        # a question the store and the packs lack: a per-record file (an older layout's, or a key the store cannot hold)
        path = self.path(setting, question_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            self._quarantine(path, "a folder, not a file")
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            self._quarantine(path, f"not UTF-8 (byte {err.start})")
            return None
        entry = _entry(text, question_id, setting, input_hash)
        if isinstance(entry, str):
            self._quarantine(path, entry)
            return None
        if entry is not None:
            return self._moved(setting, question_id, input_hash, entry)
        return entry

    def _moved(self, setting: str, question_id: str, input_hash: str, entry: tuple[Record, str]) -> tuple[Record, str]:
        """An entry of an older layout, added to the store (this run's record of it is the store's; a key the store
        cannot hold stays in its file)."""
        value = json.loads(entry[1])
        self.store.append(setting, question_id, input_hash, entry[1], value, value[DIGEST])
        return entry

    @property
    def store(self) -> RecordStore:
        """The run directory's record store, opened at first use."""
        if self._store is None:
            self._store = RecordStore(self.out_dir, durable=self.durable, quarantined=self.quarantined)
        return self._store

    def _quarantine(self, path: Path, why: str) -> None:
        """Move an unreadable cache file aside (never overwriting an earlier one), warn once, count it."""
        rel = path.relative_to(self.root)
        dest = move_aside(path, self.quarantine_root / rel, self.out_dir)
        self.quarantined.append(dest)
        log.warning(
            "rageval: warning: cache record %s is unreadable (%s); moved to %s, recomputing it",
            path.relative_to(self.out_dir),
            why,
            dest.relative_to(self.out_dir),
        )

    def _changed(self, path: Path, what: str) -> str:
        return (
            f"{path} {what}: another process wrote into {self.out_dir} during this run (one writer per run "
            "directory); rerun the suite (it recomputes what changed)"
        )

    def write(self, setting: str, question_id: str, input_hash: str, record: Record) -> str:
        """Write the record's cache entry; return its JSON text (one encoding: the entry's and the line's).

        A row of the record store, written with the next part (:meth:`batch_done`, :meth:`flush`); a setting or
        question that cannot be a string column (a lone surrogate) gets a per-record file instead, written
        atomically now.
        """
        value = record.to_dict()
        text = record_text(value)  # the record's JSON with its digest (the one writer of it)
        if self.store.append(setting, question_id, input_hash, text, value, text_digest(text)):
            return text
        entry = _entry_prefix(input_hash) + text + "}\n"  # = json_text({"input_hash", "record"}) + "\n"
        write_text_atomic(
            self.path(setting, question_id),
            entry,
            root=self.out_dir,  # no folder of the cache may be a link placed in the run directory
            durable=self.durable,
        )
        return text

    def batch_done(self) -> None:
        """A batch's records are written: a part of the store now when :data:`FLUSH_SECONDS` have passed since the
        last part, or none was written yet (the first records on disk soon); else they wait for a later batch's."""
        if self._flushed is None or time.monotonic() - self._flushed >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the entries written since the last part as a part of the store (one file; none when none)."""
        if self._store is not None and self._store.flush():
            self._flushed = time.monotonic()

    def written(self, setting: str, question_id: str) -> None:
        """The record went into ``records.jsonl`` (its next line): the store folds the run in that order."""
        store = self.store
        store.written(setting, question_id)
        if self._pack(setting).has_files and store.has(setting, question_id):
            self._stale.append((setting, question_id))  # its per-record file, an older layout's, is a second copy

    def close(self, *, complete: bool) -> None:
        """Flush the store; when the run ``complete`` d, fold its parts into one in the run's order and remove
        the packs of an older layout it read and the per-record files of the records it holds in the store."""
        try:
            if self._store is not None:
                self._store.close(complete=complete)
            if complete:
                for pack in self._packs.values():
                    pack.remove()
                self._remove_stale()
        finally:
            for pack in self._packs.values():
                pack.close()
            self._packs.clear()
            self._store = None

    def _remove_stale(self) -> None:
        """Remove the per-record files of an older layout whose records the store holds now, and the folders left
        empty (a file of another question stays: a later run that needs it reads it)."""
        folders = {self.path(s, q).parent for s, q in self._stale}
        for s, q in self._stale:
            self.path(s, q).unlink(missing_ok=True)
        self._stale = []
        for folder in (*sorted(folders), self.root):
            try:
                folder.rmdir()
            except OSError:  # not empty (another question's file, a pack of another setting), or gone
                pass

    def read_line(self, setting: str, question_id: str, input_hash: str) -> str:
        """The record text of a cache entry this run wrote or reused (:class:`RecordsFile` reading back what its
        buffer let go); :class:`CacheChanged` if another process changed it meanwhile."""
        if self.store.has(setting, question_id):
            row = self.store.read(setting, question_id)
            path = self.store.folder
            if row is None:
                raise CacheChanged(self._changed(path, f"lost the record of question {question_id!r}"))
            if row[0] != input_hash:
                raise CacheChanged(self._changed(path, "holds a record of other inputs"))
            try:
                value = json.loads(row[2])
            except (ValueError, RecursionError) as err:
                raise CacheChanged(self._changed(path, f"unreadable ({type(err).__name__})")) from None
            if not isinstance(value, dict) or digest_problem(value) is not None:
                raise CacheChanged(self._changed(path, "holds a record edited since it was written"))
            return row[2]
        path = self.path(setting, question_id)  # a per-record file (a key the store cannot hold)
        try:
            raw = path.read_bytes().decode("utf-8")
        except (OSError, ValueError) as err:
            raise CacheChanged(self._changed(path, f"unreadable ({type(err).__name__})")) from None
        try:
            data = json.loads(raw)
            record, found_hash = data["record"], data.get("input_hash")
        except (ValueError, KeyError, TypeError) as err:
            raise CacheChanged(self._changed(path, f"unreadable ({type(err).__name__})")) from None
        if found_hash != input_hash:
            raise CacheChanged(self._changed(path, "holds a record of other inputs"))
        if not isinstance(record, dict) or digest_problem(record) is not None:
            raise CacheChanged(self._changed(path, "holds a record edited since it was written"))
        return _record_text(raw, input_hash, record)

    def _pack(self, setting: str) -> Pack:
        pack = self._packs.get(setting)
        if pack is None:
            folder = self.root / safe_name(setting)
            check_folders(folder, self.out_dir)  # no folder of the cache may be a link placed in the run directory
            pack = self._packs[setting] = Pack(folder, self.out_dir)
        return pack

    def mark_suite(self, name: str, suite_hash: str) -> None:
        mark_run(self.out_dir, name, suite_hash)


def _entry(text: str, question_id: str, setting: str, input_hash: str) -> tuple[Record, str] | str | None:
    """A cache entry's text read: ``(record, its JSON text)``; None for an entry of an older input hash; else why
    it cannot be trusted (one sentence)."""
    try:
        data = json.loads(text)
    except ValueError as err:
        return f"not JSON ({err})"
    except RecursionError:
        return "JSON nested deeper than Python parses"
    if not isinstance(data, dict) or not isinstance(data.get("record"), dict):
        return f"not a cached record (a JSON {type(data).__name__} without 'record')"
    if not isinstance(data.get("input_hash"), str):
        return "not a cached record (no 'input_hash' string)"
    if data["input_hash"] != input_hash:
        return None  # an older input: recomputed and overwritten, nothing wrong with the entry
    checked = _checked(data["record"], question_id, setting)
    if isinstance(checked, str):
        return checked
    return checked, _record_text(text, input_hash, data["record"])


def _record_of(text: str, question_id: str, setting: str) -> tuple[Record, dict[str, Any]] | str:
    """A record's text (a row of the store): ``(record, its value)``, else why it cannot be trusted."""
    try:
        value = json.loads(text)
    except ValueError as err:
        return f"not JSON ({err})"
    except RecursionError:
        return "JSON nested deeper than Python parses"
    if not isinstance(value, dict):
        return f"not a record (a JSON {type(value).__name__})"
    checked = _checked(value, question_id, setting)
    return checked if isinstance(checked, str) else (checked, value)


def _checked(value: dict[str, Any], question_id: str, setting: str) -> Record | str:
    """The record of ``value`` when it is this question's and setting's, valid and as its digest says; else why
    not (one sentence)."""
    try:
        rec = Record.from_dict(value)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
        return f"not a valid record ({type(err).__name__}: {str(err)[:120]})"
    if rec.question_id != question_id or rec.setting.name != setting:
        return f"holds question {rec.question_id!r} of setting {rec.setting.name!r}"
    if not isinstance(rec.metrics, dict) or not isinstance(rec.extra, dict):
        return "not a valid record ('metrics' and 'extra' must be objects)"
    edited = digest_problem(value)
    if edited is not None:  # edited after it was written (or written before digests): computed again, never reused
        return f"not to trust: {edited}"
    return rec


def _entry_prefix(input_hash: str) -> str:
    return '{"input_hash": ' + dump_json_line(input_hash) + ', "record": '


def _record_text(raw: str, input_hash: str, record: Any) -> str:
    """The record's JSON within a cache file's text: the text after the input hash when the file is as
    :meth:`RecordCache.write` writes it, else (a file written otherwise) the record encoded again."""
    prefix = _entry_prefix(input_hash)
    if raw.startswith(prefix) and raw.endswith("}\n"):
        return raw[len(prefix) : -2]
    return dump_json_line(record)
