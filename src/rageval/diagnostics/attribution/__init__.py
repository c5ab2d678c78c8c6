"""Attribution diagnostics: emitted vs grounded citation precision/recall, re-attributability, verification.

Pure functions over lists, one entry per question::

    emitted_precision(predictions, units, sources, *, judge, threshold, max_citations, alce_compat,
                      no_citation_precision)
    emitted_recall(predictions, units, sources, *, judge, threshold, max_citations, alce_compat)
    grounded_precision(...)   # emitted_precision's options + recovery_threshold, k, multi_snippet, candidates
    grounded_recall(...)      # emitted_recall's options + the recovery options
    re_attributability(predictions, units, sources, *, judge, threshold, recovery_threshold, k,
                       multi_snippet, candidates)
    re_attributability_sweep(predictions, units, sources, *, judge, thresholds=(0.3, ..., 0.8), ...)
    attribution_scores(prediction, units, sources, *, judge, ...) -> dict        # one question, everything
    attribution_scores_batch(predictions, units, sources, *, judge, ...) -> list[dict]

Each function's signature lists exactly the options it uses (an option it does
not use is a ``TypeError``); they all accept ``cache_dir`` (judge cache folder)
and ``details`` (per-sentence details in ``per_question``).

``predictions[q]`` is an answer with ``[k]`` citations; ``units[q]`` the list of
``{"text", "source_ids" (list or None), "title" (optional)}`` the reader saw
(``[k]`` = ``units[q][k-1]``); ``sources[q]`` the question's source snippets
``{"id", "text", "title" (optional)}``.  ``judge`` is anything
:func:`rageval.judges.get_judge` accepts; pass the same
:class:`~rageval.judges.JudgeRunner` to several calls to share its memo and
cache.  Each function returns ``{<name>: mean or None, "n", "n_undefined",
"per_question": [...]}`` like every diagnostic.

The package is split by idea: :mod:`.options` (the one frozen options object),
:mod:`.premises` (premise formats), :mod:`.gate` (the citation gate),
:mod:`.recovery` (candidate retrieval and re-attribution), :mod:`.verify` (the
three verification modes) and :mod:`.engine` (the batch that runs them
together).  Definitions: docs/design.md#the-citation-gate.
"""

from __future__ import annotations

from typing import Any

from rageval.diagnostics._common import summarize
from rageval.diagnostics.attribution.engine import (
    DEFAULT_SWEEP,
    PARTS,
    attribution_scores,
    attribution_scores_batch,
)
from rageval.diagnostics.attribution.options import USED_BY, AttributionOptions, AttributionSettings
from rageval.diagnostics.attribution.recovery import Recovery, dense_candidates, recover_units
from rageval.diagnostics.attribution.sweep import re_attributability_sweep
from rageval.scoring import (
    DEFAULT_CANDIDATES,
    DEFAULT_JUDGE,
    DEFAULT_MAX_CITATIONS,
    DEFAULT_MULTI_SNIPPET,
    DEFAULT_NO_CITATION_PRECISION,
    DEFAULT_RECOVERY_K,
    DEFAULT_THRESHOLD,
)

__all__ = [
    "emitted_precision",
    "emitted_recall",
    "grounded_precision",
    "grounded_recall",
    "re_attributability",
    "re_attributability_sweep",
    "attribution_scores",
    "attribution_scores_batch",
    "AttributionOptions",
    "AttributionSettings",
    "DEFAULT_SWEEP",
    "PARTS",
    "USED_BY",
    "Recovery",
    "dense_candidates",
    "recover_units",
]

_GROUNDED_KEYS = (
    "grounded_precision",
    "grounded_recall",
    "emitted_precision",
    "emitted_recall",
    "emitted_minus_grounded_precision",
    "emitted_minus_grounded_recall",
    "grounded_precision_excl_abstain",
    "grounded_recall_excl_abstain",
    "emitted_precision_excl_abstain",
    "emitted_recall_excl_abstain",
)
_GROUNDED_EXTRA = (
    "n_citations",
    "citations_declared",
    "citations_recovered",
    "citations_missing",
    "recovery_candidates_scored",
    "judge_abstentions",
)

#: name -> (engine parts, aggregated keys (the name first), per-question extras)
_TABLE: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "emitted_precision": (
        ("emitted",),
        ("emitted_precision", "emitted_recall", "emitted_precision_excl_abstain", "emitted_recall_excl_abstain"),
        ("n_citations", "judge_abstentions"),
    ),
    "emitted_recall": (
        ("emitted",),
        ("emitted_recall", "emitted_precision", "emitted_recall_excl_abstain", "emitted_precision_excl_abstain"),
        ("n_citations", "judge_abstentions"),
    ),
    "grounded_precision": (("emitted", "grounded"), _GROUNDED_KEYS, _GROUNDED_EXTRA),
    "grounded_recall": (
        ("emitted", "grounded"),
        ("grounded_recall",) + tuple(x for x in _GROUNDED_KEYS if x != "grounded_recall"),
        _GROUNDED_EXTRA,
    ),
    "re_attributability": (
        ("re_attributability",),
        ("re_attributability", "re_attributability_excl_abstain"),
        (
            "units_without_provenance",
            "re_attributable_units",
            "reattribution_candidates_scored",
            "reattribution_tokens",
            "judge_abstentions",
        ),
    ),
}


def _score(name: str, predictions, units, sources, judge, cache_dir, details, options: dict[str, Any]) -> dict:
    parts, keys, extra = _TABLE[name]
    rows = attribution_scores_batch(
        predictions, units, sources, judge=judge, parts=parts, cache_dir=cache_dir, details=details, **options
    )
    per_q = [{kk: r.get(kk) for kk in keys + extra + (("details",) if details else ())} for r in rows]
    return summarize(per_q, name, extra=keys[1:])


