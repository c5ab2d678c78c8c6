"""The order of the report's tables: the diagnostics whose main outputs lead them (a module of its own, so the
console's headline table, ``summary.md`` and the analysis read one list without importing each other)."""

from __future__ import annotations

__all__ = ["REPORT_ORDER"]

#: The diagnostics whose main outputs lead the tables, in this order; every other metric follows alphabetically.
#: A main output is one with a direction that is not an ``_excl_abstain`` view (docs/design.md#abstentions).
#: This is the published column order of summary.csv (headline answer metrics first, then retrieval, then
#: attribution), not the catalog's order: a diagnostic added to the catalog later (e.g. ``gold_coverage``)
#: stays in the alphabetical rest, so existing columns never move.  The only list of diagnostics in the report.
REPORT_ORDER = (
    "answer_f1",
    "str_em",
    "answer_in_context",
    "retrieval_recall",
    "emitted_precision",
    "grounded_precision",
    "emitted_recall",
    "grounded_recall",
    "re_attributability",
    "verification",
    "evidence_f1",
)
