"""Read and check a run directory: ``records.jsonl`` + ``manifest.json``.

Everything that would make a table lie is an error here, naming the file, the line
and the fix: unparseable lines, records without id/setting/status, a status outside
``rageval.types.STATUSES``, a setting the manifest's suite does not declare (or
declares with another compressor/budget), records carrying another suite's hash,
two records for one (question, setting), a question whose cluster id differs
between settings; a record whose digest does not match its content (edited after
rageval wrote it; read anyway with ``accept_edits``, and listed) or whose metric
lies outside its declared bounds (:class:`~rageval.rundir.records.RecordChecks`);
no record at all where the manifest lists settings.

``records.jsonl`` is read **as a stream**, in one checked pass that keeps columns, not records
(:class:`~rageval.rundir.columns.RecordColumns`: per record its question, setting, status, metrics and
achieved context; per question its cluster id; per setting the facts the structural marks read; the threshold
sweep's values; per record what the examples read of it), so a run of a million records is reported in the
memory of its metric columns; another reader may ride on the same pass (``load_run``'s ``also``: the report's
explorer).  :attr:`Run.records` reads the records again when a consumer needs their texts (the examples shown,
an audit): a :class:`Records` view that streams the file, or seeks one record, and refuses a file that changed
since it was checked.
"""

from __future__ import annotations

import json
import logging
import math
import os
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from rageval.diagnostics.structural import SettingFacts
from rageval.infiles import JsonLines
from rageval.linestore import KeptLines
from rageval.progress import Bar
from rageval.progress import progress as progress_bar
from rageval.report.examples import ExampleMarks
from rageval.rundir.columns import RecordColumns, metric_value
from rageval.rundir.export import StoreLines
from rageval.rundir.manifest import RunDir, RunDirError
from rageval.rundir.records import OLD_NAMES_NOTE, RecordChecks, renamed_old_metrics
from rageval.types import STATUSES

__all__ = ["Records", "Run", "load_run", "RunError"]

log = logging.getLogger("rageval")


class RunError(ValueError):
    """A run directory that cannot be reported on honestly."""


class Records(Sequence[dict[str, Any]]):
    """The records of a checked ``records.jsonl``, read from the file when asked (never all held): iterating
    reads the lines the check kept in order, ``records[i]`` the i-th alone, each again at its place
    (:class:`~rageval.linestore.KeptLines`, the check's reader; the blank lines it skipped are not read).  Each
    record is the dict of its line as the check left it (a setting given as a string made ``{"name": ...}``,
    ``metrics``/``extra`` null made ``{}``) with its line number as ``_line``.  A file changed since it was
    checked (its size, time or inode; a line of another length) is a :class:`RunError`."""

    def __init__(
        self, path: Path, kept: KeptLines, stamp: tuple[int, int, int], *, old_run: bool = False, name: str = ""
    ):
        self.path, self._kept, self._stamp = path, kept, stamp
        self.name = name or str(path)  # the records' name in messages
        self._old_run = old_run  # the run's records may carry answer_in_context before 2.0.0 (:func:`_normalized`)

    def __len__(self) -> int:
        return len(self._kept)

    def _changed(self) -> RunError:
        return RunError(
            f"{self.name} changed since the run was loaded (another command wrote it meanwhile): load it again"
        )

    def _check(self) -> None:
        if _stamp(self.path) != self._stamp:
            raise self._changed()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self._check()
        try:
            for i in range(len(self)):
                yield self._read(i)
        finally:
            self._kept.close()

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        self._check()
        try:
            if isinstance(i, slice):
                return [self._read(j) for j in range(*i.indices(len(self)))]
            return self._read(range(len(self))[i])
        finally:
            self._kept.close()

    def _read(self, i: int) -> dict[str, Any]:
        """Record ``i`` from its line (a line checked already: parsed without the check's duplicate-key hook,
        which would make a pass 1.6x slower)."""
        text = self._kept.text(i)
        if text is None:
            raise self._changed()
        try:
            return _normalized(json.loads(text), self._kept.lineno(i), self._old_run)
        except ValueError:  # not the line the check read
            raise self._changed() from None


def _stamp(path: Path) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ino


