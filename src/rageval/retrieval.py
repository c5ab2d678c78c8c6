"""Retrieval: the dataset's own candidates, or BM25 or dense retrieval over the example's pool or a corpus.

Three methods (docs/datasets.md; docs/design.md#the-one-bm25; docs/suites.md#retrieval):

* ``"given"``: the example's candidate documents in the dataset's order (HotpotQA /
  2Wiki distractor paragraphs, MuSiQue's 20 paragraphs, ALCE's retrieved docs in
  their rank order, a QASPER paper's paragraphs in reading order), first ``k``.
* ``"bm25"``: Okapi BM25 (``bm25s``, Lucene variant, ``k1=1.5``, ``b=0.75``) with the
  question as query over the example's own documents, or over a ``corpus`` (a list
  of :class:`~rageval.data.Document`, e.g. :func:`rageval.data.load_corpus` for ASQA).
  Documents are indexed as ``title + "\\n" + text``; tokens are lowercased runs of
  two or more word characters, English stopwords removed, no stemming.
* ``"dense"``: the question's sentence embedding against each document's
  (``title + "\\n" + text``), by inner product of unit vectors (:mod:`rageval.dense`:
  all-MiniLM-L6-v2 by default, mean pooling, L2 normalization; exact top-k, or
  FAISS's candidates ranked by the same exact scores).

Ranking is deterministic: by score, descending, ties broken by the document's
position in the pool (corpus order).  Documents scoring 0 are still ranked (after
every positive one), so ``k`` documents come back whenever the pool has ``k``.

The result keeps rank order: ``Retrieved.doc_ids`` is what ``retrieval_recall``
takes, and every snippet carries its document's 0-based rank in ``doc_rank``.

>>> from rageval.data import load_examples, sample_path
>>> ex = load_examples("hotpotqa", sample_path("hotpotqa"), limit=1)[0]
>>> r = retrieve(ex, method="bm25", k=3)
>>> len(r.doc_ids), r.snippets[0].doc_rank
(3, 0)
>>> retrieve(ex, method="given", k=2).doc_ids
('d0', 'd1')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rageval import bm25 as _bm25
from rageval.data.schema import Document, Example
from rageval.dense import DenseEncoder, DenseIndex
from rageval.registry import Registry
from rageval.types import SourceSnippet

__all__ = [
    "Retrieved",
    "RetrievalMeta",
    "BM25Index",
    "DenseSearch",
    "default_encoder",
    "retrieve",
    "retrieve_all",
    "METHODS",
    "RETRIEVERS",
]


def _doc_text(d: Document) -> str:
    return f"{d.title}\n{d.text}" if d.title else d.text


class BM25Index:
    """A BM25 index over a fixed list of documents (built once, queried many times).

    A thin use of :class:`rageval.bm25.BM25Index` over each document's
    ``title + "\\n" + text``, with the ``retrieval`` parameters of
    :data:`rageval.bm25.PARAMS` unless ``k1``/``b`` are given.
    """

    def __init__(self, documents: Sequence[Document], *, k1: float | None = None, b: float | None = None):
        self.documents = tuple(documents)
        for i, d in enumerate(self.documents):
            if not isinstance(d, Document):
                raise TypeError(f"BM25Index documents[{i}] must be a rageval.data.Document, got {type(d).__name__}")
        ref = _bm25.PARAMS["retrieval"]
        params = _bm25.BM25Params(k1=ref.k1 if k1 is None else k1, b=ref.b if b is None else b)
        self.k1, self.b = params.k1, params.b
        self._index = _bm25.BM25Index([_doc_text(d) for d in self.documents], params)

    @property
    def name(self) -> str:
        return f"bm25(k1={self.k1},b={self.b})"

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (pool order)."""
        return self._index.scores(query)

    def search(self, query: str, k: int | None = None) -> list[tuple[int, float]]:
        """``(pool index, score)`` of the top ``k`` documents, best first, ties by pool order."""
        return self._index.search(query, k)


