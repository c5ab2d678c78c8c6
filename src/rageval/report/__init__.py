"""rageval.report: tables, frontier plots and the HTML report of a run directory.

``build_report(run_dir)`` rebuilds everything from ``records.jsonl`` and
``manifest.json`` with no model calls; ``parse_contrasts`` validates a suite's
``contrasts:`` spec (see :mod:`rageval.stats.contrasts` for the format).
"""

from __future__ import annotations

from typing import Any

from rageval.report.load import RunError
from rageval.stats.contrasts import ContrastRow, parse_contrasts

__all__ = ["build_report", "parse_contrasts", "ContrastRow", "RunError"]


def __getattr__(name: str) -> Any:  # lazy: the report's builder loads numpy; the suite validator needs none of it
    if name == "build_report":
        from rageval.report.build import build_report

        return build_report
    raise AttributeError(name)
