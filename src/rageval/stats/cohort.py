"""The common cohort (docs/design.md#common-cohort, #decision-statistics-families), computed from arrays.

The cohort is the questions ``ok`` in every setting that ran.  A setting that did not run at all — every one of its
records ``unavailable`` (its model weights are missing) — is reported with its counts and **left out** of the
cohort (and of the contrast family); a setting that ran and failed on some questions stays in, and those questions
leave the cohort.  This module takes boolean question x setting tables and knows no record format: reading records
into those tables is :mod:`rageval.rundir.columns`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Cohort", "cohort_of", "wholly_unavailable_columns"]


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


def wholly_unavailable_columns(present: np.ndarray, unavailable: np.ndarray) -> np.ndarray:
    """A setting that did not run (it has records and every one is ``unavailable``), per column of a question x setting table: ``present`` where the
    setting has a record of the question, ``unavailable`` where that record is ``unavailable``."""
    return present.any(axis=0) & (unavailable | ~present).all(axis=0)


def cohort_of(
    question_ids: Sequence[str],
    settings: Sequence[str],
    *,
    present: np.ndarray,
    ok: np.ndarray,
    unavailable: np.ndarray,
    leave_out_unavailable: bool = True,
) -> Cohort:
    """The common cohort of a question x setting table: ``present`` where the setting has a record of the question,
    ``ok`` where that record is ok, ``unavailable`` where it is ``unavailable`` (rows in ``question_ids``' order,
    columns in ``settings``' order).  The cohort's questions are sorted; ``leave_out_unavailable``: a setting that
    did not run (:func:`wholly_unavailable_columns`) is left out instead of emptying the cohort.

    >>> c = cohort_of(["q2", "q1"], ["a", "b"], present=np.ones((2, 2), bool),
    ...               ok=np.array([[True, False], [True, True]]), unavailable=np.zeros((2, 2), bool))
    >>> c.question_ids, c.counts["b"]["n_failed"], c.counts["a"]["n_excluded"]
    (('q1',), 1, 1)
    """
    order = np.array(sorted(range(len(question_ids)), key=list(question_ids).__getitem__), dtype=np.int64)
    questions = [question_ids[i] for i in order.tolist()]
    if order.size:
        present, ok, unavailable = present[order], ok[order], unavailable[order]
    n_present = present.sum(axis=0)
    wholly = wholly_unavailable_columns(present, unavailable)
    left_out = tuple(s for j, s in enumerate(settings) if leave_out_unavailable and wholly[j])
    family = [j for j, s in enumerate(settings) if s not in left_out]
    in_cohort = np.asarray(ok[:, family].all(axis=1)) if family else np.zeros(len(questions), dtype=bool)
    cohort = tuple(q for q, c in zip(questions, in_cohort.tolist()) if c)
    counts: dict[str, dict[str, int]] = {}
    for j, s in enumerate(settings):
        counts[s] = {
            "n_records": int(n_present[j]),
            "n_ok": int(ok[:, j].sum()),
            "n_failed": int((present[:, j] & ~ok[:, j]).sum()),
            "n_missing": int((~present[:, j]).sum()),
            "n_cohort": 0 if s in left_out else len(cohort),
            "n_excluded": int((ok[:, j] & ~in_cohort).sum()),
        }
    return Cohort(tuple(cohort), tuple(settings), counts, left_out)
