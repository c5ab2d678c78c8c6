"""``ecr``: near-duplicate clusters of sentences; each cluster emits its best member verbatim.

Sentences are visited in relevance order (ties: source order).  A sentence joins
the first existing cluster whose representative it resembles with similarity
``>= threshold``; otherwise it founds a new cluster and is its representative.
So each cluster's representative is its highest-relevance member.  Clusters are
then packed by their representative's relevance (skipping those that do not
fit), and emitted in the source order of their representatives.  A unit's text
is the representative sentence verbatim; it declares **all** member ids,
representative first, then the other members in source order (the
attribution–compression paper, §4.1; docs/design.md#references).

Parameters
----------
threshold : float in (0, 1], default 0.8 (docs/design.md#decision-compressor-defaults).
similarity : ``"lexical"`` (default) | ``"minilm"`` | embedding-model path.
scorer : relevance scorer, ``"lexical"`` (default).
use_titles : bool, default False — titles are left out of the similarity so that
    sentences of one document are not clustered for sharing a title; relevance
    always reads ``title + sentence``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rageval.compressors.base import BaseCompressor, scoring_text, source_order
from rageval.compressors.extractive import greedy_fill
from rageval.compressors.lexical import LexicalIndex
from rageval.compressors.scoring import relevance_scores, scorer_needs_model
from rageval.compressors.similarity import build_similarity, is_model_similarity

from rageval.types import Unit

__all__ = ["ECRCompressor", "cluster"]


def cluster(order, sim_row, threshold):
    """Leader clustering: ``order`` gives the visiting order; returns {representative: [members]}."""
    reps: list[int] = []
    members: dict[int, list[int]] = {}
    for i in order:
        row = sim_row(i)
        home = next((r for r in reps if row[r] >= threshold), None)
        if home is None:
            reps.append(i)
            members[i] = [i]
        else:
            members[home].append(i)
    return members


class ECRCompressor(BaseCompressor):
    name = "ecr"
    sentence_units = True  # one sentence per unit: packed with the separator (compressors.base)
    PARAMS: ClassVar[dict[str, Any]] = {
        "threshold": 0.8,
        "similarity": "lexical",
        "scorer": "lexical",
        "use_titles": False,
    }

    def _check_params(self) -> None:
        self._check_number("threshold", 0.0, 1.0, lo_open=True)
        for k in ("similarity", "scorer"):
            if not isinstance(self.params[k], str) or not self.params[k]:
                raise self._param_error(k, "give 'lexical', 'minilm' or a local model path")
        self.needs_model = is_model_similarity(self.params["similarity"]) or scorer_needs_model(self.params["scorer"])

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        n = len(snippets)
        keep = [i for i in range(n) if costs[i] > 0]
        rel_texts = [scoring_text(s, True) for s in snippets]
        rel = relevance_scores(self.params["scorer"], question, rel_texts)
        sim_texts = [scoring_text(s, self.params["use_titles"]) for s in snippets]
        sim = build_similarity(
            self.params["similarity"],
            sim_texts,
            index=LexicalIndex(sim_texts) if self.params["similarity"] == "lexical" else None,
            mode="cached",  # rows of the visited sentences only, computed on first use
        )
        src = {i: k for k, i in enumerate(source_order(snippets, range(n)))}
        visit = sorted(keep, key=lambda i: (-rel[i], src[i]))
        clusters = cluster(visit, sim.row, float(self.params["threshold"]))
        reps = sorted(clusters, key=lambda r: (-rel[r], src[r]))
        chosen = greedy_fill(reps, costs, budget_tokens)
        units = []
        for r in source_order(snippets, chosen):
            others = sorted((m for m in clusters[r] if m != r), key=lambda m: src[m])
            ids = (snippets[r].id, *(snippets[m].id for m in others))
            units.append(Unit(snippets[r].text, source_ids=ids, title=snippets[r].title))
        return units
