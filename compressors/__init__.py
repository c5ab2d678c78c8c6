"""Compressors: question + source snippets + budget -> Context, registered by name (DESIGN §4).

>>> from rageval.compressors import get, names
>>> names()
['abstractive', 'ecr', 'extractive', 'focused', 'identity', 'mmr', 'naive', 'rerank', 'submodular', 'token_prune']
>>> c = get("submodular", w_div=0.25)
>>> c.needs_model
False
>>> try:
...     get("submodluar")
... except CompressorConfigError as e:
...     print(e)
Unknown compressor 'submodluar'. Did you mean 'submodular'?

Importing this package is cheap: no torch, transformers or llmlingua (they load
only when a model-backed compressor runs).  The registry is a static table, so
listing names and validating a suite imports no strategy code.
"""

from __future__ import annotations

import difflib
import importlib
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

__all__ = [
    "get",
    "names",
    "REGISTRY",
    "Compressor",
    "BaseCompressor",
    "CompressorError",
    "BudgetError",
    "SnippetError",
    "CompressorConfigError",
    "ModelUnavailable",
    "resolve_budget",
]

#: name -> "module:class" (relative to this package)
REGISTRY: dict[str, str] = {
    "identity": "identity:IdentityCompressor",
    "naive": "naive:NaiveCompressor",
    "rerank": "rerank:RerankCompressor",
    "extractive": "extractive:ExtractiveCompressor",
    "abstractive": "abstractive:AbstractiveCompressor",
    "token_prune": "token_prune:TokenPruneCompressor",
    "ecr": "ecr:ECRCompressor",
    "mmr": "mmr:MMRCompressor",
    "focused": "focused:FocusedCompressor",
    "submodular": "submodular:SubmodularCompressor",
}


def names() -> list[str]:
    """Registered compressor names, sorted."""
    return sorted(REGISTRY)


def compressor_class(name: str) -> type:
    if not isinstance(name, str) or name not in REGISTRY:
        close = difflib.get_close_matches(str(name), names(), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else f" Known compressors: {', '.join(names())}."
        raise CompressorConfigError(f"Unknown compressor {name!r}.{hint}")
    module, cls = REGISTRY[name].split(":")
    return getattr(importlib.import_module(f"rageval.compressors.{module}"), cls)


def get(name: str, **params: Any) -> BaseCompressor:
    """A compressor by name with parameters (unknown names/parameters fail here, with a hint)."""
    return compressor_class(name)(**params)
