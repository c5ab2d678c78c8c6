"""The numbers a person and a CI job read at the end of ``rageval score`` and ``rageval suite``: each setting's
headline metrics as a compact table, and the summary as JSON (``rageval score --json``).

The headline metrics are each diagnostic's first output (its name: ``answer_f1``, ``str_em``,
``emitted_precision``, ...; verification's ``unsupported_summary_checked``), in the report's column order,
where some setting has a defined mean; the means are the summary's (:func:`rageval.report.analysis.summarize`,
the same numbers as ``summary.csv``: the common cohort, undefined values left out and counted).

>>> rows = [{"setting": "base", "n_cohort": 2, "metrics": {"answer_f1": {"mean": 0.5, "n": 2, "n_undefined": 0},
...          "str_em": {"mean": None, "n": 0, "n_undefined": 2}}}]
>>> print(headline_table({"metric_names": ["answer_f1", "str_em"], "summary": rows}))
setting  n  answer_f1
base     2  0.500
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rageval.escape import console_text
from rageval.io import json_text
from rageval.report.first_screen import defined as _defined
from rageval.report.first_screen import headline_metrics
from rageval.report.judge_note import judge_json

__all__ = ["headline_metrics", "headline_table", "run_summary", "summary_json"]


def _cell(v: Any) -> str:
    return f"{v:.3f}" if _defined(v) else "—"


def headline_table(summary: Mapping[str, Any]) -> str:
    """One line per setting: its name, the questions in the common cohort and the headline means (``—``:
    undefined), columns aligned with spaces."""
    keys = headline_metrics(summary)
    table = [["setting", "n", *keys]]
    for r in summary.get("summary") or []:
        table.append(
            [console_text(r["setting"]), str(r.get("n_cohort", "")), *(_cell(r["metrics"][k]["mean"]) for k in keys)]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table)


def run_summary(run_dir: str | Path, report_json: str | Path | None = None) -> dict[str, Any]:
    """The summary of the run in ``run_dir``: from its ``report.json`` when given (the report just built: with
    the intervals and the contrasts), else computed from its records (:func:`rageval.report.analysis.summarize`);
    with the run's manifest (``manifest``: its judge)."""
    if report_json is not None:
        an = json.loads(Path(report_json).read_text(encoding="utf-8"))
        keys = ("cohort", "metric_names", "gaps", "summary", "findings", "frontier", "contrasts")
        return {**{k: an.get(k) for k in keys}, "manifest": _manifest(run_dir)}
    from rageval.report.analysis import summarize
    from rageval.report.load import load_run

    run = load_run(run_dir, slim=True)  # the texts are not needed: not held
    return {**summarize(run), "manifest": run.manifest}


def _manifest(run_dir: str | Path) -> dict[str, Any]:
    """The run's ``manifest.json`` (its judge and readers name the first screen's judge), empty where unreadable."""
    try:
        data = json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def summary_json(summary: Mapping[str, Any], extra: Mapping[str, Any], settings: Sequence[str] = ()) -> str:
    """The JSON ``rageval score --json`` prints: ``extra`` (the run's counts, notes and paths), the headline
    metrics, the judge (:func:`rageval.report.judge_note.judge_json`), the cohort, each setting's summary row (means, ``n`` and ``n_undefined`` per metric) and the
    findings (none when the summary was computed without the report)."""
    doc = {
        **extra,
        "settings": list(settings) or [r["setting"] for r in summary.get("summary") or []],
        "headline": headline_metrics(summary),
        "judge": judge_json(summary.get("manifest")),
        "cohort": summary.get("cohort"),
        "summary": summary.get("summary"),
        "findings": summary.get("findings") or [],  # report.json's (rageval.report.findings)
    }
    return json_text(doc, sort_keys=False, indent=2, default=str)  # undefined (NaN) as null: strict JSON
