"""The recovery-threshold sweep: the engine's values at several recovery thresholds, without repeated work.

Only the comparison of each candidate's probability with the recovery threshold
depends on the threshold (docs/design.md#re-attribution-and-recovery).  So the
answers are parsed once, the recovery candidates are ranked (one BM25 index per
question) and judged once (:func:`~.recovery.score_recovery`), and each
threshold is applied to those scores (:meth:`~.recovery.RecoveryScores.at`).
The grounded citation gate runs again only for the questions whose recovered
source ids changed since the previous threshold; the others keep their result.
The values are exactly those of :func:`~.engine.attribution_scores_batch` called
once per threshold (tested), with fewer judge requests, BM25 indexes and token
counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rageval.diagnostics._attribution_inputs import prepare_inputs
from rageval.diagnostics._common import mean_defined, summarize
from rageval.diagnostics.attribution.engine import (
    DEFAULT_SWEEP,
    question_row,
    recoveries_by_question,
    resolve_options,
    wanted_units,
)
from rageval.diagnostics.attribution.gate import score_citations
from rageval.diagnostics.attribution.options import AttributionOptions
from rageval.diagnostics.attribution.recovery import Recovery, score_recovery
from rageval.scoring import DEFAULT_JUDGE

if TYPE_CHECKING:
    from rageval.diagnostics.inputs import ScoringInput, ScoringOptions

__all__ = ["sweep_batch", "re_attributability_sweep", "record_sweeps", "SWEEP_PARTS"]

SWEEP_PARTS = ("grounded", "re_attributability")


def _recovered_by_question(rec: dict[tuple[int, int], Recovery]) -> dict[int, tuple]:
    out: dict[int, list] = {}
    for (qi, k), r in sorted(rec.items()):
        out.setdefault(qi, []).append((k, tuple(r.recovered)))
    return {qi: tuple(v) for qi, v in out.items()}


def sweep_batch(
    predictions,
    units,
    sources,
    *,
    judge: Any = DEFAULT_JUDGE,
    options: AttributionOptions | None = None,
    thresholds: Sequence[float] = DEFAULT_SWEEP,
    parts: Sequence[str] = SWEEP_PARTS,
    cache_dir: Any = None,
    list_questions: Sequence[str | None] | None = None,
    **option_values: Any,
) -> dict[float, list[dict[str, Any]]]:
    """``{threshold: rows}``: per recovery threshold, the rows :func:`attribution_scores_batch` returns for
    ``parts`` (``grounded`` and/or ``re_attributability``; no details) with ``recovery_threshold=threshold``."""
    from rageval.judges import get_judge

    bad = [p for p in parts if p not in SWEEP_PARTS]
    if bad:
        raise ValueError(f"the sweep computes {SWEEP_PARTS}; got {bad}")
    if "recovery_threshold" in option_values:
        raise TypeError("the sweep sets recovery_threshold itself: pass thresholds=[...]")
    opts = resolve_options(options, option_values)
    runner = get_judge(judge, cache_dir=cache_dir)
    questions = prepare_inputs(predictions, units, sources, list_questions)
    parsed = [q.parse(opts) for q in questions]
    wanted = wanted_units(questions, parsed, parts)
    scores = (
        score_recovery(
            questions,
            wanted,
            runner,
            thresholds=tuple(thresholds),
            k=opts.k,
            multi_snippet=opts.multi_snippet,
            candidates=opts.candidates,
        )
        if any(wanted.values())
        else None
    )
    gate: dict[str, Any] = {
        "threshold": opts.threshold,
        "alce_compat": opts.alce_compat,
        "no_citation_precision": opts.no_citation_precision,
    }
    out: dict[float, list[dict[str, Any]]] = {}
    grounded: dict[int, dict[str, Any]] = {}
    before: dict[int, tuple] | None = None
    for t in thresholds:
        rec = scores.at(t) if scores is not None else {}
        now = _recovered_by_question(rec)
        if "grounded" in parts:
            changed = [i for i, q in enumerate(questions) if before is None or now.get(q.index) != before.get(q.index)]
            if changed:
                grounded.update(
                    score_citations(
                        [questions[i] for i in changed], [parsed[i] for i in changed], runner, rec, "grounded", **gate
                    )
                )
        by_q = recoveries_by_question(rec)
        out[t] = [
            question_row(q, ans, parts, by_q.get(q.index, {}), {}, grounded, {}, False, runner)
            for q, ans in zip(questions, parsed)
        ]
        before = now
    return out


def re_attributability_sweep(
    predictions, units, sources, *, judge: Any = DEFAULT_JUDGE, thresholds: Sequence[float] = DEFAULT_SWEEP, **options
) -> list[dict[str, Any]]:
    """Re-attributability rate and grounded precision/recall at each recovery threshold (default 0.3–0.8).

    The recovery candidates are ranked and judged once and each threshold is applied to their
    probabilities (:mod:`.sweep`); the values are those of the engine run once per threshold.
    Returns ``[{"threshold", "re_attributability", "grounded_precision", "grounded_recall", "n", "n_undefined"}]``.
    """
    if "recovery_threshold" in options:
        raise TypeError("re_attributability_sweep sets recovery_threshold itself: pass thresholds=[...]")
    by_threshold = sweep_batch(predictions, units, sources, judge=judge, thresholds=thresholds, **options)
    out = []
    for t in thresholds:
        rows = by_threshold[t]
        ra = summarize([{"re_attributability": r["re_attributability"]} for r in rows], "re_attributability")
        out.append(
            {
                "threshold": t,
                "re_attributability": ra["re_attributability"],
                "n": ra["n"],
                "n_undefined": ra["n_undefined"],
                "grounded_precision": mean_defined([r["grounded_precision"] for r in rows])[0],
                "grounded_recall": mean_defined([r["grounded_recall"] for r in rows])[0],
            }
        )
    return out


def record_sweeps(inputs: Sequence[ScoringInput], options: ScoringOptions, judge: Any) -> dict[int, dict[str, Any]]:
    """``re_attributability``'s record extra (catalog ``record_extra``): for each scored input with a unit
    without declared provenance, ``{"reattribution_sweep": {"0.3": {"rate", "grounded_precision"}, ...}}`` —
    re-attributability and grounded precision at the recovery thresholds of :data:`DEFAULT_SWEEP`; candidates
    are ranked and judged once and each threshold applied to them (:func:`sweep_batch`)."""
    idx = [i for i, x in enumerate(inputs) if any(u.source_ids is None for u in x.units)]
    if not idx:
        return {}
    by_threshold = sweep_batch(
        [inputs[i].answer for i in idx],
        [inputs[i].unit_dicts() for i in idx],
        [inputs[i].source_dicts() for i in idx],
        judge=judge,
        options=options.attribution,
        thresholds=DEFAULT_SWEEP,
        list_questions=[inputs[i].list_question for i in idx],
    )
    sweeps: dict[int, dict[str, Any]] = {i: {} for i in idx}
    for t in DEFAULT_SWEEP:
        for i, r in zip(idx, by_threshold[t]):
            sweeps[i][f"{t:.1f}"] = {
                "rate": r.get("re_attributability"),
                "grounded_precision": r.get("grounded_precision"),
            }
    return {i: {"reattribution_sweep": sweeps[i]} for i in idx}
