"""The diagnostics: pure metric functions and their catalog.

``CATALOG`` is static metadata (no imports of the metric code), so ``rageval
metrics`` and the suite validator can list diagnostics without loading anything
heavy.  ``get(name)`` imports and returns the pure function.  Each entry's
``version`` is bumped whenever a score can change; the evaluate module and its
card carry the same number (a common test checks they agree).
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from typing import Callable

__all__ = ["DiagnosticInfo", "CATALOG", "get", "names", "unknown_name_error"]


@dataclass(frozen=True)
class DiagnosticInfo:
    name: str
    version: str
    target: str  # "module:function" of the pure function
    summary: str
    direction: str  # "higher" | "lower" | "none"
    also: tuple[str, ...] = ()  # other aggregates the function returns
    kind: str = "answer"  # "answer" | "retrieval" | "attribution" | "cost"


CATALOG: dict[str, DiagnosticInfo] = {
    d.name: d
    for d in [
        DiagnosticInfo(
            "answer_in_context", "1.0.0", "rageval.diagnostics.answer:answer_in_context",
            "Gold answer survives as a contiguous token span inside one unit of the packed context.",
            "higher",
        ),
        DiagnosticInfo(
            "str_em", "1.0.0", "rageval.diagnostics.answer:str_em",
            "ALCE str-EM: share of ASQA qa_pairs whose short answer appears in the answer.",
            "higher", also=("str_hit",),
        ),
        DiagnosticInfo(
            "answer_f1", "1.0.0", "rageval.diagnostics.answer:answer_f1",
            "HotpotQA/SQuAD token F1 of the answer, max over gold aliases.",
            "higher", also=("answer_em",),
        ),
        DiagnosticInfo(
            "retrieval_recall", "1.0.0", "rageval.diagnostics.retrieval:retrieval_recall",
            "Fraction of gold documents among the top-k retrieved.",
            "higher", also=("all_gold",), kind="retrieval",
        ),
        DiagnosticInfo(
            "gold_coverage", "1.0.0", "rageval.diagnostics.coverage:gold_coverage",
            "Fraction of gold documents with at least one context unit declaring one of their sentences.",
            "higher", kind="retrieval",
        ),
        DiagnosticInfo(
            "emitted_precision", "1.0.0", "rageval.diagnostics.attribution:emitted_precision",
            "ALCE citation precision, premise = the unit text the reader saw.",
            "higher", also=("emitted_recall",), kind="attribution",
        ),
        DiagnosticInfo(
            "emitted_recall", "1.0.0", "rageval.diagnostics.attribution:emitted_recall",
            "ALCE citation recall, premise = the unit text the reader saw.",
            "higher", also=("emitted_precision",), kind="attribution",
        ),
        DiagnosticInfo(
            "grounded_precision", "1.0.0", "rageval.diagnostics.attribution:grounded_precision",
            "Citation precision against the cited units' declared, else recovered, source snippets.",
            "higher", also=("grounded_recall", "emitted_precision", "emitted_recall",
                            "emitted_minus_grounded_precision", "emitted_minus_grounded_recall"),
            kind="attribution",
        ),
        DiagnosticInfo(
            "grounded_recall", "1.0.0", "rageval.diagnostics.attribution:grounded_recall",
            "Citation recall against the cited units' declared, else recovered, source snippets.",
            "higher", also=("grounded_precision", "emitted_precision", "emitted_recall",
                            "emitted_minus_grounded_precision", "emitted_minus_grounded_recall"),
            kind="attribution",
        ),
        DiagnosticInfo(
            "re_attributability", "1.0.0", "rageval.diagnostics.attribution:re_attributability",
            "Share of units without declared provenance for which a BM25 candidate source snippet passes the judge.",
            "higher", kind="attribution",
        ),
        DiagnosticInfo(
            "verification", "1.0.0", "rageval.diagnostics.verification:verification",
            "Unsupported-claim rate in three modes: summary-checked, declared-span, recovered-source (aggregate).",
            "lower", also=("unsupported_summary_checked", "unsupported_declared_span", "unsupported_recovered_source"),
            kind="attribution",
        ),
        DiagnosticInfo(
            "evidence_f1", "1.0.0", "rageval.diagnostics.evidence:evidence_f1",
            "QASPER evidence-F1 of the paragraphs declared by the cited units, max over annotators.",
            "higher", kind="attribution",
        ),
        DiagnosticInfo(
            "compression", "1.0.0", "rageval.diagnostics.compression:compression",
            "Achieved compression ratio (context / retrieved tokens) with the verification cost roll-up.",
            "none", kind="cost",
        ),
    ]
}


def names() -> list[str]:
    return sorted(CATALOG)


def unknown_name_error(name: str, where: str = "diagnostic") -> ValueError:
    close = difflib.get_close_matches(name, names(), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else f" Known: {', '.join(names())}."
    return ValueError(f"Unknown {where} {name!r}.{hint}")


def get(name: str) -> Callable:
    """The pure function of diagnostic ``name``."""
    if name not in CATALOG:
        raise unknown_name_error(name)
    module, func = CATALOG[name].target.split(":")
    return getattr(importlib.import_module(module), func)
