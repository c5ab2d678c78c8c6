"""The reader registry: backend name -> :class:`~rageval.readers.base.Reader` subclass, with its
:class:`ReaderMeta` (docs/architecture.md#add-a-reader)."""

from __future__ import annotations

from dataclasses import dataclass

from rageval.readers.base import Reader
from rageval.registry import Registry

__all__ = ["READERS", "ReaderMeta", "needs_model", "reader_class", "transport_params"]


@dataclass(frozen=True)
class ReaderMeta:
    """A reader backend's registry metadata."""

    needs_model: bool  # whether it needs model weights or a model server
    # the options that change how requests travel, not what they answer: left out of the record key
    # (docs/readers.md#several-endpoints)
    transport: tuple[str, ...] = ()


#: backend name -> ``"module:Class"`` (a :class:`Reader` subclass, imported only when used).
READERS: Registry[type[Reader], ReaderMeta] = Registry("reader", base=Reader, meta=ReaderMeta, cutoff=0.5)
READERS.register("extractive", "rageval.readers.extractive:ExtractiveReader", ReaderMeta(needs_model=False))
READERS.register("saved", "rageval.readers.saved:SavedReader", ReaderMeta(needs_model=False))
READERS.register("transformers", "rageval.readers.hf:TransformersReader", ReaderMeta(needs_model=True))
READERS.register(
    "llamacpp", "rageval.readers.llamacpp:LlamaCppReader", ReaderMeta(needs_model=True, transport=("n_threads",))
)
READERS.register(
    "openai",
    "rageval.readers.openai_compat:OpenAIReader",
    ReaderMeta(
        needs_model=True,
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
            "allow_insecure_key",
            "trust_env",
        ),
    ),
)


def transport_params(name: str) -> tuple[str, ...]:
    """The options of backend ``name`` that change how requests travel but not the answers (registry meta
    ``transport``): the suite leaves them out of the record key, so e.g. one endpoint or two share a cache."""
    return READERS.meta(name).transport if name in READERS else ()


def needs_model(name: str) -> bool:
    """Whether the backend needs model weights or a model server."""
    return READERS.meta(name).needs_model


def reader_class(name: str) -> type[Reader]:
    """The class of backend ``name`` (unknown names raise with a did-you-mean hint)."""
    return READERS.get(name)
