"""rageval.bm25: the one BM25 (hand-computed scores, ties, empty pools, its callers agree)."""

import json
import math

import numpy as np
import pytest

from rageval.bm25 import PARAMS, BM25Index, BM25Params, idf, stopwords, term_scores, tokenize
from rageval.data import load_examples, sample_path

# three texts, 9 tokens: avgdl = 3
DOCS = ["apple banana apple", "banana cherry", "cherry date fig grape"]


def test_tokenizer_drops_stopwords_short_tokens_and_case():
    assert tokenize("The Eiffel Tower, in PARIS; a 1 x 42") == ["eiffel", "tower", "paris", "42"]
    assert tokenize("and the of") == [] and tokenize("") == []
    assert [tokenize(d) for d in DOCS] == [
        ["apple", "banana", "apple"],
        ["banana", "cherry"],
        ["cherry", "date", "fig", "grape"],
    ]
    assert {"the", "and", "is"} <= stopwords()


def test_every_caller_uses_retrievals_parameters_and_bm25s_default_is_lucene():
    import bm25s

    assert PARAMS["retrieval"] == BM25Params(k1=1.5, b=0.75) == BM25Params()
    assert PARAMS["recovery"] == PARAMS["lexical"] == PARAMS["retrieval"]
    default = bm25s.BM25()
    assert (default.method, default.k1, default.b) == ("lucene", 1.5, 0.75)


def test_scores_equal_the_formula_computed_by_hand():
    idx = BM25Index(DOCS)
    # "apple": df=1 of N=3 -> idf = ln(1 + 2.5/1.5) = ln(8/3); d0: tf=2, |d|=avgdl -> 2 / (2 + 1.5)
    assert idx.scores("apple") == pytest.approx([math.log(8 / 3) * 2 / 3.5, 0.0, 0.0], rel=1e-6)
    # "banana cherry": both df=2 -> idf = ln(1.6); length factors 1.5*(0.25 + 0.75*|d|/3)
    i = math.log(1.6)
    want = [i * 1 / (1 + 1.5), 2 * i / (1 + 1.5 * (0.25 + 0.5)), i / (1 + 1.5 * (0.25 + 1.0))]
    assert idx.scores("Banana? Cherry!") == pytest.approx(want, rel=1e-6)
    # a repeated query term counts twice (as in bm25s); a list of tokens is used as given
    assert idx.scores("apple apple") == pytest.approx(2 * idx.scores("apple"), rel=1e-6)
    assert idx.scores(["apple"]) == pytest.approx(idx.scores("apple apple") / 2, rel=1e-6)


def test_other_parameters_are_honoured():
    idx = BM25Index(DOCS, BM25Params(k1=1.2, b=0.0))
    assert idx.scores("apple")[0] == pytest.approx(math.log(8 / 3) * 2 / (2 + 1.2), rel=1e-6)
    with pytest.raises(TypeError, match="BM25Params"):
        BM25Index(DOCS, {"k1": 1.2})
    with pytest.raises(TypeError, match="not one string"):
        BM25Index("apple banana")


def test_search_ranks_ties_by_pool_index_and_keeps_zero_scores_at_the_end():
    idx = BM25Index(["red fish", "blue whale", "red fish", "green tree"])
    hits = idx.search("red")
    assert [i for i, _ in hits] == [0, 2, 1, 3]
    assert hits[0][1] == hits[1][1] > 0 and hits[2][1] == hits[3][1] == 0.0
    assert [i for i, _ in idx.search("red", k=3)] == [0, 2, 1]
    assert idx.top("red", 5) == [0, 2] and idx.top("red", 1) == [0]
    assert idx.top("whale fish", 5) == [1, 0, 2]  # "whale" is rarer than "fish" in this pool


