"""Per-setting examples of what went wrong, for the HTML report (read from the saved records, no model calls).

Two kinds, over the common cohort, in question order, a few of each per setting
with the total count beside them:

* **answer left the context**: ``answer_in_context`` is 1 for the question in the
  reference setting (the first ``identity`` setting: the uncompressed context) and 0
  in this one — the compressor dropped the gold answer the retriever had found;
* **supported by what the reader saw, not by the source**: a sentence whose
  emitted citations pass the gate (premise: the unit texts the reader saw) while its
  grounded ones do not (premise: the source snippets the cited units declare or
  were recovered to), from ``extra.attribution.sentences``.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rageval.report.result import Examples

if TYPE_CHECKING:
    from rageval.rundir.columns import RecordColumns

__all__ = ["ExampleMarks", "marked_examples", "setting_examples", "reference_setting", "PER_KIND"]

#: examples shown per kind and setting
PER_KIND = 3
_CLIP = 400


def _clip(text: Any, n: int = _CLIP) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[: n - 1].rstrip() + "…"


def reference_setting(settings: Sequence[Mapping[str, Any]], names: Sequence[str]) -> str | None:
    """The first setting whose compressor is ``identity`` (among ``names``), else None."""
    return next((s["name"] for s in settings if s.get("compressor") == "identity" and s["name"] in names), None)


def _gold(rec: Mapping[str, Any]) -> list[str]:
    gold = (rec.get("extra") or {}).get("gold") or {}
    pairs = gold.get("qa_pairs") or []
    if pairs:
        return [" / ".join(map(str, p)) for p in pairs][:6]
    return [str(a) for a in gold.get("answers") or []][:6]


def _units(rec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(((rec.get("context") or {}).get("units")) or [])


def _left_context(rec: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "question_id": rec["question_id"],
        "question": _clip((rec.get("extra") or {}).get("question")),
        "gold": _gold(rec),
        "answer": _clip((rec.get("answer") or {}).get("text")),
    }


def _unsupported_by_source(rec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The record's sentences whose emitted citations pass the gate while their grounded ones do not."""
    sentences = ((rec.get("extra") or {}).get("attribution") or {}).get("sentences") or []
    for s in sentences:
        if not isinstance(s, Mapping):
            continue
        e, g = s.get("emitted") or {}, s.get("grounded") or {}
        if e.get("supported") and g and not g.get("supported"):
            yield s


