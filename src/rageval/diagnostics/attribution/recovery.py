"""Re-attribution: trace units without declared provenance back to source snippets.

For each unit without declared provenance, the unit text is the query over the
question's source snippet texts; the top ``k`` candidates with a positive score
are scored by the judge as ``(candidate premise, unit text)``; every candidate
with probability >= the recovery threshold is *recovered* (pooled in source
order).  A unit is re-attributable when at least one candidate passes
(docs/design.md#re-attributability).

* ``candidates="bm25"``: the project's one BM25 (:mod:`rageval.bm25`, the
  ``"recovery"`` parameters), one index per question reused for all its units;
* ``candidates="dense"``: MiniLM cosine similarity (:func:`dense_candidates`);
* any callable ``(query, source_texts, k) -> list[int]``.

``multi_snippet=True``: when no single candidate passes, each candidate joined
with the next source snippet, and the pairs of the top 3 candidates, are tried
too.  A candidate premise is written as a grounded premise is
(:mod:`.premises`: two snippets of one document under its title once, their
texts joined as a unit joins them).  ``tokens_scored`` counts the judge input
before its truncation.

A judge abstention (NaN) never passes; a unit that is not recovered and had at
least one abstained candidate is counted as ``abstained`` (left out of the
``_excl_abstain`` rate).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval.diagnostics._attribution_inputs import PreparedQuestion
from rageval.diagnostics.attribution.premises import fmt

__all__ = ["Recovery", "recover_units", "candidate_ranker", "dense_candidates"]


@dataclass
class Recovery:
    """Re-attribution of one unit: candidates (ranked ids), their probabilities, recovered ids (pooled)."""

    candidates: list[str] = field(default_factory=list)
    probabilities: list[float] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    pairs_scored: int = 0
    tokens_scored: int = 0
    multi_snippet_used: bool = False
    abstentions: int = 0
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (premise, hypothesis) asked, in order

    @property
    def abstained(self) -> bool:
        """Not recovered, and the judge abstained on at least one candidate."""
        return not self.recovered and self.abstentions > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidates": list(self.candidates),
            "probabilities": [None if math.isnan(p) else round(p, 6) for p in self.probabilities],
            "recovered": list(self.recovered),
            "pairs_scored": self.pairs_scored,
            "multi_snippet_used": self.multi_snippet_used,
        }


@functools.lru_cache(maxsize=2)
def dense_candidates(path: str | None = None) -> Callable[[str, list[str], int], list[int]]:
    """Dense candidates: the top-k source texts by cosine similarity of MiniLM embeddings (``candidates="dense"``).

    ``path``: another sentence-embedding folder (mean pooling).  Loaded once per process.
    """
    from rageval.judges.embedding import EmbeddingJudge

    enc = EmbeddingJudge(path)

    def candidates(query: str, texts: list[str], k: int) -> list[int]:
        if not texts:
            return []
        enc._embed([query] + list(texts))
        q = enc._emb[query]
        scores = [float(enc._emb[t] @ q) for t in texts]
        return sorted(range(len(texts)), key=lambda i: (-scores[i], i))[:k]

    candidates.id = f"dense:{enc.id}"  # type: ignore[attr-defined]
    return candidates


def candidate_ranker(candidates: Any, texts: list[str], where: str) -> Callable[[str, int], list[int]]:
    """``rank(query, k) -> source indices`` for one question's source ``texts``."""
    if candidates == "bm25":
        from rageval.bm25 import PARAMS, BM25Index

        index = BM25Index(texts, PARAMS["recovery"])
        return index.top
    fn = dense_candidates() if candidates == "dense" else candidates

    def rank(query: str, k: int) -> list[int]:
        out = [int(i) for i in fn(query, texts, k)][:k]
        for i in out:
            if not 0 <= i < len(texts):
                raise ValueError(f"candidates callable returned index {i} for {where} of length {len(texts)}")
        return out

    return rank


def _plan(questions: Sequence[PreparedQuestion], wanted: dict[int, list[int]], candidates: Any, k: int):
    plan: list[tuple[tuple[int, int], list[int]]] = []
    for qi, ks in wanted.items():
        q = questions[qi]
        todo = [u for u in ks if q.units[u].source_ids is None]
        if not todo:
            continue
        rank = candidate_ranker(candidates, [s.text for s in q.sources], f"sources[{qi}]")
        plan.extend(((qi, u), rank(q.units[u].text, k)) for u in todo)
    return plan


def _score(runner, questions, asks):
    """Judge ``asks = [(key, premise items, payload)]``; yield (key, payload, probability, pair).

    The premise of a candidate is written as in grounded premises (one group).
    """
    prem = [fmt([items]) for _, items, _ in asks]
    hyp = [questions[key[0]].units[key[1]].text for key, _, _ in asks]
    probs = runner(prem, hyp) if prem else []
    for (key, _, payload), p, pr, hy in zip(asks, probs, prem, hyp):
        yield key, payload, p, (pr, hy)


def _item(q: PreparedQuestion, i: int):
    s = q.sources[i]
    return (s.id, s.title, s.text, s.doc)


def recover_units(
    questions: Sequence[PreparedQuestion],
    wanted: dict[int, list[int]],
    runner: Any,
    *,
    threshold: float,
    k: int = 10,
    multi_snippet: bool = False,
    candidates: Any = "bm25",
) -> dict[tuple[int, int], Recovery]:
    """Re-attribute units ``wanted[q] = [unit indices]`` (only those without declared provenance)."""
    plan = _plan(questions, wanted, candidates, k)
    out: dict[tuple[int, int], Recovery] = {key: Recovery() for key, _ in plan}
    # phase 1: single snippets
    asks = [(key, [_item(questions[key[0]], i)], i) for key, cands in plan for i in cands]
    passing: dict[tuple[int, int], set[int]] = {}
    for key, i, p, pair in _score(runner, questions, asks):
        rec = out[key]
        rec.candidates.append(questions[key[0]].sources[i].id)
        rec.probabilities.append(p)
        rec.pairs_scored += 1
        rec.tokens_scored += runner.token_counts(*pair)[0]
        rec.pairs.append(pair)
        rec.abstentions += int(math.isnan(p))
        if p >= threshold:
            passing.setdefault(key, set()).add(i)
    if multi_snippet:
        # phase 2: joined pairs for units where no single candidate passed
        asks = []
        for key, cands in plan:
            if key in passing or not cands:
                continue
            q = questions[key[0]]
            combos = [(i, i + 1) for i in cands if i + 1 < len(q.sources)]
            top = cands[:3]
            combos += [(a, b) if a < b else (b, a) for x, a in enumerate(top) for b in top[x + 1 :]]
            asks.extend((key, [_item(q, a), _item(q, b)], (a, b)) for a, b in dict.fromkeys(combos))
        for key, ab, p, pair in _score(runner, questions, asks):
            rec = out[key]
            rec.pairs_scored += 1
            rec.tokens_scored += runner.token_counts(*pair)[0]
            rec.pairs.append(pair)
            rec.multi_snippet_used = True
            rec.abstentions += int(math.isnan(p))
            if p >= threshold:
                passing.setdefault(key, set()).update(ab)
    for key, idx in passing.items():
        out[key].recovered = [questions[key[0]].sources[i].id for i in sorted(idx)]
    return out
