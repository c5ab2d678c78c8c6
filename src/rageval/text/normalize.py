"""SQuAD/ALCE answer normalization.

This is the normalization of the official SQuAD v1.1 / HotpotQA evaluation scripts
and of ALCE's ``normalize_answer``: lowercase, remove punctuation, drop the
articles *a*, *an*, *the*, collapse whitespace.

>>> normalize_answer("The  Eiffel Tower, in Paris!")
'eiffel tower in paris'
>>> remove_citations("Paris is in France [1][2]. It is big [3, 4].")
'Paris is in France. It is big.'
"""

from __future__ import annotations

import re
import string

__all__ = ["normalize_answer", "normalized_tokens", "remove_citations", "CITATION_RE"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)
_DROP_PUNCT = str.maketrans("", "", string.punctuation)  # one C pass, not a generator step per character

#: A citation marker: ``[1]``, ``[1, 2]``, ``[1-3]``, ``[1–3]``; ASCII digits only (``\d`` would also read
#: ``[١]`` and the full-width ``[１]`` as [1]).
CITATION_RE = re.compile(r"\[\s*[0-9]+(?:\s*(?:[-\u2013,]|,\s*)\s*[0-9]+)*\s*\]")


def normalize_answer(s: str) -> str:
    """Lowercase, strip punctuation, drop articles, collapse whitespace (SQuAD/ALCE)."""
    return " ".join(normalized_tokens(s))


def normalized_tokens(s: str) -> list[str]:
    """``normalize_answer(s).split()``, without joining the words to split them again."""
    if not isinstance(s, str):
        raise TypeError(f"normalize_answer takes a string, got {type(s).__name__}: {s!r:.60}")
    return _ARTICLES.sub(" ", s.lower().translate(_DROP_PUNCT)).split()


def remove_citations(s: str) -> str:
    """Remove every ``[k]``-style marker and the space before it."""
    s = re.sub(r"\s*" + CITATION_RE.pattern, "", s)
    return s.strip()
