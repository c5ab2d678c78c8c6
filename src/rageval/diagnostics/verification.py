"""Verification in three modes: how many answer claims are unsupported?

Definitions: docs/design.md#verification-modes.

::

    verification(predictions, units, sources, *, judge=DEFAULT_JUDGE, threshold=DEFAULT_THRESHOLD,
                 max_citations=DEFAULT_MAX_CITATIONS, alce_compat=False, recovery_threshold=None,
                 k=DEFAULT_RECOVERY_K, multi_snippet=False, candidates="bm25")

(the ``DEFAULT_*`` option defaults: :mod:`rageval.scoring`)

Claims are the answer's sentences (parsed as for citation scores).  Per
question and mode, unsupported rate = unsupported claims / claims (lower is
better); a question with zero claims is undefined (None, counted).

* **summary-checked**: the pooled texts of the units a claim cites must entail it.
* **declared-span**: the pooled declared source snippets of its cited units
  (ids de-duplicated) must entail it; a claim whose cited units declare nothing
  is unsupported *without a judge call* (``structural_rejections_declared_span``).
* **recovered-source**: a cited unit without declared provenance contributes the
  snippets recovered by re-attribution (as in ``grounded_*``); ids de-duplicated
  across the cited units (``grounded_*`` keeps repeats), then the pooled evidence
  is checked; a claim left with no evidence is unsupported without a call
  (``unrecovered_claims``).

A claim without valid citations (none, or only out-of-range ones) is unsupported
in every mode, with no call
(``claims_without_citations``).  ``verifier_tokens_<mode>`` is the verifier
input of the pairs each mode checks (judge tokenizer when it has one, else the
suite tokenizer; counted *before* the judge's truncation, as a paper's cost
table counts it, per checked claim, before any cache or de-duplication saving);
``verifier_tokens_<mode>_after_truncation`` is what the judge read;
``judge_inputs`` / ``judge_inputs_truncated`` count the distinct pairs a question
asked the judge and how many of them it truncated; ``judge_inputs_windowed`` how
many a windowed judge read in several windows (None when it does not window);
``recovery_candidates_scored`` counts the re-attribution pairs scored for the
cited units without provenance.  The aggregate under ``verification`` is the
recovered-source rate; all three are returned.

>>> units = [[{"text": "Paris is the capital of France.", "source_ids": None}]]
>>> sources = [[{"id": "d0.s0", "text": "Paris is the capital of France."}]]
>>> r = verification(["Paris is the capital of France [1]."], units, sources)
>>> r["unsupported_summary_checked"], r["unsupported_declared_span"], r["unsupported_recovered_source"]
(0.0, 1.0, 0.0)
"""

from __future__ import annotations

from typing import Any

from rageval.diagnostics._common import summarize
from rageval.diagnostics.attribution import attribution_scores_batch
from rageval.scoring import (
    DEFAULT_CANDIDATES,
    DEFAULT_JUDGE,
    DEFAULT_MAX_CITATIONS,
    DEFAULT_MULTI_SNIPPET,
    DEFAULT_RECOVERY_K,
    DEFAULT_THRESHOLD,
)

__all__ = ["verification", "MODES"]

MODES = ("summary_checked", "declared_span", "recovered_source")

_KEYS = (
    "unsupported_summary_checked",
    "unsupported_declared_span",
    "unsupported_recovered_source",
    "unsupported_summary_checked_excl_abstain",
    "unsupported_declared_span_excl_abstain",
    "unsupported_recovered_source_excl_abstain",
)
_COUNTS = (
    "verifier_tokens_summary_checked",
    "verifier_tokens_declared_span",
    "verifier_tokens_recovered_source",
    "verifier_tokens_summary_checked_after_truncation",
    "verifier_tokens_declared_span_after_truncation",
    "verifier_tokens_recovered_source_after_truncation",
    "claims",
    "structural_rejections_declared_span",
    "unrecovered_claims",
    "claims_without_citations",
    "recovery_candidates_scored",
    "recovery_tokens",
    "judge_abstentions",
    "judge_inputs",
    "judge_inputs_truncated",
    "judge_inputs_windowed",
)


def verification(
    predictions,
    units,
    sources,
    *,
    judge: Any = DEFAULT_JUDGE,
    threshold: float = DEFAULT_THRESHOLD,
    max_citations: int | None = DEFAULT_MAX_CITATIONS,
    alce_compat: bool = False,
    recovery_threshold: float | None = None,
    k: int = DEFAULT_RECOVERY_K,
    multi_snippet: bool = DEFAULT_MULTI_SNIPPET,
    candidates: Any = DEFAULT_CANDIDATES,
    cache_dir: Any = None,
    details: bool = True,
) -> dict[str, Any]:
    """Unsupported-claim rates in the three modes (see module doc)."""
    rows = attribution_scores_batch(
        predictions,
        units,
        sources,
        judge=judge,
        threshold=threshold,
        max_citations=max_citations,
        alce_compat=alce_compat,
        recovery_threshold=recovery_threshold,
        k=k,
        multi_snippet=multi_snippet,
        candidates=candidates,
        parts=("verification",),
        cache_dir=cache_dir,
        details=details,
    )
    per_q = []
    for r in rows:
        d = {"verification": r["unsupported_recovered_source"]}
        d.update({key: r[key] for key in _KEYS + _COUNTS})
        if details:
            d["details"] = r["details"]
        per_q.append(d)
    out = summarize(per_q, "verification", extra=_KEYS)
    for key in (
        "verifier_tokens_summary_checked",
        "verifier_tokens_declared_span",
        "verifier_tokens_recovered_source",
        "verifier_tokens_summary_checked_after_truncation",
        "verifier_tokens_declared_span_after_truncation",
        "verifier_tokens_recovered_source_after_truncation",
        "judge_inputs_truncated",
        "structural_rejections_declared_span",
        "unrecovered_claims",
        "recovery_candidates_scored",
        "recovery_tokens",
    ):
        out[f"total_{key}"] = sum(r[key] for r in rows)
    windowed = [r["judge_inputs_windowed"] for r in rows if r["judge_inputs_windowed"] is not None]
    out["total_judge_inputs_windowed"] = sum(windowed) if windowed else None  # None: the judge does not window
    out["n_zero_claim"] = sum(1 for r in rows if r["claims"] == 0)
    return out
