"""Compressors: question + source snippets + budget -> Context, registered by name
(docs/compressors.md; adding one: docs/architecture.md#add-a-compressor).

>>> from rageval.compressors import get, names
>>> names()
['abstractive', 'ecr', 'extractive', 'focused', 'given', 'identity', 'mmr', 'naive', 'rerank', 'submodular', 'token_prune']
>>> c = get("submodular", w_div=0.25)
>>> c.needs_model
False
>>> try:
...     get("submodluar")
... except CompressorConfigError as e:
...     print(e)
Unknown compressor 'submodluar'. Did you mean 'submodular'?

Importing this package is cheap: no torch, transformers or llmlingua (they load
only when a model-backed compressor runs).  :data:`REGISTRY` is a
:class:`rageval.registry.Registry` of ``"module:Class"`` targets imported on first
use, so listing names and validating a suite imports no strategy code.  Adding a
compressor is one ``REGISTRY.register(...)`` line below plus its module.
"""

from __future__ import annotations

from typing import Any

from rageval.compressors.base import (
    BaseCompressor,
    BudgetError,
    Compressor,
    CompressorConfigError,
    CompressorError,
    ModelUnavailable,
    SnippetError,
    resolve_budget,
)
from rageval.registry import Registry, UnknownNameError

__all__ = [
    "get",
    "names",
    "REGISTRY",
    "UnknownCompressor",
    "compressor_class",
    "Compressor",
    "BaseCompressor",
    "CompressorError",
    "BudgetError",
    "SnippetError",
    "CompressorConfigError",
    "ModelUnavailable",
    "resolve_budget",
]


class UnknownCompressor(CompressorConfigError, UnknownNameError):
    """An unknown compressor name (a :class:`CompressorConfigError` with ``kind``, ``name`` and ``known``)."""


#: compressor name -> ``"module:Class"`` (imported on the first :func:`get`)
REGISTRY = Registry("compressor", error=UnknownCompressor)
for _name, _target in [
    ("abstractive", "abstractive:AbstractiveCompressor"),
    ("ecr", "ecr:ECRCompressor"),
    ("extractive", "extractive:ExtractiveCompressor"),
    ("focused", "focused:FocusedCompressor"),
    ("given", "given:GivenCompressor"),
    ("identity", "identity:IdentityCompressor"),
    ("mmr", "mmr:MMRCompressor"),
    ("naive", "naive:NaiveCompressor"),
    ("rerank", "rerank:RerankCompressor"),
    ("submodular", "submodular:SubmodularCompressor"),
    ("token_prune", "token_prune:TokenPruneCompressor"),
]:
    REGISTRY.register(_name, f"rageval.compressors.{_target}")
del _name, _target


def names() -> list[str]:
    """Registered compressor names, sorted."""
    return sorted(REGISTRY.names())


def compressor_class(name: str) -> type:
    """The class of compressor ``name`` (unknown names raise :class:`UnknownCompressor` with a hint)."""
    return REGISTRY.get(name)


def get(name: str, **params: Any) -> BaseCompressor:
    """A compressor by name with parameters (unknown names/parameters fail here, with a hint)."""
    return compressor_class(name)(**params)
