"""The submodular packer: F is monotone submodular, lazy == plain greedy, the fallback, the budget."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rageval.compressors import get
from rageval.compressors.similarity import EmbeddingSimilarity
from rageval.compressors.submodular import Objective, PackerProblem, build_problem, lazy_greedy, pack, plain_greedy

from rageval.types import SourceSnippet

VOCAB = "paris france capital seine louvre museum tower eiffel river city art king war born died film".split()


@st.composite
def problems(draw, max_n=12, lexical=None):
    """Random packer problems: lexical (from random texts) or embedding similarities, random weights."""
    n = draw(st.integers(1, max_n))
    weights = tuple(draw(st.lists(st.floats(0, 2), min_size=4, max_size=4)))
    costs = draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    docs = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    use_lexical = draw(st.booleans()) if lexical is None else lexical
    if use_lexical:
        texts = [" ".join(draw(st.lists(st.sampled_from(VOCAB), min_size=0, max_size=8))) for _ in range(n)]
        question = " ".join(draw(st.lists(st.sampled_from(VOCAB), min_size=0, max_size=5)))
        return build_problem(question, texts, texts, costs, [f"d{d}" for d in docs], weights=weights)
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    emb = rng.normal(size=(n, 4))
    n_q = int(rng.integers(0, 5))
    q_terms = [np.flatnonzero(rng.random(n_q) < 0.4).astype(np.int64) for _ in range(n)]
    qw = rng.random(n_q)
    qw = qw / qw.sum() if n_q else qw
    return PackerProblem(
        costs=np.asarray(costs),
        rel=rng.random(n),
        query_terms=q_terms,
        query_weights=qw,
        sim=EmbeddingSimilarity(emb),
        docs=np.asarray(docs),
        weights=weights,
    )


@st.composite
def problem_and_sets(draw):
    p = draw(problems())
    idx = list(range(p.n))
    b = draw(st.sets(st.sampled_from(idx))) if idx else set()
    a = draw(st.sets(st.sampled_from(sorted(b)))) if b else set()
    x = draw(st.sampled_from(idx))
    return p, sorted(a), sorted(b), x


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_and_sets())
def test_objective_is_monotone_and_submodular(case):
    p, A, B, x = case
    f = Objective(p).value
    assert f(A) <= f(B) + 1e-9  # monotone (A ⊆ B)
    if x not in B:
        assert f(A + [x]) - f(A) >= f(B + [x]) - f(B) - 1e-9  # diminishing returns
    assert f(B + [x]) >= f(B) - 1e-9


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_and_sets())
def test_incremental_gains_match_the_objective(case):
    p, _, B, x = case
    B = [i for i in B if i != x]
    obj = Objective(p)
    for i in B:
        obj.add(i)
    assert obj.value_ == pytest.approx(Objective(p).value(B), abs=1e-9)
    assert obj.gain(x) == pytest.approx(Objective(p).value(sorted(set(B) | {x})) - Objective(p).value(B), abs=1e-9)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_n=25), budget=st.one_of(st.none(), st.integers(1, 150)))
def test_lazy_greedy_selects_the_same_set_as_plain_greedy(p, budget):
    lazy, plain = lazy_greedy(p, budget), plain_greedy(p, budget)
    assert lazy.selected == plain.selected
    assert lazy.value == pytest.approx(plain.value)
    assert lazy.evaluations <= plain.evaluations


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_n=25), budget=st.one_of(st.none(), st.integers(1, 150)), block=st.integers(1, 30))
def test_lazy_greedy_in_blocks_of_any_size_selects_the_plain_greedy_set(p, budget, block):
    """Evaluating stale candidates in blocks changes when they are evaluated, never what is selected."""
    lazy, plain = lazy_greedy(p, budget, block=block), plain_greedy(p, budget)
    assert lazy.selected == plain.selected
    assert lazy.value == plain.value  # the same gains, added in the same order
    assert lazy.evaluations <= plain.evaluations  # a stale candidate is evaluated at most once per step


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=problem_and_sets())
def test_block_gains_are_the_single_gains_bit_for_bit(case):
    p, _, B, _ = case
    obj = Objective(p)
    for i in B:
        obj.add(i)
    before = obj.evaluations
    every = obj.gains(np.arange(p.n))
    assert every.tolist() == [obj.gain(i) for i in range(p.n)]
    assert obj.evaluations - before == 2 * p.n


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_n=40), budget=st.one_of(st.none(), st.integers(1, 200)))
def test_vectorised_steps_select_the_plain_greedy_set(p, budget):
    """The vectorised steps (the default at small n) and the priority queue: the plain greedy's set and gains."""
    vec, queue, plain = (
        lazy_greedy(p, budget, vector=True),
        lazy_greedy(p, budget, vector=False),
        plain_greedy(p, budget),
    )
    assert vec.selected == queue.selected == plain.selected
    assert vec.value == queue.value == plain.value  # the same gains, added in the same order
    assert vec.evaluations <= plain.evaluations  # a candidate is evaluated at most once per step
    # the default up to VECTOR_MAX_N candidates where a block of gains is a few numpy calls (a held kernel)
    default = vec if Objective(p).gathers else queue
    assert lazy_greedy(p, budget).evaluations == default.evaluations


