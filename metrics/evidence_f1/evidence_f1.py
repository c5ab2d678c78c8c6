"""evidence_f1: a thin ``evaluate`` wrapper over :func:`rageval.diagnostics.evidence.evidence_f1`.

The card (README.md beside this file) gives the definition, degenerate cases and reference parity.
"""

from typing import Any

import datasets
import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
evidence_f1 (QASPER): the declared source ids of the cited units are mapped to their paragraphs;
set-F1 against each annotator's gold evidence paragraphs, max over annotators; both empty = 1.
Undefined for a question whose context declares no provenance at all (or has no annotator).
"""

_KWARGS_DESCRIPTION = (
    "\nArgs:\n"
    + _am.COMMON_ARGS
    + """\
    references: per question, one list of gold evidence paragraph ids per annotator.
    paragraph_of: per question a dict source id -> paragraph id (default: the id up to its last ".s").
Returns:
    evidence_f1: mean in [0, 1] (higher is better) or None; n, n_undefined;
    per_question: [{"evidence_f1", "predicted_paragraphs"}].
Examples:
    >>> m = evaluate.load("evidence_f1")
    >>> m.compute(predictions=["Lyon is big [2]."], units=[[{"text": "Paris is the capital of France.", "source_ids": None}, {"text": "Lyon is big.", "source_ids": ["d1.s0"]}]], sources=[[{"id": "d0.s0", "text": "Paris is the capital of France."}, {"id": "d1.s0", "text": "Lyon is a big city."}]],
    ...           references=[[["d1"]]], paragraph_of=[{"d0.s0": "d0", "d1.s0": "d1"}])["evidence_f1"]
    1.0
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class EvidenceF1(_am.AttributionMetric):
    NAME = "evidence_f1"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION
    EXTRA_FEATURES = staticmethod(
        lambda: {"references": datasets.List(datasets.List(datasets.Value("string"))), "paragraph_of": datasets.Json()}
    )

    def _compute(
        self,
        predictions: list[str],
        units: list[list[dict[str, Any]]],
        sources: list[list[dict[str, Any]]],
        references: list[list[list[str]]],
        paragraph_of: list[dict[str, str] | None],
        *,
        max_citations: int | None = _am.DEFAULT_MAX_CITATIONS,
        alce_compat: bool = False,
        unmatched_gold: str = "count",
    ) -> dict[str, Any]:
        return self._score(locals())
