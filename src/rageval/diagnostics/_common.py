"""Shared plumbing of the pure metric functions: input validation and aggregation.

Every diagnostic returns the same shape (docs/design.md#module-interface)::

    {<name>: mean or None, <other aggregates>..., "n": scored questions,
     "n_undefined": undefined questions, "per_question": [{...}, ...]}

Means are question-weighted over the questions where the value is defined;
undefined values are ``None`` and counted, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rageval.registry import did_you_mean

__all__ = [
    "mean_defined",
    "summarize",
    "check_keys",
    "check_list",
    "check_same_length",
    "check_str",
    "check_str_list",
]


def mean_defined(values: Sequence[float | None]) -> tuple[float | None, int, int]:
    """(mean over defined values or None, n defined, n undefined).

    >>> mean_defined([1.0, None, 0.0])
    (0.5, 2, 1)
    >>> mean_defined([None])
    (None, 0, 1)
    """
    defined = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    n_undef = len(values) - len(defined)
    if not defined:
        return None, 0, n_undef
    return math.fsum(defined) / len(defined), len(defined), n_undef


def summarize(per_question: list[dict[str, Any]], primary: str, extra: Sequence[str] = ()) -> dict[str, Any]:
    """Aggregate per-question dicts into the module result.

    ``n``/``n_undefined`` refer to ``primary``; an extra key whose undefined
    questions differ gets its own ``n_<key>`` and ``n_undefined_<key>``.
    """
    out: dict[str, Any] = {}
    mean, n, n_undef = mean_defined([q.get(primary) for q in per_question])
    out[primary] = mean
    for key in extra:
        m, nk, uk = mean_defined([q.get(key) for q in per_question])
        out[key] = m
        if (nk, uk) != (n, n_undef):
            out[f"n_{key}"] = nk
            out[f"n_undefined_{key}"] = uk
    out["n"] = n
    out["n_undefined"] = n_undef
    out["per_question"] = per_question
    return out


def check_keys(d: Mapping, allowed: Sequence[str], where: str) -> None:
    """Refuse a key ``d`` does not define (a typo such as ``source_id`` must not pass as "no provenance").

    >>> check_keys({"text": "x", "source_id": ["a"]}, ("text", "source_ids", "title"), "units[0][0]")
    Traceback (most recent call last):
    ...
    ValueError: units[0][0] has an unknown key 'source_id'. Did you mean 'source_ids'? Keys: text, source_ids, title.
    """
    for key in d:
        if key not in allowed:
            raise ValueError(
                f"{where} has an unknown key {key!r}.{did_you_mean(key, allowed)} Keys: {', '.join(allowed)}."
            )


def check_list(value: Any, field: str) -> list:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise TypeError(f"{field} must be a list with one entry per question, got {type(value).__name__}")
    return list(value)


def check_same_length(**lists: Sequence) -> int:
    lengths = {k: len(v) for k, v in lists.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k}={n}" for k, n in lengths.items())
        raise ValueError(f"inputs must have one entry per question, but lengths differ: {detail}")
    return next(iter(lengths.values()), 0)


def check_str(value: Any, field: str, q: int | None = None) -> str:
    if not isinstance(value, str):
        where = f"{field}[{q}]" if q is not None else field
        raise TypeError(f"{where} must be a string, got {type(value).__name__}: {value!r:.80}")
    return value


def check_str_list(value: Any, field: str, q: int) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{field}[{q}] must be a list of strings, got {type(value).__name__}: {value!r:.80}")
    for j, v in enumerate(value):
        if not isinstance(v, str):
            raise TypeError(f"{field}[{q}][{j}] must be a string, got {type(v).__name__}: {v!r:.80}")
    return list(value)
