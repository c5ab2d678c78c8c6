"""``extractive``: the sentences most relevant to the question, packed in source order.

Sentences are ranked by relevance (ties: source order) and taken greedily: a
sentence that does not fit the remaining budget is skipped and smaller ones are
still tried.  The selected sentences are emitted in source order (document rank,
then position), one unit per sentence, each unit's text being its sentence
verbatim and declaring exactly that sentence's id.

Parameters
----------
scorer : ``"lexical"`` (default, BM25) | ``"minilm"`` | embedding-model path |
    ``"cross-encoder:<path>"`` (see :mod:`rageval.compressors.scoring`).
use_titles : bool, default True — score ``title + sentence``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rageval.compressors.base import BaseCompressor, scoring_text, sentence_unit, source_order
from rageval.compressors.scoring import relevance_scores, scorer_needs_model

__all__ = ["ExtractiveCompressor", "greedy_fill"]


def greedy_fill(ranked, costs, budget_tokens):
    """Take indices in ``ranked`` order whenever they fit; returns the chosen indices."""
    used, chosen = 0, []
    for i in ranked:
        if costs[i] <= 0:
            continue
        if budget_tokens is None or used + costs[i] <= budget_tokens:
            chosen.append(i)
            used += costs[i]
    return chosen


class ExtractiveCompressor(BaseCompressor):
    name = "extractive"
    sentence_units = True  # one sentence per unit: packed with the separator (compressors.base)
    PARAMS: ClassVar[dict[str, Any]] = {"scorer": "lexical", "use_titles": True}

    def _check_params(self) -> None:
        if not isinstance(self.params["scorer"], str) or not self.params["scorer"]:
            raise self._param_error(
                "scorer", "give 'lexical', 'minilm', an embedding-model path or 'cross-encoder:<path>'"
            )
        self.needs_model = scorer_needs_model(self.params["scorer"])

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        texts = [scoring_text(s, self.params["use_titles"]) for s in snippets]
        rel = relevance_scores(self.params["scorer"], question, texts)
        order = source_order(snippets, range(len(snippets)))
        rank_in_source = {i: k for k, i in enumerate(order)}
        ranked = sorted(range(len(snippets)), key=lambda i: (-rel[i], rank_in_source[i]))
        chosen = greedy_fill(ranked, costs, budget_tokens)
        return [sentence_unit(snippets[i]) for i in source_order(snippets, chosen)]