class DenseSearch:
    """A dense index over a fixed list of documents with the encoder that embeds them and the questions.

    ``index``: ``"exact"`` (numpy) or ``"faiss"`` (the ``faiss`` extra); the same ranking either way
    (:class:`rageval.dense.DenseIndex`).
    """

    def __init__(self, documents: Sequence[Document], encoder: DenseEncoder, *, index: str = "exact"):
        self.documents = tuple(documents)
        for i, d in enumerate(self.documents):
            if not isinstance(d, Document):
                raise TypeError(f"DenseSearch documents[{i}] must be a rageval.data.Document, got {type(d).__name__}")
        self.encoder = encoder
        self._index = DenseIndex(encoder.embed([_doc_text(d) for d in self.documents]), index=index)

    @property
    def name(self) -> str:
        return f"dense({self.encoder.name},{self._index.kind})"

    def search(self, query: str, k: int | None = None) -> list[tuple[int, float]]:
        """``(pool index, score)`` of the top ``k`` documents, best first, ties by pool order."""
        if not self.documents:
            return []
        return self._index.search(self.encoder.embed([query])[0], k)


_ENCODERS: dict[str | None, DenseEncoder] = {}


def default_encoder(model: str | None = None) -> DenseEncoder:
    """One in-memory :class:`~rageval.dense.DenseEncoder` per model for this process (None: all-MiniLM-L6-v2)."""
    if model not in _ENCODERS:
        _ENCODERS[model] = DenseEncoder(model)
    return _ENCODERS[model]


@dataclass(frozen=True)
class Retrieved:
    """The retrieved documents of one question, in rank order."""

    question_id: str
    method: str
    k: int | None
    documents: tuple[Document, ...]
    scores: tuple[float | None, ...]
    snippets: tuple[SourceSnippet, ...]

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """Retrieved document ids, rank order (the ``retrieved`` input of ``retrieval_recall``)."""
        return tuple(d.id for d in self.documents)

    @property
    def paragraph_of(self) -> dict[str, str]:
        return {s.id: s.doc_id for s in self.snippets}

    def to_dict(self) -> dict[str, Any]:
        return {
            "question_id": self.question_id,
            "method": self.method,
            "k": self.k,
            "doc_ids": list(self.doc_ids),
            "scores": list(self.scores),
        }


def _check_k(k: Any) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ValueError(f"retrieval k must be a positive integer or None (all), got {k!r}")


def _ranked(
    ex: Example, method: str, k: int | None, docs: Sequence[Document], scores: Sequence[float | None]
) -> Retrieved:
    snippets = tuple(
        dataclasses.replace(s, doc_rank=rank) if s.doc_rank != rank else s
        for rank, d in enumerate(docs)
        for s in d.snippets
    )
    return Retrieved(ex.id, method, k, tuple(docs), tuple(scores), snippets)


def _given(example: Example, k: int | None, corpus: Sequence[Document] | None, index: BM25Index | None) -> Retrieved:
    """The example's own candidate documents in the dataset's order, first ``k``."""
    if corpus is not None or index is not None:
        raise ValueError("retrieval method 'given' uses the example's own documents; drop corpus=/index= or use 'bm25'")
    if not example.documents:
        raise ValueError(
            f"example {example.id!r} ({example.dataset}) has no candidate documents of its own; use "
            "method='bm25' with corpus=rageval.data.load_corpus(...)"
        )
    docs = example.documents[:k] if k is not None else example.documents
    return _ranked(example, "given", k, docs, [None] * len(docs))


def _bm25_method(
    example: Example, k: int | None, corpus: Sequence[Document] | None, index: BM25Index | None
) -> Retrieved:
    """BM25 with the question over the example's own documents, a ``corpus``, or a prebuilt ``index``."""
    if index is None:
        pool = corpus if corpus is not None else example.documents
        if not pool:
            raise ValueError(
                f"example {example.id!r} has no documents to rank with BM25; pass corpus=rageval.data.load_corpus(...)"
            )
        index = BM25Index(pool)
    hits = index.search(example.question, k)
    docs = [index.documents[i] for i, _ in hits]
    return _ranked(example, index.name, k, docs, [s for _, s in hits])


