"""A calibration's judge, built as the engine builds a run's (:func:`rageval.run.parts.load_judge`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rageval.judges import get_judge
from rageval.judges.spec import JudgeSpec, parse_judge_spec
from rageval.run.parts import load_judge
from rageval.scoring import DEFAULT_THRESHOLD

__all__ = ["judge_runner"]


def judge_runner(
    judge: Any,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    cache_dir: Any = None,
    dtype: Any = None,
    max_length: int | None = 512,
    judge_params: Mapping[str, Any] | None = None,
) -> Any:
    """The :class:`~rageval.judges.base.JudgeRunner` a calibration scores with.

    A spec string is a :class:`~rageval.judges.spec.JudgeSpec` (``params``: ``max_length``, ``dtype`` when given,
    then ``judge_params``) loaded as a run's judge is (:func:`rageval.run.parts.load_judge`; a judge that cannot
    be loaded is a :class:`~rageval.errors.ModelUnavailable`, a spec that names no judge a
    :class:`~rageval.judges.spec.JudgeSpecError`).  A judge object (the Python API: a callable, a ``Judge``, a
    ``JudgeRunner``) is wrapped once by the same :func:`~rageval.judges.get_judge`.
    """
    params: dict[str, Any] = {"max_length": max_length}
    if dtype is not None:
        params["dtype"] = dtype
    params.update(judge_params or {})
    if isinstance(judge, str):
        parse_judge_spec(judge).checked()  # a spec naming no judge: its own one-line error (exit 2)
        return load_judge(JudgeSpec(spec=judge, threshold=threshold, params=params), cache_dir, None)
    return get_judge(judge, cache_dir=cache_dir, **params)