def _emitted_not_grounded(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    units = _units(rec)
    out = []
    for s in _unsupported_by_source(rec):
        cited = []
        for c, ev in zip(s.get("citations") or [], s.get("evidence") or [None] * len(s.get("citations") or [])):
            u = units[c - 1] if isinstance(c, int) and 0 < c <= len(units) else {}
            cited.append(
                {
                    "number": c,
                    "text": _clip(u.get("text"), 300),
                    "evidence": ev,
                    "source_ids": list(u.get("source_ids") or []),
                }
            )
        out.append({"question_id": rec["question_id"], "sentence": _clip(s.get("text")), "cited": cited})
    return out


def setting_examples(
    records: Iterable[Mapping[str, Any]],
    settings: Sequence[Mapping[str, Any]],
    question_ids: Sequence[str],
    *,
    per_kind: int = PER_KIND,
    reference_aic: Sequence[float] | np.ndarray | None = None,
    also: Callable[[Mapping[str, Any]], None] | None = None,
) -> Examples:
    """``{"reference": name | None, "by_setting": {setting: {"left_context": {...}, "emitted_not_grounded": {...}}}}``;
    each kind holds ``n`` (every case over the cohort) and ``shown`` (the first ``per_kind`` in question order).

    One pass over ``records``, holding ``per_kind`` examples per kind and setting.  ``reference_aic``: the
    reference setting's ``answer_in_context`` aligned with ``question_ids`` (the report's cohort table has it);
    without it, it is read from ``records`` first (a second pass: ``records`` must then be a list or a
    re-readable :class:`~rageval.report.load.Records`).  ``also``: called with every record of that pass, in
    order (another reader riding on it: the explorer's :class:`~rageval.report.explorer.ExplorerPass`).
    """
    names = [s["name"] for s in settings]
    order = {q: i for i, q in enumerate(question_ids)}
    ref = reference_setting(settings, names)
    if ref is not None and reference_aic is None:
        reference_aic = _reference_aic(records, ref, order)
    kinds = ("left_context", "emitted_not_grounded")
    found = {s: {k: _First(per_kind) for k in kinds} for s in names}
    for r in records:
        if also is not None:
            also(r)
        i = order.get(r["question_id"])
        s = r["setting"]["name"]
        if i is not None and r.get("status") == "ok" and s in found:
            left = ref is not None and s != ref and reference_aic is not None and reference_aic[i] == 1
            _add(found[s], r, i, left)
    out = {s: {k: found[s][k].result() for k in kinds} for s in names}
    return {"reference": ref, "per_kind": per_kind, "by_setting": out}


def _reference_aic(records: Iterable[Mapping[str, Any]], ref: str, order: Mapping[str, int]) -> list[float]:
    """The reference setting's ``answer_in_context`` per question of ``order`` (1.0 where it is 1, else NaN)."""
    out = [math.nan] * len(order)
    for r in records:
        i = order.get(r["question_id"])
        if i is not None and r.get("status") == "ok" and r["setting"]["name"] == ref:
            out[i] = 1.0 if (r.get("metrics") or {}).get("answer_in_context") == 1 else math.nan
    return out


def _add(mine: Mapping[str, _First], r: Mapping[str, Any], i: int, reference_had_it: bool) -> None:
    """One cohort record's cases (question position ``i``; ``reference_had_it``: the answer was in the
    reference's context)."""
    if reference_had_it and (r.get("metrics") or {}).get("answer_in_context") == 0:
        mine["left_context"].add((i, 0), r, _left_context)
    for j, x in enumerate(_emitted_not_grounded(r)):
        mine["emitted_not_grounded"].add((i, j), x, None)


class _First:
    """The ``n`` cases of one kind and the first ``k`` of them by key (a bounded heap), and their count."""

    def __init__(self, k: int) -> None:
        self.k, self.n = k, 0
        self._heap: list[tuple[tuple[int, int], int, Any]] = []  # (negated key, tie, example)

    def add(self, key: tuple[int, int], item: Any, make: Any) -> None:
        self.n += 1
        neg = (-key[0], -key[1])
        if len(self._heap) < self.k:
            heapq.heappush(self._heap, (neg, self.n, make(item) if make else item))
        elif self._heap and neg > self._heap[0][0]:
            heapq.heapreplace(self._heap, (neg, self.n, make(item) if make else item))

    def result(self) -> dict[str, Any]:
        shown = [x for _, _, x in sorted(self._heap, key=lambda e: (-e[0][0], -e[0][1]))]
        return {"n": self.n, "shown": shown}


class ExampleMarks:
    """Per record of a run, in its order, what the examples read of it (:meth:`add`, in the run's one checked
    pass: rageval.report.load): how many of its sentences are supported by what the reader saw, not by the
    source, and whether its ``answer_in_context`` is 0.  :func:`marked_examples` then reads only the records it
    shows, each at its place."""

    def __init__(self) -> None:
        self.unsupported = array("q")
        self.aic_zero = array("b")

    def add(self, rec: Mapping[str, Any]) -> None:
        self.unsupported.append(sum(1 for _ in _unsupported_by_source(rec)))
        self.aic_zero.append((rec.get("metrics") or {}).get("answer_in_context") == 0)


def marked_examples(
    records: Sequence[Mapping[str, Any]],
    marks: ExampleMarks | None,
    columns: RecordColumns,
    settings: Sequence[Mapping[str, Any]],
    question_ids: Sequence[str],
    reference_aic: Sequence[float] | np.ndarray | None,
    *,
    per_kind: int = PER_KIND,
) -> Examples:
    """:func:`setting_examples` of a run whose records were marked in its checked pass (``marks``, aligned with
    ``columns`` and ``records``): the same examples and counts, each record shown read at its place, no pass
    (``marks`` None, a ``slim`` load's: :func:`setting_examples`' pass over ``records``)."""
    if marks is None:
        return setting_examples(records, settings, question_ids, per_kind=per_kind, reference_aic=reference_aic)
    names = [s["name"] for s in settings]
    ref = reference_setting(settings, names)
    at = {q: i for i, q in enumerate(question_ids)}
    q_idx, s_idx, st_idx = columns.indexes()
    position = np.array([at.get(q, -1) for q in columns.question_ids], dtype=np.int64)[q_idx]  # -1: not in it
    usable = (st_idx == columns.status_code("ok")) & (position >= 0)
    unsupported = np.frombuffer(marks.unsupported, dtype=np.int64)
    aic_zero = np.frombuffer(marks.aic_zero, dtype=np.int8) != 0
    had_it = None if reference_aic is None else np.asarray(reference_aic, dtype=np.float64) == 1
    out = {}
    for name in names:
        si = columns.settings.index(name) if name in columns.settings else -1
        rows = np.flatnonzero(usable & (s_idx == si))
        rows = rows[np.argsort(position[rows], kind="stable")]  # in question order
        left = rows[:0]
        if ref is not None and name != ref and had_it is not None:
            left = rows[had_it[position[rows]] & aic_zero[rows]]
        shown: list[dict[str, Any]] = []
        for r in rows[unsupported[rows] > 0].tolist():
            if len(shown) >= per_kind:
                break
            shown += _emitted_not_grounded(records[r])
        out[name] = {
            "left_context": {
                "n": int(left.size),
                "shown": [_left_context(records[r]) for r in left[:per_kind].tolist()],
            },
            "emitted_not_grounded": {"n": int(unsupported[rows].sum()), "shown": shown[:per_kind]},
        }
    return {"reference": ref, "per_kind": per_kind, "by_setting": out}
