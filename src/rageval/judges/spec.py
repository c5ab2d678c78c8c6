"""Judge specs: the suite's ``judge:`` section, the one parser of a spec string, and the judge's options.

* :class:`JudgeSpec` — the suite's ``judge:`` section (``spec``, ``threshold``,
  ``params``); its JSON dump is part of the suite hash.
* :func:`parse_judge_spec` — the one reading of a spec string into a
  :class:`JudgeRef`: which registered judge it names (:data:`rageval.judges.JUDGES`)
  and with what argument, or that it is a model folder / hub id.  The builder
  (:func:`rageval.judges.build_judge`), the suite checks and the OpenAI judge's
  ``<model>@<base_url>`` all read a spec through it.
* :class:`JudgeOptions` — the options every spec takes (``batch_size``, ``dtype``,
  ``max_length``, ``device``, ``revision``, ``window``, ``execution``), checked
  with one-line messages; a judge with its own parameters (registry meta
  ``params``, e.g. ``openai``'s ``model``, ``base_url``, ...) adds them
  (:func:`options_model`).
* what a suite's judge gets wrong, one line each, is :func:`rageval.judges.checks.judge_problems`.

>>> ref = parse_judge_spec("nli:/models/deberta")
>>> ref.name, ref.arg, ref.model, ref.runs_model, ref.windowed
('nli', '/models/deberta', '/models/deberta', True, True)
>>> parse_judge_spec("openai:llama3:8b@http://127.0.0.1:11434/v1").base_url
'http://127.0.0.1:11434/v1'
>>> parse_judge_spec("org/model").name is None
True
>>> parse_judge_spec("replay").problem
"'replay' needs a path after a colon, e.g. 'replay:/models/x'"

Importing this module is cheap: pydantic and the judge registry, no torch, no
HTTP client (the replay and OpenAI judges are built, when a check needs it, on
first use).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field, ValidationError, create_model, field_validator

from rageval.errors import ConfigError
from rageval.judges.paths import EXECUTIONS
from rageval.judges.registry import JUDGES
from rageval.judges.windowed import parse_window
from rageval.registry import did_you_mean
from rageval.scoring import JudgeConfig
from rageval.strict import Strict

__all__ = [
    "JUDGE_PARAMS",
    "JudgeOptions",
    "JudgeRef",
    "JudgeSpec",
    "JudgeSpecError",
    "judge_param_problem",
    "model_and_url",
    "option_problems",
    "options_model",
    "parse_judge_params",
    "parse_judge_spec",
    "spec_slug",
]


#: the suite's ``judge:`` section is the run's :class:`rageval.scoring.JudgeConfig` itself (``spec``,
#: ``threshold``, ``params``; their defaults declared there); what its spec or options get wrong, one line each,
#: is :func:`rageval.judges.checks.judge_problems`
JudgeSpec = JudgeConfig


def spec_slug(spec: str) -> str:
    """A judge spec as one folder-name part (``rescore-<slug>``, ``audit-<slug>``): the spec itself when it is
    file-system safe, else its safe characters and a short hash of the whole spec, so that two specs never
    share a folder (``nli:/m/deberta`` and ``nli-m/deberta`` did).

    >>> spec_slug("lexical"), spec_slug("nli:/models/deberta")
    ('lexical', 'nli_models_deberta-02aa1f6d')
    >>> spec_slug("nli:/m/deberta") != spec_slug("nli-m/deberta") != spec_slug("nli_m_deberta")
    True
    """
    text = str(spec)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "judge"
    if slug != text or len(slug) > 60:
        slug = f"{slug[:60]}-{hashlib.sha1(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
    return slug


class JudgeSpecError(ConfigError):
    """A spec string that names no judge (blank, a name without its ``:<arg>``, an empty argument): exit 2."""


# -- the one parser ----------------------------------------------------------------------------


def _judges() -> Any:
    return JUDGES

    return JUDGES


def model_and_url(arg: str) -> tuple[str, str | None]:
    """``"<model>@<base_url>"`` (or ``"<model>"``) -> ``(model, base_url or None)``.

    The base URL starts at the last ``@http://`` or ``@https://``, so a model name
    may hold ``/``, ``:`` or ``@``.

    >>> model_and_url("llama3:8b@http://127.0.0.1:11434/v1")
    ('llama3:8b', 'http://127.0.0.1:11434/v1')
    >>> model_and_url("org/model@v2@https://x.org/v1"), model_and_url("org/model")
    (('org/model@v2', 'https://x.org/v1'), ('org/model', None))
    """
    low = arg.lower()  # a URL's scheme in any case (RFC 3986): @HTTP:// starts one too
    cut = max(low.rfind("@http://"), low.rfind("@https://"))
    if cut < 0:
        return arg, None
    return arg[:cut], arg[cut + 1 :]


@dataclass(frozen=True)
class JudgeRef:
    """A judge spec string, read once (:func:`parse_judge_spec`).

    ``name``: the registered judge it names (``lexical``, ``nli``, ``openai``, ...),
    or None for a model folder or hub id (NLI or seq2seq, told apart from its
    config).  ``arg``: the text after ``<name>:`` (None when the spec is the bare
    name).  ``problem``: why the spec names no judge (None when it is well formed;
    whether a folder exists or a hub id resolves is not the parser's business).
    """

    spec: str
    name: str | None
    arg: str | None = None
    problem: str | None = None

    def _meta(self, key: str) -> Any:
        return getattr(_judges().meta(self.name), key) if self.name is not None else None

    @property
    def runs_model(self) -> bool:
        """Whether a model runs here (nli, seq2seq, minilm, embedding, a model folder or hub id): ``execution``
        applies (registry meta ``runs_model``)."""
        return self.name is None or bool(self._meta("runs_model"))

    @property
    def windowed(self) -> bool:
        """Whether the judge truncates premises, so that ``window`` applies (nli, seq2seq, a model folder or hub
        id; registry meta ``window``)."""
        return self.name is None or bool(self._meta("window"))

    @property
    def params(self) -> tuple[str, ...]:
        """The judge's own parameters (registry meta ``params``; ``openai``: model, base_url, ...), else ()."""
        return tuple(self._meta("params") or ())

    @property
    def model(self) -> str | None:
        """The model the judge loads (folder or hub id) or asks (``openai``: the served model); None when the spec
        names none (lexical, replay, minilm's packaged model, ``openai`` with the model in ``params``)."""
        if self.name is None:
            return self.spec
        if self.arg is None:
            return None
        if self._meta("endpoint"):
            return model_and_url(self.arg)[0]
        return self.arg if self._meta("runs_model") else None

    @property
    def base_url(self) -> str | None:
        """The server of ``openai:<model>@<base_url>`` (registry meta ``endpoint``), else None."""
        if self.arg is None or not self._meta("endpoint"):
            return None
        return model_and_url(self.arg)[1]

    @property
    def prefix(self) -> str | None:
        """The text before the first colon of a spec that names no registered judge (a model path such as
        ``C:/m``, or a misspelt kind such as ``nil:/m``), else None."""
        return self.spec.partition(":")[0] if self.name is None and ":" in self.spec else None

    def checked(self) -> JudgeRef:
        """``self``, or :class:`JudgeSpecError` with :attr:`problem`."""
        if self.problem is not None:
            raise JudgeSpecError(self.problem)
        return self


def parse_judge_spec(spec: str) -> JudgeRef:
    """Read a judge spec string (see the table in :mod:`rageval.judges`); never touches the filesystem.

    >>> [(r.name, r.arg) for r in map(parse_judge_spec, ["lexical", "openai", "replay:r.jsonl", "/m", "nil:/m"])]
    [('lexical', None), ('openai', None), ('replay', 'r.jsonl'), (None, None), (None, None)]
    >>> parse_judge_spec("nli:").problem
    "'nli:' names no model; give 'nli:<local folder or hub id>'"
    """
    s = str(spec)
    if not s.strip():
        return JudgeRef(s, None, problem="judge spec is empty: use 'lexical', 'replay:<path>', a model path or hub id")
    judges = _judges()
    if s in judges:
        name = judges.canonical(s)
        meta = judges.meta(name)
        if meta.arg and not meta.arg_optional:
            return JudgeRef(s, name, problem=f"{s!r} needs a path after a colon, e.g. '{s}:/models/x'")
        return JudgeRef(s, name)
    head, sep, arg = s.partition(":")
    if sep and head in judges and judges.meta(head).arg:
        name = judges.canonical(head)
        if not arg.strip():
            form = judges.meta(name).arg_form or "<local folder or hub id>"
            return JudgeRef(s, name, arg, problem=f"{s!r} names no model; give '{name}:{form}'")
        return JudgeRef(s, name, arg)
    return JudgeRef(s, None)


# -- the options -------------------------------------------------------------------------------

_DTYPES = ("float32", "fp32", "bfloat16", "bf16", "float16", "fp16")


class JudgeOptions(Strict):
    """The options every judge spec takes (a suite's ``judge.params``; keywords of :func:`rageval.judges.get_judge`).

    Each bad value fails with one line (``must be a positive integer (or null), got 0``);
    null is each option's default (``max_length`` null: no truncation).
    """

    batch_size: int | None = Field(None, description="pairs per forward pass (default: the judge's own)")
    dtype: str | None = Field(None, description="weights of a model judge: " + " | ".join(_DTYPES))
    max_length: int | None = Field(512, description="truncation of a model judge, tokens (null: none)")
    device: str | None = Field(None, description="torch device of a model judge (default: cuda when available)")
    revision: str | None = Field(None, description="hub revision of a model judge")
    window: Any = Field(None, description="true or {overlap: N}: long premises in overlapping windows")
    execution: str | None = Field(None, description="how a model judge runs (rageval.judges.paths; null: auto)")

    @field_validator("batch_size", "max_length", mode="before")
    @classmethod
    def _positive(cls, value: Any) -> Any:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"must be a positive integer (or null), got {value!r}")
        return value

    @field_validator("dtype", mode="before")
    @classmethod
    def _dtype(cls, value: Any) -> Any:
        if value is not None and value not in _DTYPES:
            raise ValueError(f"must be one of {', '.join(_DTYPES)} (or null for float32), got {value!r}")
        return value

    @field_validator("device", "revision", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"must be a non-empty string (or null), got {value!r}")
        return value

    @field_validator("window", mode="before")
    @classmethod
    def _window(cls, value: Any) -> Any:
        parse_window(value)  # its ValueError names the fix
        return value

    @field_validator("execution", mode="before")
    @classmethod
    def _execution(cls, value: Any) -> Any:
        if value is not None and value not in EXECUTIONS:
            raise ValueError(f"must be one of {', '.join(EXECUTIONS)} (or null for auto), got {value!r}")
        return value


