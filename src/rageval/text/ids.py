"""Texts as integer token ids: each distinct text tokenized, normalized and stemmed once per run.

The text metrics read the same texts again and again: a gold long answer for every setting of a suite, a passage
for every claim it is asked about, an alias for every context it is searched in.  This module turns a text into a
tuple of integer ids once and keeps it:

* :func:`normalized` / :func:`normalized_ids`: the SQuAD/ALCE normalization
  (:func:`rageval.text.normalize.normalize_answer`) and its whitespace tokens as ids, for token F1/EM, the
  lexical judge's overlap and the memoized string of str-EM and answer-in-context (their tests are substring
  tests on the normalized string, kept as such: ``"412" in "4123"`` is ALCE's str-EM, and no id sequence says it);
* :func:`rouge_lines`: a text as ``rouge-score``'s ROUGE-Lsum reads it (one sentence per line; each line
  lowercased, every character outside ``[a-z0-9]`` a space, split on whitespace, words longer than three
  characters through nltk's Porter stemmer, tokens outside ``^[a-z0-9]+$`` dropped), each line a tuple of ids,
  for the summary-level LCS of :mod:`rageval.text.lcs`.

**One vocabulary per run.**  Ids come from one process-wide vocabulary (token string -> id, ids never reused): two
texts' ids are equal exactly when their tokens are.  Ids are handed out under a lock, so threads never give two
tokens one id.

**Bounded memos** (a long-lived process never grows without limit):

* each memo (normalized strings; normalized ids; ROUGE lines; Porter stems of single words) holds at most
  :data:`MEMO_TEXTS` texts and :data:`MEMO_CHARS` characters of keys; passing either bound empties that memo whole
  (the next texts are computed again; a run's working set is far below the bounds);
* the vocabulary holds at most :data:`VOCAB_SIZE` tokens; past that, the vocabulary and every memo of ids are
  emptied together at the start of the next :func:`session` that no other thread is inside, so one computation
  never mixes ids of two vocabularies.  A caller that keeps ids across calls (the lexical judge's content-token
  memo) registers a reset hook (:func:`on_reset`).

The memos are keyed by the text itself: a Python string hashes by its content (the hash computed once per string
object and cached) and a hit also compares the strings, so a hit is exact; a digest key would cost an encoding and
a hash function per lookup for a key a few bytes smaller.  :func:`clear` empties everything (benchmarks time from
a cold memo).

>>> normalized("The  Eiffel Tower!") == "eiffel tower"
True
>>> a, b = normalized_ids("the Eiffel Tower"), normalized_ids("Eiffel tower.")
>>> a == b and len(a) == 2
True
>>> [len(line) for line in rouge_lines("paris is big.\\nit has towers.")]
[3, 3]
>>> rouge_lines("running") == rouge_lines("runs")  # Porter: both "run"
True
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import Any

from rageval.text._nltk import nltk_modules
from rageval.text.normalize import normalize_answer

__all__ = [
    "MEMO_TEXTS",
    "MEMO_CHARS",
    "VOCAB_SIZE",
    "normalized",
    "normalized_ids",
    "rouge_lines",
    "rouge_tokens",
    "token_id",
    "token_ids",
    "session",
    "on_reset",
    "clear",
    "stats",
]

#: texts each memo keeps before it is emptied whole
MEMO_TEXTS = 131_072
#: characters of keys each memo keeps before it is emptied whole (about 64 MB of text at most, per memo)
MEMO_CHARS = 32_000_000
#: tokens the vocabulary holds before it (and every memo of ids) is emptied at the next safe point
VOCAB_SIZE = 2_000_000


class _Memo:
    """A dict bounded by its entries and its keys' characters, emptied whole when it passes either bound."""

    __slots__ = ("chars", "clears", "d", "max_chars", "max_items")

    def __init__(self, max_items: int, max_chars: int):
        self.d: dict[str, Any] = {}
        self.chars = 0
        self.clears = 0
        self.max_items = max_items
        self.max_chars = max_chars

    def put(self, key: str, value: Any) -> Any:
        if len(self.d) >= self.max_items or self.chars + len(key) > self.max_chars:
            self.d.clear()
            self.chars = 0
            self.clears += 1
        self.d[key] = value
        self.chars += len(key)
        return value

    def clear(self) -> None:
        self.d.clear()
        self.chars = 0


_lock = threading.Lock()
_vocab: dict[str, int] = {}
_next_id = itertools.count()
_active = 0
_resets = 0
_hooks: list[Callable[[], None]] = []

_norm = _Memo(MEMO_TEXTS, MEMO_CHARS)  # text -> normalize_answer(text) (no ids: survives a vocabulary reset)
_norm_ids = _Memo(MEMO_TEXTS, MEMO_CHARS)  # text -> tuple of ids of normalize_answer(text).split()
_rouge = _Memo(MEMO_TEXTS, MEMO_CHARS)  # text -> tuple of lines, each a tuple of ROUGE token ids
_stems = _Memo(MEMO_TEXTS, MEMO_CHARS)  # a word of [a-z0-9] -> its ROUGE token's id, or -1 (dropped)


def token_id(token: str) -> int:
    """The id of ``token`` in the run's vocabulary (a new id for a new token)."""
    i = _vocab.get(token)
    if i is None:
        with _lock:
            i = _vocab.get(token)
            if i is None:
                i = _vocab[token] = next(_next_id)
    return i


