"""emitted_recall: a thin ``evaluate`` wrapper over :func:`rageval.diagnostics.attribution.emitted_recall`.

The card (README.md beside this file) gives the definition, degenerate cases and reference parity.
"""

from typing import Any

import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
emitted_recall is ALCE's citation recall where the premise of each cited unit is the unit text
the reader saw: per sentence 1 if the judge says the joined texts of its cited units (at most
max_citations) entail the sentence with its citation markers removed, else 0 (a sentence without
citations scores 0); per question the mean over sentences; an empty answer is undefined.
"""

_KWARGS_DESCRIPTION = (
    "\nArgs:\n"
    + _am.COMMON_ARGS
    + """\
Returns:
    emitted_recall: mean over defined questions in [0, 1] (higher is better) or None;
    emitted_recall_excl_abstain (judge abstentions left out).
    n, n_undefined; per_question: [{"emitted_recall", "emitted_precision", "n_citations", "details"}].
Examples:
    >>> m = evaluate.load("emitted_recall")
    >>> m.compute(predictions=["Paris is the capital of France [1]."], units=[[{"text": "Paris is the capital of France.", "source_ids": None}, {"text": "Lyon is big.", "source_ids": ["d1.s0"]}]], sources=[[{"id": "d0.s0", "text": "Paris is the capital of France."}, {"id": "d1.s0", "text": "Lyon is a big city."}]])["emitted_recall"]
    1.0
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class EmittedRecall(_am.AttributionMetric):
    NAME = "emitted_recall"
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
        cache_dir: Any = None,
        details: bool = True,
    ) -> dict[str, Any]:
        return self._score(locals())
