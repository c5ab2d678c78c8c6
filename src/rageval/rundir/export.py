"""A run's records out of its record store (:mod:`rageval.rundir.store`), and records as the same table: what
``rageval export`` writes.

The store's folded part (written when a run completes) holds the run's records first, in the run's order
(:data:`~rageval.rundir.store.RUN_ROWS`): :func:`run_texts` gives their texts (the lines of ``records.jsonl``).
:func:`table_of_records` makes the table of ids and scalar columns of records (``rageval export --format
parquet|csv``) from records as ``records.jsonl`` or those texts hold them (their digests checked), never from
the store's metric columns, which no digest covers.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

import pyarrow as pa

from rageval.infiles import ErrorType, loads
from rageval.rundir.arrays import floats, strings
from rageval.rundir.errors import RunDirError
from rageval.rundir.records import store_records_name
from rageval.rundir.store import (
    PART_NAME,
    RUN_ROWS,
    TABLE_IDS,
    open_part,
    part_schema,
    scalar_values,
    schema_problem,
)

__all__ = ["StoreError", "StoreLines", "run_parts", "run_texts", "table_of_records"]


class StoreError(RunDirError):
    """A run's store cannot give what was asked (no completed run in it): one line."""


def run_parts(out_dir: Path) -> tuple[Path, int, pa.Schema]:
    """The folded part holding the last completed run's records, how many, and its schema: :class:`StoreError` if
    none."""
    folder = Path(out_dir) / "cache" / "store"
    if not folder.is_dir():
        if folder.exists() or folder.is_symlink():
            raise StoreError(f"{folder} is not a folder: remove it, then rerun the command that wrote the run")
        raise StoreError(f"{folder} does not exist (the run's record store): rerun the command that wrote the run")
    found: list[tuple[int, Path, int, pa.Schema]] = []
    unreadable: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError as err:
        raise StoreError(
            f"{folder} cannot be read ({err.strerror}): fix its permissions, or rerun the command"
        ) from None
    for e in entries:
        m = PART_NAME.match(e.name)
        if not m:
            continue
        try:
            schema = open_part(Path(e.path)).schema
        except (pa.ArrowException, OSError, ValueError) as err:
            unreadable.append(f"{e.name} ({type(err).__name__}: {str(err)[:80]})")
            continue
        rows = (schema.metadata or {}).get(RUN_ROWS)
        if rows is not None and schema_problem(schema) is None:
            found.append((int(m.group(1)), Path(e.path), int(rows), schema))
    if not found and unreadable:
        raise StoreError(
            f"{folder} holds no readable completed run: part {unreadable[0]} is unreadable; rerun the command "
            "that wrote the run (it moves the part aside and computes its records again)"
        )
    if not found:
        raise StoreError(
            f"{folder} holds no completed run's records (the run never completed, or a rageval that kept a suite's "
            "records one file each wrote it): rerun the command that wrote the run"
        )
    _, path, rows, schema = max(found, key=lambda f: f[0])
    return path, rows, schema


def _run_batches(path: Path, rows: int, schema: pa.Schema, fields: Sequence[str]) -> Iterator[pa.RecordBatch]:
    """The first ``rows`` rows of the part at ``path``, ``fields`` decoded."""
    try:
        reader = open_part(path, fields, schema)
        left = rows
        for b in range(reader.num_record_batches):
            if left <= 0:
                return
            batch = reader.get_batch(b)
            if batch.num_rows > left:
                batch = batch.slice(0, left)
            left -= batch.num_rows
            batch.validate(full=True)  # text that is not UTF-8 (damaged inside): ArrowInvalid, not a traceback later
            yield batch
    except (
        pa.ArrowException,
        OSError,
        ValueError,
    ) as err:  # a part damaged inside (its footer whole): one line, not Arrow's
        raise StoreError(
            f"{path} is unreadable ({type(err).__name__}: {err}): rerun the command that wrote the run"
        ) from None


def _texts(path: Path, rows: int, schema: pa.Schema) -> Iterator[str | None]:
    """The first ``rows`` record texts of the part at ``path``, one at a time (a batch's list of texts made the
    report's peak grow 1,080 bytes a record from 10,000 to 40,000 records, against 680)."""
    for batch in _run_batches(path, rows, schema, ["record"]):
        col = batch.column(0)
        for i in range(len(col)):
            yield col[i].as_py()


