"""The common cohort and the per-question metric table it induces
(docs/design.md#common-cohort, #decision-statistics-families).

Records are the dicts of ``records.jsonl`` (``Record.to_dict()``); ``Record``
objects are accepted too.  Primary comparisons use the **common cohort**: the
questions whose records are ``ok`` in identity and in every setting that ran.  A
setting that did not run at all — every record of it ``unavailable`` (its model
weights are missing) — is reported with its counts and **left out** of the cohort
(and of the contrast family); a setting that ran and failed on some questions stays
in, and those questions leave the cohort.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Cohort", "common_cohort", "wholly_unavailable", "as_record_dict", "metric_value", "metric_table"]


def as_record_dict(rec: Any) -> Mapping[str, Any]:
    if isinstance(rec, Mapping):
        return rec
    to_dict = getattr(rec, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    raise TypeError(f"a record must be a dict (one records.jsonl line) or a Record, got {type(rec).__name__}")


def _setting_name(rec: Mapping[str, Any]) -> str:
    s = rec.get("setting")
    if isinstance(s, Mapping):
        s = s.get("name")
    if not isinstance(s, str):
        raise ValueError(f"record for question {rec.get('question_id')!r} has no setting name: {rec.get('setting')!r}")
    return s


@dataclass(frozen=True)
class Cohort:
    """Questions ``ok`` in every setting that ran, plus what each setting lost.

    ``counts[setting]`` holds ``n_records``, ``n_ok``, ``n_failed`` (records with a
    status other than ok), ``n_missing`` (questions seen elsewhere with no record
    here), ``n_cohort`` (the cohort's size; 0 for a setting left out) and
    ``n_excluded`` (ok here but not in the cohort because the question failed or is
    missing in another setting).  ``left_out``: the settings wholly ``unavailable``,
    in suite order, which define nothing here (:func:`common_cohort`).
    """

    question_ids: tuple[str, ...]
    settings: tuple[str, ...]
    counts: Mapping[str, Mapping[str, int]]
    left_out: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.question_ids)

    @property
    def family(self) -> tuple[str, ...]:
        """The settings that define the cohort and enter the contrasts: every setting but the left-out ones."""
        return tuple(s for s in self.settings if s not in self.left_out)


def wholly_unavailable(statuses: Sequence[Any]) -> bool:
    """A setting that did not run: it has records and every one of them is ``unavailable``."""
    present = [st for st in statuses if st is not None]
    return bool(present) and all(st == "unavailable" for st in present)


def common_cohort(
    records: Iterable[Any], settings: Sequence[str] | None = None, *, leave_out_unavailable: bool = True
) -> Cohort:
    """The common cohort of ``records`` over ``settings`` (default: every setting seen).

    The cohort is the questions ``ok`` in every setting that ran: with
    ``leave_out_unavailable`` (the default, docs/design.md#common-cohort) a setting
    whose every record is ``unavailable`` is left out (``Cohort.left_out``) instead of
    emptying the cohort; ``False`` requires ``ok`` in every setting.

    >>> recs = [{"question_id": q, "setting": {"name": s}, "status": st}
    ...         for q, s, st in [("q1", "a", "ok"), ("q1", "b", "ok"), ("q2", "a", "ok"), ("q2", "b", "reader_error")]]
    >>> c = common_cohort(recs)
    >>> c.question_ids, c.counts["a"]["n_excluded"], c.counts["b"]["n_failed"]
    (('q1',), 1, 1)
    >>> recs += [{"question_id": q, "setting": {"name": "c"}, "status": "unavailable"} for q in ("q1", "q2")]
    >>> c = common_cohort(recs)
    >>> c.question_ids, c.left_out, c.counts["c"]["n_cohort"]
    (('q1',), ('c',), 0)
    """
    seen, order = _statuses(records)
    settings = tuple(order if settings is None else settings)
    unknown = [s for s in order if s not in settings]
    if unknown:
        raise ValueError(f"records name settings {unknown} that are not in the family {list(settings)}")
    questions = sorted({q for q, _ in seen})
    left_out = tuple(
        s for s in settings if leave_out_unavailable and wholly_unavailable([seen.get((q, s)) for q in questions])
    )
    family = [s for s in settings if s not in left_out]
    cohort = tuple(q for q in questions if all(seen.get((q, s)) == "ok" for s in family)) if family else ()
    in_cohort = set(cohort)
    counts: dict[str, dict[str, int]] = {}
    for s in settings:
        statuses = [seen.get((q, s)) for q in questions]
        counts[s] = _counts(questions, statuses, in_cohort, 0 if s in left_out else len(cohort))
    return Cohort(cohort, settings, counts, left_out)


def _statuses(records: Iterable[Any]) -> tuple[dict[tuple[str, str], str | None], list[str]]:
    """``({(question, setting): status}, settings in order of appearance)``; a record without a string question id
    or a setting name, or a second record of one (question, setting), is a ValueError."""
    recs = [as_record_dict(r) for r in records]
    seen: dict[tuple[str, str], str | None] = {}
    order: list[str] = []
    for r in recs:
        qid = r.get("question_id")
        if not isinstance(qid, str):
            raise ValueError(f"record without a string question_id: {qid!r}")
        s = _setting_name(r)
        if s not in order:
            order.append(s)
        key = (qid, s)
        if key in seen:
            raise ValueError(
                f"two records for question {qid!r} in setting {s!r}: records of different runs or suites mixed?"
            )
        seen[key] = r.get("status")
    return seen, order


def _counts(questions: Sequence[str], statuses: Sequence[Any], in_cohort: set[str], n_cohort: int) -> dict[str, int]:
    """One setting's counts (:class:`Cohort`) from its status per question (None: no record)."""
    return {
        "n_records": sum(st is not None for st in statuses),
        "n_ok": sum(st == "ok" for st in statuses),
        "n_failed": sum(st is not None and st != "ok" for st in statuses),
        "n_missing": sum(st is None for st in statuses),
        "n_cohort": n_cohort,
        "n_excluded": sum(st == "ok" and q not in in_cohort for q, st in zip(questions, statuses)),
    }


def metric_value(v: Any) -> float:
    """A metric value as float; ``None``/NaN -> NaN; bools count 0/1; other types raise TypeError."""
    if v is None:
        return math.nan
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    raise TypeError(f"not a scalar metric value: {v!r}")


def metric_table(
    records: Iterable[Any], question_ids: Sequence[str], settings: Sequence[str], metrics: Sequence[str]
) -> dict[tuple[str, str], np.ndarray]:
    """``{(setting, metric): values aligned with question_ids}``, NaN where undefined or absent."""
    pos: dict[Any, int] = {q: i for i, q in enumerate(question_ids)}
    out = {(s, m): np.full(len(question_ids), np.nan) for s in settings for m in metrics}
    for r in map(as_record_dict, records):
        i = pos.get(r.get("question_id"))
        if i is None:
            continue
        s = _setting_name(r)
        if s not in settings:
            continue
        ms = r.get("metrics") or {}
        for m in metrics:
            if m in ms:
                try:
                    out[(s, m)][i] = metric_value(ms[m])
                except TypeError:
                    pass
    return out
