"""The judge registry: each named judge's factory and :class:`JudgeMeta` (docs/architecture.md#add-a-judge).

A factory is ``factory(arg, options) -> judge`` (:mod:`rageval.judges.factories`; ``arg``: the text after
``name:`` for judges that take one, else None; ``options``: :class:`BuildOptions`), imported when the judge is
first built, so reading a spec or listing judges loads no model code.

>>> BUILTIN[:3], JUDGES.meta("nli").window
(('lexical', 'lexical-strict', 'minilm'), True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from rageval.registry import Registry

__all__ = ["BUILTIN", "JUDGES", "LLM_PARAMS", "OPENAI_PARAMS", "BuildOptions", "JudgeFactory", "JudgeMeta"]

#: The OpenAI-compatible judge's own parameters (``get_judge("openai", model=..., base_url=...)``; a suite's
#: ``judge.params``), read by :mod:`rageval.judges.openai_compat`.
OPENAI_PARAMS = (
    "model",
    "base_url",
    "api_key",
    "api_key_env",
    "allow_insecure_key",
    "logprobs",
    "top_logprobs",
    "concurrency",
    "timeout",
    "max_retries",
    "backoff",
    "max_backoff",
    "extra_body",
    "trust_env",
)

#: The in-process LLM judge's own parameters (``get_judge("llm:smollm2", engine="transformers")``), read by
#: :mod:`rageval.judges.causal`.
LLM_PARAMS = ("engine", "top_logprobs", "gguf_file", "n_ctx", "n_threads")


class BuildOptions(NamedTuple):
    """What every factory is given besides its argument (from :func:`rageval.judges.build_judge`)."""

    batch_size: int | None
    dtype: Any
    max_length: int | None
    device: str | None
    revision: str | None
    params: Mapping[str, Any] | None = None  # the judge's own parameters (registry meta ``params``)
    execution: str = "auto"  # how a model judge runs (rageval.judges.paths), already read from the environment


@dataclass(frozen=True)
class JudgeMeta:
    """A named judge's registry metadata (what a spec string and the suite's checks read)."""

    arg: bool = False  # the spec is ``name:<arg>``
    arg_optional: bool = False  # ... or the bare name
    arg_form: str | None = None  # how the argument is written (None: a path; in errors, a folder or hub id)
    runs_model: bool = False  # a model runs here (``execution`` applies)
    window: bool = False  # it truncates premises (``window`` applies)
    endpoint: bool = False  # its argument is ``<model>@<base_url>`` (a server, no local model)
    params: tuple[str, ...] = ()  # its own parameters (``get_judge(spec, **params)``, a suite's ``judge.params``)


#: A judge factory: ``factory(arg, options) -> judge``.
JudgeFactory = Callable[[Any, BuildOptions], Any]

#: judge name -> factory(arg, options) with its :class:`JudgeMeta`.
JUDGES: Registry[JudgeFactory, JudgeMeta] = Registry("judge", meta=JudgeMeta)
JUDGES.register("lexical", "rageval.judges.factories:lexical", JudgeMeta())
JUDGES.register("lexical-strict", "rageval.judges.factories:lexical_strict", JudgeMeta())
JUDGES.register("minilm", "rageval.judges.factories:minilm", JudgeMeta(runs_model=True))
JUDGES.register("replay", "rageval.judges.factories:replay", JudgeMeta(arg=True))
JUDGES.register("embedding", "rageval.judges.factories:embedding", JudgeMeta(arg=True, runs_model=True))
JUDGES.register("nli", "rageval.judges.factories:nli", JudgeMeta(arg=True, runs_model=True, window=True))
JUDGES.register("seq2seq", "rageval.judges.factories:seq2seq", JudgeMeta(arg=True, runs_model=True, window=True))
JUDGES.register(
    "openai",
    "rageval.judges.factories:openai",
    JudgeMeta(arg=True, arg_optional=True, arg_form="<model>@<base_url>", endpoint=True, params=OPENAI_PARAMS),
)
JUDGES.register("llm", "rageval.judges.factories:llm", JudgeMeta(arg=True, arg_form="<model>", params=LLM_PARAMS))


def _spec_form(name: str) -> str:
    meta = JUDGES.meta(name)
    if not meta.arg:
        return name
    form = meta.arg_form or "<path>"
    return f"{name}[:{form}]" if meta.arg_optional else f"{name}:{form}"


#: The named judges as written in a spec.
BUILTIN = tuple(_spec_form(n) for n in JUDGES.names())
