"""``rageval rescore``: recompute every metric of a run from its saved records, into a folder of its own.

The saved ``ok`` records become :class:`~rageval.diagnostics.inputs.ScoringInput` s
(:meth:`~rageval.diagnostics.inputs.ScoringInput.from_record`) and are scored
by :func:`rageval.diagnostics.dispatch.score` — the same path as the suite runner.

Nothing of the run is changed.  The rescored run is written to
``RUN_DIR/rescore-<judge>/`` (:func:`rescore_dir_name`): its own ``records.jsonl``
(the run's records, in the run's order, with the new metrics; failed records as
they were), its own ``manifest.json`` (the run's, with the judge replaced and a
``rescore`` section naming the judge, its id and the run it comes from),
``rescore_stats.json`` and its own report.  So a later ``rageval suite`` on the
run directory — which rebuilds ``records.jsonl`` from its record cache — can
never write the old scores over the rescored ones, and the rescored folder is a
run directory of its own for ``rageval report``.  Judge decisions are cached
with the run's (``RUN_DIR/cache/judge/``, keyed by judge id), so rescoring twice
makes no judge call.  The run directory's lock (:mod:`rageval.suite.lock`) is
held throughout.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rageval.errors import ConfigError
from rageval.io import dump_json_line, write_json_atomic, write_text_atomic

__all__ = ["RescoreError", "RescoreResult", "rescore", "rescore_dir_name"]


class RescoreError(ConfigError):
    """A run directory that cannot be rescored (not a run, a broken manifest or record, an unusable judge)."""


@dataclass(frozen=True)
class RescoreResult:
    out_dir: Path
    n_records: int
    rescored: int
    judge: str
    judge_id: str

    def __int__(self) -> int:  # the number of records, as ``rescore`` returned before
        return self.n_records


def rescore_dir_name(judge: str) -> str:
    """``rescore-<judge>``: the judge spec made file-system safe (with a short hash when anything was replaced).

    >>> rescore_dir_name("lexical"), rescore_dir_name("nli:/models/deberta")
    ('rescore-lexical', 'rescore-nli_models_deberta-02aa1f6d')
    """
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", judge).strip("._") or "judge"
    if slug != judge or len(slug) > 60:
        slug = f"{slug[:60]}-{hashlib.sha1(judge.encode()).hexdigest()[:8]}"
    return f"rescore-{slug}"


def _load(run_dir: Path) -> tuple[dict[str, Any], list[Any]]:
    from rageval.types import Record

    manifest_path = run_dir / "manifest.json"
    records_path = run_dir / "records.jsonl"
    for p in (manifest_path, records_path):
        if not p.is_file():
            raise RescoreError(f"{p} is missing: is {run_dir} a rageval run directory? (rageval suite FILE --out DIR)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        config = manifest["suite"]["config"]
        if not isinstance(config, dict):
            raise TypeError("suite.config is not an object")
    except (ValueError, KeyError, TypeError) as err:
        raise RescoreError(
            f"{manifest_path}: not a rageval manifest ({type(err).__name__}: {err}); rerun the suite"
        ) from None
    records = []
    try:
        lines = records_path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise RescoreError(f"{records_path}: not UTF-8 (byte {err.start}); rerun the suite to rebuild it") from None
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(Record.from_dict(json.loads(line)))
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise RescoreError(
                f"{records_path}: line {i}: not a valid record ({type(err).__name__}: {err}); rerun the suite"
            ) from None
    return manifest, records


def rescore(run_dir: str | Path, *, judge: str | None = None) -> RescoreResult:
    """Rescore the ``ok`` records of ``run_dir`` (with ``judge``, default the run's) into ``RUN_DIR/rescore-<judge>/``."""
    from pydantic import ValidationError

    from rageval.suite.config import Suite
    from rageval.suite.lock import OutDirLock

    run_dir = Path(run_dir)
    if judge is not None and not judge.strip():
        raise RescoreError("--judge is empty: give a judge spec (e.g. 'lexical') or leave the option out")
    with OutDirLock(run_dir, "rageval rescore"):
        manifest, records = _load(run_dir)
        if "score" in manifest:  # written by `rageval score`: its inputs are files, not a suite (docs/score.md)
            raise RescoreError(
                f"{run_dir} was written by `rageval score`: run `rageval score` again on the same files with "
                f"--judge ... --out {run_dir} (records whose inputs did not change are reused)"
            )
        cfg = dict(manifest["suite"]["config"])
        if judge is not None:
            cfg["judge"] = {**(cfg.get("judge") or {}), "spec": judge, "params": {}}
        try:
            suite = Suite.model_validate(cfg)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(map(str, first["loc"]))
            raise RescoreError(f"{run_dir / 'manifest.json'}: suite.config.{where}: {first['msg']}") from None
        from rageval.suite.checks import _judge_problems

        problems = _judge_problems(suite)
        if problems:
            raise RescoreError(f"--judge {suite.judge.spec!r}: " + "; ".join(p.strip() for p in problems))
        return _rescore(run_dir, manifest, records, suite)


def _rescore(run_dir: Path, manifest: dict[str, Any], records: list[Any], suite: Any) -> RescoreResult:
    from rageval.diagnostics.dispatch import score
    from rageval.diagnostics.inputs import ScoringInput
    from rageval.readers import PromptTemplate
    from rageval.suite.config import suite_hash
    from rageval.suite.plan import scoring_options
    from rageval.suite.runner import load_judge, write_report
    from rageval.text import get_tokenizer

    out = run_dir / rescore_dir_name(suite.judge.spec)
    runner = load_judge(suite, run_dir / "cache" / "judge", get_tokenizer(suite.tokenizer))
    try:
        template = PromptTemplate.coerce(suite.reader.template)
        idx = [i for i, r in enumerate(records) if r.status == "ok"]
        inputs = [ScoringInput.from_record(records[i], template.evidence_text) for i in idx]
        results = score(inputs, manifest["suite"].get("diagnostics") or [], scoring_options(suite), runner)
        for i, (metrics, extra) in zip(idx, results):
            records[i] = replace(records[i], metrics=metrics, extra={**records[i].extra, **extra})
        judge_id = str(getattr(runner, "id", suite.judge.spec))
        new_manifest = json.loads(json.dumps(manifest))  # a deep copy
        new_manifest["suite"]["config"] = suite.model_dump(mode="json", exclude={"source", "output_dir"})
        new_manifest["suite"]["hash"] = suite_hash(suite)
        new_manifest.setdefault("models", {})["judge"] = judge_id
        new_manifest.setdefault("offline_defaults", {})["judge"] = suite.judge.spec
        new_manifest["rescore"] = {
            "judge": suite.judge.spec,
            "judge_id": judge_id,
            "of_run": str(run_dir.resolve()),
            "of_suite_hash": manifest["suite"].get("hash"),
            "records": len(records),
            "rescored": len(idx),
        }
        lines = "".join(dump_json_line(r.to_dict()) + "\n" for r in records)
        write_text_atomic(out / "records.jsonl", lines, root=run_dir)
        write_json_atomic(out / "manifest.json", new_manifest, indent=2, root=run_dir)
        stats = {"rescored": len(idx), "judge": runner.stats() if hasattr(runner, "stats") else {}}
        write_json_atomic(out / "rescore_stats.json", stats, indent=2, root=run_dir)
    finally:
        close = getattr(runner, "close", None)
        if callable(close):
            close()
    write_report(out, suite.seed)
    return RescoreResult(out, len(records), len(idx), suite.judge.spec, judge_id)
