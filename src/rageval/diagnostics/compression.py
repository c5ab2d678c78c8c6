"""Compression and its verification cost (the ``compression`` diagnostic; definitions in docs/design.md).

::

    compression(predictions, units, sources, *, budget_tokens=None, retrieved_tokens=None,
                achieved_tokens=None, reader_input_tokens=None, tokenizer="regex",
                judge=DEFAULT_JUDGE, threshold=DEFAULT_THRESHOLD, max_citations=DEFAULT_MAX_CITATIONS,
                alce_compat=False, ...)

(the ``DEFAULT_*`` option defaults: :mod:`rageval.scoring`)

Per question:

* ``budget_tokens``: the nominal budget (as given, None when unbounded);
* ``achieved_tokens``: as given, else the suite tokenizer's count of the unit
  texts;
* ``retrieved_tokens``: as given, else the count of all source snippet texts;
* ``compression`` = ``achieved_ratio`` = achieved / retrieved (None when nothing
  was retrieved) — lower means more compressed; ``over_budget`` = achieved > budget.
  Counts and ratio are the one definition of :mod:`rageval.token_counts`, the same as a
  compressor's ``Context``: titles count in neither numerator nor denominator, so
  an ``identity`` context has a ratio of exactly 1.0 (the card's Versions
  section says what changed);
* the verification cost roll-up: ``reader_input_tokens`` (as given; None if
  unknown), ``verifier_tokens_<mode>`` for the three verification modes,
  ``recovery_candidates_scored`` and ``recovery_tokens`` (re-attribution pairs
  for the cited units without provenance — cost accounts usually leave them out; rageval
  counts them), and ``cost_<mode>`` = reader + verifier tokens of that mode
  (+ recovery tokens for ``recovered_source``; None when reader tokens are unknown).
  Verifier and recovery tokens are counted *before* the judge's truncation (what
  a paper's cost table counts); ``verifier_tokens_<mode>_after_truncation`` is
  what the judge read, and ``judge_inputs_truncated`` how many of the question's
  ``judge_inputs`` it truncated (docs/design.md#decision-verifier-tokens);
  ``judge_inputs_windowed`` how many a windowed judge read in several windows
  (None when the judge does not window; :mod:`rageval.judges.windowed`).

>>> units = [[{"text": "Paris is the capital of France.", "source_ids": ["d0.s0"]}]]
>>> sources = [[{"id": "d0.s0", "text": "Paris is the capital of France."}, {"id": "d0.s1", "text": "It is."}]]
>>> r = compression(["Paris is the capital of France [1]."], units, sources, budget_tokens=[10])
>>> r["compression"], r["per_question"][0]["achieved_tokens"], r["per_question"][0]["retrieved_tokens"]
(0.7, 7, 10)
>>> titled = [[{"text": "Paris is the capital of France.", "source_ids": ["d0.s0"], "title": "Paris"}]]
>>> compression(["Paris [1]."], titled, sources)["per_question"][0]["achieved_tokens"]
7
"""

from __future__ import annotations

from typing import Any

from rageval.diagnostics._attribution_inputs import prepare_inputs
from rageval.diagnostics._common import check_list, summarize
from rageval.diagnostics.attribution import attribution_scores_batch
from rageval.scoring import (
    DEFAULT_CANDIDATES,
    DEFAULT_JUDGE,
    DEFAULT_MAX_CITATIONS,
    DEFAULT_MULTI_SNIPPET,
    DEFAULT_RECOVERY_K,
    DEFAULT_THRESHOLD,
)
from rageval.text.tokenize import get_tokenizer
from rageval.token_counts import achieved_ratio, check_count, evidence_tokens

__all__ = ["compression", "record_values", "verification_costs"]

_MODES = ("summary_checked", "declared_span", "recovered_source")


def verification_costs(reader_input_tokens: int | None, row: dict[str, Any]) -> dict[str, int | None]:
    """``cost_<mode>`` = reader tokens + that mode's verifier tokens (+ recovery tokens for
    ``recovered_source``), from one attribution-engine row; None when reader tokens are unknown."""
    out: dict[str, int | None] = {}
    for m in _MODES:
        v = row.get(f"verifier_tokens_{m}")
        extra = (row.get("recovery_tokens") or 0) if m == "recovered_source" else 0
        out[f"cost_{m}"] = None if reader_input_tokens is None or v is None else reader_input_tokens + v + extra
    return out


