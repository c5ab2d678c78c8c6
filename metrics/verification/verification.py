"""verification: a thin ``evaluate`` wrapper over :func:`rageval.diagnostics.verification.verification`.

The card (README.md beside this file) gives the definition, degenerate cases and reference parity.
"""

from typing import Any

import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
verification: claims are the answer's sentences; unsupported rate = unsupported claims / claims
in three modes: summary-checked (the cited unit texts must entail the claim), declared-span (the
declared source snippets of the cited units; a claim whose cited units declare nothing is rejected
structurally, without a judge call, and counted), recovered-source (missing mappings filled by
re-attribution, source ids de-duplicated).  Zero-claim answers are undefined and counted.  The
aggregate under "verification" is the recovered-source rate; lower is better.  Verifier input
tokens per mode and recovery candidates scored are returned.
"""

_KWARGS_DESCRIPTION = (
    "\nArgs:\n"
    + _am.COMMON_ARGS
    + """\
    recovery_threshold, k, multi_snippet, candidates: re-attribution options (see grounded_precision).
Returns:
    verification (= unsupported_recovered_source), unsupported_summary_checked, unsupported_declared_span:
    means in [0, 1] (lower is better) or None; total_verifier_tokens_<mode>, total_recovery_candidates_scored,
    n_zero_claim, n, n_undefined, per_question.
Examples:
    >>> m = evaluate.load("verification")
    >>> r = m.compute(predictions=["Paris is the capital of France [1]."], units=[[{"text": "Paris is the capital of France.", "source_ids": None}, {"text": "Lyon is big.", "source_ids": ["d1.s0"]}]], sources=[[{"id": "d0.s0", "text": "Paris is the capital of France."}, {"id": "d1.s0", "text": "Lyon is a big city."}]])
    >>> r["unsupported_summary_checked"], r["unsupported_declared_span"], r["unsupported_recovered_source"]
    (0.0, 1.0, 0.0)
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Verification(_am.AttributionMetric):
    NAME = "verification"
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
