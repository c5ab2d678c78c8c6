"""Model-free lexical scoring shared by the compressors: terms, IDF, BM25 relevance, tf-idf similarity.

Terms are :func:`rageval.bm25.tokenize`'s tokens (lowercased runs of two or more
word characters, English stopwords removed), the same as retrieval's.  IDF is
computed over the question's own candidate pool (the "corpus" of one question),
with the BM25 form ``log(1 + (N - df + 0.5) / (df + 0.5))`` so it is always
positive.  BM25 relevance is :class:`rageval.bm25.BM25Index` with the ``lexical``
parameters of :data:`rageval.bm25.PARAMS`, queried with the question's distinct
terms.

>>> terms("The Eiffel Tower is in Paris.")
['eiffel', 'tower', 'paris']
>>> idx = LexicalIndex(["Paris is in France.", "Berlin is in Germany."])
>>> [round(float(x), 3) for x in idx.relevance("Where is Paris?")]
[1.0, 0.0]
>>> round(float(idx.similarity_row(0)[0]), 3), round(float(idx.similarity_row(0)[1]), 3)
(1.0, 0.0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import chain

import numpy as np

from rageval import bm25 as _bm25

__all__ = ["STOPWORDS", "terms", "LexicalIndex"]

#: English function words (the usual IR list, close to scikit-learn's and NLTK's): the words that
#: ``token_prune``'s IDF scorer never keeps for their IDF.  :func:`terms` uses the BM25 tokenizer's
#: own stopwords (:func:`rageval.bm25.stopwords`).
STOPWORDS = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also although always am
    among amongst an and another any anyhow anyone anything anyway anywhere are around as at be became because
    become becomes becoming been before beforehand behind being below beside besides between beyond both but by
    can cannot could did do does doing done down during each eg either else elsewhere enough etc even ever every
    everyone everything everywhere except few for former formerly from further had has have having he hence her
    here hereafter hereby herein hereupon hers herself him himself his how however i ie if in indeed into is it
    its itself just least less many may me meanwhile might mine more moreover most mostly much must my myself
    namely neither never nevertheless next no nobody none noone nor not nothing now nowhere of off often on once
    one only onto or other others otherwise our ours ourselves out over own per perhaps please quite rather re
    same seem seemed seeming seems several she should since so some somehow someone something sometime sometimes
    somewhere still such than that the their theirs them themselves then thence there thereafter thereby
    therefore therein thereupon these they this those though through throughout thru thus to together too toward
    towards under until up upon us very via was we well were what whatever when whence whenever where whereafter
    whereas whereby wherein whereupon wherever whether which while whither who whoever whole whom whose why will
    with within without would yet you your yours yourself yourselves s t d ll m o re ve y
    """.split()
)


def terms(text: str) -> list[str]:
    """Lowercased word tokens without stopwords (order kept, repeats kept): :func:`rageval.bm25.tokenize`."""
    return _bm25.tokenize(text)


def bm25_idf(n_docs: int, df: np.ndarray) -> np.ndarray:
    """BM25's IDF (:func:`rageval.bm25.idf`)."""
    return _bm25.idf(n_docs, df)


def _params(k1: float | None, b: float | None) -> _bm25.BM25Params:
    ref = _bm25.PARAMS["lexical"]
    return _bm25.BM25Params(k1=ref.k1 if k1 is None else k1, b=ref.b if b is None else b)


def bm25_scores(
    tf: np.ndarray, lengths: np.ndarray, idf: np.ndarray, *, k1: float | None = None, b: float | None = None
) -> np.ndarray:
    """BM25 of each candidate (rows of ``tf``: counts of the query terms) given term lengths and IDFs.

    :func:`rageval.bm25.term_scores` with the ``lexical`` parameters (unless
    ``k1``/``b`` are given): the scores :class:`rageval.bm25.BM25Index` gives,
    for callers that hold the counts already (:func:`pool_query_stats`).
    """
    return _bm25.term_scores(tf, lengths, idf, _params(k1, b))


def scale_to_unit(scores: np.ndarray) -> np.ndarray:
    m = scores.max() if scores.size else 0.0
    return scores / m if m > 0 else scores


