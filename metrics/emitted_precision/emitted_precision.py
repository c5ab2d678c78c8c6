"""emitted_precision: a thin ``evaluate`` wrapper over :func:`rageval.diagnostics.attribution.emitted_precision`.

The card (README.md beside this file) gives the definition, degenerate cases and reference parity.
"""

from typing import Any

import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
emitted_precision is ALCE's citation precision where the premise of each cited unit is the unit
text the reader saw.  Per citation, ALCE's gate: if the sentence is jointly entailed by its cited
units and has more than one citation, a citation is imprecise only when it alone does not entail the
sentence and the other citations still entail it without it; if the sentence is not jointly
entailed, all its citations are imprecise; a single supported citation is precise.  Per question:
precise / citations (invalid citations such as [9] or [0] count as imprecise; an answer citing
nothing scores 0, or None with no_citation_precision="undefined"); an empty answer is undefined.
The aggregate is the question-weighted mean; per_question also holds emitted_recall.
"""

_KWARGS_DESCRIPTION = (
    "\nArgs:\n"
    + _am.COMMON_ARGS
    + """\
    no_citation_precision: "zero" (default, ALCE) or "undefined" for an answer that cites nothing.
Returns:
    emitted_precision: mean over defined questions in [0, 1] (higher is better) or None;
    emitted_precision_excl_abstain (judge abstentions left out).
    n, n_undefined; per_question: [{"emitted_precision", "emitted_recall", "n_citations", "details"}].
Examples:
    >>> m = evaluate.load("emitted_precision")
    >>> r = m.compute(predictions=["Paris is the capital of France [1][2]."], units=[[{"text": "Paris is the capital of France.", "source_ids": None}, {"text": "Lyon is big.", "source_ids": ["d1.s0"]}]], sources=[[{"id": "d0.s0", "text": "Paris is the capital of France."}, {"id": "d1.s0", "text": "Lyon is a big city."}]])
    >>> r["emitted_precision"], r["per_question"][0]["emitted_recall"]
    (0.5, 1.0)
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class EmittedPrecision(_am.AttributionMetric):
    NAME = "emitted_precision"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION

    def _compute(
        self,
        predictions: list[str],
        units: list[list[dict[str, Any]]],
        sources: list[list[dict[str, Any]]],
        *,
        judge: Any = _am.DEFAULT_JUDGE,
        threshold: float = _am.DEFAULT_THRESHOLD,
        max_citations: int | None = _am.DEFAULT_MAX_CITATIONS,
        alce_compat: bool = False,
        no_citation_precision: str = _am.DEFAULT_NO_CITATION_PRECISION,
        cache_dir: Any = None,
        details: bool = True,
    ) -> dict[str, Any]:
        return self._score(locals())
