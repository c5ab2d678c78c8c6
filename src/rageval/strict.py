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

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

__all__ = ["Strict"]


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
