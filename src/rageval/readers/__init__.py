"""rageval.readers: one small protocol, four backends (docs/readers.md;
adding one: docs/architecture.md#add-a-reader).

========================  ===========  ==============================================
name                      needs_model  what
========================  ===========  ==============================================
``extractive``            no           quotes the top question-relevant sentences and
                                       cites their units; deterministic, the offline
                                       default (card: :mod:`rageval.readers.extractive`)
``saved``                 no           answers from a JSONL file (rescoring, no calls)
``transformers``          yes          causal LM, chat template, greedy, batched
``openai``                yes          OpenAI-compatible chat-completions endpoint
========================  ===========  ==============================================

>>> r = get_reader("extractive")
>>> needs_model("transformers"), needs_model("extractive")
(True, False)
>>> get_reader("extractiv")
Traceback (most recent call last):
...
rageval.registry.UnknownNameError: Unknown reader 'extractiv'. Did you mean 'extractive'?

:data:`READERS` is a :class:`rageval.registry.Registry`: adding a backend is one
``READERS.register(...)`` line below plus its module, whose class declares its
options as a parameter model (``Params``, a :class:`rageval.readers.spec.ReaderParams`).
"""

from __future__ import annotations

from typing import Any

from rageval.readers.base import (
    READER_STATUSES,
    ModelUnavailable,
    Reader,
    ReaderOutput,
    ReaderRequest,
)
from rageval.readers.template import DEFAULT_TEMPLATE, PromptTemplate, template_hash
from rageval.registry import Registry

__all__ = [
    "READERS",
    "READER_STATUSES",
    "DEFAULT_TEMPLATE",
    "ModelUnavailable",
    "PromptTemplate",
    "Reader",
    "ReaderOutput",
    "ReaderRequest",
    "get_reader",
    "needs_model",
    "reader_class",
    "template_hash",
    "transport_params",
]

#: backend name -> ``"module:Class"`` (imported only when used), with ``needs_model``.
READERS = Registry("reader", cutoff=0.5)
READERS.register("extractive", "rageval.readers.extractive:ExtractiveReader", needs_model=False)
READERS.register("saved", "rageval.readers.saved:SavedReader", needs_model=False)
READERS.register("transformers", "rageval.readers.hf:TransformersReader", needs_model=True)
READERS.register(
    "openai",
    "rageval.readers.openai_compat:OpenAIReader",
    needs_model=True,
    # how requests travel, not what they answer: left out of the record key (docs/readers.md#several-endpoints)
    transport=(
        "base_url",
        "concurrency",
        "endpoint_concurrency",
        "cooldown",
        "timeout",
        "max_retries",
        "backoff",
        "max_backoff",
        "api_key_env",
        "trust_env",
    ),
)


def transport_params(name: str) -> tuple[str, ...]:
    """The options of backend ``name`` that change how requests travel but not the answers (registry meta
    ``transport``): the suite leaves them out of the record key, so e.g. one endpoint or two share a cache."""
    return tuple(READERS.meta(name).get("transport") or ()) if name in READERS else ()


def needs_model(name: str) -> bool:
    """Whether the backend needs model weights or a model server."""
    return bool(READERS.meta(name)["needs_model"])


def reader_class(name: str) -> type[Reader]:
    """The class of backend ``name`` (unknown names raise with a did-you-mean hint)."""
    return READERS.get(name)


def get_reader(spec: str | Reader, **params: Any) -> Reader:
    """A reader by name with its options (``get_reader("transformers", model="path")``).

    A :class:`Reader` object is returned as is.  Unknown options are rejected with the
    list of accepted ones; the transformers backend raises :class:`ModelUnavailable`
    when its weights cannot be loaded.
    """
    if isinstance(spec, Reader):
        if params:
            raise ValueError("get_reader(reader_object) takes no options; configure the object itself")
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"reader must be a name ({', '.join(READERS)}) or a Reader, got {type(spec).__name__}")
    cls = reader_class(spec)
    from rageval.readers.spec import check_options  # the options the class's Params model declares

    check_options(spec, cls, params)
    return cls(**params)
