"""The record store of a run directory: each cached record as a row of typed columns, in Arrow IPC files.

``cache/store/part-<n>.arrow``: one file per flush (the record cache flushes when a batch is done, at most about
once a second: :mod:`rageval.run.cache`), written atomically (a temporary name, fsync'd when the cache is durable,
renamed), so a killed run keeps every part it wrote and never leaves half a part (a Parquet file killed before its
footer is unreadable: hence IPC files, one per flush).  Buffers are zstd-compressed.  The columns (:data:`BASE_FIELDS`, then the scalars):

* ``setting``, ``question_id``, ``input_hash`` (the record cache's key), ``status``, ``digest`` (strings);
* ``record``: the record's exact text, the line ``records.jsonl`` holds (:func:`rageval.rundir.records.record_text`),
  so a resumed run and ``rageval export RUN --format jsonl`` give the same bytes as the file;
* ``metrics.<name>``: one float64 column per scalar metric (null where undefined, absent or not a scalar; a bool
  counts 0/1), and ``context.achieved_ratio``, ``context.achieved_tokens``: what the report and the statistics
  read, without the record's JSON.

Reading is memory-mapped with column projection (:meth:`RecordStore.read`, :mod:`rageval.rundir.export`): a
reader decodes only the columns it asks for.  A completed run's parts are folded into one (:meth:`~RecordStore.fold`):
the run's records first, in the order of ``records.jsonl`` (the schema's ``rageval.run_rows`` says how many), then
those of questions it did not hold, as ``part-000001.arrow``.  ``records.jsonl`` is the run's record file unless
the run was written with ``--no-records-file``: then the folded part is, read as its lines
(:class:`~rageval.rundir.export.StoreLines`; docs/suites.md, the record store).

A part that cannot be read (truncated, not Arrow, not this schema) is never fatal and never trusted: it is moved
to ``cache/quarantine/store/`` with a one-line warning, counted, and its records are computed again.  A row found
unfit when it is read (its text not a record of this key, its digest not matching) is dropped and its record
computed again; its part is moved to the quarantine when the run ends (after the fold took the rows that were
read and checked).
"""

from __future__ import annotations

import logging
import math
import os
import re
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from rageval.io import atomic_file, check_folders, move_aside
from rageval.rundir.arrays import floats, ints, strings
from rageval.rundir.columns import metric_value

__all__ = [
    "BASE_FIELDS",
    "CONTEXT_FIELDS",
    "RUN_ROWS",
    "RecordStore",
    "TABLE_IDS",
    "open_part",
    "scalar_values",
    "schema_problem",
]

#: the id columns of an exported table, before its scalar columns
TABLE_IDS = ("setting", "question_id", "input_hash", "status")

log = logging.getLogger("rageval")

#: the string columns of every part, in this order
BASE_FIELDS = ("setting", "question_id", "input_hash", "status", "digest", "record")
#: the context's measures, float64 columns after the metrics
CONTEXT_FIELDS = ("context.achieved_ratio", "context.achieved_tokens")
METRIC_PREFIX = "metrics."
#: schema metadata of a folded part: its first n rows are the records of the run that folded it, in its order
RUN_ROWS = b"rageval.run_rows"
_FORMAT = {b"rageval.store": b"1"}
PART_NAME = re.compile(r"^part-(\d{6,})\.arrow$")
# one thread: Arrow keeps memory per thread (a 10,000-record score: 231 MB peak with threads, 202 without)
_OPTIONS = pa.ipc.IpcWriteOptions(compression="zstd", use_threads=False)
#: rows per batch of a folded part (a reader decodes a batch at a time: some megabytes of record text)
FOLD_ROWS = 512
#: a row's place: part << 40 | batch << 20 | row (each batch holds at most 2**20 rows)
_WRITTEN = 1 << 62  # in the index: the row went into this run's records.jsonl
_WHERE = _WRITTEN - 1


def scalar_values(record: Mapping[str, Any]) -> dict[str, float | None]:
    """The record's scalar columns: ``metrics.<name>`` per metric and :data:`CONTEXT_FIELDS`, None where undefined
    (None, NaN), absent or not a scalar."""
    out: dict[str, float | None] = {}
    metrics = record.get("metrics")
    if isinstance(metrics, Mapping):
        for k, v in metrics.items():
            out[METRIC_PREFIX + str(k)] = _scalar(v)
    ctx = record.get("context")
    ctx = ctx if isinstance(ctx, Mapping) else {}
    for name in CONTEXT_FIELDS:
        out[name] = _scalar(ctx.get(name.split(".", 1)[1]))
    return out


