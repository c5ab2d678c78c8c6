"""The lexical judge: deterministic, no model — the embedded default.

Rule (version 1): both texts are normalized as SQuAD/ALCE answers are
(lowercase, punctuation removed, articles a/an/the dropped), split on
whitespace, English function words removed (``STOPWORDS``) and each token
lightly stemmed (a trailing ``s`` dropped from tokens longer than three
characters that do not end in ``ss``).  The probability is the share of the
hypothesis's distinct content tokens that occur in the premise::

    p = |content(h) ∩ content(p)| / |content(h)|      (0 when content(h) is empty)

So at the default threshold 0.5 a claim is "entailed" when at least half of
its content words appear in the evidence.  The judge counts the overlap on the
content tokens' integer ids in the run's vocabulary (:mod:`rageval.text.ids`):
the same sets, compared as integers.  It never abstains (no NaN).  It knows nothing of negation,
numbers' meaning or word order: a transparent floor, not an NLI model
(calibration against WiCE in ``docs/judges.md``).

>>> j = LexicalJudge()
>>> j.predict(["Title: Paris\\nParis is the capital of France."], ["France's capital is Paris."])
[1.0]
>>> j.predict(["Paris is in France."], ["Berlin is in Germany."])
[0.0]
"""

from __future__ import annotations

import functools

from rageval.text import ids as text_ids
from rageval.text.normalize import normalized_tokens

__all__ = ["LexicalJudge", "content_tokens", "clear_memo", "STOPWORDS"]

STOPWORDS = frozenset(
    """
    i me my we our you your he him his she her it its they them their what which who whom this that these those
    am is are was were be been being have has had do does did doing and but if or because as until while of at by
    for with about between into through during before after above below to from up down in out on off over under
    again further then once here there when where why how all any both each few more most other some such no nor
    not only own same so than too very can will just should now also title s t
    """.split()
)


def content_tokens(text: str) -> frozenset[str]:
    """The set of stemmed, normalized, non-stopword tokens of ``text`` (memoized: the same premises and claims
    come back on every call of a run; at most :data:`MEMO_SIZE` texts are kept).

    A text of several lines is the union of its lines' sets (normalization never joins two lines: a newline is
    whitespace, neither punctuation nor a word character), and each line is memoized too (at most
    :data:`LINE_MEMO_SIZE`): a premise that joins several cited passages reads each passage's tokens once, however
    many premises it is part of.

    >>> sorted(content_tokens("The cats sat on the mats in Paris."))
    ['cat', 'mat', 'pari', 'sat']
    >>> content_tokens("Title: Cats\\nDogs bark.") == content_tokens("Title: Cats") | content_tokens("Dogs bark.")
    True
    """
    return _content_tokens(text)


#: the texts whose content tokens the lexical judge keeps between calls (a bounded LRU)
MEMO_SIZE = 16_384
#: the lines of multi-line texts whose content tokens it keeps (a bounded LRU)
LINE_MEMO_SIZE = 32_768


def _stemmed(line: str) -> set[str]:
    toks = set(normalized_tokens(line))
    toks -= STOPWORDS
    # the light stem (module doc): a trailing "s" dropped from a token longer than three that does not end in "ss"
    return {t[:-1] if t[-1] == "s" and len(t) > 3 and t[-2] != "s" else t for t in toks}


@functools.lru_cache(maxsize=LINE_MEMO_SIZE)
def _line_tokens(line: str) -> frozenset[str]:
    return frozenset(_stemmed(line))


@functools.lru_cache(maxsize=MEMO_SIZE)
def _content_tokens(text: str) -> frozenset[str]:
    if "\n" not in text:
        return _line_tokens(text)
    return frozenset().union(*map(_line_tokens, text.split("\n")))


# The judge's own overlap counts on ids (rageval.text.ids: the run's vocabulary), memoized as the strings are; the
# id memos are emptied with the vocabulary (the reset hook below).


@functools.lru_cache(maxsize=LINE_MEMO_SIZE)
def _line_ids(line: str) -> frozenset[int]:
    return frozenset(text_ids.token_ids(_stemmed(line)))


@functools.lru_cache(maxsize=MEMO_SIZE)
def _content_ids(text: str) -> frozenset[int]:
    if "\n" not in text:
        return _line_ids(text)
    return frozenset().union(*map(_line_ids, text.split("\n")))


def _clear_ids() -> None:
    _content_ids.cache_clear()
    _line_ids.cache_clear()


text_ids.on_reset(_clear_ids)


def clear_memo() -> None:
    """Forget every memoized text (benchmarks time the judge from a cold memo)."""
    _content_tokens.cache_clear()
    _line_tokens.cache_clear()
    _clear_ids()


class LexicalJudge:
    """Share of the hypothesis's content tokens found in the premise (see module doc)."""

    id = "lexical:v1"
    batch_size = 1024
    uses_torch = False
    tokenizer = None

    def predict(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        out = []
        with text_ids.session():  # the content tokens as ids of the run's vocabulary (the same sets, as integers)
            for p, h in zip(premises, hypotheses):
                hyp = _content_ids(h)
                out.append(len(hyp & _content_ids(p)) / len(hyp) if hyp else 0.0)
        return out

    def __repr__(self) -> str:
        return "LexicalJudge()"
