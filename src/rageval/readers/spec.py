"""Reader specs: the suite's ``reader:`` section, the parameter model each backend declares, and the suite's reader
checks.

* :class:`ReaderSpec` — a suite's ``reader:`` (and ``settings[i].reader:``) section
  (``backend``, ``params``, ``template``, ``batch_size``); its JSON dump is part of
  the suite hash.
* :class:`ReaderParams` — the base of each backend's parameter model, which the
  reader class declares as its ``Params`` attribute (``ExtractiveReader.Params``,
  ...).  Its fields are the options the backend accepts (a field without a
  default is required); its validators check the values that are cheap to
  check, with the messages the constructor gives (the constructor validates
  through the same model).
* :func:`check_options` — unknown or missing options of ``get_reader`` (a
  ValueError naming the accepted ones); :func:`reader_problems` — what a suite's
  reader gets wrong, one line each (called by
  :func:`rageval.suite.checks.config_problems`).

>>> from rageval.readers import reader_class
>>> Params = reader_class("saved").Params
>>> Params.accepted(), Params.required()
(['path', 'format', 'system', 'tokenizer'], ['path'])
>>> reader_class("extractive").Params.check(max_sentences=0)
Traceback (most recent call last):
...
ValueError: extractive reader: max_sentences must be a positive integer, got 0

Importing this module is cheap: pydantic, no reader module, no torch, no HTTP client.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo

from rageval.readers.registry import READERS, reader_class
from rageval.readers.template import PromptTemplate
from rageval.registry import did_you_mean
from rageval.strict import Strict

__all__ = [
    "ReaderParams",
    "ReaderSpec",
    "check_options",
    "finite_non_negative",
    "non_empty_text",
    "params_model",
    "positive_int",
    "reader_problems",
]


class ReaderSpec(Strict):
    """A suite's ``reader:`` section."""

    backend: str = "extractive"
    params: dict[str, Any] = Field(default_factory=dict)
    template: dict[str, Any] | None = Field(
        None, description="prompt template fields (instruction, user, system, unit, ...); default: the built-in one"
    )
    batch_size: int = Field(8, ge=1)


class ReaderParams(BaseModel):
    """The options of one reader backend (subclassed per backend, declared as the reader class's ``Params``).

    ``template`` is not an option here (a suite gives it as ``reader.template``; the
    constructor takes it beside the options).  ``what`` names the backend in messages.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, arbitrary_types_allowed=True)

    what: ClassVar[str] = "reader"

    tokenizer: Any = Field("regex", description="the suite tokenizer (counts prompt tokens); set by the suite")

    @classmethod
    def accepted(cls) -> list[str]:
        """The option names, the backend's own first (in declaration order), then the common ones."""
        common = list(ReaderParams.model_fields)
        return [k for k in cls.model_fields if k not in common] + common

    @classmethod
    def required(cls) -> list[str]:
        """The options without a default."""
        return [k for k in cls.accepted() if cls.model_fields[k].is_required()]

    @classmethod
    def check(cls, **values: Any) -> ReaderParams:
        """The validated options, or a ValueError with the first problem (one line, the constructor's message)."""
        try:
            return cls.model_validate(values)
        except ValidationError as err:
            e = err.errors()[0]
            key = ".".join(map(str, e["loc"]))
            if e["type"] == "extra_forbidden":
                raise ValueError(f"{cls.what}: unknown option {key!r}") from None
            if e["type"] == "missing":
                raise ValueError(f"{cls.what}: option {key!r} is required") from None
            msg = str(e["msg"])
            raise ValueError(
                msg.removeprefix("Value error, ") if msg.startswith("Value error, ") else f"{cls.what}: {key}: {msg}"
            ) from None


# -- validators the backends' models share (``field_validator(..., mode="before")(positive_int)``) -------------


def positive_int(cls: Any, value: Any, info: ValidationInfo) -> Any:
    """An integer >= 1 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{cls.what}: {info.field_name} must be a positive integer, got {value!r}")
    return value


def finite_non_negative(cls: Any, value: Any, info: ValidationInfo) -> Any:
    """A finite number >= 0 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{cls.what}: {info.field_name} must be a finite number >= 0, got {value!r}")
    return value