def test_empty_pools_and_queries_score_zero():
    empty = BM25Index([])
    assert empty.scores("apple").shape == (0,) and empty.search("apple") == [] and empty.top("apple", 3) == []
    assert len(empty) == 0
    stop = BM25Index(["the and", "of a", ""])
    assert list(stop.scores("the apple")) == [0.0, 0.0, 0.0] and stop.top("the apple", 3) == []
    assert [i for i, _ in stop.search("the apple")] == [0, 1, 2]
    idx = BM25Index(DOCS)
    assert list(idx.scores("the and of")) == [0.0, 0.0, 0.0]  # only stopwords
    assert list(idx.scores("kiwi")) == [0.0, 0.0, 0.0]  # no query term in the pool
    assert idx.top("the and of", 3) == [] and [i for i, _ in idx.search("kiwi")] == [0, 1, 2]


def test_term_scores_from_counts_equal_the_index():
    ex = load_examples("hotpotqa", sample_path("hotpotqa"), limit=3)[2]
    texts = [s.text for d in ex.documents for s in d.snippets]
    toks = [tokenize(t) for t in texts]
    q = list(dict.fromkeys(tokenize(ex.question)))
    tf = np.asarray([[t.count(w) for w in q] for t in toks], dtype=float)
    df = (tf > 0).sum(axis=0)
    lengths = np.asarray([len(t) for t in toks], dtype=float)
    got = term_scores(tf, lengths, idf(len(texts), df), PARAMS["lexical"])
    assert got.max() > 0
    assert np.allclose(got, BM25Index(texts, PARAMS["lexical"]).scores(q), rtol=1e-5, atol=1e-6)
    assert BM25Index(toks).scores(q) == pytest.approx(BM25Index(texts).scores(q))  # pre-tokenized pool
    assert term_scores(np.zeros((2, 0)), np.ones(2), np.zeros(0)).tolist() == [0.0, 0.0]
    assert idf(10, 10) > 0  # always positive


def test_retrieval_index_is_a_thin_use_of_the_one_index():
    from rageval.retrieval import BM25Index as DocIndex

    ex = load_examples("hotpotqa", sample_path("hotpotqa"), limit=1)[0]
    docs = DocIndex(ex.documents)
    plain = BM25Index([f"{d.title}\n{d.text}" for d in ex.documents], PARAMS["retrieval"])
    assert docs.name == "bm25(k1=1.5,b=0.75)"
    assert docs.search(ex.question) == plain.search(ex.question)


def test_recovery_finds_a_sentence_from_its_own_words():
    ex = load_examples("hotpotqa", sample_path("hotpotqa"), limit=1)[0]
    texts = [s.text for d in ex.documents for s in d.snippets]
    idx = BM25Index(texts, PARAMS["recovery"])
    found = 0
    for i, t in enumerate(texts):
        top = idx.top(t, 10)
        assert len(top) <= 10 and all(idx.scores(t)[j] > 0 for j in top)
        found += bool(top) and texts[top[0]] == t
    assert found >= 0.9 * sum(bool(tokenize(t)) for t in texts)


def test_lexical_relevance_and_calibration_use_the_one_index():
    from rageval.compressors.lexical import LexicalIndex, bm25_scores, pool_query_stats

    from rageval.calibrate.core import _premise

    texts = ["Paris is the capital of France.", "Berlin is in Germany.", "Paris, Texas, is in Texas."]
    q = "Is Paris in Texas? Paris!"
    raw = BM25Index(texts, PARAMS["lexical"]).scores(list(dict.fromkeys(tokenize(q))))
    assert LexicalIndex(texts).bm25(q) == pytest.approx(raw)
    assert LexicalIndex(texts).relevance(q) == pytest.approx(raw / raw.max())
    tf, lengths, qidf = pool_query_stats(q, LexicalIndex(texts))
    assert np.allclose(bm25_scores(tf, lengths, qidf), raw, rtol=1e-5)

    row = json.loads(sample_path("wice").read_text().splitlines()[0])
    ev = [s for s in row["evidence"] if isinstance(s, str) and s.strip()]
    assert len(ev) > 5
    top = BM25Index(ev, PARAMS["recovery"]).top(row["claim"], 5)
    assert _premise(row, "bm25", 5) == "\n".join(ev[i] for i in sorted(top))
