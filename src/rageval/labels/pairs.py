"""The judge decisions a record's judge-based metrics rest on, and the same metrics with other decisions.

Both go through the suite's one scoring path (:func:`rageval.diagnostics.dispatch.score`) on a saved record with
its re-attribution mappings **fixed** as the run's judge found them (``extra.attribution.recovery``, the audit's
fixed mode: :mod:`rageval.diagnostics.attribution.fixed`), so no recovery call is made and the premises of the
grounded citations are the record's own.

* :func:`record_pairs`: every (premise, hypothesis) pair the scoring of a record can ask, whatever the decisions.
  The citation gate asks a sentence's citations one by one only when they jointly support it, and the others
  without one only when that one alone does not (:mod:`rageval.diagnostics.attribution.gate`); so the record is
  scored three times with a recording judge that answers by a rule, not by a model (every pair supported; in each
  call, per hypothesis, only the first premise in text order supported; only the last), and the pairs asked are
  the union: joint, single and leave-one-out premises of every sentence.
* :func:`replayed_metrics`: the record's metrics scored again with given decisions (human labels) in place of the
  judge's; a pair the decisions do not cover is counted (the record is then unlabelled).

A pair's id is a content hash (:func:`pair_id`): a label serves every record and setting that asks the pair.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rageval.diagnostics.catalog import CATALOG
from rageval.diagnostics.dispatch import score
from rageval.diagnostics.inputs import ScoringInput, ScoringOptions
from rageval.judges.base import CallableJudge, JudgeRunner
from rageval.types import Record

__all__ = [
    "PPI_METRICS",
    "NOT_CORRECTED",
    "pair_id",
    "judged_diagnostics",
    "record_pairs",
    "replayed_metrics",
    "scoring_input",
]

#: the judge-based record metrics a human label can correct (a decision of the citation gate, of verification,
#: of claim support or of claims recall stands behind each), in report order
PPI_METRICS = (
    "emitted_precision",
    "emitted_recall",
    "grounded_precision",
    "grounded_recall",
    "unsupported_summary_checked",
    "unsupported_declared_span",
    "unsupported_recovered_source",
    "claim_support_emitted",
    "claim_support_grounded",
    "claims_recall",
)
#: judge-based metrics left as the judge found them, and why (docs/score.md#human-labels)
NOT_CORRECTED = {
    "re_attributability": "re-attribution picks the best-scoring source by the judge's probabilities and its "
    "mappings are kept fixed as the judge found them, so a support label cannot change it",
}


def pair_id(premise: str, hypothesis: str) -> str:
    """The content hash of a (premise, hypothesis) pair: 16 hex digits of SHA-256 over both, length-prefixed.

    >>> pair_id("Paris is in France.", "Paris is in France.")
    '4ac10bb0f4d1958f'
    """
    h = hashlib.sha256()
    for part in (premise, hypothesis):
        b = part.encode("utf-8")
        h.update(len(b).to_bytes(8, "big"))
        h.update(b)
    return h.hexdigest()[:16]


def judged_diagnostics(diagnostics: Sequence[str]) -> tuple[str, ...]:
    """The diagnostics of a setting whose values a judge decision decides (re-attributability and the cost
    counters left out: fixed mappings keep them as they were)."""
    return tuple(
        d
        for d in diagnostics
        if d in CATALOG and CATALOG[d].uses_judge and any(k in PPI_METRICS for k in CATALOG[d].keys)
    )


class _Recorder:
    """A judge callable answering each call by ``rule(pairs) -> probabilities``, recording every pair asked."""

    def __init__(self, rule: Callable[[list[tuple[str, str]]], list[float]]) -> None:
        self.rule, self.asked = rule, {}  # type: ignore[var-annotated]

    def __call__(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        pairs = list(zip(premises, hypotheses))
        for pq in pairs:
            self.asked.setdefault(pq, None)
        return self.rule(pairs)


def _all_supported(pairs: list[tuple[str, str]]) -> list[float]:
    return [1.0] * len(pairs)


def _one_per_hypothesis(last: bool) -> Callable[[list[tuple[str, str]]], list[float]]:
    def rule(pairs: list[tuple[str, str]]) -> list[float]:
        chosen: dict[str, str] = {}
        for p, h in pairs:
            if h not in chosen or (p > chosen[h] if last else p < chosen[h]):
                chosen[h] = p
        return [1.0 if chosen[h] == p else 0.0 for p, h in pairs]

    return rule


def fixed_diagnostics(x: ScoringInput, diagnostics: Sequence[str]) -> tuple[str, ...]:
    """``diagnostics`` less claim support where the record's saved mappings do not cover every unit without
    provenance (a run without ``re_attributability`` saves the cited units' only): its grounded premises could
    not be fixed as the judge found them, so its values are left undefined under human decisions."""
    recovered = x.recovered or {}
    if "claim_support" in diagnostics and any(
        u.source_ids is None and k not in recovered for k, u in enumerate(x.units)
    ):
        return tuple(d for d in diagnostics if d != "claim_support")
    return tuple(diagnostics)


def _score_with(x: ScoringInput, diagnostics: Sequence[str], options: ScoringOptions, judge: Any) -> dict[str, Any]:
    diagnostics = fixed_diagnostics(x, diagnostics)
    runner = JudgeRunner(CallableJudge(judge, judge_id=None))
    ((metrics, _extra),) = score([x], list(diagnostics), options, runner)
    return metrics


def record_pairs(x: ScoringInput, diagnostics: Sequence[str], options: ScoringOptions) -> list[tuple[str, str]]:
    """Every (premise, hypothesis) pair the scoring of ``x`` (fixed mappings) can ask for ``diagnostics``, in the
    order first asked (see the module doc)."""
    found: dict[tuple[str, str], None] = {}
    for rule in (_all_supported, _one_per_hypothesis(False), _one_per_hypothesis(True)):
        rec = _Recorder(rule)
        _score_with(x, diagnostics, options, rec)
        found.update(rec.asked)
    return list(found)


def replayed_metrics(
    x: ScoringInput, diagnostics: Sequence[str], options: ScoringOptions, labels: Mapping[str, bool]
) -> tuple[dict[str, Any], int]:
    """``(metrics, missing)``: the record's metrics scored with the decisions ``labels`` (pair id -> supported)
    in place of the judge's; ``missing``: the pairs asked that ``labels`` does not decide (answered as an
    abstention; a record with any is unlabelled)."""
    missing: dict[tuple[str, str], None] = {}

    def rule(pairs: list[tuple[str, str]]) -> list[float]:
        out = []
        for p, h in pairs:
            v = labels.get(pair_id(p, h))
            if v is None:
                missing.setdefault((p, h), None)
                out.append(math.nan)
            else:
                out.append(1.0 if v else 0.0)
        return out

    metrics = _score_with(x, diagnostics, options, _Recorder(rule))
    return metrics, len(missing)


def scoring_input(record: Record, evidence_text: Callable[[Any], str]) -> ScoringInput:
    """The record's scoring input with its re-attribution mappings fixed as the run's judge found them."""
    return ScoringInput.from_record(record, evidence_text, fixed_recovery=True)