def run_texts(out_dir: Path) -> Iterator[str]:
    """The last completed run's record texts in its order (the lines of its ``records.jsonl``)."""
    yield from _texts(*run_parts(out_dir))  # type: ignore[misc]  # a part's record column holds no null


class StoreLines:
    """The last completed run's records in its record store, read as the lines of the ``records.jsonl`` they stand
    for (what ``rageval export DIR`` writes): a run written without the file (``--no-records-file``) is read by the
    report, ``rescore``, ``audit`` and ``label`` from here.  The duck of :class:`~rageval.infiles.JsonLines` that
    :class:`~rageval.linestore.KeptLines` reads: iterating gives ``(line number, row, bytes, value)`` (the row
    stands for the line's offset), :meth:`line_at` a row again.  :attr:`path` is the part read (its size, time and
    inode stamp it: a later fold replaces it); :attr:`name` names the lines in messages."""

    def __init__(self, out_dir: Path, *, error: ErrorType = StoreError):
        self.path, self.rows, self.schema = run_parts(out_dir)
        self.name = store_records_name(out_dir)
        self.error = error
        self._starts: list[int] | None = None  # the first row of each batch, then the row count
        self._batch: tuple[int, list[str]] = (-1, [])  # the batch read last, its texts

    def __iter__(self) -> Iterator[tuple[int, int, bytes, Any]]:
        for row, text in enumerate(_texts(self.path, self.rows, self.schema), 1):
            if text is None:
                raise self.error(f"{self.name} line {row}: no record text: rerun the command that wrote the run")
            value = loads(text, f"{self.name} line {row}", error=self.error)
            yield row, row - 1, text.encode("utf-8") + b"\n", value

    def open(self) -> int:
        """A descriptor of the part (:class:`~rageval.linestore.KeptLines` closes it; rows are read memory-mapped)."""
        try:
            return os.open(self.path, os.O_RDONLY)
        except OSError as err:
            raise self.error(f"{self.path}: {err.strerror}: rerun the command that wrote the run") from None

    def line_at(self, fd: int, lineno: int, offset: int, length: int) -> tuple[bytes, str]:
        """``(bytes, text)`` of row ``offset`` (line ``lineno``), read from the part again."""
        del fd, length  # the part is memory-mapped; the caller compares the bytes
        if self._starts is None:
            sizes = [b.num_rows for b in _run_batches(self.path, self.rows, self.schema, ["status"])]
            self._starts = [0, *accumulate(sizes)]
        b = bisect_right(self._starts, offset) - 1
        if self._batch[0] != b:
            reader = open_part(self.path, ["record"], self.schema)
            try:
                texts = reader.get_batch(b).column(0).to_pylist()
            except (pa.ArrowException, OSError, ValueError, IndexError) as err:
                raise StoreError(f"{self.path} is unreadable ({type(err).__name__}: {err})") from None
            self._batch = (b, texts)
        texts, k = self._batch[1], offset - self._starts[b]
        text = (texts[k] if 0 <= k < len(texts) else None) or ""  # none: not the bytes the caller read
        return text.encode("utf-8") + b"\n", text


def table_of_records(records: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Records (as ``records.jsonl`` holds them) as a table: the id
    columns, then a float64 column per scalar metric (sorted) and the context's measures."""
    ids: dict[str, list[Any]] = {n: [] for n in TABLE_IDS}
    scalars: list[dict[str, float | None]] = []
    for r in records:
        s = r.get("setting")
        values = {n: r.get(n) for n in TABLE_IDS} | {"setting": s.get("name") if isinstance(s, Mapping) else s}
        for name, v in values.items():
            ids[name].append(v if isinstance(v, str) else None)
        scalars.append(scalar_values(r))
    schema = part_schema(sorted({k for row in scalars for k in row}))
    schema = pa.schema([f for f in schema if f.name not in ("digest", "record")])
    cols = [strings(ids[n]) for n in TABLE_IDS]
    cols += [floats([row.get(n) for row in scalars]) for n in schema.names[len(TABLE_IDS) :]]
    return pa.Table.from_arrays(cols, schema=schema)
