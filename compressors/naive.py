"""``naive``: documents in retrieval order until the budget is full
(docs/design.md#decision-compressor-defaults).

Documents are taken whole, in retrieval order (``doc_rank``, then input order);
when the next document does not fit, its leading whole sentences that fit are
kept (declaring only those) and packing stops.  One unit per document.

Parameters
----------
partial : ``"leading"`` (default) | ``"stop"`` | ``"skip"``
    What happens at the first document that does not fit: keep its leading
    sentences that fit and stop (docs/design.md#decision-compressor-defaults); stop; or skip it
    and continue.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rageval.compressors.base import BaseCompressor, group_documents, group_unit, pack_documents, pack_guard

__all__ = ["NaiveCompressor"]


class NaiveCompressor(BaseCompressor):
    name = "naive"
    PARAMS: ClassVar[dict[str, Any]] = {"partial": "leading"}

    def _check_params(self) -> None:
        self._check_choice("partial", ("leading", "stop", "skip"))

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        docs = group_documents(snippets)
        steps = pack_documents(docs, costs, budget_tokens, self.params["partial"])

        def build(chosen):
            chosen_set = set(chosen)
            return [group_unit([snippets[i] for i in step]) for step in steps if chosen_set.issuperset(step)]

        return pack_guard(steps, build, tokenizer, budget_tokens)
