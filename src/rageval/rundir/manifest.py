"""One run directory, one on-disk format, read and written by every command.

A run directory holds ``manifest.json`` (a :class:`Manifest`), ``records.jsonl``
(one :class:`~rageval.types.Record` per line, in the plan's order),
``run_stats.json`` (counters that depend on the path taken), ``cache/`` (the
record cache and the judge's sqlite) and what the report writes.  ``rageval
suite``, ``score`` and ``rescore`` write it through the engine; ``report``,
``rescore`` and ``audit`` read it through :class:`RunDir`, whatever command
wrote it.

The manifest carries ``format`` (:data:`FORMAT`; from format 3 on each record carries a digest, checked by
every reader: :mod:`rageval.rundir.records`).  A manifest without one was
written by rageval 0.1.0 and is migrated when read (:func:`migrate`): its
``scoring`` section is rebuilt from the suite's or the score run's recorded
configuration.  A manifest of a newer format, or one that is not a rageval
manifest at all, is refused with one line saying what to do — never a
traceback.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rageval.errors import ConfigError
from rageval.infiles import ErrorType, JsonLines
from rageval.io import write_json_atomic
from rageval.rundir.errors import RunDirError
from rageval.rundir.lock import OutDirLock
from rageval.rundir.records import (
    DIGESTS_FROM,
    OLD_NAMES_NOTE,
    RecordChecks,
    RecordLines,
    renamed_old_metrics,
    store_records_name,
)
from rageval.scoring import (
    DEFAULT_CITATION_MODE,
    DEFAULT_JUDGE,
    DEFAULT_MAX_CITATIONS,
    DEFAULT_THRESHOLD,
    DEFAULT_TOKENIZER,
    JudgeConfig,
    ScoringConfig,
)
from rageval.types import Record

if TYPE_CHECKING:
    from rageval.rundir.export import StoreLines

__all__ = ["FORMAT", "PACKED_AIC_FROM", "Manifest", "RunDir", "RunDirError", "migrate", "run_dir_path"]

#: the run-directory format this rageval writes (0.1.0's manifests carry none: format 1; format 2 records carry no
#: digest; format 3 on: each record's digest, :mod:`rageval.rundir.records`; format 4 on: answer_in_context 2.0.0,
#: :data:`PACKED_AIC_FROM`)
FORMAT = 4
#: the run-directory format from which a record's ``answer_in_context`` is the packed context's (answer_in_context
#: 2.0.0); a run written before reads its records under today's names, with a note
#: (:func:`~rageval.rundir.records.renamed_old_metrics`)
PACKED_AIC_FROM = 4

log = logging.getLogger("rageval")


_FIX = "rerun the command that wrote it (rageval suite FILE --out DIR, or rageval score FILES --out DIR)"


def _record_error(message: str) -> RunDirError:
    """A line of ``records.jsonl`` the one JSON reader refuses (not JSON, a duplicate key, nested too deep)."""
    return RunDirError(f"{message}; rerun the command that wrote it")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class OriginModel(_Open):
    kind: Literal["suite", "score", "rescore", "audit"]
    name: str
    hash: str
    source: str | None = None
    of_run: str | None = None  # rescore: the run directory rescored


class ScoringRecord(ScoringConfig):
    """The manifest's ``scoring``: the run's :class:`~rageval.scoring.ScoringConfig` (checked as a suite's
    sections are: a NaN threshold is refused) and, per setting, what the report and rescore need besides."""

    model_config = ConfigDict(extra="allow")  # a newer rageval's keys are kept

    #: per setting: its diagnostics and how a unit was shown to its reader (the template's evidence fields)
    diagnostics: dict[str, list[str]] = Field(default_factory=dict)
    templates: dict[str, Any] = Field(default_factory=dict)

    def config(self, judge: JudgeConfig | None = None) -> ScoringConfig:
        """The :class:`~rageval.scoring.ScoringConfig` it records (``judge``: another judge instead)."""
        return ScoringConfig(
            judge=self.judge if judge is None else judge,
            tokenizer=self.tokenizer,
            citations=self.citations,
            attribution=self.attribution,
            retrieval_k=self.retrieval_k,
        )


class SettingRecord(_Open):
    name: str
    compressor: str | None = None
    budget: Any = None
    params: dict[str, Any] = Field(default_factory=dict)


class SuiteRecord(_Open):
    """The run's summary the report reads (name, hash, settings, contrasts, seed, diagnostics)."""

    name: str
    hash: str | None = None
    dataset: str | None = None
    seed: int = 0
    contrasts: Any = None
    settings: list[SettingRecord] = Field(default_factory=list)
    cluster_key: str | None = None
    diagnostics: list[str] = Field(default_factory=list)
    config: dict[str, Any] = Field(default_factory=dict)