class Sweeps:
    """The threshold sweep's values (``extra.reattribution_sweep``) of the ``ok`` records: per (setting,
    threshold) the record's index (its place in ``records.jsonl`` and in the run's columns) and its rate and
    grounded precision."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, float], tuple[array, array, array]] = {}

    def add(self, rec: Mapping[str, Any], record: int) -> None:
        if rec["status"] != "ok":
            return
        sw = rec["extra"].get("reattribution_sweep")
        if not isinstance(sw, Mapping):
            return
        for t, vals in sw.items():
            try:
                tf = float(t)
            except (TypeError, ValueError):
                continue  # an unparseable threshold is skipped
            vals = vals if isinstance(vals, Mapping) else {}
            at, rate, gp = self.by_key.setdefault((rec["setting"]["name"], tf), (array("q"), array("d"), array("d")))
            at.append(record)
            rate.append(_value(vals.get("rate")))
            gp.append(_value(vals.get("grounded_precision")))


def _value(v: Any) -> float:
    """A metric value as float, NaN when undefined or not a scalar."""
    try:
        return metric_value(v)
    except TypeError:
        return math.nan


@dataclass
class Run:
    """A checked run directory: its manifest, settings (suite order), the records' columns, and the records."""

    path: Path
    manifest: dict[str, Any]
    settings: list[dict[str, Any]]  # [{name, compressor, budget}] in suite order
    columns: RecordColumns
    records: Records
    #: question -> its cluster id (``suite.cluster_key``), and the first question whose records disagree
    clusters: dict[str, Any] = field(default_factory=dict)
    cluster_conflict: tuple[str, Any, Any] | None = None
    facts: dict[str, dict[str, bool]] = field(default_factory=dict)  # rageval.diagnostics.structural
    sweeps: Sweeps = field(default_factory=Sweeps)
    #: the records read although edited (``accept_edits``): :meth:`RecordChecks.summary
    #: <rageval.rundir.records.RecordChecks.summary>`, None when none was
    accepted_edits: dict[str, Any] | None = None
    #: records scored before answer_in_context 2.0.0 read (their metrics renamed: :func:`_normalized`)
    old_names: int = 0
    #: per record, what the report's examples read of it (None: a ``slim`` load)
    marks: ExampleMarks | None = None

    @property
    def suite(self) -> dict[str, Any]:
        return self.manifest.get("suite") or {}

    @property
    def setting_names(self) -> list[str]:
        return [s["name"] for s in self.settings]


def _budget_eq(x: Any, y: Any) -> bool:
    if isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
        return float(x) == float(y)
    return x == y


#: a reader riding on the checked pass (:func:`load_run`'s ``also``): given the declared settings (``[]``: none)
#: and the manifest before the records are read, the callable to give each record (None: it does not ride)
Rider = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], Callable[[Mapping[str, Any]], None] | None]


def load_run(
    run_dir: str | Path,
    *,
    slim: bool = False,
    accept_edits: bool = False,
    command: str = "rageval report",
    also: Rider | None = None,
    progress: bool = False,
) -> Run:
    """The checked manifest, settings and record columns of ``run_dir`` (see the module doc); a RunError
    otherwise.

    ``slim``: the columns alone, without the structural facts, the threshold sweep and the examples' marks (the
    closing table of ``rageval score`` / ``suite`` without the report reads nothing else).  ``accept_edits``:
    records whose digest does not match are read, listed in :attr:`Run.accepted_edits` and in the manifest read
    (its ``notes`` and ``accepted_edits``: what the report shows), as ``command`` read them.  ``also``: another
    reader of every record, in order, in the same pass (:data:`Rider`: the report's explorer; each record parsed
    once for both).  ``progress``: a bar of the records read on standard error, where it is a terminal (the bytes
    of ``records.jsonl``, or the record store's rows).
    """
    path = Path(run_dir)
    if not path.is_dir():
        raise RunError(f"run directory {str(path)!r} does not exist")
    rec_path, man_path = path / "records.jsonl", path / "manifest.json"
    if not rec_path.exists() and not man_path.is_file():  # not a regular file: refused by the reader
        store = RunDir(path).store_path
        stored = store.is_dir() and any(store.glob("part-*.arrow"))
        again = "run the command that writes it first"
        if stored:  # killed before its manifest: no completed run to report, but records to resume from
            again = "the run was stopped before it finished: rerun the command that writes it (it resumes)"
        raise RunError(
            f"{rec_path} is missing: {again} (rageval suite FILE --out {path}, or rageval score FILES --out {path})"
        )
    if not man_path.is_file():
        raise RunError(f"{man_path} is missing: the report needs the suite's manifest (settings, contrasts, seed)")
    rundir = RunDir(path)
    try:
        source = rundir.records_source(_record_error)  # records.jsonl, or the lines of the record store
    except RunDirError as err:
        raise RunError(str(err)) from None
    manifest, suite = _read_manifest(rundir, man_path)
    checks = rundir.record_checks(accept_edits=accept_edits)
    scan = _Scan(path, manifest, suite, man_path, full=not slim, checks=checks, old_run=rundir.old_run)
    if also is not None:
        scan.also = also(scan.settings if scan.declared else [], manifest)
    run = scan.read(source, progress=progress)
    if run.old_names:  # records scored before answer_in_context 2.0.0: read under today's names, with one note
        note = f"{source.name}: {OLD_NAMES_NOTE}"
        log.warning("rageval: note: %s", note)
        manifest["notes"] = [*(manifest.get("notes") or []), note]
    run.accepted_edits = checks.summary(command)
    if run.accepted_edits is not None:
        manifest["accepted_edits"] = run.accepted_edits
        manifest["notes"] = [*(manifest.get("notes") or []), run.accepted_edits["note"]]
    return run


