"""Every size limit of rageval, in one place: what it bounds, its default, and the one way to raise it, an
environment variable (docs/suites.md#limits).

=============================  ==============================  ==============  ===========================
limit                          bounds                          default         raise it with
=============================  ==============================  ==============  ===========================
:data:`INPUT_BYTES`            one input file (a JSON Lines    1 GiB           ``RAGEVAL_MAX_INPUT_BYTES``
                               file read line by line: each
                               of its lines)
:data:`CELL_CHARS`             one text value of an input: a   16 Mi           ``RAGEVAL_MAX_CELL_CHARS``
                               CSV cell, a JSON string         characters
:data:`SETTINGS`               the settings one run's          500             ``RAGEVAL_MAX_SETTINGS``
                               statistics and report compare
=============================  ==============================  ==============  ===========================

An input over a limit is refused before its cost is paid (a CSV cell before it is read whole, a run's settings
before anything is scored), in one line: what is over which limit, the value seen, and the variable that raises it
(:meth:`Limit.refusal`); the caller raises its own error class (a :class:`~rageval.errors.ConfigError`: exit 2).
A variable set to something other than a positive whole number is a :class:`~rageval.errors.ConfigError` too.

>>> SETTINGS.refusal("run/", "5,000 settings")
'run/: 5,000 settings over the limit of 500 settings; raise it with RAGEVAL_MAX_SETTINGS=<settings> if that is right'
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rageval.errors import ConfigError

__all__ = ["CELL_CHARS", "INPUT_BYTES", "LIMITS", "SETTINGS", "Limit", "check_text_sizes", "long_text"]


@dataclass(frozen=True)
class Limit:
    """One size limit: ``default`` ``unit`` at most, ``variable`` (an environment variable) sets another."""

    variable: str
    default: int
    unit: str
    #: a value to show in the message of a bad ``variable`` (a larger one, as someone raising the limit would set)
    example: int

    def value(self) -> int:
        """The limit now: ``variable`` (a positive whole number, ``_`` allowed between digits), else ``default``."""
        raw = os.environ.get(self.variable, "").strip()
        if not raw:
            return self.default
        try:
            value = int(raw.replace("_", ""))
        except ValueError:
            value = 0
        if value <= 0:
            raise ConfigError(
                f"{self.variable}={raw!r}: expected a positive number of {self.unit}, e.g. {self.example}"
            )
        return value

    def refusal(self, where: str, what: str, why: str = "") -> str:
        """The one-line message refusing ``what`` (with its size where known: ``"5,000 settings"``, ``"a cell"``) at
        ``where``: the limit, ``why`` it exists (if given) and how to raise it."""
        return (
            f"{where}: {what} over the limit of {self.value():,} {self.unit}{f' ({why})' if why else ''}; "
            f"raise it with {self.variable}=<{self.unit}> if that is right"
        )


def long_text(value: Any, limit: int) -> tuple[str, int] | None:
    """``(place, length)`` of the first string in ``value`` (JSON: objects, arrays, strings) longer than ``limit``
    characters, its place written ``answer`` or ``contexts[0].text``; None when there is none (iterative: no
    recursion).

    >>> long_text({"q": "ab", "contexts": ["x", {"text": "abcd"}]}, 3)
    ('contexts[1].text', 4)
    """
    if not _has_long_text(value, limit):  # the usual case: no place written for any string
        return None
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        place, v = stack.pop()
        if isinstance(v, str):
            if len(v) > limit:
                return place, len(v)
        elif isinstance(v, dict):
            stack.extend((f"{place}.{k}" if place else str(k), x) for k, x in reversed(v.items()))
        elif isinstance(v, list):
            stack.extend((f"{place}[{i}]", x) for i, x in reversed(list(enumerate(v))))
    return None


def _has_long_text(value: Any, limit: int) -> bool:
    """Whether a string in ``value`` is longer than ``limit`` characters (:func:`long_text`'s walk, no places)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if len(v) > limit:
                return True
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def check_text_sizes(value: Any, where: str, *, error: Callable[[str], Exception]) -> None:
    """Refuse ``value`` (a row or a JSON value read from an input) when a string in it is longer than
    :data:`~rageval.limits.CELL_CHARS`: an ``error`` naming ``where`` and the field."""
    found = long_text(value, CELL_CHARS.value())
    if found is not None:
        place, n = found
        raise error(CELL_CHARS.refusal(where, f"field {place!r} ({n:,} characters)" if place else f"{n:,} characters"))


#: one input file, in bytes (a JSON Lines file read line by line: each line)
INPUT_BYTES = Limit("RAGEVAL_MAX_INPUT_BYTES", 1 << 30, "bytes", 2_000_000_000)
#: one text value of an input (a CSV cell, a JSON string), in characters
CELL_CHARS = Limit("RAGEVAL_MAX_CELL_CHARS", 1 << 24, "characters", 100_000_000)
#: the settings of one run that its statistics and report compare
SETTINGS = Limit("RAGEVAL_MAX_SETTINGS", 500, "settings", 5000)
#: every limit, in the order the docs list them
LIMITS = (INPUT_BYTES, CELL_CHARS, SETTINGS)