class Manifest(_Open):
    """``manifest.json``: what ran, from what, with which parts and options."""

    format: int = FORMAT
    origin: OriginModel
    suite: SuiteRecord
    scoring: ScoringRecord = Field(default_factory=ScoringRecord)
    package: dict[str, str] = Field(default_factory=dict)
    models: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=False)

    def diagnostics_of(self, setting: str) -> list[str]:
        """The diagnostics a setting scored (the run's, unless it scored others)."""
        return list(self.scoring.diagnostics.get(setting, self.suite.diagnostics))

    def template_of(self, setting: str) -> Any:
        """The prompt template (fields) a setting's reader used, None for the built-in one."""
        return self.scoring.templates.get(setting)

    def scoring_spec(self, judge: JudgeConfig | None = None) -> ScoringConfig:
        """The run's :class:`~rageval.scoring.ScoringConfig` (``judge``: a JudgeSpec to score with instead)."""
        return self.scoring.config(judge)


# -- 0.1.0 --------------------------------------------------------------------------------------------------------


def _scoring_of_suite(config: Mapping[str, Any], settings: list[dict[str, Any]]) -> dict[str, Any]:
    judge = dict(config.get("judge") or {})
    reader = dict(config.get("reader") or {})
    own = {}
    for s in config.get("settings") or []:
        if isinstance(s, Mapping) and isinstance(s.get("reader"), Mapping):
            prefix = s.get("name") or s.get("compressor")
            for b in s.get("budgets") or [None]:
                own[prefix if b is None else f"{prefix}@{b}"] = s["reader"].get("template")
    names = [s["name"] for s in settings if isinstance(s, Mapping) and "name" in s]
    return {
        "judge": {
            "spec": judge.get("spec", DEFAULT_JUDGE),
            "threshold": judge.get("threshold", DEFAULT_THRESHOLD),
            "params": dict(judge.get("params") or {}),
        },
        "tokenizer": config.get("tokenizer", DEFAULT_TOKENIZER),
        "citations": dict(config.get("citations") or {}),
        "attribution": dict(config.get("attribution") or {}),
        "retrieval_k": (config.get("retrieval") or {}).get("k"),
        "diagnostics": {},
        "templates": {n: t for n in names if (t := own.get(n, reader.get("template"))) is not None},
    }


def _scoring_of_score(config: Mapping[str, Any], score: Mapping[str, Any], diagnostics: list[str]) -> dict[str, Any]:
    per = score.get("diagnostics_per_setting") or {}
    return {
        "judge": {
            "spec": config.get("judge", DEFAULT_JUDGE),
            "threshold": config.get("threshold", DEFAULT_THRESHOLD),
            "params": dict(config.get("judge_params") or {}),
        },
        "tokenizer": config.get("tokenizer", DEFAULT_TOKENIZER),
        "citations": {
            "mode": config.get("citations", DEFAULT_CITATION_MODE),
            "max_citations": config.get("max_citations", DEFAULT_MAX_CITATIONS),
        },
        "attribution": {},
        "retrieval_k": config.get("retrieval_k"),
        "diagnostics": {str(k): list(v) for k, v in per.items() if list(v) != diagnostics}
        if isinstance(per, Mapping)
        else {},
        "templates": {},
    }


