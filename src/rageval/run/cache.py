"""The record cache of a run directory: one JSON file per (setting, question), keyed by an input hash.

``cache/records/<setting>/<question>.json`` holds ``{"input_hash", "record"}``,
written atomically the moment a record is finished, so a killed run loses at
most the batch in flight.  A record is reused only when its input hash matches
(:func:`rageval.suite.plan.record_hash`).  ``records.jsonl`` is assembled from
the cache alone, in suite setting order then dataset question order, so a
resumed run ends with the same bytes.

What a rerun reuses (docs/suites.md#statuses): a record whose status is
*transient* (:data:`TRANSIENT_STATUSES`: ``reader_error``, ``judge_error`` — an
outage, a timeout) is computed again unless the run is told not to retry
failures; every other status (``ok``, ``budget_check``, ``prompt_overflow``,
``compressor_error``, ``unavailable``) is deterministic and reused.

A cache file that cannot be read — not UTF-8, not JSON, ``null``, or not the
``{"input_hash", "record"}`` shape of a valid record — is never trusted and never
fatal: it is moved to ``cache/quarantine/records/`` (named in a one-line warning
on the ``rageval`` logger, counted in :attr:`RecordCache.quarantined`) and the
record is computed again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from rageval.errors import RunFailure
from rageval.io import check_folders, dump_json_line, write_json_atomic, write_text_atomic
from rageval.types import Record

__all__ = ["CacheChanged", "CacheTally", "RecordCache", "TRANSIENT_STATUSES", "mark_run", "safe_name"]

#: Statuses a rerun computes again (by default): the failure may not happen twice.
TRANSIENT_STATUSES = frozenset({"reader_error", "judge_error"})

log = logging.getLogger("rageval")


class CacheChanged(RunFailure):
    """A cache file changed under the run (it holds a record of other inputs): refused, never mixed in."""


def mark_run(out_dir: Path, name: str, suite_hash: str | None) -> None:
    """``cache/suite.json``: the run that owns ``out_dir`` (rageval's marker, :mod:`rageval.run.outputs`)."""
    write_json_atomic(
        Path(out_dir) / "cache" / "suite.json", {"suite": {"name": name, "hash": suite_hash}}, root=out_dir
    )


def safe_name(name: str) -> str:
    """A file-system-safe, collision-free name for a setting or question id."""
    return re.sub(r"[^A-Za-z0-9._@-]+", "_", name)[:80] + "-" + hashlib.sha1(name.encode()).hexdigest()[:8]


class CacheTally:
    """What a run holds: records by status (reused and computed), the records over their budget per setting,
    and what it took from the cache (reused records, transient failures sent back to compute)."""

    def __init__(self) -> None:
        self.status_counts: dict[str, int] = {}
        #: setting -> {"records", "ok", "tokens", "max"}: the records whose context is over its budget (the
        #: record's ``extra["budget_overshoot"]``): how many, how many of them ok (a best-effort compressor's
        #: misses), the tokens over in all and at most
        self.over_budget: dict[str, dict[str, int]] = {}
        self.reused = 0
        self.retried = 0

    def reuse(self, cache: RecordCache, setting: str, question_id: str, input_hash: str, *, retry_failed: bool) -> bool:
        """True when the cached record of (setting, question) with this input hash is reused as it is.

        A cached transient failure (:data:`TRANSIENT_STATUSES`) is computed again when ``retry_failed``.
        """
        cached = cache.read(setting, question_id, input_hash)
        if cached is None:
            return False
        if retry_failed and cached.status in TRANSIENT_STATUSES:
            self.retried += 1  # a failure that may not happen twice: computed again
            return False
        self.reused += 1
        self.count(cached)
        return True

    def count(self, record: Record) -> None:
        """Count ``record`` (its status, and its overshoot when its context is over its budget)."""
        self.status_counts[record.status] = self.status_counts.get(record.status, 0) + 1
        over = (record.extra or {}).get("budget_overshoot")
        if over:
            c = self.over_budget.setdefault(record.setting.name, {"records": 0, "ok": 0, "tokens": 0, "max": 0})
            c["records"] += 1
            c["ok"] += record.status == "ok"
            c["tokens"] += over
            c["max"] = max(c["max"], over)


class RecordCache:
    """The ``cache/`` folder of one run directory."""

    def __init__(self, out_dir: Path, *, durable: bool = True):
        self.out_dir = Path(out_dir)
        self.durable = durable  # False: record files renamed into place without fsync (rageval.io)
        self.root = self.out_dir / "cache" / "records"
        self.quarantine_root = self.out_dir / "cache" / "quarantine" / "records"
        self.quarantined: list[Path] = []  # where each unreadable file was moved, in this invocation

    def path(self, setting: str, question_id: str) -> Path:
        return self.root / safe_name(setting) / f"{safe_name(question_id)}.json"

    def read(self, setting: str, question_id: str, input_hash: str) -> Record | None:
        """The cached record if its input hash matches, else None.

        A file that cannot be read as a record is quarantined (see the module docstring) and None returned.
        """
        path = self.path(setting, question_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            self._quarantine(path, "a folder, not a file")
            return None
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as err:
            self._quarantine(path, f"not UTF-8 (byte {err.start})")
            return None
        except ValueError as err:
            self._quarantine(path, f"not JSON ({err})")
            return None
        except RecursionError:
            self._quarantine(path, "JSON nested deeper than Python parses")
            return None
        if not isinstance(data, dict) or not isinstance(data.get("record"), dict):
            self._quarantine(path, f"not a cached record (a JSON {type(data).__name__} without 'record')")
            return None
        if not isinstance(data.get("input_hash"), str):
            self._quarantine(path, "not a cached record (no 'input_hash' string)")
            return None
        if data["input_hash"] != input_hash:
            return None  # an older input: recomputed and overwritten, nothing wrong with the file
        try:
            rec = Record.from_dict(data["record"])
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
            self._quarantine(path, f"not a valid record ({type(err).__name__}: {str(err)[:120]})")
            return None
        if rec.question_id != question_id or rec.setting.name != setting:
            self._quarantine(path, f"holds question {rec.question_id!r} of setting {rec.setting.name!r}")
            return None
        if not isinstance(rec.metrics, dict) or not isinstance(rec.extra, dict):
            self._quarantine(path, "not a valid record ('metrics' and 'extra' must be objects)")
            return None
        return rec

    def _quarantine(self, path: Path, why: str) -> None:
        """Move an unreadable cache file aside (never overwriting an earlier one), warn once, count it."""
        rel = path.relative_to(self.root)
        dest = self.quarantine_root / rel
        check_folders(dest.parent, self.out_dir)  # no folder of the quarantine may be a link
        dest.parent.mkdir(parents=True, exist_ok=True)
        n = 1
        while dest.exists():
            dest = self.quarantine_root / rel.parent / f"{rel.name}.{n}"
            n += 1
        os.replace(path, dest)
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

    def write(self, setting: str, question_id: str, input_hash: str, record: Record) -> None:
        write_json_atomic(
            self.path(setting, question_id),
            {"input_hash": input_hash, "record": record.to_dict()},
            root=self.out_dir,  # no folder of the cache may be a link placed in the run directory
            durable=self.durable,
        )

    def mark_suite(self, name: str, suite_hash: str) -> None:
        mark_run(self.out_dir, name, suite_hash)

    def assemble(
        self,
        settings: Iterable[str],
        question_ids: list[str],
        *,
        present: Callable[[str, str], bool] | None = None,
        expected: Mapping[tuple[str, str], str] | None = None,
    ) -> int:
        """Write ``records.jsonl`` from the cache; return the number of records.

        ``present(setting, question_id)`` says which pairs have a record (default: every pair; ``rageval score``
        passes its inputs' pairs, a question missing from a setting being counted and listed by the caller).
        ``expected[(setting, question_id)]``: the input hash of the current suite's record; a cache file
        holding any other record (written by another process meanwhile) stops the assembly with
        :class:`CacheChanged` instead of entering ``records.jsonl``, so two suites' records are never mixed.
        """
        lines = []
        for name in settings:
            for qid in question_ids:
                if present is not None and not present(name, qid):
                    continue
                path = self.path(name, qid)
                try:
                    data = json.loads(path.read_bytes().decode("utf-8"))
                    record, found = data["record"], data.get("input_hash")
                except (OSError, ValueError, KeyError, TypeError) as err:
                    if expected is None:
                        raise
                    raise CacheChanged(self._changed(path, f"unreadable ({type(err).__name__})")) from None
                if expected is not None and found != expected.get((name, qid)):
                    raise CacheChanged(self._changed(path, "holds a record of other inputs"))
                lines.append(dump_json_line(record))
        write_text_atomic(self.out_dir / "records.jsonl", "\n".join(lines) + "\n", root=self.out_dir)
        return len(lines)