def emitted_precision(
    predictions,
    units,
    sources,
    *,
    judge: Any = DEFAULT_JUDGE,
    threshold: float = DEFAULT_THRESHOLD,
    max_citations: int | None = DEFAULT_MAX_CITATIONS,
    alce_compat: bool = False,
    no_citation_precision: str = DEFAULT_NO_CITATION_PRECISION,
    cache_dir: Any = None,
    details: bool = True,
) -> dict[str, Any]:
    """ALCE citation precision with premise = the unit text the reader saw (see module doc).

    >>> units = [[{"text": "Paris is the capital of France.", "source_ids": None},
    ...           {"text": "Berlin is in Germany.", "source_ids": None}]]
    >>> r = emitted_precision(["Paris is the capital of France [1][2]."], units, [[]])
    >>> r["emitted_precision"], r["emitted_recall"]
    (0.5, 1.0)
    """
    return _score(
        "emitted_precision",
        predictions,
        units,
        sources,
        judge,
        cache_dir,
        details,
        dict(
            threshold=threshold,
            max_citations=max_citations,
            alce_compat=alce_compat,
            no_citation_precision=no_citation_precision,
        ),
    )


def emitted_recall(
    predictions,
    units,
    sources,
    *,
    judge: Any = DEFAULT_JUDGE,
    threshold: float = DEFAULT_THRESHOLD,
    max_citations: int | None = DEFAULT_MAX_CITATIONS,
    alce_compat: bool = False,
    cache_dir: Any = None,
    details: bool = True,
) -> dict[str, Any]:
    """ALCE citation recall with premise = the unit text the reader saw (see module doc)."""
    return _score(
        "emitted_recall",
        predictions,
        units,
        sources,
        judge,
        cache_dir,
        details,
        dict(threshold=threshold, max_citations=max_citations, alce_compat=alce_compat),
    )


def grounded_precision(
    predictions,
    units,
    sources,
    *,
    judge: Any = DEFAULT_JUDGE,
    threshold: float = DEFAULT_THRESHOLD,
    max_citations: int | None = DEFAULT_MAX_CITATIONS,
    alce_compat: bool = False,
    no_citation_precision: str = DEFAULT_NO_CITATION_PRECISION,
    recovery_threshold: float | None = None,
    k: int = DEFAULT_RECOVERY_K,
    multi_snippet: bool = DEFAULT_MULTI_SNIPPET,
    candidates: Any = DEFAULT_CANDIDATES,
    cache_dir: Any = None,
    details: bool = True,
) -> dict[str, Any]:
    """Citation precision with premise = the cited unit's declared, else recovered, source snippets.

    Per question also ``emitted_*``, the emitted − grounded gaps and the
    evidence status counts (declared / recovered / missing).

    >>> units = [[{"text": "Paris is the capital of France.", "source_ids": None}]]
    >>> r = grounded_precision(["Paris is the capital of France [1]."], units, [[{"id": "d0.s0", "text": "Lyon is big."}]])
    >>> r["grounded_precision"], r["emitted_precision"], r["per_question"][0]["citations_missing"]
    (0.0, 1.0, 1)
    """
    return _score(
        "grounded_precision",
        predictions,
        units,
        sources,
        judge,
        cache_dir,
        details,
        dict(
            threshold=threshold,
            max_citations=max_citations,
            alce_compat=alce_compat,
            no_citation_precision=no_citation_precision,
            recovery_threshold=recovery_threshold,
            k=k,
            multi_snippet=multi_snippet,
            candidates=candidates,
        ),
    )


def grounded_recall(
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
    """Citation recall with premise = the cited units' declared, else recovered, source snippets."""
    return _score(
        "grounded_recall",
        predictions,
        units,
        sources,
        judge,
        cache_dir,
        details,
        dict(
            threshold=threshold,
            max_citations=max_citations,
            alce_compat=alce_compat,
            recovery_threshold=recovery_threshold,
            k=k,
            multi_snippet=multi_snippet,
            candidates=candidates,
        ),
    )


def re_attributability(
    predictions,
    units,
    sources,
    *,
    judge: Any = DEFAULT_JUDGE,
    threshold: float = DEFAULT_THRESHOLD,
    recovery_threshold: float | None = None,
    k: int = DEFAULT_RECOVERY_K,
    multi_snippet: bool = DEFAULT_MULTI_SNIPPET,
    candidates: Any = DEFAULT_CANDIDATES,
    cache_dir: Any = None,
    details: bool = True,
) -> dict[str, Any]:
    """Share of units without declared provenance for which a source snippet passes the judge.

    Undefined for a question whose units all declare provenance.  ``predictions``
    are accepted for the common interface and not used; ``threshold`` is the
    default of ``recovery_threshold``.

    >>> units = [[{"text": "Paris is France's capital.", "source_ids": None}, {"text": "x", "source_ids": ["d0.s0"]}]]
    >>> sources = [[{"id": "d0.s0", "text": "Paris is the capital of France."}]]
    >>> re_attributability([""], units, sources)["re_attributability"]
    1.0
    """
    return _score(
        "re_attributability",
        predictions,
        units,
        sources,
        judge,
        cache_dir,
        details,
        dict(
            threshold=threshold,
            recovery_threshold=recovery_threshold,
            k=k,
            multi_snippet=multi_snippet,
            candidates=candidates,
        ),
    )
