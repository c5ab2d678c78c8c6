"""The one BM25 of rageval: one tokenizer, one set of parameters per caller, one index on ``bm25s``.

Scoring is Okapi BM25 as ``bm25s`` computes it by default (its ``"lucene"``
method).  For a query term ``t`` and a text ``d`` of ``|d|`` tokens in a pool of
``N`` texts whose mean length is ``avgdl``::

    idf(t)      = log(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    score(d, q) = sum over the query's tokens t of
                  idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))

(no ``(k1 + 1)`` factor: it would scale every score alike).  A query term that
occurs twice counts twice, as in ``bm25s``; callers that want each term once pass
their distinct terms (a list of tokens instead of a string).  Scores are float32,
as ``bm25s`` stores them.

Tokens (:func:`tokenize`): lowercased runs of two or more word characters
(``(?u)\\b\\w\\w+\\b``, the ``bm25s`` default pattern), ``bm25s``'s English
stopwords removed, no stemming.

Callers and their parameters (all in :data:`PARAMS`, all equal today):

=============  ==========================  =================================================
caller         parameters                  what is indexed, what is asked
=============  ==========================  =================================================
``retrieval``  k1=1.5, b=0.75              :class:`rageval.retrieval.BM25Index`: each
                                           document's ``title + "\\n" + text``; the question.
                                           Its recall is audited: the reference setting.
``recovery``   k1=1.5, b=0.75              re-attribution (:mod:`rageval.diagnostics`) and
                                           judge calibration (:mod:`rageval.calibrate.core`):
                                           one question's source sentences (or a page's
                                           evidence sentences); a unit or claim, via
                                           ``BM25Index(texts, PARAMS["recovery"]).top(query, k)``.
``lexical``    k1=1.5, b=0.75              the compressors' lexical relevance
                                           (``rageval.compressors.lexical``): one question's
                                           candidate sentences or documents; the question's
                                           distinct terms.
=============  ==========================  =================================================

>>> tokenize("The Eiffel Tower is in Paris, France.")
['eiffel', 'tower', 'paris', 'france']
>>> idx = BM25Index(["Paris is the capital of France.", "Berlin is in Germany.", "Paris, Texas."])
>>> [(i, round(s, 4)) for i, s in idx.search("Where is Paris?")]
[(2, 0.2009), (0, 0.1666), (1, 0.0)]
>>> idx.top("Where is Paris?", 5), idx.top("Where is it?", 5)
([2, 0], [])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["BM25Params", "PARAMS", "BM25Index", "tokenize", "stopwords", "idf", "term_scores"]


@dataclass(frozen=True)
class BM25Params:
    """BM25's free parameters: term-frequency saturation ``k1`` and length normalisation ``b``."""

    k1: float = 1.5
    b: float = 0.75


#: Every caller's parameters, in one place (see the module docstring).
PARAMS: dict[str, BM25Params] = {
    "retrieval": BM25Params(k1=1.5, b=0.75),
    "recovery": BM25Params(k1=1.5, b=0.75),
    "lexical": BM25Params(k1=1.5, b=0.75),
}

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_STOP: frozenset[str] | None = None


def stopwords() -> frozenset[str]:
    """``bm25s``'s English stopwords (loaded once)."""
    global _STOP
    if _STOP is None:
        from bm25s.stopwords import STOPWORDS_EN

        _STOP = frozenset(STOPWORDS_EN)
    return _STOP


def tokenize(text: str) -> list[str]:
    """Lowercased tokens of two or more word characters, English stopwords removed (order and repeats kept).

    >>> tokenize("A cat, the dog and I")
    ['cat', 'dog']
    """
    stop = stopwords()
    return [t for t in _TOKEN.findall(text.lower()) if t not in stop]


def idf(n_docs: int, df: np.ndarray | float) -> np.ndarray:
    """BM25's IDF (always positive): ``log(1 + (N - df + 0.5) / (df + 0.5))``."""
    return np.log1p((n_docs - np.asarray(df, dtype=np.float64) + 0.5) / (np.asarray(df, dtype=np.float64) + 0.5))


def term_scores(
    tf: np.ndarray, lengths: np.ndarray, idfs: np.ndarray, params: BM25Params = PARAMS["lexical"]
) -> np.ndarray:
    """The BM25 score of each text from term counts the caller already holds (float64).

    ``tf`` (n, q): counts of the query's terms in each text; ``lengths`` (n,):
    each text's length in tokens; ``idfs`` (q,): :func:`idf` of each term over the
    pool.  Equal to :meth:`BM25Index.scores` (up to float32 rounding) when the
    counts come from :func:`tokenize` over the same pool and the query's terms.
    """
    tf = np.asarray(tf, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.float64)
    n = len(lengths)
    if n == 0 or tf.ndim != 2 or tf.shape[1] == 0:
        return np.zeros(n)
    avg = float(lengths.mean()) if lengths.sum() > 0 else 1.0
    denom = tf + params.k1 * (1 - params.b + params.b * lengths[:, None] / avg)
    return (np.asarray(idfs, dtype=np.float64)[None, :] * tf / np.where(denom == 0, 1, denom)).sum(axis=1)


class BM25Index:
    """A ``bm25s`` index over a fixed pool of texts (built once, queried many times).

    ``texts`` are strings (tokenized with :func:`tokenize`) or already-tokenized
    lists of tokens.  A query is a string (tokenized; repeated terms count) or a
    list of tokens used as given.  Empty pools and pools without a single token
    are allowed: every score is 0.
    """

    def __init__(self, texts: Sequence[str] | Sequence[Sequence[str]], params: BM25Params = PARAMS["retrieval"]):
        if not isinstance(params, BM25Params):
            raise TypeError(f"params must be a BM25Params (e.g. rageval.bm25.PARAMS['retrieval']), got {params!r}")
        if isinstance(texts, str):
            raise TypeError("BM25Index takes a sequence of texts, not one string")
        self.params = params
        tokens = [tokenize(t) if isinstance(t, str) else list(t) for t in texts]
        self.n = len(tokens)
        self._bm25 = None
        if any(tokens):
            import bm25s  # numpy/scipy only

            self._bm25 = bm25s.BM25(k1=params.k1, b=params.b)
            self._bm25.index(tokens, show_progress=False)

    def __len__(self) -> int:
        return self.n

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """The BM25 score of every text for ``query``, in pool order (0 where no query term occurs)."""
        toks = tokenize(query) if isinstance(query, str) else list(query)
        if self._bm25 is None or not toks:
            return np.zeros(self.n)
        return np.asarray(self._bm25.get_scores(toks), dtype=float)

    def search(self, query: str | Sequence[str], k: int | None = None) -> list[tuple[int, float]]:
        """``(pool index, score)`` of the top ``k`` texts (all when None), best first, ties by pool index.

        Texts scoring 0 are ranked too (after every positive one), so ``k`` results
        come back whenever the pool has ``k`` texts.
        """
        s = self.scores(query)
        order = np.lexsort((np.arange(len(s)), -s))
        if k is not None:
            order = order[:k]
        return [(int(i), float(s[i])) for i in order]

    def top(self, query: str | Sequence[str], k: int) -> list[int]:
        """Pool indices of at most ``k`` texts with a positive score, best first, ties by pool index."""
        return [i for i, s in self.search(query, k) if s > 0]
