"""``submodular``: the budgeted submodular evidence packer of *What Survives Into Context*
(docs/design.md#references; docs/compressors.md#submodular).

The packer picks a set ``S`` of candidate sentences with total cost (tokens)
within the budget ``B`` maximizing

    F(S) = w_rel·Rel(S) + w_qry·QueryCov(S) + w_cov·Repr(S) + w_div·Div(S)

over the question's sentences ``V`` (each term scaled so that the best single
sentence scores 1 on it, which makes the weights comparable):

* ``Rel(S) = Σ_{i∈S} r_i`` — modular lexical relevance (BM25 of the question
  over ``title + sentence``, scaled to [0, 1]);
* ``QueryCov(S) = Σ_{t∈Q} q_t · [t occurs in some i∈S]`` — coverage of the
  distinct question terms ``Q``, weighted by IDF (``Σ q_t = 1``);
* ``Repr(S) = Σ_{j∈V} max_{i∈S} sim(i, j) / Z`` — facility location
  (saturating: a near-duplicate of a chosen sentence adds ~nothing), ``sim``
  non-negative cosine (lexical tf-idf by default, MiniLM optional), ``Z`` the
  best singleton's value;
* ``Div(S) = Σ_{d∈docs} sqrt(Σ_{i∈S∩d} ρ_i) / Z'`` — concave over documents
  (Lin & Bilmes 2011), reward ``ρ_i = (r_i + c_i)/2`` with ``c_i`` the
  sentence's scaled centrality ``Σ_j sim(i, j)``.

Every term is monotone submodular and the weights are non-negative, so ``F`` is
too (property-tested).  Optimization: **cost-scaled greedy** — repeatedly add
the feasible sentence with the best marginal gain per token — with **lazy
evaluation** (stale upper bounds; by submodularity a candidate whose exact ratio
is at least every other bound is the true best: up to :data:`VECTOR_MAX_N`
candidates with a held kernel, vectorised steps, each a few numpy calls over the
candidates whose bound reaches a guess of the step's best; otherwise a priority
queue), stopping when nothing fits or no gain is positive; then the
**Lin–Bilmes fallback**: if the best feasible single sentence has a higher ``F``
than the greedy set, return it instead.  Selected sentences are emitted in source order (document rank, then
position), one unit per sentence, declaring its id.

:func:`plain_greedy` is the reference implementation (re-evaluates every
remaining candidate at each step) used by the tests (lazy == plain) and the
benchmark.  Both share the first step's singleton gains, computed vectorized.

Parameters (suite parameters, defaults in brackets)
----------
w_rel [1.0], w_qry [1.0], w_cov [0.5], w_div [0.5] : non-negative weights.
similarity ["lexical"] : ``"lexical"`` | ``"minilm"`` | embedding-model path.
use_titles [True] : titles count for relevance and query coverage (never for cost).
fallback [True] : apply the Lin–Bilmes singleton fallback.
lazy [True] : lazy greedy (False: plain greedy; same selection, slower).
cost_exponent [1.0] : greedy ranks by ``gain / cost**cost_exponent``; 1 is the gain per token of
    *What Survives Into Context*, 0 ignores cost (Lin & Bilmes's scaled variant uses values in
    between).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from rageval.compressors.base import BaseCompressor, sentence_unit, source_order
from rageval.compressors.lexical import LexicalIndex, bm25_scores, pool_query_stats, scale_to_unit
from rageval.compressors.similarity import build_similarity, is_model_similarity
from rageval.compressors.submodular_objective import Objective, PackerProblem

__all__ = [
    "SubmodularCompressor",
    "PackerProblem",
    "Objective",
    "build_problem",
    "lazy_greedy",
    "block_size",
    "plain_greedy",
    "pack",
    "GreedyResult",
]


@dataclass
class GreedyResult:
    selected: list[int]  # in selection order
    value: float  # F(selected)
    evaluations: int  # marginal-gain evaluations after the shared first step
    fallback_used: bool = False
    timed_out: bool = False


#: the work (candidates x n) of one block of stale candidates the lazy greedy evaluates in one numpy call:
#: blocks of up to 64 at small n, where a Python call per evaluation would cost more than the arithmetic; one
#: at a time at large n, where every evaluation beyond the needed ones is real work
BLOCK_WORK = 16_384
MAX_BLOCK = 64
#: a step's first block; each further block of the same step is twice as large (up to :func:`block_size`), so
#: a step that needs one evaluation makes about one, and a step that needs hundreds makes few numpy calls
FIRST_BLOCK = 2


def block_size(n: int) -> int:
    """How many stale candidates the lazy greedy evaluates at once for ``n`` candidates (:data:`BLOCK_WORK`)."""
    return max(1, min(MAX_BLOCK, BLOCK_WORK // max(n, 1)))


#: up to this many candidates the lazy greedy takes its steps vectorised (:func:`_vector_steps`): no Python work
#: per candidate, for some evaluations more than the priority queue makes; above, those evaluations cost more than
#: the Python work they save (on MiniLM kernels of HotpotQA sentences, bench/bench_packer_libs.py's problem: ahead
#: at 200 and 1,000 candidates, even at 2,000, behind at 3,000 and 5,000)
VECTOR_MAX_N = 1024
#: the vectorised step's guess of its best ratio, as a fraction of the previous step's (ratios only fall)
VECTOR_GUESS = 0.95


def lazy_greedy(
    p: PackerProblem,
    budget: int | None,
    *,
    block: int | None = None,
    vector: bool | None = None,
    singletons: np.ndarray | None = None,
) -> GreedyResult:
    """Cost-scaled lazy greedy (stale upper bounds, re-evaluated only where they can still win); ties break by lower
    index.  Two ways to take a step, the same selection (the plain greedy's) and the same gains:

    * ``vector=True`` (the default up to :data:`VECTOR_MAX_N` candidates when the similarity is a held kernel or
      unweighted, so that a block of gains is a few numpy calls, and no ``block`` is given): :func:`_vector_steps`,
      every stale candidate whose bound reaches a guess of the step's best ratio evaluated in one
      :meth:`Objective.gains` call (cached or on-demand rows, lexical ones included, are fetched or computed one
      by one: there the queue's fewer evaluations are worth more);
    * ``vector=False``: a priority queue of the bounds; a stale candidate on top is evaluated together with the next
      stale ones (up to ``block``, default :func:`block_size`) in one call.  The selection is the plain greedy's
      whatever the block: a candidate is taken only when its exact ratio is on top of the queue, where every other
      entry is an upper bound (submodularity); a larger block only evaluates some candidates earlier than needed.

    ``singletons``: :meth:`Objective.singleton_gains`, where the caller has them (:func:`pack`).
    """
    obj = Objective(p)
    g0 = obj.singleton_gains() if singletons is None else singletons
    if vector or (vector is None and block is None and p.n <= VECTOR_MAX_N and obj.gathers):
        return _vector_steps(p, budget, obj, g0)
    return _queue_steps(p, budget, obj, g0, block_size(p.n) if block is None else max(1, int(block)))


def _queue_steps(p: PackerProblem, budget: int | None, obj: Objective, g0: np.ndarray, b: int) -> GreedyResult:
    """The lazy greedy's steps with a priority queue of the bounds, the stale top evaluated in blocks of up to ``b``."""
    first = size = min(FIRST_BLOCK, b)
    remaining = math.inf if budget is None else budget
    # plain Python numbers in the heap and the loop (numpy scalars compare several times slower)
    costs = p.costs.tolist()
    scale = p.scale.tolist()
    neg_ratio = (-(g0 / p.scale)).tolist() if p.n else []
    heap = [(neg_ratio[i], i) for i in range(p.n) if costs[i] <= remaining]
    heapq.heapify(heap)
    stamp = [0] * p.n
    last_gain = g0.astype(float).tolist()
    step = 0
    selected: list[int] = []
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        neg, i = pop(heap)
        if costs[i] > remaining:
            continue  # remaining only shrinks: never feasible again
        if stamp[i] == step:
            if -neg <= 0:
                break
            obj.add(i, last_gain[i])
            selected.append(i)
            remaining -= costs[i]
            step += 1
            size = first
            continue
        todo = [i]  # the stale candidates on top, evaluated together
        while len(todo) < size and heap:
            j = heap[0][1]
            if costs[j] > remaining:
                pop(heap)
                continue
            if stamp[j] == step:
                break  # an exact ratio: it waits on top for the block's new values
            todo.append(pop(heap)[1])
        gains = obj.gains(np.array(todo)).tolist()
        for j, g in zip(todo, gains):
            stamp[j] = step
            last_gain[j] = g
            push(heap, (-g / scale[j], j))
        size = min(2 * size, b)  # still no exact ratio on top: the next block of this step is larger
    return GreedyResult(selected, obj.value_, obj.evaluations)


def _vector_steps(p: PackerProblem, budget: int | None, obj: Objective, g0: np.ndarray) -> GreedyResult:
    """The lazy greedy's steps as a few numpy calls each, whatever the number of evaluations (small ``n``).

    ``neg`` holds minus each candidate's bound on its ratio (``+inf``: selected or no longer fitting); every bound
    is the candidate's exact ratio at some earlier step (submodularity: gains only fall).  A step guesses its best
    ratio ``θ`` (:data:`VECTOR_GUESS` × the previous step's) and evaluates every candidate whose bound reaches
    ``θ``, in one call.  If the best exact ratio ``r`` found is at least ``θ``, every other candidate's bound, hence
    its ratio, is below ``r``: the best is the step's.  Otherwise the candidates not yet evaluated whose bound
    reaches ``r`` are evaluated too (a second call); then every candidate that could still tie or beat the best has
    its exact ratio.  Ties go to the lower index, as in the plain greedy: each call's candidates come in index order
    (``argmin`` takes the first) and the two calls' bests compare as (ratio, index).
    """
    n = p.n
    selected: list[int] = []
    if not n:
        return GreedyResult(selected, obj.value_, obj.evaluations)
    remaining = math.inf if budget is None else budget
    costs = p.costs
    neg_scale = -p.scale
    neg = g0 / neg_scale  # = -(g0 / scale), the priority queue's keys; the first step's ratios are exact
    neg[costs > remaining] = math.inf
    largest = int(costs.max())

    def evaluate(idx: np.ndarray) -> tuple[float, int, float]:
        """Exact ratios of the candidates ``idx`` (index order) into ``neg``: the best as (ratio, index, gain)."""
        g = obj.gains(idx)
        r = g / neg_scale[idx]
        neg[idx] = r
        k = int(r.argmin())  # the first of equal ratios: the lowest index
        return r.item(k), idx.item(k), g.item(k)

    w = int(neg.argmin())
    best, gain = float(neg[w]), float(g0[w])
    while best < 0:  # a positive ratio (+inf: nothing left)
        obj.add(w, gain)
        selected.append(w)
        remaining -= int(costs[w])
        neg[w] = math.inf
        if remaining < largest:
            neg[costs > remaining] = math.inf
        guess = VECTOR_GUESS * best
        idx = np.flatnonzero(neg <= guess)
        best, w = math.inf, -1
        if len(idx):
            best, w, gain = evaluate(idx)
        if not best <= guess:  # the best is below the guess (or nothing reached it): bounds in between may win
            if w < 0:
                w = int(neg.argmin())
                if neg[w] == math.inf:
                    break
                idx = np.array([w])
                best, w, gain = evaluate(idx)
            more = neg <= best
            more[idx] = False  # evaluated at this step already
            idx = np.flatnonzero(more)
            if len(idx):
                found = evaluate(idx)
                if found[:2] < (best, w):
                    best, w, gain = found
    return GreedyResult(selected, obj.value_, obj.evaluations)


def plain_greedy(
    p: PackerProblem,
    budget: int | None,
    *,
    max_seconds: float | None = None,
    singletons: np.ndarray | None = None,
) -> GreedyResult:
    """Reference: at every step re-evaluate every remaining feasible candidate (first step shared).

    ``max_seconds`` (benchmarks only) stops early; the result then has ``timed_out=True``.  ``singletons`` as in
    :func:`lazy_greedy`.
    """

    t_end = None if max_seconds is None else time.perf_counter() + max_seconds
    obj = Objective(p)
    gains = (obj.singleton_gains() if singletons is None else singletons).astype(float)
    remaining = math.inf if budget is None else budget
    alive = [i for i in range(p.n) if p.costs[i] <= remaining]
    selected: list[int] = []
    first = True
    while alive:
        if not first:
            gains[alive] = obj.gains(np.array(alive))  # every remaining candidate's gain in one call per term
            if t_end is not None and time.perf_counter() > t_end:
                return GreedyResult(selected, obj.value_, obj.evaluations, timed_out=True)
        first = False
        best, best_ratio = -1, -math.inf
        for i in alive:  # ascending index: strict > keeps the lowest index on ties
            r = gains[i] / p.scale[i]
            if r > best_ratio:
                best, best_ratio = i, r
        if best_ratio <= 0:
            break
        obj.add(best, gains[best])
        selected.append(best)
        remaining -= p.costs[best]
        alive = [i for i in alive if i != best and p.costs[i] <= remaining]
    return GreedyResult(selected, obj.value_, obj.evaluations)


def pack(p: PackerProblem, budget: int | None, *, lazy: bool = True, fallback: bool = True) -> GreedyResult:
    """Greedy (lazy or plain) then the Lin–Bilmes singleton fallback."""
    g0 = Objective(p).singleton_gains()  # the greedy's first step and the fallback's singletons
    res = (lazy_greedy if lazy else plain_greedy)(p, budget, singletons=g0)
    if fallback and p.n:
        feasible = np.flatnonzero(p.costs <= (np.inf if budget is None else budget))
        if len(feasible):
            best = int(feasible[np.argmax(g0[feasible])])
            if g0[best] > res.value + 1e-12:
                return GreedyResult([best], float(g0[best]), res.evaluations, fallback_used=True)
    return res


def build_problem(
    question: str,
    texts_for_relevance: Sequence[str] | None,
    texts_for_similarity: Sequence[str],
    costs: Sequence[int],
    doc_ids: Sequence[str],
    *,
    weights: tuple[float, float, float, float] = (1.0, 1.0, 0.5, 0.5),
    similarity: str = "lexical",
    cost_exponent: float = 1.0,
    titles: Sequence[str | None] | None = None,
    similarity_mode: str = "auto",
    memory_budget: int | None = None,
) -> PackerProblem:
    """The packer's problem for one question's candidates (already in source order).

    ``titles`` (optional, one per candidate) are added to the relevance texts'
    terms; pass them instead of ``title + text`` relevance texts to tokenize each
    sentence once.  ``similarity_mode`` and ``memory_budget`` (bytes) choose how the
    similarity rows are held (precomputed kernel, cached rows or on-demand rows;
    :mod:`rageval.compressors.similarity`): speed and memory, not the selection.
    """
    sim_index = LexicalIndex(texts_for_similarity) if similarity == "lexical" else None
    if titles is not None:
        base = sim_index if sim_index is not None else LexicalIndex(texts_for_similarity)
        tfq, lengths, qidf = pool_query_stats(question, base, titles)
    else:
        base = LexicalIndex(texts_for_relevance)
        tfq, lengths, qidf = pool_query_stats(question, base)
    rel = scale_to_unit(bm25_scores(tfq, lengths, qidf))
    qw = qidf / qidf.sum() if qidf.size and qidf.sum() > 0 else qidf
    query_terms = tfq > 0
    sim = build_similarity(
        similarity, list(texts_for_similarity), index=sim_index, mode=similarity_mode, memory_budget=memory_budget
    )
    doc_codes: dict[str, int] = {}
    docs = np.asarray([doc_codes.setdefault(d, len(doc_codes)) for d in doc_ids], dtype=np.int64)
    w_rel, w_qry, w_cov, w_div = weights
    return PackerProblem(
        costs=np.asarray(costs, dtype=np.int64),
        rel=rel,
        query_terms=query_terms,
        query_weights=qw,
        sim=sim,
        docs=docs,
        weights=(float(w_rel), float(w_qry), float(w_cov), float(w_div)),
        cost_exponent=cost_exponent,
    )


class SubmodularCompressor(BaseCompressor):
    name = "submodular"
    sentence_units = True  # one sentence per unit: packed with the separator (compressors.base)
    # 1.1.0: a gain's last bit no longer depends on the block it is evaluated in (the query-coverage term a product
    # and a row sum), so a selection decided by an exact tie of two different sentences can change
    version = "1.1.0"
    PARAMS: ClassVar[dict[str, Any]] = {
        "w_rel": 1.0,
        "w_qry": 1.0,
        "w_cov": 0.5,
        "w_div": 0.5,
        "similarity": "lexical",
        "use_titles": True,
        "fallback": True,
        "lazy": True,
        "cost_exponent": 1.0,
    }

    def _check_params(self) -> None:
        for k in ("w_rel", "w_qry", "w_cov", "w_div"):
            self._check_number(k, 0.0)
        self._check_number("cost_exponent", 0.0, 1.0)
        if not isinstance(self.params["similarity"], str) or not self.params["similarity"]:
            raise self._param_error("similarity", "give 'lexical', 'minilm' or a local model path")
        for k in ("use_titles", "fallback", "lazy"):
            if not isinstance(self.params[k], bool):
                raise self._param_error(k, "expected true or false")
        self.needs_model = is_model_similarity(self.params["similarity"])

    # This name shadows BaseCompressor.weights (the identity of a model's weights, for the manifest and the record
    # key) with the objective's term weights, so they land in ``config["weights"]`` and the manifest; renaming it
    # changes every submodular record key, which is a decision of its own (hence the ignore).
    @property
    def weights(self) -> tuple[float, float, float, float]:  # type: ignore[override]
        p = self.params
        return float(p["w_rel"]), float(p["w_qry"]), float(p["w_cov"]), float(p["w_div"])

    def problem(self, question, snippets, costs) -> tuple[list[int], PackerProblem]:
        cand = [i for i in source_order(snippets, range(len(snippets))) if costs[i] > 0]
        p = build_problem(
            question,
            None,
            [snippets[i].text for i in cand],
            [costs[i] for i in cand],
            [snippets[i].doc_id for i in cand],
            weights=self.weights,
            similarity=self.params["similarity"],
            cost_exponent=float(self.params["cost_exponent"]),
            titles=[snippets[i].title if self.params["use_titles"] else None for i in cand],
        )
        return cand, p

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        cand, p = self.problem(question, snippets, costs)
        res = pack(p, budget_tokens, lazy=self.params["lazy"], fallback=self.params["fallback"])
        chosen = [cand[k] for k in res.selected]
        return [sentence_unit(snippets[i]) for i in source_order(snippets, chosen)]