def pool_query_stats(
    query: str, index: LexicalIndex, titles: Sequence[str | None] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Query-term statistics of a pool whose candidate ``i`` is ``index``'s candidate ``i`` plus ``terms(titles[i])``.

    Returns ``(tf, lengths, idf)``: counts (n, q) of the distinct query terms
    that occur in the pool (query order), term lengths (n,), BM25 IDFs (q,).
    Equal to building a :class:`LexicalIndex` over ``title + text``, without
    tokenizing every sentence again.
    """
    n = index.n
    lengths = index.lengths.copy()
    tcounts: list[Counter] = []
    tid = np.zeros(n, dtype=np.int64)
    if titles is not None:
        uniq: dict[str, int] = {}
        tid = np.fromiter((uniq.setdefault(t or "", len(uniq)) for t in titles), dtype=np.int64, count=n)
        tlists = [terms(t) for t in uniq]
        lengths = lengths + np.asarray([len(x) for x in tlists], dtype=np.float64)[tid]
        tcounts = [Counter(x) for x in tlists]
    cols, idfs = [], []
    for w in dict.fromkeys(terms(query)):
        col = np.zeros(n)
        j = index.vocab.get(w)
        if j is not None:
            a, e = index._c_ptr[j], index._c_ptr[j + 1]
            col[index._c_row[a:e]] = index._c_cnt[a:e]
        if tcounts:
            col += np.asarray([c[w] for c in tcounts], dtype=np.float64)[tid]
        df = np.count_nonzero(col)
        if df:
            cols.append(col)
            idfs.append(float(bm25_idf(n, np.float64(df))))
    tf = np.stack(cols, axis=1) if cols else np.zeros((n, 0))
    return tf, lengths, np.asarray(idfs, dtype=np.float64)


class LexicalIndex:
    """Term statistics of one candidate pool (one question's sentences or documents).

    ``relevance(query)`` is BM25 (:class:`rageval.bm25.BM25Index`, the ``lexical``
    parameters, the query's distinct terms) scaled so the best candidate scores 1
    (all zeros when no query term occurs).  ``similarity_row(i)`` is the
    cosine similarity of tf-idf vectors (non-negative, 1 on the diagonal for a
    non-empty candidate).  Pure numpy (row- and column-major copies of the
    sparse tf-idf matrix), so a row costs O(sum of its terms' document
    frequencies), not a scipy call.
    """

    def __init__(
        self,
        texts: Sequence[str] | None = None,
        *,
        k1: float | None = None,
        b: float | None = None,
        term_lists: list[list[str]] | None = None,
    ):
        if term_lists is None:
            term_lists = [terms(t) for t in (texts or [])]
        self.n = n = len(term_lists)
        self.params = _params(k1, b)
        self.k1, self.b = self.params.k1, self.params.b
        self.term_lists = term_lists
        self._bm25: _bm25.BM25Index | None = None
        flat = list(chain.from_iterable(term_lists))
        vocab = {w: k for k, w in enumerate(dict.fromkeys(flat))}  # first-appearance order
        ids = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
        self.vocab = vocab
        v = max(len(vocab), 1)
        lens = np.fromiter(map(len, term_lists), dtype=np.int64, count=n)
        keys = np.repeat(np.arange(n, dtype=np.int64), lens) * v + ids
        uk, cnt = np.unique(keys, return_counts=True)  # sorted by (row, term)
        r, c = uk // v, uk % v
        cnt = cnt.astype(np.float64)
        v = len(vocab)
        self.df = np.bincount(c, minlength=v).astype(np.float64)
        self.idf = bm25_idf(n, self.df)
        w = cnt * self.idf[c] if len(c) else cnt
        norm = np.sqrt(np.bincount(r, w * w, minlength=n)) if n else np.zeros(0)
        norm[norm == 0] = 1.0
        x = w / norm[r] if len(r) else w
        self.lengths = lens.astype(np.float64)
        self.avg_len = float(self.lengths.mean()) if n and self.lengths.sum() > 0 else 1.0
        # row-major
        self._r_ptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=n))]).astype(np.int64)
        self._r_col, self._r_val = c, x
        # column-major
        order = np.argsort(c, kind="stable")
        self._c_ptr = np.concatenate([[0], np.cumsum(self.df)]).astype(np.int64)
        self._c_row, self._c_val, self._c_cnt = r[order], x[order], cnt[order]

    # -- relevance
    def query_term_ids(self, query: str) -> list[int]:
        """Distinct query terms that occur in the pool (vocabulary ids, in query order)."""
        seen: list[int] = []
        for w in terms(query):
            j = self.vocab.get(w)
            if j is not None and j not in seen:
                seen.append(j)
        return seen

    def term_counts(self, qids: Sequence[int]) -> np.ndarray:
        """Dense (n, len(qids)) matrix of term counts."""
        out = np.zeros((self.n, len(qids)))
        for k, t in enumerate(qids):
            a, e = self._c_ptr[t], self._c_ptr[t + 1]
            out[self._c_row[a:e], k] = self._c_cnt[a:e]
        return out

    def bm25(self, query: str) -> np.ndarray:
        """BM25 of every candidate for the query's distinct terms (:class:`rageval.bm25.BM25Index`)."""
        q = list(dict.fromkeys(terms(query)))
        if self.n == 0 or not q:
            return np.zeros(self.n)
        if self._bm25 is None:
            self._bm25 = _bm25.BM25Index(self.term_lists, self.params)
        return self._bm25.scores(q)

    def relevance(self, query: str) -> np.ndarray:
        return scale_to_unit(self.bm25(query))

    # -- similarity
    def similarity_row(self, i: int) -> np.ndarray:
        """Dense cosine similarities of candidate ``i`` to every candidate."""
        a, e = self._r_ptr[i], self._r_ptr[i + 1]
        if a == e:
            return np.zeros(self.n)
        idx, val = [], []
        for t, xv in zip(self._r_col[a:e], self._r_val[a:e]):
            p, q = self._c_ptr[t], self._c_ptr[t + 1]
            idx.append(self._c_row[p:q])
            val.append(self._c_val[p:q] * xv)
        return np.bincount(np.concatenate(idx), np.concatenate(val), minlength=self.n)

    def row_sums(self) -> np.ndarray:
        """sum_j sim(i, j) for every i, in O(nnz)."""
        if self.n == 0 or not len(self._r_col):
            return np.zeros(self.n)
        colsum = np.bincount(self._r_col, self._r_val, minlength=len(self.vocab))
        rows = np.repeat(np.arange(self.n), np.diff(self._r_ptr))
        return np.bincount(rows, self._r_val * colsum[self._r_col], minlength=self.n)
