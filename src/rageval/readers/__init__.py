"""rageval.readers: one small protocol, five backends (docs/readers.md;
adding one: docs/architecture.md#add-a-reader).

========================  ===========  ==============================================
name                      needs_model  what
========================  ===========  ==============================================
``extractive``            no           quotes the top question-relevant sentences and
                                       cites their units; deterministic, the offline
                                       default (card: :mod:`rageval.readers.extractive`)
``saved``                 no           answers from a JSONL file (rescoring, no calls)
``transformers``          yes          causal LM, chat template, greedy, batched
``llamacpp``              yes          a GGUF model in llama.cpp, in-process, chat template, greedy
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
``READERS.register(...)`` line in :mod:`rageval.readers.registry` plus its module, whose class declares its
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
from rageval.readers.registry import READERS, ReaderMeta, needs_model, reader_class, transport_params
from rageval.readers.spec import check_options
from rageval.readers.template import DEFAULT_TEMPLATE, PromptTemplate, template_hash

__all__ = [
    "READERS",
    "ReaderMeta",
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
    check_options(spec, cls, params)  # the options the class's Params model declares
    return cls(**params)