def record_values(row: dict[str, Any], x: Any) -> dict[str, Any]:
    """``compression``'s record metrics from an attribution-engine row and the record's scoring input
    (catalog ``record_values``): the reader's input tokens, the verification cost roll-up
    (:func:`verification_costs`), the recovery candidates scored and the judge-input counts."""
    values: dict[str, Any] = {"reader_input_tokens": x.reader_input_tokens}
    values.update({f"verification_{k}": v for k, v in verification_costs(x.reader_input_tokens, row).items()})
    values["recovery_candidates_scored"] = row.get("recovery_candidates_scored")
    values.update({k: row.get(k) for k in ("judge_inputs", "judge_inputs_truncated", "judge_inputs_windowed")})
    return values


def _opt_list(value, name, n):
    if value is None:
        return [None] * n
    value = check_list(value, name)
    if len(value) != n:
        raise ValueError(f"{name} must have one entry per question ({n}), got {len(value)}")
    for q, v in enumerate(value):
        if v is not None:
            check_count(f"{name}[{q}]", v, or_none=True)  # 10**400: a ValueError naming the field, no overflow
    return list(value)


def compression(
    predictions,
    units,
    sources,
    *,
    budget_tokens=None,
    retrieved_tokens=None,
    achieved_tokens=None,
    reader_input_tokens=None,
    tokenizer: Any = "regex",
    judge: Any = DEFAULT_JUDGE,
    threshold: float = DEFAULT_THRESHOLD,
    max_citations: int | None = DEFAULT_MAX_CITATIONS,
    alce_compat: bool = False,
    recovery_threshold: float | None = None,
    k: int = DEFAULT_RECOVERY_K,
    multi_snippet: bool = DEFAULT_MULTI_SNIPPET,
    candidates: Any = DEFAULT_CANDIDATES,
    cache_dir: Any = None,
) -> dict[str, Any]:
    """Nominal vs achieved compression and the verification cost roll-up (see module doc)."""

    questions = prepare_inputs(predictions, units, sources)
    n = len(questions)
    budget = _opt_list(budget_tokens, "budget_tokens", n)
    retrieved = _opt_list(retrieved_tokens, "retrieved_tokens", n)
    achieved = _opt_list(achieved_tokens, "achieved_tokens", n)
    reader = _opt_list(reader_input_tokens, "reader_input_tokens", n)
    tok = get_tokenizer(tokenizer)
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
        details=False,
    )
    per_q = []
    for q, r, b, ret, ach, rd in zip(questions, rows, budget, retrieved, achieved, reader):
        if ach is None:
            ach = evidence_tokens(q.units, tok)
        if ret is None:
            ret = evidence_tokens(q.sources, tok)
        ratio = achieved_ratio(ach, ret)
        d: dict[str, Any] = {
            "compression": ratio,
            "achieved_ratio": ratio,
            "budget_tokens": b,
            "achieved_tokens": ach,
            "retrieved_tokens": ret,
            "over_budget": None if b is None else bool(ach > b),
            "reader_input_tokens": rd,
            "recovery_candidates_scored": r["recovery_candidates_scored"],
            "recovery_tokens": r["recovery_tokens"],
            "judge_inputs": r["judge_inputs"],
            "judge_inputs_truncated": r["judge_inputs_truncated"],
            "judge_inputs_windowed": r["judge_inputs_windowed"],
        }
        d.update({f"verifier_tokens_{m}": r[f"verifier_tokens_{m}"] for m in _MODES})
        d.update({f"verifier_tokens_{m}_after_truncation": r[f"verifier_tokens_{m}_after_truncation"] for m in _MODES})
        d.update(verification_costs(rd, r))
        per_q.append(d)
    return summarize(
        per_q,
        "compression",
        extra=(
            "achieved_tokens",
            "retrieved_tokens",
            "budget_tokens",
            "reader_input_tokens",
            "recovery_candidates_scored",
            "recovery_tokens",
            "judge_inputs",
            "judge_inputs_truncated",
            "judge_inputs_windowed",
        )
        + tuple(f"verifier_tokens_{m}" for m in _MODES)
        + tuple(f"verifier_tokens_{m}_after_truncation" for m in _MODES)
        + tuple(f"cost_{m}" for m in _MODES),
    )