def token_ids(tokens: Collection[str]) -> list[int]:
    """The ids of ``tokens`` in their iteration order (new ids for new tokens), one vocabulary lookup each."""
    found = list(map(_vocab.get, tokens))
    if None not in found:
        return found  # type: ignore[return-value]  # no None in it
    return [token_id(t) if i is None else i for t, i in zip(tokens, found)]


def vocab_size() -> int:
    """One more than the largest id handed out (the size of an array indexed by id)."""
    return len(_vocab)


@contextmanager
def session() -> Iterator[None]:
    """Use ids inside this block: the vocabulary is never emptied while a session is open.

    On entry, when no other session is open and the vocabulary has passed :data:`VOCAB_SIZE`, the vocabulary and
    every memo of ids are emptied (and each :func:`on_reset` hook called) first.
    """
    global _active, _resets
    with _lock:
        if _active == 0 and len(_vocab) > VOCAB_SIZE:
            _reset_ids()
            _resets += 1
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1


def on_reset(hook: Callable[[], None]) -> None:
    """Call ``hook()`` whenever the vocabulary is emptied (a memo of ids elsewhere must be emptied with it)."""
    if hook not in _hooks:
        _hooks.append(hook)


def _reset_ids() -> None:
    global _next_id
    _vocab.clear()
    _next_id = itertools.count()
    _norm_ids.clear()
    _rouge.clear()
    _stems.clear()
    for hook in _hooks:
        hook()


def clear() -> None:
    """Empty the vocabulary and every memo (outside any :func:`session`)."""
    with _lock:
        _reset_ids()
        _norm.clear()


def stats() -> dict[str, int]:
    """Sizes of the vocabulary and the memos, and how often each was emptied (tests, benchmarks)."""
    out = {"vocab": len(_vocab), "vocab_resets": _resets}
    for name, memo in (("normalized", _norm), ("normalized_ids", _norm_ids), ("rouge", _rouge), ("stems", _stems)):
        out[name] = len(memo.d)
        out[f"{name}_chars"] = memo.chars
        out[f"{name}_clears"] = memo.clears
    return out


# -- the SQuAD/ALCE normalization -----------------------------------------------------------------------


def normalized(text: str) -> str:
    """:func:`~rageval.text.normalize.normalize_answer` of ``text``, memoized."""
    if type(text) is not str:  # its TypeError for a non-string (a str subclass is normalized, not memoized)
        return normalize_answer(text)
    hit = _norm.d.get(text)
    if hit is None:
        hit = _norm.put(text, normalize_answer(text))
    return hit


def normalized_ids(text: str) -> tuple[int, ...]:
    """The ids of ``normalize_answer(text).split()``, memoized (use inside a :func:`session`)."""
    if type(text) is not str:
        return tuple(map(token_id, normalize_answer(text).split()))
    hit = _norm_ids.d.get(text)
    if hit is None:
        hit = _norm_ids.put(text, tuple(token_ids(normalized(text).split())))
    return hit


# -- rouge-score's tokenization (ROUGE-Lsum) ------------------------------------------------------------

#: rouge_score.tokenize's NON_ALPHANUM_RE and VALID_TOKEN_RE
_NON_ALPHANUM = re.compile(r"[^a-z0-9]+")
_VALID = re.compile(r"^[a-z0-9]+$")
_stemmer: Any = None


def _porter() -> Any:
    """nltk's Porter stemmer in its default mode (NLTK_EXTENSIONS), as ``rouge_score``'s tokenizer builds it."""
    global _stemmer
    if _stemmer is None:
        with nltk_modules("nltk.stem.porter") as (porter,):  # on the first ROUGE text, without the rest of nltk
            _stemmer = porter.PorterStemmer()
    return _stemmer


def _word_id(word: str) -> int:
    """The id of the ROUGE token a word of ``[a-z0-9]+`` becomes, or -1 when rouge-score drops it."""
    tok = _porter().stem(word) if len(word) > 3 else word
    return token_id(tok) if _VALID.match(tok) else -1


def rouge_tokens(line: str) -> tuple[int, ...]:
    """The ids of ``rouge_score.tokenize.tokenize(line, PorterStemmer())``: one line, not memoized itself (its
    words' stems are); use inside a :func:`session`."""
    words = _NON_ALPHANUM.sub(" ", line.lower()).split()
    found = list(map(_stems.d.get, words))
    if None in found:
        found = [_stems.put(w, _word_id(w)) if i is None else i for w, i in zip(words, found)]
    if -1 in found:
        return tuple(i for i in found if i >= 0)  # type: ignore[operator,misc]  # no None left
    return tuple(found)  # type: ignore[arg-type]  # no None left


def rouge_lines(text: str) -> tuple[tuple[int, ...], ...]:
    """``text`` as rouge-score's ``rougeLsum`` reads a summary: split on ``\\n``, empty lines dropped, each line
    :func:`rouge_tokens` (lines without a token are dropped too: they add nothing to the summary-level LCS), memoized
    (use inside a :func:`session`)."""
    hit = _rouge.d.get(text)
    if hit is None:
        lines = (rouge_tokens(s) for s in text.split("\n") if s)
        hit = _rouge.put(text, tuple(line for line in lines if line))
    return hit
