"""claim_support: a thin ``evaluate`` wrapper over :func:`rageval.diagnostics.claim_support.claim_support`.

The card (README.md beside this file) gives the definition, degenerate cases and how it differs from
``verification``.
"""

from typing import Any

import datasets
import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
claim_support: citation-free claim support.  Claims are the answer's sentences (citation markers
removed) or the claims given per question; a claim is supported in emitted mode when at least one
unit the reader saw entails it (each unit alone; claim_premise="joint": all units pooled), in
grounded mode when the source snippets of at least one unit (declared, else recovered by
re-attribution) entail it; a claim whose units have no source is unsupported without a judge call
(structural rejection, counted).  Per question: the supported-claim rates in both modes (higher is
better), their gap, the claims, structural rejections, abstentions, truncated pairs and verifier
tokens.  A question without a claim is undefined.
"""

_KWARGS_DESCRIPTION = (
    "\nArgs:\n"
    + _am.COMMON_ARGS
    + """\
    claims: per question, its claims (list[str]) or None for the answer's sentences (default: None for all).
    claim_premise: "single" (default; each unit its own premise, max over units) or "joint" (all units pooled).
    grounding: "single" (default; a unit without provenance in the snippets recovered one by one) or "union"
        (its top-k recovery candidates joined in source order: refined texts that span several sources).
    recovery_threshold, k, multi_snippet, candidates: re-attribution options (see grounded_precision).
Returns:
    claim_support (= claim_support_grounded), claim_support_emitted, claim_support_grounded (and
    _excl_abstain): means in [0, 1] or None (higher is better);
    claim_support_gap (emitted - grounded); total_claim_support_<count>; n, n_undefined, per_question.
Examples:
    >>> m = evaluate.load("claim_support")
    >>> units = [[{"text": "Paris is the capital of France.", "source_ids": None}, {"text": "Lyon is big.", "source_ids": ["d1"]}]]
    >>> sources = [[{"id": "d1", "text": "Lyon is a big city."}, {"id": "d2", "text": "Berlin is in Germany."}]]
    >>> r = m.compute(predictions=["Paris is the capital of France. Lyon is big."], units=units, sources=sources)
    >>> r["claim_support_emitted"], r["claim_support_grounded"], r["claim_support_gap"]
    (1.0, 0.5, 0.5)
    >>> r = m.compute(predictions=["Lyon is big."], units=units, sources=sources, claims=[["Berlin is in Germany."]])
    >>> r["claim_support_emitted"], r["total_claim_support_claims_given"]
    (0.0, 1)
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ClaimSupport(_am.AttributionMetric):
    NAME = "claim_support"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION
    EXTRA_FEATURES = staticmethod(lambda: {"claims": datasets.Json()})

    def _compute(
        self,
        predictions: list[str],
        units: list[list[dict[str, Any]]],
        sources: list[list[dict[str, Any]]],
        claims: list[list[str] | None],
        *,
        judge: Any = _am.DEFAULT_JUDGE,
        threshold: float = _am.DEFAULT_THRESHOLD,
        max_citations: int | None = _am.DEFAULT_MAX_CITATIONS,
        alce_compat: bool = False,
        claim_premise: str = _am.DEFAULT_CLAIM_PREMISE,
        grounding: str = _am.DEFAULT_GROUNDING,
        recovery_threshold: float | None = None,
        k: int = _am.DEFAULT_RECOVERY_K,
        multi_snippet: bool = _am.DEFAULT_MULTI_SNIPPET,
        candidates: Any = _am.DEFAULT_CANDIDATES,
        cache_dir: Any = None,
    ) -> dict[str, Any]:
        return self._score(locals())