def _scalar(v: Any) -> float | None:
    try:
        f = metric_value(v)
    except TypeError:
        return None
    return None if math.isnan(f) else f


def part_schema(scalars: Sequence[str], metadata: Mapping[bytes, bytes] | None = None) -> pa.Schema:
    metrics = sorted(n for n in scalars if n.startswith(METRIC_PREFIX))
    fields = [pa.field(n, pa.string()) for n in BASE_FIELDS]
    fields += [pa.field(n, pa.float64()) for n in [*metrics, *CONTEXT_FIELDS]]
    return pa.schema(fields, metadata={**_FORMAT, **(metadata or {})})


def schema_problem(schema: pa.Schema) -> str | None:
    """Why ``schema`` is not a part's, None when it is."""
    names = schema.names
    if len(set(names)) != len(names):
        return "a column named twice"
    for n in BASE_FIELDS:
        if n not in names or schema.field(n).type != pa.string():
            return f"no string column {n!r}"
    for f in schema:
        if f.name in BASE_FIELDS:
            continue
        if not (f.name.startswith(METRIC_PREFIX) or f.name in CONTEXT_FIELDS) or f.type != pa.float64():
            return f"an unexpected column {f.name!r} ({f.type})"
    return None


def _encodable(*texts: str) -> bool:
    try:
        for t in texts:
            t.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a byte of a name that is not UTF-8)
        return False
    return True


def open_part(
    path: Path, fields: Sequence[str] | None = None, schema: pa.Schema | None = None
) -> pa.ipc.RecordBatchFileReader:
    """A part's reader, memory-mapped, decoding only ``fields`` (all when None; ``schema``: the part's, when known)."""
    source = pa.memory_map(os.fsencode(path))
    if fields is None:
        return pa.ipc.open_file(source, options=pa.ipc.IpcReadOptions(use_threads=False))
    schema = schema if schema is not None else pa.ipc.open_file(source).schema
    keep = [schema.get_field_index(f) for f in fields]
    return pa.ipc.open_file(source, options=pa.ipc.IpcReadOptions(included_fields=keep, use_threads=False))


class _Part:
    """One part file: its path and, once opened, its memory-mapped reader (projected columns decoded on demand)."""

    def __init__(self, number: int, path: Path):
        self.number, self.path = number, path
        self.flag: str | None = None  # why a row of it is unfit (moved to the quarantine when the run ends)
        self.schema: pa.Schema | None = None
        self.batch_rows: list[int] = []

    def reader(self, fields: Sequence[str] | None = None) -> pa.ipc.RecordBatchFileReader:
        return open_part(self.path, fields, self.schema)


