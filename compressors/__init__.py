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
compressor is one ``REGISTRY.register(...)`` line below plus its module.  What a
compressor promises about its budget is declared on its class (``budget_contract``,
:data:`BudgetContract`), not in the registry's metadata: it can depend on the
parameters (``token_prune``'s LLMLingua-2 backend), and a compressor used from Python
need not be registered.
"""

from __future__ import annotations

from typing import Any

from rageval.compressors.base import (
    BUDGET_CONTRACTS,
    BaseCompressor,
    BudgetContract,
    BudgetError,
    Compressor,
    CompressorConfigError,
    CompressorError,
    ModelUnavailable,
    SnippetError,
    budget_contract,
    resolve_budget,
)

from rageval.registry import NoMeta, Registry, UnknownNameError

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
    "BudgetContract",
    "BUDGET_CONTRACTS",
    "budget_contract",
]


class UnknownCompressor(CompressorConfigError, UnknownNameError):
    """An unknown compressor name (a :class:`CompressorConfigError` with ``kind``, ``name`` and ``known``)."""


#: compressor name -> ``"module:Class"`` (a :class:`BaseCompressor` subclass, imported on the first :func:`get`)
REGISTRY: Registry[type[BaseCompressor], NoMeta] = Registry("compressor", base=BaseCompressor, error=UnknownCompressor)
REGISTRY.register("abstractive", "rageval.compressors.abstractive:AbstractiveCompressor")
REGISTRY.register("ecr", "rageval.compressors.ecr:ECRCompressor")
REGISTRY.register("extractive", "rageval.compressors.extractive:ExtractiveCompressor")
REGISTRY.register("focused", "rageval.compressors.focused:FocusedCompressor")
REGISTRY.register("given", "rageval.compressors.given:GivenCompressor")
REGISTRY.register("identity", "rageval.compressors.identity:IdentityCompressor")
REGISTRY.register("mmr", "rageval.compressors.mmr:MMRCompressor")
REGISTRY.register("naive", "rageval.compressors.naive:NaiveCompressor")
REGISTRY.register("rerank", "rageval.compressors.rerank:RerankCompressor")
REGISTRY.register("submodular", "rageval.compressors.submodular:SubmodularCompressor")
REGISTRY.register("token_prune", "rageval.compressors.token_prune:TokenPruneCompressor")


def names() -> list[str]:
    """Registered compressor names, sorted."""
    return sorted(REGISTRY.names())


def compressor_class(name: str) -> type[BaseCompressor]:
    """The class of compressor ``name`` (unknown names raise :class:`UnknownCompressor` with a hint)."""
    return REGISTRY.get(name)


def get(name: str, **params: Any) -> BaseCompressor:
    """A compressor by name with parameters (unknown names/parameters fail here, with a hint)."""
    return compressor_class(name)(**params)
