"""Score records with the catalog: the one scoring path of the suite runner and ``rageval rescore``.

:func:`score` takes :class:`~rageval.diagnostics.inputs.ScoringInput` s, the
selected diagnostic names, :class:`~rageval.diagnostics.inputs.ScoringOptions`
and a judge, and returns ``(metrics, extra)`` per input:

* a diagnostic with a ``scorer`` is run through it over all inputs at once and
  its declared outputs are read from ``per_question`` (a ``judged`` one, such as
  ``claims_recall``, is handed the run's judge too);
* diagnostics with ``engine_parts`` share one call of the attribution engine
  (the union of their parts), and each writes its declared outputs from the
  engine's rows; the engine's remaining counters go to ``extra["attribution_counts"]``
  and its per-sentence details to ``extra["attribution"]``;
* a spec's ``record_values`` computes an engine diagnostic's record metrics from
  the row (``compression``: the verification cost roll-up), and its
  ``record_extra`` adds to ``extra`` (``re_attributability``: the
  recovery-threshold sweep); nothing here names a diagnostic.

Only the pure functions are called (never ``evaluate``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rageval.diagnostics.catalog import CATALOG, engine_parts
from rageval.diagnostics.inputs import ScoringInput, ScoringOptions

__all__ = ["score"]


def _engine_rows(inputs: Sequence[ScoringInput], parts: tuple[str, ...], options: ScoringOptions, judge: Any):
    from rageval.diagnostics.attribution import attribution_scores_batch

    fixed = [x.recovered for x in inputs]  # fixed mappings (a saved record's recovered ids), all or none
    if any(r is None for r in fixed) and any(r is not None for r in fixed):
        raise ValueError("fixed mappings (ScoringInput.recovered) are given for some inputs of a batch, not all")
    return attribution_scores_batch(
        [x.answer for x in inputs],
        [list(x.units) for x in inputs],  # Unit and SourceSnippet objects: checked when made, never converted
        [list(x.sources) for x in inputs],
        judge=judge,
        options=options.attribution,
        parts=parts,
        details=True,
        list_questions=[x.list_question for x in inputs],
        recovered=fixed if fixed and fixed[0] is not None else None,
    )


def _engine_values(name: str, row: dict[str, Any], x: ScoringInput) -> dict[str, Any]:
    """An engine diagnostic's record metrics: its spec's ``record_values`` function, else its keys from the row."""
    if name in CATALOG.record_values:
        return CATALOG.record_values.get(name)(row, x)
    return {k: row.get(k) for k in CATALOG[name].keys}


def _scored_alone(inputs, diagnostics, options, judge, metrics: list[dict[str, Any]]) -> None:
    """The diagnostics with a scorer: each over all inputs at once, its declared outputs per input (a ``judged``
    scorer also gets the run's judge)."""
    for name in diagnostics:
        spec = CATALOG[name]
        if spec.scorer is None:
            continue
        scorer = CATALOG.scorers.get(name)
        per_q = (scorer(inputs, options, judge) if spec.judged else scorer(inputs, options))["per_question"]
        for m, q in zip(metrics, per_q):
            m.update({k: q.get(k) for k in spec.keys})


def _scored_by_engine(inputs, diagnostics, options, judge, metrics, extras) -> None:
    """The engine diagnostics: one engine call for the union of their parts, each one's record values, the
    specs' record extras, the engine's other counters and its per-sentence details."""
    parts = engine_parts(diagnostics)
    if not parts:
        return
    rows = _engine_rows(inputs, parts, options, judge)
    for name in diagnostics:
        if name in CATALOG.record_extras:
            for i, extra in CATALOG.record_extras.get(name)(inputs, options, judge).items():
                extras[i].update(extra)
    engine_keys = {k for s in CATALOG.values() if s.engine_parts for k in s.keys}
    engine_names = [name for name in diagnostics if CATALOG[name].engine_parts]
    for m, e, row, x in zip(metrics, extras, rows, inputs):
        details = row.pop("details", None)
        for name in engine_names:
            m.update(_engine_values(name, row, x))
        e["attribution_counts"] = {
            k: v for k, v in row.items() if k not in engine_keys and (isinstance(v, (int, float)) or v is None)
        }
        e["attribution"] = details


def score(
    inputs: Sequence[ScoringInput], diagnostics: Sequence[str], options: ScoringOptions, judge: Any
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(metrics, extra)`` for each input (see the module doc)."""
    metrics: list[dict[str, Any]] = [{} for _ in inputs]
    extras: list[dict[str, Any]] = [{} for _ in inputs]
    if inputs:
        _scored_alone(inputs, diagnostics, options, judge, metrics)
        _scored_by_engine(inputs, diagnostics, options, judge, metrics, extras)
    return list(zip(metrics, extras))
