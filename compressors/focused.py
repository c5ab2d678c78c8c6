"""``focused``: question-focused sentence windows, the strong heuristic baseline of
*What Survives Into Context* (docs/design.md#references, #decision-compressor-defaults).

Each sentence is scored by query-term overlap: the number of distinct
non-stopword question terms it contains (its title counts when ``use_titles``);
ties are broken by the IDF-weighted overlap, then source order.  Going down that
ranking, each sentence is taken together with its neighbours (a ±``window``
sentence window inside its document) while the budget allows; if the whole window
does not fit, the sentence alone is tried; sentences already taken cost nothing.
Packing continues until nothing more fits.  Overlapping or touching windows of
a document merge, so the output is one unit per (merged) window, in source
order, declaring exactly the sentences it contains.

Parameters
----------
window : int >= 0, default 1 — neighbours on each side.
use_titles : bool, default True.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from rageval.compressors.base import (
    BaseCompressor,
    group_documents,
    pack_guard,
    scoring_text,
    source_order,
    units_by_runs,
)
from rageval.compressors.lexical import LexicalIndex

__all__ = ["FocusedCompressor"]


class FocusedCompressor(BaseCompressor):
    name = "focused"
    PARAMS: ClassVar[dict[str, Any]] = {"window": 1, "use_titles": True}

    def _check_params(self) -> None:
        self._check_number("window", 0, integer=True)

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        n = len(snippets)
        index = LexicalIndex([scoring_text(s, self.params["use_titles"]) for s in snippets])
        qids = index.query_term_ids(question)
        if qids:
            present = index.term_counts(qids) > 0
            overlap = present.sum(axis=1).astype(float)
            weighted = (present * index.idf[qids][None, :]).sum(axis=1)
        else:
            overlap = weighted = np.zeros(n)
        order = source_order(snippets, range(n))
        src_rank = {i: k for k, i in enumerate(order)}
        ranked = sorted(range(n), key=lambda i: (-overlap[i], -weighted[i], src_rank[i]))
        neighbours: dict[int, list[int]] = {}
        w = self.params["window"]
        for doc in group_documents(snippets):
            for k, i in enumerate(doc):
                neighbours[i] = doc[max(0, k - w) : k + w + 1]
        taken: set[int] = set()
        used = 0
        steps: list[list[int]] = []
        for i in ranked:
            if i in taken or costs[i] <= 0:
                continue
            for cand in (neighbours[i], [i]):
                new = [j for j in cand if j not in taken and costs[j] > 0]
                c = sum(costs[j] for j in new)
                if budget_tokens is None or used + c <= budget_tokens:
                    steps.append(new)
                    taken.update(new)
                    used += c
                    break
        return pack_guard(steps, lambda chosen: units_by_runs(snippets, chosen), tokenizer, budget_tokens)