class RecordStore:
    """The record store of one run directory (see the module doc): an index of ``(setting, question) -> row``
    (a dict per setting: some 80 bytes a record, its only per-record memory), this run's rows until they are
    flushed, and a few decoded batches."""

    def __init__(self, out_dir: Path, *, durable: bool, quarantined: list[Path] | None = None):
        self.out_dir, self.durable = Path(out_dir), durable
        self.folder = self.out_dir / "cache" / "store"
        self.quarantine_root = self.out_dir / "cache" / "quarantine" / "store"
        #: where each unreadable part was moved (the record cache's list, shared)
        self.quarantined: list[Path] = quarantined if quarantined is not None else []
        self.index: dict[str, dict[str, int]] = {}
        self.parts: dict[int, _Part] = {}
        self.order = array("q")  # the rows of this run's records.jsonl, in its order (:meth:`written`)
        self.complete_order = True  # every record of the run is in the store (False: one could not be)
        self._batches: OrderedDict[tuple[int, int], list[pa.Array]] = OrderedDict()
        self._pending: dict[str, list[Any]] = {n: [] for n in BASE_FIELDS}
        self._scalars: list[dict[str, float | None]] = []
        self._whole: tuple[tuple[int, int], pa.RecordBatch] | None = None  # the fold's last batch read
        if self.folder.is_dir():
            check_folders(self.folder, self.out_dir)
            numbered = sorted(
                (int(m.group(1)), e.name) for e in os.scandir(self.folder) if (m := PART_NAME.match(e.name))
            )
            for number, name in numbered:
                self._load(_Part(number, self.folder / name))
        self._new = max(self.parts, default=0) + 1  # this run's next part

    # -- loading

    def _load(self, part: _Part) -> None:
        try:
            reader = part.reader()
            why = schema_problem(reader.schema)
            if why is None:
                part.schema = reader.schema
                reader = part.reader(["setting", "question_id"])
                entries = []
                for b in range(reader.num_record_batches):
                    batch = reader.get_batch(b)
                    if batch.num_rows >= 1 << 20 or b >= 1 << 20:
                        raise ValueError("a batch too large")
                    settings, questions = batch.column(0), batch.column(1)
                    if settings.null_count or questions.null_count:
                        why = "a row without its setting or question"
                        break
                    part.batch_rows.append(batch.num_rows)
                    entries.append((b, settings.to_pylist(), questions.to_pylist()))
        except (pa.ArrowException, OSError, ValueError) as err:
            why = f"not a readable Arrow file ({type(err).__name__}: {str(err)[:120]})"
        if why is not None:
            self._quarantine(part.path, why)
            return
        self.parts[part.number] = part
        for b, settings, questions in entries:
            base = (part.number << 40) | (b << 20)
            for row, (s, q) in enumerate(zip(settings, questions)):
                self.index.setdefault(s, {})[q] = base | row

    def _quarantine(self, path: Path, why: str, *, rows: bool = False) -> None:
        """Move an unreadable part aside (never overwriting an earlier one), warn once, count it.  ``rows``: the
        part was read, but a row of it was unfit (``why``; that row was computed again, the others reused)."""
        dest = move_aside(path, self.quarantine_root / path.name, self.out_dir)
        self.quarantined.append(dest)
        what = (
            "held a row unfit to reuse (%s); moved to %s (its unfit rows were computed again)"
            if rows
            else "is unreadable (%s); moved to %s, its records are computed again"
        )
        log.warning(
            "rageval: warning: cache part %s " + what,
            path.relative_to(self.out_dir),
            why,
            dest.relative_to(self.out_dir),
        )

    # -- writing

    def append(
        self, setting: str, question_id: str, input_hash: str, text: str, record: Mapping[str, Any], digest: str
    ) -> bool:
        """Add a record (its text, its value and its digest) as a row, written at the next :meth:`flush`; False
        (nothing added) when its setting or question cannot be a string column (a lone surrogate): the caller
        keeps it elsewhere."""
        if not _encodable(setting, question_id, input_hash):
            self.index.get(setting, {}).pop(question_id, None)
            return False
        p = self._pending
        row = len(p["record"])
        status = record.get("status")
        for name, value in (
            ("setting", setting),
            ("question_id", question_id),
            ("input_hash", input_hash),
            ("status", status if isinstance(status, str) else None),
            ("digest", digest),
            ("record", text),
        ):
            p[name].append(value)
        self._scalars.append(scalar_values(record))
        self.index.setdefault(setting, {})[question_id] = (self._new << 40) | row
        if row + 1 >= FOLD_ROWS * 8:  # rows added with no flush between (an older layout's, read back): a part
            self.flush()
        return True

    def flush(self) -> bool:
        """Write the rows added since the last flush as one part (atomically; fsync'd when durable); False when there
        were none (nothing written)."""
        if not self._pending["record"]:
            return False
        names = sorted({k for row in self._scalars for k in row})
        schema = part_schema(names)
        columns = [strings(self._pending[n]) for n in BASE_FIELDS]
        columns += [floats([row.get(n) for row in self._scalars]) for n in schema.names[len(BASE_FIELDS) :]]
        batch = pa.record_batch(columns, schema=schema)
        path = self.folder / f"part-{self._new:06d}.arrow"
        self._write(path, schema, [batch])
        part = _Part(self._new, path)
        part.schema, part.batch_rows = schema, [batch.num_rows]
        self.parts[self._new] = part
        self._new += 1
        self._pending = {n: [] for n in BASE_FIELDS}
        self._scalars = []
        return True

    def _write(self, path: Path, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> None:
        """Write a part as ``batches`` come (never the whole part in memory): a temporary file in the folder
        (named as :mod:`rageval.io` names them: a killed writer's is removed by the next run), fsync'd when
        durable, renamed into place."""
        with atomic_file(path, root=self.out_dir, durable=self.durable) as out:
            sink = pa.PythonFile(out, mode="w")
            with pa.ipc.new_file(sink, schema, options=_OPTIONS) as writer:
                for batch in batches:
                    writer.write_batch(batch)

    # -- reading

    def has(self, setting: str, question_id: str) -> bool:
        return question_id in self.index.get(setting, {})

    def read(self, setting: str, question_id: str) -> tuple[str | None, str | None, str] | None:
        """``(input_hash, digest, record text)`` of the question's row, None when the store has none."""
        where = self.index.get(setting, {}).get(question_id)
        if where is None:
            return None
        part, b, row = self._at(where)
        if part == self._new:  # not flushed yet
            p = self._pending
            return p["input_hash"][row], p["digest"][row], p["record"][row]
        try:
            cols = self._batch(part, b)
            return cols[0][row].as_py(), cols[1][row].as_py(), cols[2][row].as_py()
        except (pa.ArrowException, OSError, ValueError) as err:  # ValueError: UnicodeDecodeError too
            self.drop(setting, question_id, f"unreadable ({type(err).__name__}: {str(err)[:120]})")
            return None

    @staticmethod
    def _at(where: int) -> tuple[int, int, int]:
        where &= _WHERE
        return where >> 40, (where >> 20) & 0xFFFFF, where & 0xFFFFF

    def _batch(self, part: int, b: int) -> list[pa.Array]:
        key = (part, b)
        cols = self._batches.get(key)
        if cols is not None:
            self._batches.move_to_end(key)
            return cols
        fields = ("input_hash", "digest", "record")
        batch = self.parts[part].reader(fields).get_batch(b)
        batch.validate(full=True)  # text that is not UTF-8 (damaged inside, zstd none the wiser): ArrowInvalid here
        cols = [batch.column(i) for i in range(len(fields))]  # Arrow's text: a row made a str when it is read
        self._batches[key] = cols
        while len(self._batches) > 2:
            self._batches.popitem(last=False)
        return cols

    def drop(self, setting: str, question_id: str, why: str) -> None:
        """Forget the question's row (it cannot be trusted: ``why``; computed again); its part is flagged, warned
        about once and moved to the quarantine when the run ends."""
        where = self.index.get(setting, {}).pop(question_id, None)
        if where is None:
            return
        part = self.parts.get(self._at(where)[0])
        if part is None or part.flag is not None:
            return
        part.flag = why
        log.warning(
            "rageval: warning: cache part %s: the row of question %r, setting %r is unfit (%s); recomputing it "
            "(the part goes to cache/quarantine/store/ when the run ends)",
            part.path.relative_to(self.out_dir),
            question_id,
            setting,
            why,
        )

    def written(self, setting: str, question_id: str) -> None:
        """The question's record went into ``records.jsonl`` (the next line): noted for the fold's order."""
        idx = self.index.get(setting, {})
        where = idx.get(question_id)
        if where is None or where & _WRITTEN:
            self.complete_order = False  # kept elsewhere (or twice): the fold marks no run in the store
            return
        idx[question_id] = where | _WRITTEN
        self.order.append(where)

    # -- the end of a run

    def fold(self) -> None:
        """Fold the parts into one: the run's rows in the run's order, then the rows of other questions (those of a
        flagged part left out); the older parts removed (a flagged one moved to the quarantine).  A no-op when
        one part holds the run as it is."""
        self.flush()
        only = next(iter(self.parts.values())) if len(self.parts) == 1 else None
        if only is not None and only.flag is None and self._same_run(only):
            return
        self._batches.clear()
        self._whole = None
        rest = array("q", (w for idx in self.index.values() for w in idx.values() if not w & _WRITTEN))
        rest = array("q", (w for w in rest if self.parts[self._at(w)[0]].flag is None))
        rest = array("q", sorted(rest))
        names = sorted({n for p in self.parts.values() if p.schema is not None for n in p.schema.names})
        meta = {RUN_ROWS: str(len(self.order)).encode()} if self.complete_order else {}
        schema = part_schema([n for n in names if n not in BASE_FIELDS], meta)
        path = self.folder / f"part-{self._new:06d}.arrow"
        self._write(path, schema, self._folded_batches(schema, [self.order, rest]))
        for part in self.parts.values():
            self._remove(part)
        self._whole = None
        # renamed part-000001 once it is the only one: a completed run's store is the same file however the run went
        # (how many parts it wrote, killed, resumed, on Ray); a kill before the rename leaves it under its number
        first = self.folder / f"part-{1:06d}.arrow"
        os.replace(path, first)
        folded = _Part(1, first)
        folded.schema = schema
        self.parts = {1: folded}
        self._new = 2
        self.index.clear()  # stale: the run is over
        self.order = array("q")

    def _same_run(self, part: _Part) -> bool:
        """The one part holds exactly this run's rows first, in its order (its fold metadata says so)."""
        if not self.complete_order or part.schema is None:
            return False
        meta = part.schema.metadata or {}
        if meta.get(RUN_ROWS) != str(len(self.order)).encode():
            return False
        i = 0
        for b, n in enumerate(part.batch_rows):
            base = (part.number << 40) | (b << 20)
            for row in range(n):
                if i == len(self.order):
                    return True
                if self.order[i] != base | row:
                    return False
                i += 1
        return i == len(self.order)

    def _folded_batches(self, schema: pa.Schema, runs: Sequence[array[int]]) -> Iterator[pa.RecordBatch]:
        """The rows at ``runs`` (row places, in order), aligned to ``schema``, in batches of :data:`FOLD_ROWS` (the last
        one shorter): cut by the row count alone, so the same rows make the same batches however many parts held
        them."""
        pieces: list[pa.RecordBatch] = []
        held = 0
        for places in runs:
            i = 0
            while i < len(places):
                part, b, _ = self._at(places[i])
                j = i
                rows = []
                while j < len(places) and self._at(places[j])[:2] == (part, b):
                    rows.append(self._at(places[j])[2])
                    j += 1
                batch = self._whole_batch(part, b)
                if rows != list(range(batch.num_rows)):  # else the whole batch in its order: no copy
                    batch = batch.take(ints(rows))
                pieces.append(_aligned(batch, schema))
                held += batch.num_rows
                i = j
                if held >= FOLD_ROWS:
                    full, rest = _rebatch(pieces, schema)
                    yield from full
                    pieces, held = rest, sum(b.num_rows for b in rest)
        if pieces:
            full, rest = _rebatch(pieces, schema, last=True)
            yield from full

    def _whole_batch(self, part: int, b: int) -> pa.RecordBatch:
        if self._whole is None or self._whole[0] != (part, b):
            self._whole = ((part, b), self.parts[part].reader().get_batch(b))
        return self._whole[1]

    def _remove(self, part: _Part) -> None:
        if part.flag is not None and part.path.exists():
            self._quarantine(part.path, part.flag, rows=True)
        else:
            part.path.unlink(missing_ok=True)

    def close(self, *, complete: bool) -> None:
        """Flush; fold when the run ``complete`` d (else move the flagged parts to the quarantine)."""
        self.flush()
        if complete:
            self.fold()
        else:
            for part in list(self.parts.values()):
                if part.flag is not None:
                    self._remove(part)
        self._batches.clear()


def _aligned(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with ``schema``'s columns (a scalar column it lacks: nulls)."""
    have = set(batch.schema.names)
    cols = [batch.column(f.name) if f.name in have else pa.nulls(batch.num_rows, f.type) for f in schema]
    return pa.record_batch(cols, schema=schema)


def _rebatch(
    pieces: list[pa.RecordBatch], schema: pa.Schema, *, last: bool = False
) -> tuple[list[pa.RecordBatch], list[pa.RecordBatch]]:
    """``pieces`` as batches of :data:`FOLD_ROWS` rows and the rows left over (none when ``last``: a shorter batch)."""
    table = pa.Table.from_batches(pieces, schema=schema).combine_chunks()
    cut = table.num_rows if last else table.num_rows - table.num_rows % FOLD_ROWS
    rest = table.slice(cut)
    return table.slice(0, cut).to_batches(max_chunksize=FOLD_ROWS), rest.to_batches() if rest.num_rows else []
