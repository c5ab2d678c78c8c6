"""``rerank``: documents reordered by relevance to the question, then packed like ``naive``.

Parameters
----------
scorer : ``"lexical"`` (default: BM25 over the documents' ``title + text``),
    ``"minilm"`` / an embedding-model folder, or ``"cross-encoder:<path>"``
    (see :mod:`rageval.compressors.scoring`).
partial : ``"leading"`` (default) | ``"stop"`` | ``"skip"``, as in ``naive``.
order : ``"relevance"`` (default: units in reranked order) | ``"source"``
    (units back in retrieval order).
use_titles : bool, default True — score ``title + text``.

Ties in relevance keep retrieval order.  One unit per document, declaring the
sentence ids it contains.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rageval.compressors.base import (
    BaseCompressor,
    group_documents,
    group_unit,
    join_sentences,
    pack_documents,
    pack_guard,
)
from rageval.compressors.scoring import relevance_scores, scorer_needs_model

__all__ = ["RerankCompressor"]


class RerankCompressor(BaseCompressor):
    name = "rerank"
    PARAMS: ClassVar[dict[str, Any]] = {
        "scorer": "lexical",
        "partial": "leading",
        "order": "relevance",
        "use_titles": True,
    }

    def _check_params(self) -> None:
        if not isinstance(self.params["scorer"], str) or not self.params["scorer"]:
            raise self._param_error(
                "scorer", "give 'lexical', 'minilm', an embedding-model path or 'cross-encoder:<path>'"
            )
        self._check_choice("partial", ("leading", "stop", "skip"))
        self._check_choice("order", ("relevance", "source"))
        self.needs_model = scorer_needs_model(self.params["scorer"])

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        docs = group_documents(snippets)
        texts = []
        for doc in docs:
            body = join_sentences([snippets[i].text for i in doc])
            title = snippets[doc[0]].title
            texts.append(f"{title}. {body}" if self.params["use_titles"] and title else body)
        rel = relevance_scores(self.params["scorer"], question, texts)
        ranked = sorted(range(len(docs)), key=lambda d: (-rel[d], d))
        steps = pack_documents([docs[d] for d in ranked], costs, budget_tokens, self.params["partial"])
        if self.params["order"] == "source":
            doc_of = {i: k for k, doc in enumerate(docs) for i in doc}
            steps_out = sorted(steps, key=lambda st: doc_of[st[0]])
        else:
            steps_out = steps

        def build(chosen):
            chosen_set = set(chosen)
            return [group_unit([snippets[i] for i in st]) for st in steps_out if chosen_set.issuperset(st)]

        return pack_guard(steps, build, tokenizer, budget_tokens)
