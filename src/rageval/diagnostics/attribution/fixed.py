"""Fixed mappings: score grounded citations against recovered source ids given from outside.

The second-evaluator audit (:mod:`rageval.audit`) re-judges support with another
judge while keeping the first judge's re-attribution: the recovered source ids
saved per record (``extra.attribution.recovery``, unit number -> ``recovered``).
:func:`fixed_recovery` turns them into the engine's per-unit recoveries, so the
engine makes no recovery call at all (``attribution_scores_batch(...,
recovered=...)``); :func:`saved_recovery` reads them from a saved record (the
engine's fixed mappings for a saved record: :attr:`rageval.run.plan.Saved.fixed_recovery`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rageval.diagnostics._attribution_inputs import PreparedQuestion
from rageval.diagnostics.attribution.recovery import Recovery

__all__ = ["fixed_recovery", "saved_recovery"]


def fixed_recovery(
    questions: Sequence[PreparedQuestion],
    wanted: Mapping[int, Sequence[int]],
    recovered: Sequence[Mapping[int, Sequence[str]] | None],
) -> dict[tuple[int, int], Recovery]:
    """The recoveries of the ``wanted`` units (0-based, per question) from ``recovered[q] = {unit index: ids}``.

    A wanted unit without an entry (or with no ids) is not recovered; an id that is not
    among the question's sources is an error naming the question and the unit.
    """
    if len(recovered) != len(questions):
        raise ValueError(f"recovered has {len(recovered)} entries for {len(questions)} questions")
    out: dict[tuple[int, int], Recovery] = {}
    for q in questions:
        given: Mapping[Any, Sequence[str]] = recovered[q.index] or {}
        for k in wanted.get(q.index, ()):
            ids = list(given.get(k) or ())
            for sid in ids:
                if sid not in q.by_id:
                    raise ValueError(
                        f"recovered[{q.index}][{k}] names {sid!r}, which is not among the {len(q.sources)} sources of "
                        f"question {q.index}: fixed mappings must come from the same record"
                    )
            out[(q.index, k)] = Recovery(recovered=ids)
    return out


def saved_recovery(extra: Mapping[str, Any]) -> dict[int, tuple[str, ...]]:
    """A saved record's recovered source ids per unit (0-based) from its ``extra.attribution.recovery``
    (unit number -> ``{"recovered": [ids]}``); a unit key that is not a number is a ``ValueError``.

    >>> saved_recovery({"attribution": {"recovery": {"1": {"recovered": ["a.s0"]}, "3": {}}}})
    {0: ('a.s0',), 2: ()}
    """
    recovery = ((extra or {}).get("attribution") or {}).get("recovery") or {}
    out: dict[int, tuple[str, ...]] = {}
    for unit, r in recovery.items():
        try:
            k = int(unit) - 1
        except (TypeError, ValueError):
            raise ValueError(f"extra.attribution.recovery has a unit key {unit!r}, not a number") from None
        out[k] = tuple((r or {}).get("recovered") or ())
    return out
