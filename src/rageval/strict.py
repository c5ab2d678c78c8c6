"""The strict pydantic base model of every configuration section (ground layer: imports only pydantic).

:class:`Strict` refuses what a configuration file gets wrong silently elsewhere:
unknown keys (``extra="forbid"``), a bool where a number is meant and ``"3"`` for
``3`` (``strict``), NaN and infinity (``allow_inf_nan=False``), and a blank string
for any field but ``description``.  Models built on it are frozen.

>>> class Section(Strict):
...     name: str
>>> Section(name="x").name
'x'
>>> Section(name=" ")
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Section
name
  Value error, empty string; give a value or leave the key out ...
"""

from __future__ import annotations

import math
import numbers
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator

__all__ = ["MAX_SEED", "Probability", "Seed", "Strict", "check_probability", "check_seed"]

#: the largest seed (numpy's generators take any non-negative integer; 2**63 - 1 fits every integer type)
MAX_SEED = 2**63 - 1
#: a random seed: a whole number in ``[0, MAX_SEED]`` (the suite's ``seed``, ``--seed`` of every command)
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]


def check_probability(value: Any, what: str = "threshold") -> float:
    """``value`` as a float in ``[0, 1]``; a ValueError for anything else: a bool (numpy's too), a string such as
    ``"0.5"``, NaN, an infinity or a number outside the range.  Python and numpy ints and floats are numbers.

    >>> check_probability(0.5), check_probability(1)
    (0.5, 1.0)
    >>> check_probability("0.5")
    Traceback (most recent call last):
    ...
    ValueError: threshold must be a number in [0, 1], got '0.5' (type str)
    """
    ok = not isinstance(value, bool) and isinstance(value, numbers.Real)  # numpy's bool_ is no numbers.Real
    number = float(value) if ok else math.nan
    if not (ok and 0.0 <= number <= 1.0):  # NaN fails the range test
        raise ValueError(f"{what} must be a number in [0, 1], got {value!r} (type {type(value).__name__})")
    return number


#: a probability or a threshold: a finite number in ``[0, 1]`` (:func:`check_probability`), stored as a float
Probability = Annotated[float, BeforeValidator(check_probability)]


def check_seed(value: Any, what: str = "seed") -> int:
    """``value`` if it is a seed (:data:`Seed`), else a ValueError naming ``what`` and the range.

    >>> check_seed(0), check_seed(2**63 - 1)
    (0, 9223372036854775807)
    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be a whole number from 0 to 9223372036854775807, got -1
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        big = isinstance(value, int) and abs(value) >= 10**30  # str() of a huge int may exceed Python's digit limit
        shown = f"a number of about {int(value.bit_length() * 0.30103) + 1} digits" if big else value
        raise ValueError(f"{what} must be a whole number from 0 to {MAX_SEED}, got {shown!r}")
    return value


class Strict(BaseModel):
    """Forbid unknown keys, coercion, NaN/inf and blank strings (``description`` may be blank); frozen."""

    # strict: no bool where a number is meant, no "3" for 3; no NaN/inf; no blank string for a field
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_blank_strings(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and not value.strip() and info.field_name != "description":
            raise ValueError("empty string; give a value or leave the key out")
        return value
