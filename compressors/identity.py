"""``identity``: everything the retriever returned, one unit per document (or paragraph).

Each unit is its document's sentences joined with a space, in position order, and
declares all of their ids.  The budget is *not enforced*, but it binds: identity is the
uncompressed reference, and its ``budget_contract`` is ``"exact"``, so a run records
``budget_check`` for a question whose retrieved text is over the budget.

Parameters
----------
level : ``"document"`` (default) | ``"sentence"``
    ``document``: one unit per ``doc_id`` (ASQA passages; QASPER paragraphs when
    the paragraph is the snippet's ``doc_id``).  ``sentence``: one unit per snippet.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rageval.compressors.base import BaseCompressor, group_documents, group_unit, sentence_unit, source_order

__all__ = ["IdentityCompressor"]


class IdentityCompressor(BaseCompressor):
    name = "identity"
    PARAMS: ClassVar[dict[str, Any]] = {"level": "document"}

    def _check_params(self) -> None:
        self._check_choice("level", ("document", "sentence"))

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        keep = [i for i in range(len(snippets)) if costs[i] > 0]
        if self.params["level"] == "sentence":
            return [sentence_unit(snippets[i]) for i in source_order(snippets, keep)]
        return [group_unit([snippets[i] for i in doc]) for doc in group_documents(snippets, keep)]
