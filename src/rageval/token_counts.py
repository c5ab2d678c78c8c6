"""Achieved tokens, retrieved tokens and the achieved ratio: their one definition.

Every place that reports how much of the retrieval a context kept uses these
functions: a compressor's :class:`~rageval.types.Context` (built in
``rageval.compressors.base``), ``Context.achieved_ratio``, and the
``compression`` diagnostic and its evaluate module.

* **evidence tokens** of a list of units or source snippets = the sum, over the
  items, of the suite tokenizer's count of ``item.text``.  Titles are metadata:
  they count in **neither** the numerator nor the denominator (a budget governs
  the evidence text; the reader's prompt overhead, titles and ``[k]`` labels
  included, is the reader's business and is reported as reader input tokens);
* ``achieved_tokens`` = evidence tokens of the context's units;
* ``retrieved_tokens`` = evidence tokens of all the question's source snippets;
* ``achieved_ratio`` = achieved / retrieved, None when nothing was retrieved.

So a context that passes every snippet through unchanged (``identity``) has a
ratio of exactly 1.0 with the ``regex`` and ``whitespace`` tokenizers (joining
sentences with a space neither adds nor merges tokens).

* **rendered tokens** of a context = the tokenizer's count of its unit texts
  joined as the reader's prompt joins the units (:data:`UNIT_SEPARATOR`, the
  default template's ``unit_separator``), **as one text**.  A sub-word tokenizer
  (a reader's GGUF tokenizer) counts the separators and the joins, which the sum
  of the units does not see; the budget of an ``exact`` compressor holds for both
  (:func:`budget_tokens_of`).  With ``regex`` and ``whitespace`` and a whitespace
  separator the two are equal, and the text is not recounted.

``achieved_tokens`` and ``achieved_ratio`` can be contrasted when a suite names
them (:data:`CONTEXT_METRICS`: lower is cheaper); no default contrast includes
them.

>>> units = [{"text": "Paris is the capital of France.", "title": "Paris"}]
>>> evidence_tokens(units, "regex")
7
>>> achieved_ratio(7, 10), achieved_ratio(0, 0)
(0.7, None)

This module imports nothing heavy (the tokenizer module only when a count is
made), so :mod:`rageval.types` can use it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rageval.text.tokenize import FallbackTokenizer, RegexTokenizer, WhitespaceTokenizer, get_tokenizer

__all__ = [
    "CONTEXT_METRICS",
    "MAX_TOKEN_COUNT",
    "UNIT_SEPARATOR",
    "achieved_ratio",
    "budget_tokens_of",
    "counts_like_words",
    "rendered_tokens",
    "separator_tokens",
    "check_count",
    "count_tokens",
    "evidence_token_counts",
    "evidence_tokens",
    "show_number",
]


#: how the reader's prompt joins the units (the default template's ``unit_separator``): the budget's rendering
UNIT_SEPARATOR = "\n"

#: the context measures a suite may contrast (``contrasts: [{..., metrics: [achieved_tokens]}]``), each with its
#: direction: lower is cheaper.  Never in a default contrast: only where a suite names them.
CONTEXT_METRICS: dict[str, str] = {"achieved_tokens": "lower", "achieved_ratio": "lower"}


def counts_like_words(tokenizer: Any, separator: str) -> bool:
    """True when joining texts with ``separator`` cannot change the tokenizer's count (``regex``/``whitespace``
    and a whitespace separator): the rendered count is the sum of the parts."""
    return type(get_tokenizer(tokenizer)) in _WORDLIKE and separator.isspace()


def count_tokens(tokenizer: Any, texts: Sequence[str]) -> list[int]:
    """The tokenizer's count of each text (a tokenizer object, or a spec such as ``"regex"`` or None)."""

    if isinstance(texts, (str, bytes)):
        raise TypeError(f"count_tokens takes a list of texts, got a single {type(texts).__name__}: {texts!r:.60}")
    if type(tokenizer) is not RegexTokenizer:
        tokenizer = get_tokenizer(tokenizer)
    if type(tokenizer) is RegexTokenizer:  # same counts as RegexTokenizer.count, without the generator
        findall = tokenizer._re.findall
        return [len(findall(t)) for t in texts]
    many = getattr(tokenizer, "count_many", None)
    if many is not None:
        return list(many(list(texts)))
    return [tokenizer.count(t) for t in texts]


