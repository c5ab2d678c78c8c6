"""``rageval export RUN --format jsonl|parquet|csv [--out FILE] [--force]``: a run's records out of its directory.

* ``jsonl``: the run's records in the run's order, byte for byte the lines of its ``records.jsonl``; from the
  record store (``cache/store/``, :mod:`rageval.rundir.store`) when ``records.jsonl`` is missing (each record
  checked on the way as the report checks it: :meth:`~rageval.rundir.manifest.RunDir.records_source`);
* ``parquet``, ``csv``: one row per record (csv: a text cell starting with a formula character quoted, as in
  every CSV rageval writes): ``setting``, ``question_id``, ``input_hash``, ``status``, a float64
  column per scalar metric (``metrics.<name>``, empty/null where undefined or not a scalar) and
  ``context.achieved_ratio``, ``context.achieved_tokens``; made from the records' texts (``records.jsonl``'s, or
  the store's when the file is missing), each checked as the report checks it, never from the store's columns.

Without ``--out`` the jsonl and csv go to standard output (parquet needs ``--out``).  An existing ``--out`` is
refused unless ``--force`` (rageval writes over no file of yours without being told).  Errors (not a run
directory, an unknown format, an existing ``--out``) are one line, exit 2.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import click

from rageval.errors import ConfigError
from rageval.escape import csv_cell
from rageval.io import atomic_file
from rageval.rundir.manifest import RunDir, RunDirError

__all__ = ["FORMATS", "export_cmd", "export_run"]

FORMATS = ("jsonl", "parquet", "csv")


@click.command("export")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--format", "fmt", metavar="[jsonl|parquet|csv]", default="jsonl", show_default=True, help="The format.")
@click.option(
    "--out", "out", type=click.Path(path_type=Path), default=None, help="The file to write (default: stdout)."
)
@click.option("--force", is_flag=True, help="Write over an existing --out.")
@click.option(
    "--accept-edits",
    is_flag=True,
    help="Read records edited after rageval wrote them (their digest does not match) instead of refusing (jsonl: "
    "from the record store; records.jsonl is copied as it is); nothing is written into the run "
    "(docs/security.md#run-directories-digests-and-bounds).",
)
def export_cmd(run: Path, fmt: str, out: Path | None, force: bool, accept_edits: bool) -> None:
    """Export a run's records: jsonl (records.jsonl's bytes), or parquet/csv (ids, status, scalar metrics)."""
    export_run(run, fmt, out, force=force, accept_edits=accept_edits)
    if out is not None:
        click.echo(f"wrote {out} ({fmt})", err=True)


def export_run(run: Path, fmt: str, out: Path | None, *, force: bool = False, accept_edits: bool = False) -> None:
    """Write the export (see the module doc); :class:`ConfigError` / :class:`RunDirError` in one line."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r} is unknown: give one of {', '.join(FORMATS)}")
    rundir = RunDir(run)
    if not rundir.path.is_dir():
        raise RunDirError(f"{rundir.path} is not a folder: give a run directory (rageval score/suite --out DIR)")
    rundir.read_manifest_data()  # not a run: one line
    if out is not None and (out.exists() or out.is_symlink()) and not force:
        raise ConfigError(f"{out} exists: rageval export writes over it only with --force; or choose another --out")
    if out is not None and out.is_dir():
        raise ConfigError(f"{out} is a folder: give a file name for --out")
    if fmt == "parquet" and out is None:
        raise ConfigError("--format parquet writes a binary file: give --out FILE")
    if fmt == "jsonl":
        if rundir.records_path.is_file():
            chunks = _file_chunks(rundir.records_path)  # the file's bytes
        else:  # the lines the record store holds, each record checked
            chunks = (raw for raw, _value in _checked(rundir, accept_edits))
        _write(out, chunks)
        return
    table = _table(rundir, accept_edits)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        sink = _buffer()
        pq.write_table(table, sink)
        _write(out, iter([sink.getvalue().to_pybytes()]))
    else:
        import pyarrow.csv as pcsv

        sink = _buffer()
        pcsv.write_csv(_inert_text(table), sink)
        _write(out, iter([sink.getvalue().to_pybytes()]))


def _buffer() -> Any:
    import pyarrow as pa

    return pa.BufferOutputStream()


def _write(out: Path | None, chunks: Iterator[bytes]) -> None:
    if out is None:
        stdout = sys.stdout.buffer
        for c in chunks:
            stdout.write(c)
        stdout.flush()
        return
    with atomic_file(out, durable=True) as fh:  # a reader never sees half of it; a failed export leaves none
        for c in chunks:
            fh.write(c)


def _file_chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            yield chunk


def _checked(rundir: RunDir, accept_edits: bool = False) -> Iterator[tuple[bytes, Mapping[str, Any]]]:
    """Each record of the run with its line's bytes: ``records.jsonl``'s, or, when the run was written without it,
    the lines its record store holds (:meth:`RunDir.records_source`); each checked as the report checks it (its
    digest, its metrics' bounds; an edit read only with ``accept_edits``)."""
    checks = rundir.record_checks(accept_edits=accept_edits)
    source = rundir.records_source()
    for i, _offset, raw, value in source:
        if not isinstance(value, Mapping):
            raise RunDirError(f"{source.name} line {i} must be a JSON object (one record)")
        problem = checks.problem(value, i)
        if problem is not None:
            raise RunDirError(problem)
        yield raw, value


def _inert_text(table: Any) -> Any:
    """``table`` with each text cell made inert as every CSV rageval writes (:func:`rageval.escape.csv_cell`: a
    leading formula character quoted)."""
    import pyarrow as pa

    from rageval.rundir.arrays import strings

    for i, field in enumerate(table.schema):
        if pa.types.is_string(field.type):
            table = table.set_column(i, field, strings([csv_cell(v) for v in table.column(i).to_pylist()]))
    return table


def _table(rundir: RunDir, accept_edits: bool = False) -> Any:
    """The table of the run's records, made from their texts (each checked), never from the store's metric columns:
    a column edited in a part is not covered by any digest."""
    from rageval.rundir.export import table_of_records

    return table_of_records(value for _raw, value in _checked(rundir, accept_edits))
