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
from dataclasses import dataclass

from rageval.errors import ConfigError

__all__ = ["CELL_CHARS", "INPUT_BYTES", "LIMITS", "SETTINGS", "Limit"]


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


#: one input file, in bytes (a JSON Lines file read line by line: each line)
INPUT_BYTES = Limit("RAGEVAL_MAX_INPUT_BYTES", 1 << 30, "bytes", 2_000_000_000)
#: one text value of an input (a CSV cell, a JSON string), in characters
CELL_CHARS = Limit("RAGEVAL_MAX_CELL_CHARS", 1 << 24, "characters", 100_000_000)
#: the settings of one run that its statistics and report compare
SETTINGS = Limit("RAGEVAL_MAX_SETTINGS", 500, "settings", 5000)
#: every limit, in the order the docs list them
LIMITS = (INPUT_BYTES, CELL_CHARS, SETTINGS)
