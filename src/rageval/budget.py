"""Budgets: what a budget value may be, and how it becomes a token count (ground layer: stdlib only).

A budget is an ``int`` >= 1 (an absolute token count), a ``float`` in ``(0, 1]``
(a fraction of the retrieved tokens: the tokens of all the question's snippets,
counted with the suite's tokenizer) or ``None`` (no budget).  Zero, negatives,
``bool``, NaN, infinity, floats above 1 and anything else raise a
:class:`BudgetError` that names the value and says how to write it instead.  The
compressors (:mod:`rageval.compressors.base`, which re-exports these names) and
the suite's ``settings[i].budgets`` (:mod:`rageval.suite.config`) check budgets
here, with the same messages.

>>> resolve_budget(160, retrieved_tokens=1000)
160
>>> resolve_budget(0.25, retrieved_tokens=1000)
250
>>> resolve_budget(None, retrieved_tokens=1000) is None
True
>>> check_budgets([None, 96, 0.5])
[None, 96, 0.5]
>>> try:
...     check_budget(0)
... except BudgetError as e:
...     print(e)
budget 0 is not positive: give a token count (a positive integer, e.g. 160), a fraction in (0, 1] of the retrieved tokens (e.g. 0.25), or null (None) for no budget
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["Budget", "BudgetError", "budget_problem", "check_budget", "check_budgets", "resolve_budget"]

#: the type of a budget, as written in annotations
Budget = "int | float | None"

_FIX = (
    "give a token count (a positive integer, e.g. 160), a fraction in (0, 1] of the retrieved tokens (e.g. 0.25), "
    "or null (None) for no budget"
)


class BudgetError(ValueError):
    """A budget that is not a positive int, a fraction in (0, 1], or None."""


def budget_problem(budget: Any) -> str | None:
    """None when ``budget`` is a valid budget, else what is wrong with it and the fix (one line).

    >>> budget_problem(True)
    'budget True is not a number: give a token count (a positive integer, e.g. 160), a fraction in (0, 1] of the retrieved tokens (e.g. 0.25), or null (None) for no budget'
    >>> budget_problem(1.5)
    'budget 1.5 is a float above 1: a float is a fraction in (0, 1]; for a token count write an integer (e.g. 1)'
    """
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        return f"budget {budget!r} is not a number: {_FIX}"
    if isinstance(budget, float) and not math.isfinite(budget):
        return f"budget {budget!r} is not a finite number: {_FIX}"
    if budget <= 0:
        return f"budget {budget!r} is not positive: {_FIX}"
    if isinstance(budget, float) and budget > 1:
        return (
            f"budget {budget!r} is a float above 1: a float is a fraction in (0, 1]; "
            f"for a token count write an integer (e.g. {int(budget)})"
        )
    return None


def check_budget(budget: Any) -> None:
    """Raise :class:`BudgetError` unless ``budget`` is a valid budget (see the module doc)."""
    problem = budget_problem(budget)
    if problem is not None:
        raise BudgetError(problem)


def check_budgets(budgets: Any) -> list[Any]:
    """``budgets`` when it is a non-empty list of valid budgets, else :class:`BudgetError` (a suite's ``budgets:``)."""
    if not isinstance(budgets, list) or not budgets:
        raise BudgetError("budgets must list at least one budget (use [null] for no budget)")
    for b in budgets:
        check_budget(b)
    return budgets


def resolve_budget(budget: float | None, *, retrieved_tokens: int) -> int | None:
    """The budget in tokens: ``int`` as is, ``float`` fraction x retrieved tokens (floored), None stays None.

    A fraction of a non-empty retrieval is at least 1 token.

    >>> resolve_budget(1.0, retrieved_tokens=7), resolve_budget(0.01, retrieved_tokens=7)
    (7, 1)
    """
    check_budget(budget)
    if budget is None:
        return None
    if isinstance(budget, float):
        if retrieved_tokens <= 0:
            return 0
        return max(1, math.floor(budget * retrieved_tokens + 1e-9))
    return int(budget)
