"""rageval.readers: one small protocol, four backends (DESIGN §5).

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
ValueError: Unknown reader 'extractiv'. Did you mean 'extractive'? Known readers: extractive, saved, transformers, openai
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from typing import Any

from rageval.readers.base import (
    READER_STATUSES,
    ModelUnavailable,
    Reader,
    ReaderOutput,
    ReaderRequest,
)
from rageval.readers.template import DEFAULT_TEMPLATE, PromptTemplate, template_hash

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
]

#: name -> (module, class, needs_model); modules are imported only when used.
READERS: dict[str, tuple[str, str, bool]] = {
    "extractive": ("rageval.readers.extractive", "ExtractiveReader", False),
    "saved": ("rageval.readers.saved", "SavedReader", False),
    "transformers": ("rageval.readers.hf", "TransformersReader", True),
    "openai": ("rageval.readers.openai_compat", "OpenAIReader", True),
}


def _unknown(name: Any) -> ValueError:
    close = difflib.get_close_matches(str(name), list(READERS), n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return ValueError(f"Unknown reader {name!r}.{hint} Known readers: {', '.join(READERS)}")


def needs_model(name: str) -> bool:
    """Whether the backend needs model weights or a model server."""
    if name not in READERS:
        raise _unknown(name)
    return READERS[name][2]


def reader_class(name: str) -> type[Reader]:
    if name not in READERS:
        raise _unknown(name)
    module, cls, _ = READERS[name]
    return getattr(importlib.import_module(module), cls)


def get_reader(spec: "str | Reader", **params: Any) -> Reader:
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
    sig = inspect.signature(cls.__init__)
    accepted = [p for p in sig.parameters if p not in ("self", "sleep")]
    for key in params:
        if key not in accepted:
            close = difflib.get_close_matches(key, accepted, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"Unknown option {key!r} for reader {spec!r}.{hint} Accepted: {', '.join(accepted)}")
    required = [
        p.name for p in sig.parameters.values()
        if p.name != "self" and p.default is inspect.Parameter.empty and p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    missing = [r for r in required if r not in params]
    if missing:
        raise ValueError(f"reader {spec!r} needs option(s) {', '.join(map(repr, missing))}")
    return cls(**params)