def migrate(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A 0.1.0 manifest (no ``format``) in today's shape; raises :class:`RunDirError` when it is none."""
    suite = data.get("suite")
    if suite is not None and not isinstance(suite, Mapping):
        raise RunDirError(f"{where}: 'suite' must be an object, got {type(suite).__name__}; {_FIX}")
    out = dict(data)
    out["format"] = FORMAT
    if suite is None or not isinstance(suite.get("name"), str):
        return out  # no run of a command (a hand-made manifest): the report reads it, rescore and audit refuse it
    config = suite.get("config")
    config = dict(config) if isinstance(config, Mapping) else {}
    settings = [dict(s) for s in suite.get("settings") or [] if isinstance(s, Mapping)]
    diagnostics = [d for d in suite.get("diagnostics") or [] if isinstance(d, str)]
    if isinstance(data.get("score"), Mapping):
        kind, scoring = "score", _scoring_of_score(config, data["score"], diagnostics)
    else:
        kind, scoring = "suite", _scoring_of_suite(config, settings)
    rescored = data.get("rescore")
    origin = {"kind": kind, "name": suite["name"], "hash": str(suite.get("hash") or "")}
    if isinstance(rescored, Mapping):
        origin = {**origin, "kind": "rescore", "of_run": rescored.get("of_run")}
    out["origin"] = origin
    out["scoring"] = scoring
    out.setdefault("notes", [])
    return out


# -- the directory ------------------------------------------------------------------------------------------------


def run_dir_path(value: str | Path) -> Path:
    """``value`` as a run directory's path: ``~`` expanded; an empty name or one holding a control character (a
    NUL, a newline, ...) is a :class:`RunDirError` (an empty ``--out ""`` would otherwise mean the current folder).

    >>> run_dir_path("runs/x"), run_dir_path("~/x") == Path.home() / "x"
    (PosixPath('runs/x'), True)
    >>> run_dir_path("")
    Traceback (most recent call last):
    ...
    rageval.rundir.errors.RunDirError: the output directory is an empty name; give a folder (--out DIR, or output_dir)
    """
    text = str(value)
    if isinstance(value, str) and not value.strip():
        raise RunDirError("the output directory is an empty name; give a folder (--out DIR, or output_dir)")
    bad = sorted({f"U+{ord(c):04X}" for c in text if ord(c) < 32 or 0x7F <= ord(c) < 0xA0})
    if bad:
        raise RunDirError(
            f"the output directory {text!r} holds a control character ({', '.join(bad)}); choose a plain folder name"
        )
    return Path(text).expanduser()


class RunDir:
    """A run directory (see the module doc); nothing is read or written until asked."""

    def __init__(self, path: str | Path):
        self.path = run_dir_path(path)
        #: the format ``manifest.json`` was written in (1: 0.1.0's, none given), once it is read
        self.written_format: int | None = None
        #: written by a rageval whose answer_in_context was the within-one-unit variant (a format before
        #: :data:`PACKED_AIC_FROM`; of a manifest without a format, one naming rageval's version: a hand-made one
        #: names none and is read as today's), once the manifest is read
        self.old_run = False
        #: a record scored before answer_in_context 2.0.0 was read (its metrics renamed, the note logged once)
        self.old_names_read = False

    @property
    def manifest_path(self) -> Path:
        return self.path / "manifest.json"

    @property
    def records_path(self) -> Path:
        return self.path / "records.jsonl"

    @property
    def judge_cache(self) -> Path:
        return self.path / "cache" / "judge"

    def lock(self, command: str) -> OutDirLock:
        """The directory's one-writer lock (:class:`~rageval.rundir.lock.OutDirLock`; re-entrant in a process)."""

        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(f"output directory {self.path} is a file; choose another --out (or output_dir)")
        return OutDirLock(self.path, command)

    # -- reading

    def read_manifest_data(self) -> dict[str, Any]:
        """``manifest.json`` as JSON, migrated to today's shape (unchecked beyond that)."""
        p = self.manifest_path
        if not p.is_file():
            raise RunDirError(
                f"{p} is missing: is {self.path} a rageval run directory? (rageval suite FILE --out DIR, "
                "or rageval score FILES --out DIR)"
            )
        try:
            data = json.loads(p.read_bytes().decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as err:
            raise RunDirError(f"{p}: not valid JSON ({str(err)[:100]}); rerun the command that wrote it") from None
        if not isinstance(data, dict):
            raise RunDirError(f"{p}: must hold a JSON object, got {type(data).__name__}; rerun the command")
        version = data.get("format")
        if version is None:
            self.written_format = 1
            package = data.get("package")
            self.old_run = isinstance(package, Mapping) and "rageval" in package
            return migrate(data, str(p))
        if isinstance(version, bool) or not isinstance(version, int) or version < 2:
            raise RunDirError(f"{p}: unknown run-directory format {version!r}; rerun the command that wrote it")
        if version > FORMAT:
            raise RunDirError(
                f"{p}: written by a newer rageval (run-directory format {version}, this one reads up to {FORMAT}); "
                "upgrade rageval, or rerun the command with this one into another --out"
            )
        self.written_format = version
        self.old_run = version < PACKED_AIC_FROM
        return data

    def read_manifest(self) -> Manifest:
        """The typed :class:`Manifest` (a 0.1.0 one migrated); one-line :class:`RunDirError` when unusable."""
        data = self.read_manifest_data()
        if "origin" not in data:
            named = isinstance(data.get("suite"), Mapping) and isinstance(data["suite"].get("name"), str)
            what = "no origin: which command wrote it is unknown" if named else "no suite name"
            raise RunDirError(f"{self.manifest_path}: not a rageval run manifest ({what}); {_FIX}")
        try:
            return Manifest.model_validate(data)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(map(str, first["loc"]))
            raise RunDirError(
                f"{self.manifest_path}: {where}: {first['msg']}; rerun the command that wrote it"
            ) from None

    @property
    def store_path(self) -> Path:
        """The record store's folder (:mod:`rageval.rundir.store`)."""
        return self.path / "cache" / "store"

    def _store_there(self) -> bool:
        """Something is at :attr:`store_path` (a folder, or what stands in its place)."""
        return self.store_path.exists() or self.store_path.is_symlink()

    @property
    def records_label(self) -> str:
        """How messages name the run's records: ``records.jsonl``'s path, or, when the run was written without it
        (``--no-records-file``), that path ``(in the record store)``."""
        if self.records_path.exists() or not self._store_there():
            return str(self.records_path)
        return store_records_name(self.path)

    def records_shown(self) -> str:
        """Where a command's summary says the records are: ``records.jsonl``, or the record store and how to export
        the file (a run written with ``--no-records-file``)."""
        if self.records_path.exists():
            return str(self.records_path)
        return f"{self.store_path} (no records.jsonl: 'rageval export {self.path} --out FILE' writes it)"

    def records_source(self, error: ErrorType | None = None) -> JsonLines | StoreLines:
        """The run's records read line by line, never whole: ``records.jsonl`` as a :class:`~rageval.infiles.JsonLines`
        file (blank lines skipped, at most :data:`~rageval.rundir.records.MAX_BLANK_LINES` of them), or, when the
        run was written without it, the lines its record store holds (:class:`~rageval.rundir.export.StoreLines`).
        Neither: a :class:`RunDirError` (a FIFO, a device or a folder at ``records.jsonl``: refused by the
        reader, in one line).  ``error``: the error of a line that is not JSON (default :class:`RunDirError`)."""
        error = error or _record_error
        if self.records_path.exists():
            return RecordLines(self.records_path, what="the run's records.jsonl", error=error)
        if not self.manifest_path.is_file() and not self._store_there():  # nothing written yet
            raise RunDirError(
                f"{self.records_path} is missing: run the command that writes it first (rageval suite / score)"
            )
        from rageval.rundir.export import StoreError, StoreLines

        try:
            return StoreLines(self.path, error=error)
        except StoreError as err:
            raise RunDirError(f"{self.records_path} is missing and {err}") from None

    def record_checks(self, *, accept_edits: bool = False) -> RecordChecks:
        """The check of each record read back (:class:`~rageval.rundir.records.RecordChecks`): its digest when the
        manifest's format has them (read it first), the catalog's bounds.  A run written before digests is read
        as before, with one note on the ``rageval`` logger that its records cannot be checked."""
        if self.written_format is None:
            self.read_manifest_data()
        written = self.written_format or 1
        if written < DIGESTS_FROM:
            log.warning(
                "rageval: note: %s: written before records carried digests (run-directory format %d): an edit of "
                "its records cannot be detected",
                self.records_label,
                written,
            )
        return RecordChecks(Path(self.records_label), digests=written >= DIGESTS_FROM, accept_edits=accept_edits)

    def record_lines(self, checks: RecordChecks | None = None) -> Iterator[tuple[int, int, bytes, Any]]:
        """``(line number, offset, bytes, Record)`` of each line of ``records.jsonl`` (blank lines skipped), read
        line by line: one line held at a time (the input size limit applies to each line).  ``checks``: each
        record checked (:meth:`record_checks`; a refusal is a :class:`RunDirError` naming the record)."""
        for i, offset, raw, value in self.records_source():
            record = self.record_of(value, i)
            if checks is not None:
                problem = checks.problem(value, i)
                if problem is not None:
                    raise RunDirError(problem)
            yield i, offset, raw, record

    def no_records(self, settings: list[str]) -> RunDirError:
        """The error of a run whose manifest lists ``settings`` and whose ``records.jsonl`` holds no record."""
        return RunDirError(
            f"{self.records_label} holds no record (empty, or blank lines only) but the manifest lists settings "
            f"{', '.join(map(repr, settings))}: the records vanished; rerun the command that wrote the run"
        )

    def note_accepted_edits(self, accepted: Mapping[str, Any]) -> None:
        """Record in ``manifest.json`` (format 3 on, as written: nothing migrated is written back) that records
        were read although edited (``--accept-edits``): :meth:`RecordChecks.summary
        <rageval.rundir.records.RecordChecks.summary>`."""
        data = self.read_manifest_data()
        if (self.written_format or 1) < DIGESTS_FROM:
            return
        data["accepted_edits"] = dict(accepted)
        write_json_atomic(self.manifest_path, data, indent=2, root=self.path)

    def record_of(self, value: Any, lineno: int) -> Record:
        """The :class:`~rageval.types.Record` of line ``lineno``'s JSON ``value``; an error naming the line.  A
        record scored before answer_in_context 2.0.0 has its metrics under today's names
        (:func:`~rageval.rundir.records.renamed_old_metrics`), with one note for the run."""
        try:
            record = Record.from_dict(value)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as err:
            raise RunDirError(
                f"{self.records_label}: line {lineno}: not a valid record ({type(err).__name__}: {str(err)[:160]}); "
                "rerun the command"
            ) from None
        if self.written_format is None and self.manifest_path.is_file():
            self.read_manifest_data()
        renamed = renamed_old_metrics(record.metrics, self.old_run)
        if renamed is None:
            return record
        if not self.old_names_read:
            self.old_names_read = True
            log.warning("rageval: note: %s: %s", self.records_label, OLD_NAMES_NOTE)
        return replace(record, metrics=renamed)

    def iter_records(self) -> Iterator[tuple[int, Any]]:
        """``(line number, Record)`` for each line of ``records.jsonl`` (blank lines skipped), read line by line."""
        checks = self.record_checks() if self.manifest_path.is_file() else None
        for i, _, _, record in self.record_lines(checks):
            yield i, record

    def records(self) -> list[Any]:
        """Every record of ``records.jsonl``, held (``rageval rescore`` streams them: :meth:`record_lines`)."""
        return [r for _, r in self.iter_records()]

    # -- writing (the engine's)

    def check_owner(self, name: str) -> None:
        """Refuse a directory that holds a run of another name (``cache/suite.json`` or the manifest)."""
        for path in (self.path / "cache" / "suite.json", self.manifest_path):
            if not path.is_file():
                continue
            fix = "delete the output directory or choose another --out"
            try:
                data = json.loads(path.read_bytes().decode("utf-8"))
            except (ValueError, RecursionError) as err:  # not UTF-8, not JSON
                raise RunDirError(f"{path}: not valid JSON ({str(err)[:100]}); {fix}") from None
            try:
                found = data["suite"]["name"]
            except (KeyError, TypeError, IndexError):
                raise RunDirError(f"{path}: names no suite, so the run it holds is unknown; {fix}") from None
            if found != name:
                raise RunDirError(
                    f"output directory {self.path} holds a run of suite {found!r}, not {name!r}; "
                    "choose another --out (or delete it)"
                )
            return

    def write_manifest(self, manifest: Manifest, *, root: Path | None = None) -> None:
        write_json_atomic(self.manifest_path, manifest.to_json(), indent=2, root=root)

    def write_stats(self, stats: Mapping[str, Any], name: str = "run_stats.json", *, root: Path | None = None) -> None:
        write_json_atomic(self.path / name, dict(stats), indent=2, root=root)
