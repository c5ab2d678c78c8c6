"""Test helpers on a run directory's record cache: the layout a suite wrote before the record store (one file per
record), made from a run's store, and records dropped from the store (a run killed before it computed them)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from rageval.run.cache import RecordCache, _entry_prefix


def store_rows(out: Path) -> list[dict[str, str]]:
    """The rows of the run directory's record store: setting, question_id, input_hash and record text."""
    rows = []
    for part in sorted((out / "cache" / "store").glob("part-*.arrow")):
        table = pa.ipc.open_file(pa.memory_map(str(part))).read_all()
        rows += table.select(["setting", "question_id", "input_hash", "record"]).to_pylist()
    return rows


def as_record_files(out: Path) -> list[Path]:
    """Turn the run directory's record store into the per-record files a suite wrote before the store
    (``cache/records/<setting>/<question>.json``: ``{"input_hash", "record"}``, the bytes it wrote) and remove the
    store; the files, in the store's order."""
    cache = RecordCache(out)
    paths = []
    for row in store_rows(out):
        path = cache.path(row["setting"], row["question_id"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_entry_prefix(row["input_hash"]) + row["record"] + "}\n", encoding="utf-8")
        paths.append(path)
    shutil.rmtree(out / "cache" / "store")
    return paths


def drop_records(out: Path, drop: Callable[[str, str], bool]) -> int:
    """Remove from the record store the rows whose (setting, question) ``drop`` names, as if the run had been
    killed before it computed them; how many were removed."""
    parts = sorted((out / "cache" / "store").glob("part-*.arrow"))
    tables = [pa.ipc.open_file(pa.memory_map(str(p))).read_all() for p in parts]
    table = pa.concat_tables(tables, promote_options="default")
    keys = zip(table.column("setting").to_pylist(), table.column("question_id").to_pylist())
    keep = [not drop(s, q) for s, q in keys]
    kept = table.filter(pa.array(keep)).replace_schema_metadata({b"rageval.store": b"1"})
    for p in parts:
        p.unlink()
    with pa.ipc.new_file(str(parts[0]), kept.schema) as writer:
        writer.write_table(kept)
    return len(keep) - sum(keep)


def edit_rows(part: Path, change: Callable[[dict], None]) -> None:
    """Rewrite a part of the record store in place (a new file renamed over it), each row passed to ``change``
    (another process editing the store)."""
    table = pa.ipc.open_file(pa.memory_map(str(part))).read_all()
    rows = table.to_pylist()
    for row in rows:
        change(row)
    tmp = part.with_name(part.name + ".edit")
    with pa.ipc.new_file(str(tmp), table.schema) as writer:
        writer.write_table(pa.Table.from_pylist(rows, schema=table.schema))
    tmp.replace(part)


def store_keys(out: Path) -> list[tuple[str, str]]:
    """The (setting, question) of each row of the run directory's record store."""
    return [(r["setting"], r["question_id"]) for r in store_rows(out)]
