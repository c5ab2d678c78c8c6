"""compression: a thin ``evaluate`` wrapper over :func:`rageval.diagnostics.compression.compression`.

The card (README.md beside this file) gives the definition, degenerate cases and reference parity.
"""

from typing import Any

import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
compression: per question the nominal budget, the achieved context tokens, the retrieved tokens
and the achieved ratio (context / retrieved, the aggregate "compression"), plus the verification
cost roll-up: reader input tokens + verifier input tokens per verification mode, and the
re-attribution candidates scored (and their tokens), which cost accounts usually leave out.
Titles count in neither achieved nor retrieved tokens (one definition: rageval.token_counts).
"""

_KWARGS_DESCRIPTION = (
    "\nArgs:\n"
    + _am.COMMON_ARGS
    + """\
    budget_tokens, retrieved_tokens, achieved_tokens, reader_input_tokens: optional per-question counts.
    tokenizer: the suite tokenizer for counts it has to make (default "regex").
Returns:
    compression: mean achieved ratio or None (lower = more compressed; no better direction);
    means of achieved/retrieved/budget tokens, verifier_tokens_<mode>, cost_<mode>; n, n_undefined, per_question.
Examples:
    >>> m = evaluate.load("compression")
    >>> m.compute(predictions=["Lyon is big [2]."], units=[[{"text": "Paris is the capital of France.", "source_ids": None}, {"text": "Lyon is big.", "source_ids": ["d1.s0"]}]], sources=[[{"id": "d0.s0", "text": "Paris is the capital of France."}, {"id": "d1.s0", "text": "Lyon is a big city."}]])["compression"]
    0.8461538461538461
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Compression(_am.AttributionMetric):
    NAME = "compression"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION

    def _compute(
        self,
        predictions: list[str],
        units: list[list[dict[str, Any]]],
        sources: list[list[dict[str, Any]]],
        *,
        budget_tokens: list[int | None] | None = None,
        retrieved_tokens: list[int | None] | None = None,
        achieved_tokens: list[int | None] | None = None,
        reader_input_tokens: list[int | None] | None = None,
        tokenizer: Any = "regex",
        judge: Any = _am.DEFAULT_JUDGE,
        threshold: float = _am.DEFAULT_THRESHOLD,
        max_citations: int | None = _am.DEFAULT_MAX_CITATIONS,
        alce_compat: bool = False,
        recovery_threshold: float | None = None,
        k: int = _am.DEFAULT_RECOVERY_K,
        multi_snippet: bool = _am.DEFAULT_MULTI_SNIPPET,
        candidates: Any = _am.DEFAULT_CANDIDATES,
        cache_dir: Any = None,
    ) -> dict[str, Any]:
        return self._score(locals())
