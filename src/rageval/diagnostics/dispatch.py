"""Score records with the catalog: the one scoring path of the suite runner and ``rageval rescore``.

:func:`score` takes :class:`~rageval.diagnostics.inputs.ScoringInput` s, the
selected diagnostic names, :class:`~rageval.diagnostics.inputs.ScoringOptions`
and a judge, and returns ``(metrics, extra)`` per input:

* a diagnostic with a ``scorer`` is run through it over all inputs at once and
  its declared outputs are read from ``per_question``;
* diagnostics with ``engine_parts`` share one call of the attribution engine
  (the union of their parts), and each writes its declared outputs from the
  engine's rows; the engine's remaining counters go to ``extra["attribution_counts"]``
  and its per-sentence details to ``extra["attribution"]``;
* ``re_attributability`` adds the recovery-threshold sweep to ``extra``.

Only the pure functions are called (never ``evaluate``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rageval.diagnostics.catalog import CATALOG, SCORERS, engine_parts
from rageval.diagnostics.inputs import ScoringInput, ScoringOptions

__all__ = ["score", "SWEEP_THRESHOLDS"]

from rageval.diagnostics.attribution.engine import DEFAULT_SWEEP as SWEEP_THRESHOLDS


def _engine_rows(inputs: Sequence[ScoringInput], parts: tuple[str, ...], options: ScoringOptions, judge: Any):
    from rageval.diagnostics.attribution import attribution_scores_batch

    return attribution_scores_batch(
        [x.answer for x in inputs],
        [x.unit_dicts() for x in inputs],
        [x.source_dicts() for x in inputs],
        judge=judge,
        options=options.attribution,
        parts=parts,
        details=True,
    )


def _engine_values(name: str, row: dict[str, Any], x: ScoringInput) -> dict[str, Any]:
    if name == "compression":
        from rageval.diagnostics.compression import verification_costs

        costs = verification_costs(x.reader_input_tokens, row)
        values = {"reader_input_tokens": x.reader_input_tokens, **{f"verification_{k}": v for k, v in costs.items()}}
        values["recovery_candidates_scored"] = row.get("recovery_candidates_scored")
        values.update({k: row.get(k) for k in ("judge_inputs", "judge_inputs_truncated", "judge_inputs_windowed")})
        return values
    return {k: row.get(k) for k in CATALOG[name].keys}


def _sweep(inputs: Sequence[ScoringInput], options: ScoringOptions, judge: Any, extras: list[dict]) -> None:
    """Per record with a unit without declared provenance: re-attributability and grounded precision
    at recovery thresholds 0.3–0.8; candidates ranked and judged once, each threshold applied to them
    (:mod:`rageval.diagnostics.attribution.sweep`)."""
    from rageval.diagnostics.attribution.sweep import sweep_batch

    idx = [i for i, x in enumerate(inputs) if any(u.source_ids is None for u in x.units)]
    if not idx:
        return
    sweeps: dict[int, dict[str, Any]] = {i: {} for i in idx}
    by_threshold = sweep_batch(
        [inputs[i].answer for i in idx],
        [inputs[i].unit_dicts() for i in idx],
        [inputs[i].source_dicts() for i in idx],
        judge=judge,
        options=options.attribution,
        thresholds=SWEEP_THRESHOLDS,
    )
    for t in SWEEP_THRESHOLDS:
        for i, r in zip(idx, by_threshold[t]):
            sweeps[i][f"{t:.1f}"] = {
                "rate": r.get("re_attributability"),
                "grounded_precision": r.get("grounded_precision"),
            }
    for i in idx:
        extras[i]["reattribution_sweep"] = sweeps[i]


def score(
    inputs: Sequence[ScoringInput], diagnostics: Sequence[str], options: ScoringOptions, judge: Any
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(metrics, extra)`` for each input (see the module doc)."""
    metrics: list[dict[str, Any]] = [{} for _ in inputs]
    extras: list[dict[str, Any]] = [{} for _ in inputs]
    if not inputs:
        return list(zip(metrics, extras))
    for name in diagnostics:
        spec = CATALOG[name]
        if spec.scorer is None:
            continue
        per_q = SCORERS.get(name)(inputs, options)["per_question"]
        for m, q in zip(metrics, per_q):
            m.update({k: q.get(k) for k in spec.keys})
    parts = engine_parts(diagnostics)
    if parts:
        rows = _engine_rows(inputs, parts, options, judge)
        if "re_attributability" in diagnostics:
            _sweep(inputs, options, judge, extras)
        engine_keys = {k for s in CATALOG.values() if s.engine_parts for k in s.keys}
        for m, e, row, x in zip(metrics, extras, rows, inputs):
            details = row.pop("details", None)
            for name in diagnostics:
                if CATALOG[name].engine_parts:
                    m.update(_engine_values(name, row, x))
            e["attribution_counts"] = {
                k: v for k, v in row.items() if k not in engine_keys and (isinstance(v, (int, float)) or v is None)
            }
            e["attribution"] = details
    return list(zip(metrics, extras))