def _read_manifest(rundir: RunDir, man_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(manifest, its suite section or {})``."""
    try:  # the one reader of a run directory's manifest (a 0.1.0 one migrated)
        manifest = rundir.read_manifest_data()
    except RunDirError as err:
        raise RunError(str(err)) from None
    suite = manifest.get("suite")
    if suite is not None and not isinstance(suite, dict):
        raise RunError(f"{man_path}: 'suite' must be an object, got {type(suite).__name__}")
    return manifest, suite or {}


def _record_error(message: str) -> RunError:
    """A line of ``records.jsonl`` the one JSON reader refuses (:mod:`rageval.infiles`)."""
    return RunError(f"{message}: a truncated write? rerun the command that wrote it")


class _Scan:
    """One checked pass over ``records.jsonl`` (see the module doc)."""

    def __init__(
        self,
        path: Path,
        manifest: dict[str, Any],
        suite: dict[str, Any],
        man_path: Path,
        *,
        full: bool,
        checks: RecordChecks,
        old_run: bool = False,
    ):
        self.path, self.manifest, self.suite, self.full, self.checks = path, manifest, suite, full, checks
        self.old_run = old_run  # written before answer_in_context 2.0.0 (RunDir.old_run)
        declared = suite.get("settings")
        self.declared = bool(declared)
        if declared:
            if not isinstance(declared, list) or not all(isinstance(s, Mapping) and "name" in s for s in declared):
                raise RunError(f"{man_path}: suite.settings must be a list of {{name, compressor, budget}} objects")
            self.settings = [
                {"name": s["name"], "compressor": s.get("compressor"), "budget": s.get("budget")}
                | ({"retrieval": s["retrieval"]} if s.get("retrieval") is not None else {})  # a setting's own
                for s in declared
            ]
        else:  # no declared settings: the records' own, in order of appearance
            self.settings = []
        self.by_name = {s["name"]: s for s in self.settings}
        self.cluster_key = suite.get("cluster_key")
        self.clusters: dict[str, Any] = {}
        self.conflict: tuple[str, Any, Any] | None = None
        self.facts = SettingFacts()
        self.sweeps = Sweeps()
        self.marks = ExampleMarks() if full else None
        self.old_names = 0
        self.also: Callable[[Mapping[str, Any]], None] | None = None

    def read(self, source: JsonLines | StoreLines, *, progress: bool = False) -> Run:
        at = Path(source.path)
        stamp = _stamp(at)
        kept = KeptLines(source, digests=False)  # the records' places; the stamp checks the file
        size: int | None
        if isinstance(source, StoreLines):  # the bar counts the store's rows
            total, size, unit = source.rows, None, "rec"
        else:  # or the file's bytes
            total, size, unit = stamp[0], stamp[0], "B"
        desc = f"reading records of {self.path.name}"
        bar = progress_bar(total, progress and total > 0, desc=desc, unit=unit, terminal=True)  # 0: nothing to read
        try:
            columns = RecordColumns.of(self._checked(source.name, kept, bar, size))
        finally:
            bar.close()
        if _stamp(at) != stamp:
            raise RunError(f"{source.name} changed while it was read (another command wrote it): report again")
        if not len(kept) and self.declared:  # a run whose records vanished: not an empty report
            raise RunError(str(RunDir(self.path).no_records([s["name"] for s in self.settings])))
        return Run(
            path=self.path,
            manifest=self.manifest,
            settings=self.settings,
            columns=columns,
            records=Records(at, kept, stamp, old_run=self.old_run, name=source.name),
            clusters=self.clusters,
            cluster_conflict=self.conflict,
            facts=self.facts.result(),
            sweeps=self.sweeps,
            old_names=self.old_names,
            marks=self.marks,
        )

    def _checked(self, name: str, kept: KeptLines, bar: Bar, size: int | None) -> Iterator[dict[str, Any]]:
        """Each record of the lines ``kept`` reads (``name``: theirs in messages), checked and normalized, its place
        (in ``kept``), facts, sweep and cluster kept; ``bar`` moved on by each record (``size``: the file's, the bar
        then at the end of the record's line; None: a record store's rows, one a record)."""
        done = 0  # the bar's place: records, or the bytes read
        for lineno, offset, raw, rec in kept.source:
            at = done + 1 if size is None else offset + len(raw)
            bar.update(at - done)
            done = at
            if not isinstance(rec, dict):
                raise RunError(f"{name} line {lineno} must be a JSON object (one record)")
            where = f"{Path(name).name} line {lineno}"
            _check_record(rec, where)
            problem = self.checks.problem(rec, lineno)  # the record as read, before it is normalized
            self.old_names += renamed_old_metrics(rec.get("metrics"), self.old_run) is not None
            _normalized(rec, lineno, self.old_run)
            self._check_setting(rec, where)
            if problem is not None:  # after the checks that name a record's shape or origin
                raise RunError(problem)
            if self.marks is not None:
                self.facts.add(rec)
                self.sweeps.add(rec, len(kept))  # this record's index
                self.marks.add(rec)
            self._cluster(rec)
            kept.add(lineno, offset, raw)
            if self.also is not None:
                self.also(rec)
            yield rec
        if size is not None:
            bar.update(max(0, size - done))  # blank lines after the last record: the whole file was read

    def _check_setting(self, r: dict[str, Any], where: str) -> None:
        """A record of a declared setting (or of the first record's compressor and budget for its setting), of
        this suite's hash."""
        s = r["setting"]
        decl = self.by_name.get(s["name"])
        if decl is None and not self.declared:
            decl = {"name": s["name"], "compressor": s.get("compressor"), "budget": s.get("budget")}
            self.settings.append(decl)
            self.by_name[s["name"]] = decl
        suite_name, suite_hash = self.suite.get("name"), self.suite.get("hash")
        if decl is None:
            raise RunError(
                f"{where}: setting {s['name']!r} is not a setting of suite {suite_name!r} "
                f"(manifest declares {list(self.by_name)}): records from different suites mixed?"
            )
        for field_ in ("compressor", "budget"):
            if field_ in s and decl.get(field_) is not None and not _budget_eq(s.get(field_), decl.get(field_)):
                raise RunError(
                    f"{where}: setting {s['name']!r} has {field_}={s.get(field_)!r} but suite {suite_name!r} "
                    f"declares {decl.get(field_)!r}: records from different suites mixed?"
                )
        rh = r.get("suite_hash", r["extra"].get("suite_hash"))
        if rh is not None and suite_hash is not None and rh != suite_hash:
            raise RunError(
                f"{where}: record of suite hash {rh!r} in a run of suite {suite_name!r} (hash {suite_hash!r}): "
                "records from different suites mixed"
            )

    def _cluster(self, r: dict[str, Any]) -> None:
        key = self.cluster_key
        if not isinstance(key, str) or not key:
            return
        c = r["extra"].get(key)
        if c is None:
            return
        q = r["question_id"]
        found = self.clusters.setdefault(q, c)
        if found != c and self.conflict is None:
            self.conflict = (q, found, c)


def _normalized(rec: dict[str, Any], lineno: int, old_run: bool = False) -> dict[str, Any]:
    """A record as the check leaves it (:func:`_check_record`), with its line number; the metrics of one scored
    before answer_in_context 2.0.0 (of a run written before: ``old_run``) under today's names
    (:func:`~rageval.rundir.records.renamed_old_metrics`)."""
    if isinstance(rec.get("setting"), str):
        rec["setting"] = {"name": rec["setting"]}
    if rec.get("metrics") is None:
        rec["metrics"] = {}
    elif (renamed := renamed_old_metrics(rec["metrics"], old_run)) is not None:
        rec["metrics"] = renamed
    if rec.get("extra") is None:
        rec["extra"] = {}
    rec["_line"] = lineno
    return rec


def _check_record(rec: dict[str, Any], where: str) -> None:
    """The fields every table reads, of the types they need (then :func:`_normalized`)."""
    if not isinstance(rec.get("question_id"), str):
        raise RunError(f"{where}: 'question_id' must be a string, got {rec.get('question_id')!r}")
    s = rec.get("setting")
    if not isinstance(s, str) and (not isinstance(s, dict) or not isinstance(s.get("name"), str)):
        raise RunError(f"{where}: 'setting' must be an object with a string 'name', got {s!r}")
    if rec.get("status") not in STATUSES:
        raise RunError(f"{where}: status {rec.get('status')!r} is not one of {list(STATUSES)}")
    for key, what in (("metrics", "an object name -> value"), ("extra", "an object")):
        v = rec.get(key)
        if v is not None and not isinstance(v, dict):
            raise RunError(f"{where}: '{key}' must be {what}, got {type(v).__name__}")