@pytest.mark.parametrize("seed", range(4))
def test_vectorised_steps_on_larger_problems_with_exact_duplicates(seed):
    """150-300 candidates, a third of them exact copies of others (exact ties: the lower index wins), random
    weights and budgets: the vectorised steps, the priority queue and the plain greedy select the same sequence."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(150, 300))
    emb = rng.normal(size=(n, 8))
    emb[rng.integers(0, n, n // 3)] = emb[rng.integers(0, n, n // 3)]
    costs = rng.integers(1, 30, n)
    costs[: n // 2] = costs[n // 2 : 2 * (n // 2)]  # copies of both rows and costs tie exactly
    nq = 4
    p = PackerProblem(
        costs=costs,
        rel=rng.choice([0.0, 0.5, 1.0], n),
        query_terms=[np.flatnonzero(rng.random(nq) < 0.4).astype(np.int64) for _ in range(n)],
        query_weights=np.full(nq, 1 / nq),
        sim=EmbeddingSimilarity(emb),
        docs=rng.integers(0, 5, n),
        weights=tuple(float(w) for w in rng.choice([0.0, 0.5, 1.0], 4)),
    )
    for budget in (40, 400, None):
        vec, queue, plain = (
            lazy_greedy(p, budget, vector=True),
            lazy_greedy(p, budget, vector=False),
            plain_greedy(p, budget),
        )
        assert vec.selected == queue.selected == plain.selected
        assert vec.value == queue.value == plain.value


def test_vectorised_steps_on_a_modular_objective_by_hand():
    """Relevance only: every gain is r_i, so the greedy takes 1.0, 0.9, then the tie 0.5 at the lower index 0.
    Step 2 guesses 0.95 x 1.0: no bound reaches it, so the best bound (3) is evaluated, then every bound >= 0.9
    (none left); step 3 guesses 0.855: the best bound (0, the lower index of the tie) is evaluated, then 2 (its
    bound 0.5 reaches 0.5): 3 evaluations, where the plain greedy makes 3 + 2 = 5."""
    p = PackerProblem(
        costs=np.ones(4, dtype=np.int64),
        rel=np.array([0.5, 1.0, 0.5, 0.9]),
        query_terms=[np.array([], dtype=np.int64)] * 4,
        query_weights=np.zeros(0),
        sim=EmbeddingSimilarity(np.eye(4)),
        docs=np.zeros(4, dtype=np.int64),
        weights=(1.0, 0.0, 0.0, 0.0),
    )
    vec = lazy_greedy(p, 3, vector=True)
    assert vec.selected == [1, 3, 0] == plain_greedy(p, 3).selected
    assert vec.value == pytest.approx(2.4)
    assert (vec.evaluations, plain_greedy(p, 3).evaluations) == (3, 5)


def test_block_size_shrinks_with_the_number_of_candidates():
    from rageval.compressors.submodular import MAX_BLOCK, block_size

    assert block_size(1) == block_size(200) == MAX_BLOCK == 64
    assert (block_size(1_000), block_size(5_000), block_size(100_000)) == (16, 3, 1)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_n=25), budget=st.integers(1, 150))
def test_pack_never_exceeds_the_budget_and_is_at_least_the_best_singleton(p, budget):
    res = pack(p, budget)
    assert sum(int(p.costs[i]) for i in res.selected) <= budget
    assert len(set(res.selected)) == len(res.selected)
    feasible = [i for i in range(p.n) if p.costs[i] <= budget]
    f = Objective(p).value
    assert res.value == pytest.approx(f(res.selected))
    if feasible:
        assert res.value >= max(f([i]) for i in feasible) - 1e-9


def test_lin_bilmes_fallback_wins_on_a_constructed_case():
    # one long sentence holds all the value; a cheap sentence has a better gain per token,
    # so greedy takes it first and the long one no longer fits
    p = PackerProblem(
        costs=np.array([10, 1]),
        rel=np.array([1.0, 0.2]),
        query_terms=[np.array([], dtype=np.int64)] * 2,
        query_weights=np.zeros(0),
        sim=EmbeddingSimilarity(np.eye(2)),
        docs=np.array([0, 1]),
        weights=(1.0, 0.0, 0.0, 0.0),
    )
    greedy = lazy_greedy(p, 10)
    assert greedy.selected == [1] and greedy.value == pytest.approx(0.2)
    res = pack(p, 10)
    assert res.fallback_used and res.selected == [0] and res.value == pytest.approx(1.0)
    assert pack(p, 10, fallback=False).selected == [1]


def test_fallback_wins_through_the_compressor_too():
    snips = [
        SourceSnippet(
            "d0.s0",
            "Marie Curie won the Nobel Prize in Physics and in Chemistry in Paris",
            "d0",
            title="Curie",
            position=0,
        ),
        SourceSnippet("d1.s0", "Curie", "d1", title="Curie", position=0),
    ]
    q = "Which Nobel Prize did Marie Curie win in Paris, Physics or Chemistry?"
    c = get("submodular", w_qry=0.0, w_cov=0.0, w_div=0.0, use_titles=False)
    _cand, p = c.problem(q, snips, [13, 1])
    assert lazy_greedy(p, 13).selected == [1]  # cheap ratio first, then the long one cannot fit
    ctx = c.compress(q, snips, 13)
    assert [u.source_ids for u in ctx.units] == [("d0.s0",)]
    no_fb = get("submodular", w_qry=0.0, w_cov=0.0, w_div=0.0, use_titles=False, fallback=False)
    assert [u.source_ids for u in no_fb.compress(q, snips, 13).units] == [("d1.s0",)]


def test_near_duplicates_cannot_game_representativeness():
    texts = ["louvre museum paris", "louvre museum paris", "eiffel tower paris", "seine river paris"]
    p = build_problem("q", texts, texts, [3, 3, 3, 3], ["d0", "d1", "d2", "d3"], weights=(0, 0, 1, 0))
    f = Objective(p).value
    assert f([0, 1]) == pytest.approx(f([0]))  # the copy adds nothing
    assert f([0, 2]) > f([0, 1])


def test_diversity_spreads_selection_across_documents():
    texts = ["paris capital", "paris capital city", "paris capital france"]
    p = build_problem("paris capital", texts, texts, [2, 3, 3], ["d0", "d0", "d1"], weights=(0, 0, 0, 1))
    f = Objective(p).value
    assert f([0, 2]) > f([0, 1])


def test_query_coverage_prefers_complementary_sentences():
    texts = ["gallu demon", "gallu demon", "lilu spirit"]
    p = build_problem("gallu lilu", texts, texts, [2, 2, 2], ["d0", "d1", "d2"], weights=(0, 1, 0, 0))
    assert sorted(pack(p, 4).selected) == [0, 2]


def test_compressor_lazy_and_plain_give_identical_contexts():
    import json
    from pathlib import Path

    from rageval.data import passage_to_snippets

    data = json.loads(
        (
            Path(__file__).resolve().parents[1] / "src/rageval/data/samples/hotpotqa/hotpotqa_train100_distractor.json"
        ).read_text()
    )
    for ex in data[:8]:
        snips = []
        for r, (title, sents) in enumerate(ex["context"]):
            snips += passage_to_snippets(sents, doc_id=f"d{r}", title=title, doc_rank=r)
        for budget in (96, 224):
            a = get("submodular").compress(ex["question"], snips, budget)
            b = get("submodular", lazy=False).compress(ex["question"], snips, budget)
            assert a == b


@settings(max_examples=40, deadline=None)
@given(
    texts=st.lists(st.lists(st.sampled_from(VOCAB + ["the", "of"]), max_size=8).map(" ".join), min_size=1, max_size=8),
    titles=st.lists(st.sampled_from(["Paris", "Louvre museum", "", "King of France"]), min_size=8, max_size=8),
    question=st.lists(st.sampled_from(VOCAB + ["the", "which"]), max_size=6).map(" ".join),
)
def test_title_aware_relevance_equals_an_index_over_title_plus_text(texts, titles, question):
    from rageval.compressors.lexical import LexicalIndex, bm25_scores, pool_query_stats, scale_to_unit

    titles = titles[: len(texts)]
    tf, lengths, idf = pool_query_stats(question, LexicalIndex(texts), titles)
    joined = LexicalIndex([f"{t}. {x}" if t else x for t, x in zip(titles, texts)])
    assert np.allclose(scale_to_unit(bm25_scores(tf, lengths, idf)), joined.relevance(question))
    qids = joined.query_term_ids(question)
    assert np.allclose(idf, joined.idf[qids]) and np.array_equal(tf, joined.term_counts(qids))
