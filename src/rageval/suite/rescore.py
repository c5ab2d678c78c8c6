"""``rageval rescore``: recompute every metric of a run directory from its saved records (no generation).

The saved ``ok`` records become :class:`~rageval.diagnostics.inputs.ScoringInput` s
(:meth:`~rageval.diagnostics.inputs.ScoringInput.from_record`) and are scored
by :func:`rageval.diagnostics.dispatch.score` — the same path as the suite runner.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from rageval.io import dump_json_line, write_json_atomic, write_text_atomic

__all__ = ["rescore"]


def _load(run_dir: Path):
    from rageval.suite.config import Suite
    from rageval.types import Record

    manifest_path = run_dir / "manifest.json"
    records_path = run_dir / "records.jsonl"
    for p in (manifest_path, records_path):
        if not p.is_file():
            raise FileNotFoundError(f"{p} is missing: is {run_dir} a rageval run directory?")
    manifest = json.loads(manifest_path.read_text())
    records = []
    for i, line in enumerate(records_path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(Record.from_dict(json.loads(line)))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{records_path}:{i}: not a valid record ({err})") from None
    return manifest, Suite, records


def rescore(run_dir: Path, *, judge: str | None = None) -> int:
    """Recompute metrics of every ``ok`` record from saved contexts and answers; rebuild the report."""
    from rageval.diagnostics.dispatch import score
    from rageval.diagnostics.inputs import ScoringInput
    from rageval.readers import PromptTemplate
    from rageval.suite.plan import scoring_options
    from rageval.suite.runner import load_judge, write_report
    from rageval.text import get_tokenizer

    run_dir = Path(run_dir)
    manifest, Suite, records = _load(run_dir)
    cfg = dict(manifest["suite"]["config"])
    if judge:
        cfg["judge"] = dict(cfg.get("judge", {}), spec=judge)
    suite = Suite.model_validate(cfg)
    runner = load_judge(suite, run_dir / "cache" / "judge", get_tokenizer(suite.tokenizer))
    template = PromptTemplate.coerce(suite.reader.template)
    idx = [i for i, r in enumerate(records) if r.status == "ok"]
    inputs = [ScoringInput.from_record(records[i], template.evidence_text) for i in idx]
    results = score(inputs, manifest["suite"].get("diagnostics") or [], scoring_options(suite), runner)
    for i, (metrics, extra) in zip(idx, results):
        records[i] = replace(records[i], metrics=metrics, extra={**records[i].extra, **extra})
    write_text_atomic(run_dir / "records.jsonl", "\n".join(dump_json_line(r.to_dict()) for r in records) + "\n")
    stats = {"rescored": len(idx), "judge": runner.stats() if hasattr(runner, "stats") else {}}
    write_json_atomic(run_dir / "rescore_stats.json", stats, indent=2)
    write_report(run_dir, suite.seed)
    return len(records)
