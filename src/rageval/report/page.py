"""The reading layout of report.html: the means split into tables that fit the page (the science first, the
counters folded), structural values marked, one frontier section, and examples without empty blocks.

Everything here turns the analysis into template context (:mod:`rageval.report.html` renders it); the numbers
are the analysis's, formatted as the other tables format them (:mod:`rageval.report.tables`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rageval.report import tables as T
from rageval.report.result import Analysis

__all__ = ["means_blocks", "frontier_figures", "examples_split"]


def _cell(an: Analysis, row: Mapping[str, Any], m: str, marks: list[str], undefined: str) -> Any:
    text = T.mean_cell(row, m, undefined)
    mark = T.structural_mark(an, row["setting"], m)
    if not mark:
        return text
    if mark["reason"] not in marks:
        marks.append(mark["reason"])
    return {"text": text, "mark": marks.index(mark["reason"]) + 1, "title": mark["reason"]}


def _tables(an, fam: str, keys: Sequence[str], tid: str, links, marks: list[str], undefined: str) -> list[dict]:
    out = []
    for i, (lead, chunk) in enumerate(T.means_chunks(fam, keys)):
        rows = [[*T.lead_cells(r, lead), *[_cell(an, r, m, marks, undefined) for m in chunk]] for r in an.summary]
        cols = [*lead, *map(T.headed, chunk)]
        out.append({"id": tid + ("" if i == 0 else f"-{i + 1}"), "columns": cols, "rows": rows, "links": links})
    return out


def means_blocks(an: Analysis, links: Sequence[str], *, undefined: str = "undefined") -> list[dict]:
    """Per family: ``{"family", "tables", "extra", "n_extra", "marks"}``: the science in tables of at most
    :data:`~rageval.report.tables.MAX_COLUMNS` metrics (``summary-table-<family>``, then ``-2``, ...), the
    counters and views in ``extra`` (folded), and the numbered reasons of the values marked as known by
    construction."""
    out = []
    for fam, main, extra in T.family_columns(an):
        marks: list[str] = []
        tid = f"summary-table-{fam}"
        out.append(
            {
                "family": fam,
                "tables": _tables(an, fam, main, tid, links, marks, undefined),
                "extra": _tables(an, fam, extra, f"{tid}-counters", links, marks, undefined),
                "n_extra": len(extra),
                "marks": marks,
            }
        )
    return out


def frontier_figures(an: Analysis, figures: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The per-metric frontier figures (:func:`rageval.report.page_figures.page_figures`) that a Pareto pair does
    not already show (the same axes twice)."""
    pareto_y = {p["y"] for p in an.frontier.get("pairs", []) if p.get("x") == "achieved_ratio"}
    return [f for f in figures.values() if not (len(f["panels"]) == 1 and f["panels"][0]["key"] in pareto_y)]


def examples_split(settings: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """``(settings with an example to show, settings with none)``: the second become one line, not a block each."""
    some = [s for s in settings if (s["left"] and s["left"]["n"]) or s["eng"]["n"]]
    return some, [s for s in settings if s not in some]
