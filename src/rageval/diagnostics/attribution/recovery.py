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

**Recover once, threshold many.**  Only the comparison with the threshold
depends on it: :func:`score_recovery` ranks and judges the candidates once for
a set of thresholds (the joined pairs of ``multi_snippet`` for every unit that
has no passing single candidate at the highest of them), and
:meth:`RecoveryScores.at` applies one threshold, giving exactly the
:class:`Recovery` s that :func:`recover_units` gives at that threshold (which is
itself ``score_recovery(..., thresholds=[t]).at(t)``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval.diagnostics._attribution_inputs import PreparedQuestion
from rageval.diagnostics.attribution.premises import fmt
from rageval.scoring import DEFAULT_CANDIDATES, DEFAULT_MULTI_SNIPPET, DEFAULT_RECOVERY_K

__all__ = [
    "Recovery",
    "RecoveryScores",
    "ScoredUnit",
    "recover_units",
    "candidate_pools",
    "score_recovery",
    "candidate_ranker",
    "dense_candidates",
]


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


def candidate_pools(
    questions: Sequence[PreparedQuestion],
    wanted: dict[int, list[int]],
    *,
    k: int = DEFAULT_RECOVERY_K,
    candidates: Any = DEFAULT_CANDIDATES,
) -> dict[tuple[int, int], list[str]]:
    """The union grounding rule (``grounding="union"``): each wanted unit without declared provenance ->
    the ids of its top ``k`` recovery candidates (ranked as re-attribution ranks them, a positive score
    only), in source order; no judge call.  A unit with no candidate is absent (no source behind it)."""
    out: dict[tuple[int, int], list[str]] = {}
    for (qi, u), ranked in _plan(questions, wanted, candidates, k):
        if ranked:
            q = questions[qi]
            out[(qi, u)] = [q.sources[i].id for i in sorted(set(ranked))]
    return out


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


@dataclass
class ScoredUnit:
    """The judged candidates of one unit, before any threshold.

    ``singles``: ``(source index, probability, (premise, hypothesis), tokens before truncation)`` in rank
    order; ``joined``: the same for the joined pairs of ``multi_snippet`` (``(a, b)`` source indices), or
    None when they were not scored (no candidates, ``multi_snippet`` off, or a single candidate passes at
    the highest threshold scored).
    """

    singles: list[tuple[int, float, tuple[str, str], int]] = field(default_factory=list)
    joined: list[tuple[tuple[int, int], float, tuple[str, str], int]] | None = None


@dataclass
class RecoveryScores:
    """Candidates and probabilities of every wanted unit, scored once for ``thresholds``; :meth:`at` applies one."""

    questions: Sequence[PreparedQuestion]
    units: dict[tuple[int, int], ScoredUnit]
    thresholds: tuple[float, ...]
    multi_snippet: bool

    def at(self, threshold: float) -> dict[tuple[int, int], Recovery]:
        """The recoveries at ``threshold`` (at most the highest threshold scored, when ``multi_snippet``)."""
        if self.multi_snippet and self.thresholds and threshold > max(self.thresholds):
            raise ValueError(
                f"recovery threshold {threshold} is above the thresholds scored ({max(self.thresholds)}): "
                "joined pairs were not judged for it; score_recovery(..., thresholds=[...]) with it included"
            )
        out: dict[tuple[int, int], Recovery] = {}
        for key, su in self.units.items():
            q = self.questions[key[0]]
            rec = Recovery()
            passing: set[int] = set()
            for i, p, pair, tokens in su.singles:
                rec.candidates.append(q.sources[i].id)
                rec.probabilities.append(p)
                rec.pairs_scored += 1
                rec.tokens_scored += tokens
                rec.pairs.append(pair)
                rec.abstentions += int(math.isnan(p))
                if p >= threshold:
                    passing.add(i)
            if self.multi_snippet and not passing and su.singles:
                for ab, p, pair, tokens in su.joined or ():
                    rec.pairs_scored += 1
                    rec.tokens_scored += tokens
                    rec.pairs.append(pair)
                    rec.multi_snippet_used = True
                    rec.abstentions += int(math.isnan(p))
                    if p >= threshold:
                        passing.update(ab)
            rec.recovered = [q.sources[i].id for i in sorted(passing)]
            out[key] = rec
        return out


def score_recovery(
    questions: Sequence[PreparedQuestion],
    wanted: dict[int, list[int]],
    runner: Any,
    *,
    thresholds: Sequence[float],
    k: int = DEFAULT_RECOVERY_K,
    multi_snippet: bool = DEFAULT_MULTI_SNIPPET,
    candidates: Any = DEFAULT_CANDIDATES,
) -> RecoveryScores:
    """Rank and judge the candidates of units ``wanted[q] = [unit indices]`` once for all ``thresholds``."""
    plan = _plan(questions, wanted, candidates, k)
    units: dict[tuple[int, int], ScoredUnit] = {key: ScoredUnit() for key, _ in plan}
    # phase 1: single snippets
    asks = [(key, [_item(questions[key[0]], i)], i) for key, cands in plan for i in cands]
    for key, i, p, pair in _score(runner, questions, asks):
        units[key].singles.append((i, p, pair, runner.token_counts(*pair)[0]))
    top = max(thresholds) if len(thresholds) else math.inf
    if multi_snippet:
        # phase 2: joined pairs for units where no single candidate passes at the highest threshold
        asks = []
        for key, cands in plan:
            if not cands or any(p >= top for _, p, _, _ in units[key].singles):
                continue
            q = questions[key[0]]
            units[key].joined = []
            combos = [(i, i + 1) for i in cands if i + 1 < len(q.sources)]
            top3 = cands[:3]
            combos += [(a, b) if a < b else (b, a) for x, a in enumerate(top3) for b in top3[x + 1 :]]
            asks.extend((key, [_item(q, a), _item(q, b)], (a, b)) for a, b in dict.fromkeys(combos))
        for key, ab, p, pair in _score(runner, questions, asks):
            joined = units[key].joined
            assert joined is not None  # set above for every unit asked
            joined.append((ab, p, pair, runner.token_counts(*pair)[0]))
    return RecoveryScores(questions, units, tuple(float(t) for t in thresholds), multi_snippet)


def recover_units(
    questions: Sequence[PreparedQuestion],
    wanted: dict[int, list[int]],
    runner: Any,
    *,
    threshold: float,
    k: int = DEFAULT_RECOVERY_K,
    multi_snippet: bool = DEFAULT_MULTI_SNIPPET,
    candidates: Any = DEFAULT_CANDIDATES,
) -> dict[tuple[int, int], Recovery]:
    """Re-attribute units ``wanted[q] = [unit indices]`` (only those without declared provenance)."""
    scores = score_recovery(
        questions, wanted, runner, thresholds=(threshold,), k=k, multi_snippet=multi_snippet, candidates=candidates
    )
    return scores.at(threshold)


def recover_wanted(
    questions: Sequence[PreparedQuestion], wanted: dict[int, list[int]], runner: Any, opts: Any
) -> dict[tuple[int, int], Recovery]:
    """:func:`recover_units` with the re-attribution options of ``opts`` (an attribution options object), and
    nothing asked when no unit is wanted."""
    if not any(wanted.values()):
        return {}
    return recover_units(
        questions,
        wanted,
        runner,
        threshold=opts.recovery_threshold_or_default,
        k=opts.k,
        multi_snippet=opts.multi_snippet,
        candidates=opts.candidates,
    )
