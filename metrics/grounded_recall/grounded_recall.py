"""grounded_recall: a thin ``evaluate`` wrapper over :func:`rageval.diagnostics.attribution.grounded_recall`.

The card (README.md beside this file) gives the definition, degenerate cases and reference parity.
"""

from typing import Any

import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
grounded_recall is ALCE's citation recall where each cited unit's premise is its source text:
the declared source snippets, else the recovered ones, else nothing (such a citation cannot
support the sentence).  Per sentence 0/1, per question the mean over sentences; an empty answer is
undefined.  The emitted - grounded gap is in the output.
"""

_KWARGS_DESCRIPTION = (
    "\nArgs:\n"
    + _am.COMMON_ARGS
    + """\
    recovery_threshold, k, multi_snippet, candidates: re-attribution options (see grounded_precision).
Returns:
    grounded_recall: mean in [0, 1] (higher is better) or None; grounded_recall_excl_abstain;
    emitted_minus_grounded_recall (the gap).  per_question also holds the precisions and emitted values.
    n, n_undefined; per_question with evidence status counts and details.
Examples:
    >>> m = evaluate.load("grounded_recall")
    >>> m.compute(predictions=["Lyon is big [2]."], units=[[{"text": "Paris is the capital of France.", "source_ids": None}, {"text": "Lyon is big.", "source_ids": ["d1.s0"]}]], sources=[[{"id": "d0.s0", "text": "Paris is the capital of France."}, {"id": "d1.s0", "text": "Lyon is a big city."}]])["grounded_recall"]
    1.0
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class GroundedRecall(_am.AttributionMetric):
    NAME = "grounded_recall"
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
        recovery_threshold: float | None = None,
        k: int = _am.DEFAULT_RECOVERY_K,
        multi_snippet: bool = _am.DEFAULT_MULTI_SNIPPET,
        candidates: Any = _am.DEFAULT_CANDIDATES,
        cache_dir: Any = None,
        details: bool = True,
    ) -> dict[str, Any]:
        return self._score(locals())
