"""re_attributability: a thin ``evaluate`` wrapper over :func:`rageval.diagnostics.attribution.re_attributability`.

The card (README.md beside this file) gives the definition, degenerate cases and reference parity.
"""

from typing import Any

import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
re_attributability is, per question, the share of context units without declared provenance
for which at least one of the top-k (default 10) BM25 candidates among the question's source
snippets is judged to entail the unit (probability >= recovery threshold, default 0.5).  Undefined
for a question whose units all declare provenance.  predictions are accepted for the common
interface and not used.
"""

_KWARGS_DESCRIPTION = (
    "\nArgs:\n"
    + _am.COMMON_ARGS
    + """\
    recovery_threshold (default: threshold), k, multi_snippet, candidates: see grounded_precision.
Returns:
    re_attributability: mean in [0, 1] (higher is better) or None.
    n, n_undefined; per_question: units_without_provenance, re_attributable_units, reattribution_candidates_scored.
Examples:
    >>> m = evaluate.load("re_attributability")
    >>> m.compute(predictions=[""], units=[[{"text": "Paris is the capital of France.", "source_ids": None}, {"text": "Lyon is big.", "source_ids": ["d1.s0"]}]], sources=[[{"id": "d0.s0", "text": "Paris is the capital of France."}, {"id": "d1.s0", "text": "Lyon is a big city."}]])["re_attributability"]
    1.0
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ReAttributability(_am.AttributionMetric):
    NAME = "re_attributability"
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
        recovery_threshold: float | None = None,
        k: int = _am.DEFAULT_RECOVERY_K,
        multi_snippet: bool = _am.DEFAULT_MULTI_SNIPPET,
        candidates: Any = _am.DEFAULT_CANDIDATES,
        cache_dir: Any = None,
        details: bool = True,
    ) -> dict[str, Any]:
        return self._score(locals())
