"""Read and check a run directory: ``records.jsonl`` + ``manifest.json``.

Everything that would make a table lie is an error here, naming the file, the line
and the fix: unparseable lines, records without id/setting/status, a status outside
``rageval.types.STATUSES``, a setting the manifest's suite does not declare (or
declares with another compressor/budget), records carrying another suite's hash,
two records for one (question, setting), a question whose cluster id differs
between settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval.infiles import iter_json_lines, read_text
from rageval.run.rundir import RunDir, RunDirError
from rageval.types import STATUSES

__all__ = ["Run", "load_run", "RunError"]


class RunError(ValueError):
    """A run directory that cannot be reported on honestly."""


@dataclass
class Run:
    path: Path
    manifest: dict[str, Any]
    records: list[dict[str, Any]]
    settings: list[dict[str, Any]]  # [{name, compressor, budget}] in suite order

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


def load_run(run_dir: str | Path, *, slim: bool = False) -> Run:
    """The checked records, manifest and settings of ``run_dir`` (see the module doc); a RunError otherwise.

    ``slim``: each record keeps only what the summary reads (:func:`rageval.report.analysis.summarize`: its id,
    setting, status, metrics, suite hash, the context's achieved ratio and tokens, and ``extra``'s cluster id),
    not its texts: the closing table of ``rageval score`` / ``suite`` without the report holds a few hundred
    bytes per record instead of the whole record.
    """
    path = Path(run_dir)
    if not path.is_dir():
        raise RunError(f"run directory {str(path)!r} does not exist")
    rec_path, man_path = path / "records.jsonl", path / "manifest.json"
    if not rec_path.exists():  # not a regular file: refused by the reader
        raise RunError(
            f"{rec_path} is missing: run the command that writes it first (rageval suite FILE --out {path}, "
            f"or rageval score FILES --out {path})"
        )
    if not man_path.is_file():
        raise RunError(f"{man_path} is missing: the report needs the suite's manifest (settings, contrasts, seed)")
    manifest, suite = _read_manifest(path, man_path)
    records = _read_records(rec_path, keep=_slim(suite.get("cluster_key")) if slim else None)
    settings = _settings_of(suite, records, man_path)
    _check_settings(records, settings, suite, rec_path.name)
    return Run(path=path, manifest=manifest, records=records, settings=settings)


def _read_manifest(path: Path, man_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(manifest, its suite section or {})``."""
    try:  # the one reader of a run directory's manifest (a 0.1.0 one migrated)
        manifest = RunDir(path).read_manifest_data()
    except RunDirError as err:
        raise RunError(str(err)) from None
    suite = manifest.get("suite")
    if suite is not None and not isinstance(suite, dict):
        raise RunError(f"{man_path}: 'suite' must be an object, got {type(suite).__name__}")
    return manifest, suite or {}


def _read_records(
    rec_path: Path, keep: Callable[[dict[str, Any]], dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Every record of ``records.jsonl``, checked (:func:`_check_record`), with its line number as ``_line``;
    ``keep(record)``: the part of each record to hold (default: all of it)."""
    records: list[dict[str, Any]] = []
    text = read_text(rec_path, what="the run's records.jsonl", error=RunError)
    for lineno, rec in iter_json_lines(text, str(rec_path), error=_record_error):
        if not isinstance(rec, dict):
            raise RunError(f"{rec_path} line {lineno} must be a JSON object (one record)")
        _check_record(rec, f"{rec_path.name} line {lineno}")
        rec["_line"] = lineno
        records.append(rec if keep is None else keep(rec))
    return records


def _slim(cluster_key: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """What :func:`load_run` keeps of a record with ``slim=True``."""

    def keep(rec: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            k: rec[k] for k in ("question_id", "setting", "status", "metrics", "suite_hash", "_line") if k in rec
        }
        ctx = rec.get("context")
        if isinstance(ctx, dict):
            out["context"] = {k: ctx[k] for k in ("achieved_ratio", "achieved_tokens") if k in ctx}
        extra = rec["extra"]
        out["extra"] = {k: extra[k] for k in (cluster_key, "suite_hash") if isinstance(k, str) and k in extra}
        return out

    return keep


def _record_error(message: str) -> RunError:
    """A line of ``records.jsonl`` the one JSON reader refuses (:mod:`rageval.infiles`)."""
    return RunError(f"{message}: a truncated write? rerun the command that wrote it")


def _settings_of(suite: dict[str, Any], records: list[dict[str, Any]], man_path: Path) -> list[dict[str, Any]]:
    """``[{name, compressor, budget}]``: the suite's declared settings, else the records' in order of appearance."""
    declared = suite.get("settings")
    if declared:
        if not isinstance(declared, list) or not all(isinstance(s, Mapping) and "name" in s for s in declared):
            raise RunError(f"{man_path}: suite.settings must be a list of {{name, compressor, budget}} objects")
        return [{"name": s["name"], "compressor": s.get("compressor"), "budget": s.get("budget")} for s in declared]
    settings, seen = [], set()  # no declared settings: take them from the records, in order of appearance
    for r in records:
        s = r["setting"]
        if s["name"] not in seen:
            seen.add(s["name"])
            settings.append({"name": s["name"], "compressor": s.get("compressor"), "budget": s.get("budget")})
    return settings


def _check_settings(
    records: list[dict[str, Any]], settings: list[dict[str, Any]], suite: dict[str, Any], rec_name: str
) -> None:
    """Every record of a declared setting, with its compressor and budget, and of this suite's hash."""
    by_name = {s["name"]: s for s in settings}
    suite_name, suite_hash = suite.get("name"), suite.get("hash")
    for r in records:
        where = f"{rec_name} line {r['_line']}"
        s = r["setting"]
        decl = by_name.get(s["name"])
        if decl is None:
            raise RunError(
                f"{where}: setting {s['name']!r} is not a setting of suite {suite_name!r} "
                f"(manifest declares {list(by_name)}): records from different suites mixed?"
            )
        for field in ("compressor", "budget"):
            if field in s and decl.get(field) is not None and not _budget_eq(s.get(field), decl.get(field)):
                raise RunError(
                    f"{where}: setting {s['name']!r} has {field}={s.get(field)!r} but suite {suite_name!r} "
                    f"declares {decl.get(field)!r}: records from different suites mixed?"
                )
        rh = r.get("suite_hash", (r.get("extra") or {}).get("suite_hash"))
        if rh is not None and suite_hash is not None and rh != suite_hash:
            raise RunError(
                f"{where}: record of suite hash {rh!r} in a run of suite {suite_name!r} (hash {suite_hash!r}): "
                "records from different suites mixed"
            )


def _check_record(rec: dict[str, Any], where: str) -> None:
    if not isinstance(rec.get("question_id"), str):
        raise RunError(f"{where}: 'question_id' must be a string, got {rec.get('question_id')!r}")
    s = rec.get("setting")
    if isinstance(s, str):
        rec["setting"] = s = {"name": s}
    if not isinstance(s, dict) or not isinstance(s.get("name"), str):
        raise RunError(f"{where}: 'setting' must be an object with a string 'name', got {s!r}")
    if rec.get("status") not in STATUSES:
        raise RunError(f"{where}: status {rec.get('status')!r} is not one of {list(STATUSES)}")
    m = rec.get("metrics")
    if m is None:
        rec["metrics"] = {}
    elif not isinstance(m, dict):
        raise RunError(f"{where}: 'metrics' must be an object name -> value, got {type(m).__name__}")
    if rec.get("extra") is None:
        rec["extra"] = {}