def non_empty_text(cls: Any, value: Any, info: ValidationInfo) -> Any:
    """None or a non-blank string."""
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{cls.what}: {info.field_name} must be a non-empty string or None, got {value!r}")
    return value


# -- the checks -------------------------------------------------------------------------------------------------


def params_model(cls: type) -> type[ReaderParams]:
    """The parameter model reader class ``cls`` declares (its ``Params``)."""
    model = getattr(cls, "Params", None)
    if not (isinstance(model, type) and issubclass(model, ReaderParams)):
        raise TypeError(
            f"reader class {cls.__name__} declares no Params model: give it `Params = <a subclass of "
            "rageval.readers.spec.ReaderParams>` listing its options (as the shipped readers do)"
        )
    return model


def _unknown(model: type[ReaderParams], params: Mapping[str, Any]) -> list[tuple[str, str]]:
    accepted = model.accepted()
    return [(k, did_you_mean(k, accepted)) for k in params if k not in accepted]


def _missing(model: type[ReaderParams], params: Mapping[str, Any]) -> list[str]:
    return [r for r in model.required() if r not in params]


def check_options(backend: str, cls: type, params: Mapping[str, Any]) -> None:
    """ValueError for an option backend ``backend`` (class ``cls``) does not take, or a required one missing
    (:func:`rageval.readers.get_reader`; ``template`` is taken beside the options)."""
    model = params_model(cls)
    accepted = [*model.accepted(), "template"]
    for key, hint in _unknown(model, {k: v for k, v in params.items() if k != "template"}):
        raise ValueError(f"Unknown option {key!r} for reader {backend!r}.{hint} Accepted: {', '.join(accepted)}")
    missing = _missing(model, params)
    if missing:
        raise ValueError(f"reader {backend!r} needs option(s) {', '.join(map(repr, missing))}")


def reader_problems(spec: Any, where: str = "reader") -> list[str]:
    """The problems of a suite's reader section ``spec`` (a :class:`ReaderSpec`) at ``where``, one line each.

    The template is checked; the options against the backend's parameter model
    (names, required ones, values); then a model-free backend is built once, as
    the run builds it, and a backend that loads a model checks its values without
    loading it (``check_params``).  Nothing is downloaded and no model is loaded.
    """
    out = []
    try:
        PromptTemplate.coerce(spec.template)
    except (TypeError, ValueError) as err:
        out.append(f"  {where}.template: {err}")
    if spec.backend not in READERS:
        return out  # reported by the name check
    cls = reader_class(spec.backend)
    params = dict(spec.params)
    if "template" in params:
        out.append(f"  {where}.params.template: give the prompt template as {where}.template (its own section)")
        return out
    model = params_model(cls)
    accepted = model.accepted()
    unknown = _unknown(model, params)
    for k, hint in unknown:
        out.append(
            f"  {where}.params.{k}: unknown option for reader {spec.backend!r}.{hint} Accepted: {', '.join(accepted)}."
        )
    missing = _missing(model, params)
    if missing:
        out.append(f"  {where}.params: reader {spec.backend!r} needs {', '.join(map(repr, missing))}")
    if unknown or missing or out:
        return out
    params.setdefault("tokenizer", "regex")
    if isinstance(params["tokenizer"], str) and params["tokenizer"] not in ("regex", "whitespace"):
        params["tokenizer"] = "regex"  # an HF tokenizer is loaded by check_suite, not here
    check = getattr(cls, "check_params", None)
    try:
        model.check(**params)  # the values the model checks (no file read, no model, no connection)
        if check is not None:  # a backend that loads a model checks its values without loading it
            check(**params, template=spec.template)
        else:  # model-free (or lazy) backends are cheap to build: build one, as the run does
            cls(**params, template=spec.template)
    except (TypeError, ValueError, OSError) as err:
        msg = (err.strerror or "") if isinstance(err, OSError) and not str(err) else str(err)
        out.append(f"  {where}.params: {' '.join(msg.split())}")
    return out
