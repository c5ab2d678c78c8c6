"""grounded_precision: a thin ``evaluate`` wrapper over :func:`rageval.diagnostics.attribution.grounded_precision`.

The card (README.md beside this file) gives the definition, degenerate cases and reference parity.
"""

from typing import Any

import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
grounded_precision is ALCE's citation precision gate where each cited unit's premise is its
source text: the source snippets it declares, else the snippets recovered by re-attribution (BM25
top-k over the question's sources, kept when the judge says they entail the unit), else nothing.
A citation whose evidence is missing gets no precision credit and cannot support recall.  The
per-question output records each citation's evidence status (declared / recovered / missing) and
the emitted - grounded gap.
"""

_KWARGS_DESCRIPTION = (
    "\nArgs:\n"
    + _am.COMMON_ARGS
    + """\
    recovery_threshold: judge threshold for re-attribution candidates (default: threshold).
    k: BM25 candidates per unit (default 10).  multi_snippet: also try joined snippet pairs (default False).
    candidates: "bm25" (default) or a callable (query, source_texts, k) -> indices.
Returns:
    grounded_precision: mean in [0, 1] (higher is better) or None; grounded_precision_excl_abstain;
    emitted_minus_grounded_precision (the gap).  per_question also holds the recalls and emitted values.
    n, n_undefined; per_question with citations_declared / _recovered / _missing and details.
Examples:
    >>> m = evaluate.load("grounded_precision")
    >>> r = m.compute(predictions=["Paris is the capital of France [1]."], units=[[{"text": "Paris is the capital of France.", "source_ids": None}, {"text": "Lyon is big.", "source_ids": ["d1.s0"]}]], sources=[[{"id": "d0.s0", "text": "Paris is the capital of France."}, {"id": "d1.s0", "text": "Lyon is a big city."}]])
    >>> r["grounded_precision"], r["per_question"][0]["citations_recovered"]
    (1.0, 1)
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class GroundedPrecision(_am.AttributionMetric):
    NAME = "grounded_precision"
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
        recovery_threshold: float | None = None,
        k: int = _am.DEFAULT_RECOVERY_K,
        multi_snippet: bool = _am.DEFAULT_MULTI_SNIPPET,
        candidates: Any = _am.DEFAULT_CANDIDATES,
        cache_dir: Any = None,
        details: bool = True,
    ) -> dict[str, Any]:
        return self._score(locals())