def _text(item: Any) -> str:
    text = item.get("text") if isinstance(item, Mapping) else getattr(item, "text", None)
    if not isinstance(text, str):
        raise TypeError(f"a unit or source snippet needs a 'text' string, got {type(item).__name__}: {item!r:.80}")
    return text


def evidence_token_counts(items: Iterable[Any], tokenizer: Any) -> list[int]:
    """Per item (unit or source snippet; object or mapping), the token count of its text; titles never count."""
    texts = [_text(x) for x in items]
    return count_tokens(tokenizer, texts) if texts else []


def evidence_tokens(items: Iterable[Any], tokenizer: Any) -> int:
    """Achieved tokens of a context's units, or retrieved tokens of a question's snippets (see module doc)."""
    return sum(evidence_token_counts(items, tokenizer))


def rendered_tokens(units: Iterable[Any], tokenizer: Any, separator: str = UNIT_SEPARATOR) -> int:
    """The tokenizer's count of the units' texts joined with ``separator``, as one text (see module doc).

    >>> rendered_tokens([{"text": "Paris is in France."}, {"text": "It is."}], "regex")
    8
    """
    texts = [_text(x) for x in units]
    if not texts:
        return 0
    tok = get_tokenizer(tokenizer)
    if counts_like_words(tok, separator):
        return sum(count_tokens(tok, texts))
    return count_tokens(tok, [separator.join(texts)])[0]


def budget_tokens_of(units: Sequence[Any], tokenizer: Any, separator: str = UNIT_SEPARATOR) -> int:
    """What a budget is checked against: the larger of the units' sum (``achieved_tokens``) and the rendered count
    (:func:`rendered_tokens`); the sum alone where the two are equal by construction."""
    tok = get_tokenizer(tokenizer)
    total = evidence_tokens(units, tok)
    if not units or counts_like_words(tok, separator):
        return total
    return max(total, rendered_tokens(units, tok, separator))


def separator_tokens(tokenizer: Any, separator: str = UNIT_SEPARATOR) -> int:
    """The tokenizer's count of ``separator`` alone: what a packer charges each unit beyond its text (0 for
    ``regex``/``whitespace`` and a whitespace separator)."""
    tok = get_tokenizer(tokenizer)
    if counts_like_words(tok, separator):
        return 0
    return count_tokens(tok, [separator])[0]


_WORDLIKE = (RegexTokenizer, WhitespaceTokenizer, FallbackTokenizer)

#: the largest token count taken (2**53: every integer up to it is exact in a float64; no text has more tokens)
MAX_TOKEN_COUNT = 2**53


def show_number(v: Any) -> str:
    """``repr(v)``, an integer of more than 30 digits shortened to its size (no 4,300-digit limit, no wall of digits).

    >>> show_number(12), show_number(10**400)
    ('12', 'an integer of 401 digits')
    """
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 100:
        return f"an integer of {len(str(abs(v))) if v.bit_length() < 14000 else 'over 4,000'} digits"
    return repr(v)


def check_count(name: str, v: Any, *, or_none: bool = False) -> None:
    """A token count: a finite number in ``[0, MAX_TOKEN_COUNT]`` (not a bool), else a ValueError naming ``name``
    (an integer too large for a float included: ``10**400`` is refused, never an OverflowError).  ``or_none``:
    the message says None is taken too.

    >>> check_count("budget_tokens[0]", 10**400)
    Traceback (most recent call last):
    ...
    ValueError: budget_tokens[0] must be a finite non-negative number, got an integer of 401 digits (at most 2**53)
    """
    ok = not isinstance(v, bool) and isinstance(v, numbers.Real)
    too_big = False
    if ok:
        try:
            ok = math.isfinite(v) and v >= 0
        except OverflowError:  # an integer past the float range
            ok = False
            too_big = v > 0
        else:
            too_big = ok and v > MAX_TOKEN_COUNT
    if not ok or too_big:
        alt = " or None" if or_none else ""
        bound = " (at most 2**53)" if too_big else ""
        raise ValueError(f"{name} must be a finite non-negative number{alt}, got {show_number(v)}{bound}")


def achieved_ratio(achieved: float, retrieved: float) -> float | None:
    """``achieved / retrieved``; None when nothing was retrieved (``retrieved == 0``).

    Token counts are finite and non-negative: anything else (NaN, inf, a negative number, a bool) is a
    ``ValueError``, never a ratio.
    """
    for name, v in (("achieved", achieved), ("retrieved", retrieved)):
        check_count(f"{name} tokens", v)
    if retrieved == 0:
        return None
    return achieved / retrieved