#: the keyword options of :func:`rageval.judges.get_judge` a suite may set in ``judge.params``
JUDGE_PARAMS = tuple(JudgeOptions.model_fields)


@functools.cache
def options_model(own: tuple[str, ...] = ()) -> type[JudgeOptions]:
    """:class:`JudgeOptions` plus a judge's own parameters ``own`` (their values are the judge's to check)."""
    if not own:
        return JudgeOptions
    fields: dict[str, Any] = {k: (Any, None) for k in own if k not in JudgeOptions.model_fields}
    return create_model("JudgeOptionsWithOwn", __base__=JudgeOptions, **fields)


def option_problems(params: Mapping[str, Any], own: Sequence[str] = ()) -> dict[str, str]:
    """Option name -> what is wrong with it (only the options with a problem), in ``params`` order."""
    try:
        options_model(tuple(own)).model_validate(dict(params))
    except ValidationError as err:
        found: dict[str, str] = {}
        for e in err.errors():
            key = str(e["loc"][0]) if e["loc"] else ""
            if e["type"] == "extra_forbidden":
                accepted = [*JUDGE_PARAMS, *own]
                found[key] = f"unknown judge option.{did_you_mean(key, accepted)} Accepted: {', '.join(accepted)}."
            else:
                found.setdefault(key, str(e["msg"]).removeprefix("Value error, "))
        return {k: found[k] for k in params if k in found}
    return {}


def judge_param_problem(key: str, value: Any, own: Sequence[str] = ()) -> str | None:
    """What is wrong with the option ``key: value`` (``own``: the judge's own parameters), else None."""
    return option_problems({key: value}, own).get(key)


def parse_judge_params(items: Sequence[str], *, flag: str = "--judge-param") -> dict[str, Any]:
    """``KEY=VALUE`` options (``--judge-param``) as a dict; a JSON number, ``true``/``false`` or ``null`` is read
    as such, anything else is the text as given.  A malformed or repeated item raises :class:`ValueError`.

    >>> parse_judge_params(["model=llama3:8b", "base_url=http://127.0.0.1:8000/v1", "concurrency=4", "logprobs=false"])
    {'model': 'llama3:8b', 'base_url': 'http://127.0.0.1:8000/v1', 'concurrency': 4, 'logprobs': False}
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"{flag} {item!r}: write KEY=VALUE, e.g. model=my-model")
        if key in out:
            raise ValueError(f"{flag}: {key!r} is given twice")
        value: Any = raw
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, too many digits, nested too deep: the text as given
            parsed = raw
        if parsed is None or isinstance(parsed, (bool, int, float)):
            value = parsed
        out[key] = value
    return out
