"""The two errors of dataset loading: a record in the wrong layout, a hub dataset out of reach."""

from __future__ import annotations

from typing import Any

__all__ = ["DataLoadError", "DataUnavailable"]


class DataLoadError(ValueError):
    """A record does not have the layout the loader expects.

    Attributes name where (``source``, ``index``) and what (``field``, ``expected``).

    >>> str(DataLoadError("f.json", 3, "question", "the question string", 7))
    "f.json: record 3: field 'question' is int 7; expected the question string"
    """

    def __init__(self, source: str, index: int | None, field: str | None, expected: str, got: Any = ...):
        self.source, self.index, self.field, self.expected = source, index, field, expected
        where = source if index is None else f"{source}: record {index}"
        if field is None:
            msg = f"{where}: {expected}"
        elif got is ...:
            msg = f"{where}: missing field {field!r}; expected {expected}"
        else:
            shown = repr(got)
            if len(shown) > 80:
                shown = shown[:77] + "..."
            msg = f"{where}: field {field!r} is {type(got).__name__} {shown}; expected {expected}"
        super().__init__(msg)


class DataUnavailable(RuntimeError):
    """A hub dataset could not be loaded (offline, unknown id, no ``datasets``)."""
