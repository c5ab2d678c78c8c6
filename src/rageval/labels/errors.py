"""The error of the labelling step (a light module: the report's command imports it)."""

from __future__ import annotations

from rageval.errors import ConfigError

__all__ = ["LabelError"]


class LabelError(ConfigError):
    """A run or a label file that cannot be used (not a run, no judge-based metric, pairs not of the run)."""
