"""``mmr``: maximal marginal relevance over sentences (Carbonell & Goldstein, 1998).

At each step, among the sentences that still fit the remaining budget, pick
``argmax  λ·rel(i) − (1 − λ)·max_{j∈S} sim(i, j)`` (ties: source order), until
none fits.  ``rel`` is scaled to [0, 1]; ``sim`` is cosine (non-negative).
Selected sentences are emitted in source order, one unit each, declaring the
sentence's id.

Parameters
----------
lambda_ : float in [0, 1], default 0.7 (docs/design.md#decision-compressor-defaults); a suite
    may write it ``lambda``.
similarity : ``"lexical"`` (default) | ``"minilm"`` | embedding-model path.
scorer : relevance scorer, ``"lexical"`` (default) (see :mod:`rageval.compressors.scoring`).
use_titles : bool, default True — titles count for relevance and similarity.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from rageval.compressors.base import BaseCompressor, scoring_text, sentence_unit, source_order
from rageval.compressors.lexical import LexicalIndex
from rageval.compressors.scoring import relevance_scores, scorer_needs_model
from rageval.compressors.similarity import build_similarity, is_model_similarity

__all__ = ["MMRCompressor"]


class MMRCompressor(BaseCompressor):
    name = "mmr"
    sentence_units = True  # one sentence per unit: packed with the separator (compressors.base)
    ALIASES: ClassVar[dict[str, str]] = {"lambda": "lambda_"}
    PARAMS: ClassVar[dict[str, Any]] = {
        "lambda_": 0.7,
        "similarity": "lexical",
        "scorer": "lexical",
        "use_titles": True,
    }

    def _check_params(self) -> None:
        self._check_number("lambda_", 0.0, 1.0)
        for k in ("similarity", "scorer"):
            if not isinstance(self.params[k], str) or not self.params[k]:
                raise self._param_error(k, "give 'lexical', 'minilm' or a local model path")
        self.needs_model = is_model_similarity(self.params["similarity"]) or scorer_needs_model(self.params["scorer"])

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        n = len(snippets)
        texts = [scoring_text(s, self.params["use_titles"]) for s in snippets]
        index = LexicalIndex(texts)
        rel = relevance_scores(self.params["scorer"], question, texts, index=index)
        # rows only for the chosen sentences, never the row sums: computed on first use, no kernel
        sim = build_similarity(self.params["similarity"], texts, index=index, mode="cached")
        lam = float(self.params["lambda_"])
        order = source_order(snippets, range(n))
        src_rank = np.empty(n)
        src_rank[order] = np.arange(n)
        costs_a = np.asarray(costs, dtype=np.int64)
        available = costs_a > 0
        max_sim = np.zeros(n)
        used = 0
        chosen: list[int] = []
        while True:
            if budget_tokens is not None:
                available &= costs_a <= budget_tokens - used
            if not available.any():
                break
            score = lam * rel - (1 - lam) * max_sim
            cand = np.flatnonzero(available)
            best_val = score[cand].max()
            ties = cand[score[cand] == best_val]
            i = int(ties[np.argmin(src_rank[ties])])
            chosen.append(i)
            used += int(costs_a[i])
            available[i] = False
            max_sim = np.maximum(max_sim, sim.row(i))
        return [sentence_unit(snippets[i]) for i in source_order(snippets, chosen)]
