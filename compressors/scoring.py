"""Relevance scorers: lexical BM25 (default, no model) or a model.

* ``"lexical"``: BM25 of the question over the candidate pool, scaled to [0, 1]
  (:class:`~rageval.compressors.lexical.LexicalIndex`).
* ``"minilm"`` or an embedding-model folder: cosine between the question's and
  each candidate's mean-pooled embedding (a dense bi-encoder, RECOMP-extractive
  style), clipped to [0, 1].
* ``"cross-encoder:<path>"``: a transformers sequence-classification model
  scoring ``(question, candidate)`` pairs; the score is the logit of the last
  label (one-logit rerankers: that logit), min-max scaled to [0, 1].
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from rageval.compressors.base import ModelUnavailable
from rageval.compressors.lexical import LexicalIndex

from rageval.errors import require

__all__ = ["relevance_scores", "scorer_needs_model", "load_scorer"]

CROSS = "cross-encoder:"


def scorer_needs_model(spec: str) -> bool:
    return spec != "lexical"


@functools.lru_cache(maxsize=2)
def _load_cross(path: str) -> Any:
    require("torch", "transformers", what=f"the cross-encoder {path!r}", otherwise="or scorer='lexical' (no model)")
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(path)
    except (OSError, ValueError) as e:
        raise ModelUnavailable(
            f"cannot load the cross-encoder {path!r} ({type(e).__name__}: {str(e)[:200]}); "
            "give scorer='cross-encoder:<local folder with config.json, weights and tokenizer>' "
            "or scorer='lexical' for the model-free default"
        ) from None
    model.eval()
    return tok, model


def _cross_scores(path: str, question: str, texts: Sequence[str], batch_size: int = 16) -> np.ndarray:
    tok, model = _load_cross(path)  # first: the install hint where torch is missing
    import torch

    out = np.zeros(len(texts))
    with torch.inference_mode():
        for s in range(0, len(texts), batch_size):
            chunk = list(texts[s : s + batch_size])
            enc = tok(
                [question] * len(chunk), chunk, padding=True, truncation=True, max_length=512, return_tensors="pt"
            )
            logits = model(**enc).logits
            out[s : s + len(chunk)] = logits[:, -1].float().numpy()
    lo, hi = out.min(), out.max()
    return (out - lo) / (hi - lo) if hi > lo else np.ones_like(out)


def load_scorer(spec: str) -> None:
    """Load a model scorer's weights (ModelUnavailable if impossible); no-op for ``"lexical"``."""
    if spec == "lexical":
        return
    if spec.startswith(CROSS):
        _load_cross(spec[len(CROSS) :])
        return
    from rageval.compressors.similarity import load_similarity

    load_similarity(spec)


def relevance_scores(spec: str, question: str, texts: Sequence[str], index: LexicalIndex | None = None) -> np.ndarray:
    """Relevance of each text to the question in [0, 1] (higher = more relevant)."""
    if not texts:
        return np.zeros(0)
    if spec == "lexical":
        return (index if index is not None else LexicalIndex(texts)).relevance(question)
    if spec.startswith(CROSS):
        return _cross_scores(spec[len(CROSS) :], question, texts)
    from rageval.compressors.similarity import encode, resolve_model_path

    path = resolve_model_path(spec)
    emb = encode(path, [question, *texts])
    return np.clip(emb[1:] @ emb[0], 0.0, 1.0)