def _dense_method(
    example: Example, k: int | None, corpus: Sequence[Document] | None, index: DenseSearch | None
) -> Retrieved:
    """Dense retrieval with the question over the example's own documents, a ``corpus``, or a prebuilt ``index``."""
    if index is None:
        pool = corpus if corpus is not None else example.documents
        if not pool:
            raise ValueError(
                f"example {example.id!r} has no documents to rank; pass corpus=rageval.data.load_corpus(...)"
            )
        index = DenseSearch(pool, default_encoder())
    if not isinstance(index, DenseSearch):
        raise TypeError(f"retrieval method 'dense' takes a DenseSearch index, got {type(index).__name__}")
    hits = index.search(example.question, k)
    docs = [index.documents[i] for i, _ in hits]
    return _ranked(example, index.name, k, docs, [s for _, s in hits])


@dataclass(frozen=True)
class RetrievalMeta:
    """A retrieval method's registry metadata."""

    shared_index: bool = False  # whether :func:`retrieve_all` builds one index over a shared corpus for it


#: Retrieval methods: name -> ``fn(example, k, corpus, index) -> Retrieved``.
RETRIEVERS: Registry[Callable[..., Retrieved], RetrievalMeta] = Registry("retrieval method", meta=RetrievalMeta)
RETRIEVERS.register("given", _given, RetrievalMeta(shared_index=False))
RETRIEVERS.register("bm25", _bm25_method, RetrievalMeta(shared_index=True))
RETRIEVERS.register("dense", _dense_method, RetrievalMeta(shared_index=True))

#: The retrieval method names (``RETRIEVERS.names()``).
METHODS = tuple(RETRIEVERS.names())


def retrieve(
    example: Example,
    *,
    method: str = "given",
    k: int | None = None,
    corpus: Sequence[Document] | None = None,
    index: BM25Index | DenseSearch | None = None,
) -> Retrieved:
    """Retrieve for one example (see the module docstring).

    ``corpus`` (or a prebuilt ``index`` over it: a :class:`BM25Index` for ``"bm25"``, a
    :class:`DenseSearch` for ``"dense"``) switches retrieval from the example's own
    documents to that corpus; ``"given"`` takes neither.
    """
    _check_k(k)
    return RETRIEVERS.get(method)(example, k, corpus, index)


def retrieve_all(
    examples: Sequence[Example],
    *,
    method: str = "given",
    k: int | None = None,
    corpus: Sequence[Document] | None = None,
    encoder: DenseEncoder | None = None,
    dense_index: str = "exact",
) -> list[Retrieved]:
    """:func:`retrieve` for every example, indexing a shared ``corpus`` once.

    ``"dense"``: ``encoder`` embeds (default: :func:`default_encoder`), every question and document in one
    pass before the searches; ``dense_index``: ``"exact"`` or ``"faiss"``.
    """
    if method == "dense":
        return _dense_all(examples, k, corpus, encoder or default_encoder(), dense_index)
    shared = corpus is not None and method in RETRIEVERS and RETRIEVERS.meta(method).shared_index
    index = BM25Index(corpus) if shared and corpus is not None else None
    return [retrieve(ex, method=method, k=k, index=index) for ex in examples]


def _dense_all(
    examples: Sequence[Example], k: int | None, corpus: Sequence[Document] | None, encoder: DenseEncoder, kind: str
) -> list[Retrieved]:
    _check_k(k)
    pools = [corpus] if corpus is not None else [ex.documents for ex in examples]
    encoder.embed([ex.question for ex in examples] + [_doc_text(d) for pool in pools for d in pool])  # one pass
    shared = DenseSearch(corpus, encoder, index=kind) if corpus is not None else None
    out = []
    for ex in examples:
        index = shared
        if index is None and ex.documents:
            index = DenseSearch(ex.documents, encoder, index=kind)
        out.append(_dense_method(ex, k, None, index))
    return out
