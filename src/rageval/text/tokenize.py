"""Token counting for budgets and achieved ratios.

One tokenizer is named per suite and used for every count (budgets, achieved
tokens, reader input tokens when the reader has no tokenizer of its own).

* ``"regex"`` (the default) needs no model: a token is a run of word characters
  (``\\w+``, Unicode-aware) or a single non-space punctuation character.  It is
  deterministic and fast, and its counts are comparable across runs of rageval,
  but not with a reader's sub-word tokenizer (published budgets were counted with
  the reader's tokenizer, so model-free numbers are comparable only in shape;
  docs/design.md#decision-token-counts).
* ``"whitespace"``: whitespace-separated chunks.
* anything else is a Hugging Face tokenizer id or local path, loaded with
  ``transformers.AutoTokenizer.from_pretrained``; counts exclude special tokens.

>>> tok = get_tokenizer("regex")
>>> tok.tokenize("Paris, France's capital.")
['Paris', ',', 'France', "'", 's', 'capital', '.']
>>> tok.count("Paris, France's capital.")
7
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from rageval.errors import require

__all__ = ["Tokenizer", "RegexTokenizer", "WhitespaceTokenizer", "HFTokenizer", "get_tokenizer"]


@runtime_checkable
class Tokenizer(Protocol):
    """Anything with a ``name`` and ``count(text) -> int``."""

    name: str

    def count(self, text: str) -> int: ...

    def tokenize(self, text: str) -> list[str]: ...


class RegexTokenizer:
    """Words (``\\w+``) and single punctuation marks; the model-free default."""

    name = "regex"
    _re = re.compile(r"\w+|[^\w\s]", re.UNICODE)

    def tokenize(self, text: str) -> list[str]:
        return self._re.findall(text)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the tokens, for detokenizing a kept subset."""
        return [m.span() for m in self._re.finditer(text)]

    def count(self, text: str) -> int:
        return sum(1 for _ in self._re.finditer(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]

    def __repr__(self) -> str:
        return "RegexTokenizer()"


class WhitespaceTokenizer:
    """Whitespace-separated chunks."""

    name = "whitespace"

    def tokenize(self, text: str) -> list[str]:
        return text.split()

    def count(self, text: str) -> int:
        return len(text.split())

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]


class HFTokenizer:
    """A Hugging Face tokenizer by hub id or local path (special tokens not counted)."""

    def __init__(self, name_or_path: str, *, revision: str | None = None):
        require("transformers", what=f"the tokenizer {name_or_path!r}", otherwise="or use tokenizer 'regex'")
        from transformers import AutoTokenizer  # heavy: imported only here

        self.name = name_or_path
        self._tok = AutoTokenizer.from_pretrained(name_or_path, revision=revision)

    @property
    def hf(self):
        return self._tok

    def tokenize(self, text: str) -> list[str]:
        return self._tok.tokenize(text)

    def count(self, text: str) -> int:
        return len(self._tok(text, add_special_tokens=False)["input_ids"])

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        enc = self._tok(list(texts), add_special_tokens=False)
        return [len(ids) for ids in enc["input_ids"]]


@functools.lru_cache(maxsize=8)
def _load(spec: str) -> Tokenizer:
    if spec == "regex":
        return RegexTokenizer()
    if spec == "whitespace":
        return WhitespaceTokenizer()
    return HFTokenizer(spec)


def get_tokenizer(spec: str | Tokenizer | None = None) -> Tokenizer:
    """Return a tokenizer: ``None``/``"regex"`` (default), ``"whitespace"``, an HF id/path, or an object."""
    if spec is None:
        spec = "regex"
    if isinstance(spec, str):
        if not spec.strip():
            raise ValueError("tokenizer name is empty: use 'regex' (default), 'whitespace' or a Hugging Face id/path")
        return _load(spec)
    if isinstance(spec, Tokenizer):
        return spec
    raise TypeError(f"tokenizer must be a name or an object with .count(text), got {type(spec).__name__}")
