"""rageval.report: tables, frontier plots and the HTML report of a run directory.

``build_report(run_dir)`` rebuilds everything from ``records.jsonl`` and
``manifest.json`` with no model calls; ``parse_contrasts`` validates a suite's
``contrasts:`` spec (see :mod:`rageval.report.contrasts` for the format).
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_report", "parse_contrasts", "ContrastRow", "RunError"]


def __getattr__(name: str) -> Any:  # lazy: the suite validator imports parse_contrasts without numpy work
    if name == "build_report":
        from rageval.report.build import build_report

        return build_report
    if name in ("parse_contrasts", "ContrastRow"):
        from rageval.report import contrasts

        return getattr(contrasts, name)
    if name == "RunError":
        from rageval.report.load import RunError

        return RunError
    raise AttributeError(name)
