"""The axes a Pareto frontier may take: the achieved size (lower is better) or any metric with a direction.

The report draws the frontiers (:mod:`rageval.report.frontier`); a suite's ``frontier:`` section names its axes
and is checked against these (:mod:`rageval.suite.study`).
"""

from __future__ import annotations

from rageval.diagnostics import direction_of

__all__ = ["AXIS_KEYS", "DEFAULT_AXES", "axis_direction"]

#: the size axes of a frontier (from each record's context)
AXIS_KEYS = ("achieved_ratio", "achieved_tokens")
#: the frontiers drawn when a suite names none
DEFAULT_AXES = (("achieved_ratio", "grounded_precision"), ("achieved_ratio", "answer_in_context"))


def axis_direction(key: str) -> str:
    """``higher`` / ``lower`` / ``none`` for a frontier axis (achieved ratio and tokens: lower)."""

    return "lower" if key in AXIS_KEYS else direction_of(key)
