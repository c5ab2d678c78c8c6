"""The error of a run directory that cannot be used as asked (its own module: the run directory's readers and the
record store's raise it without importing each other)."""

from __future__ import annotations

from rageval.errors import ConfigError

__all__ = ["RunDirError"]


class RunDirError(ConfigError):
    """A run directory that cannot be used as asked (another run's, unreadable, of an unknown format)."""
