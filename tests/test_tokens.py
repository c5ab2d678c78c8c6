"""One definition of achieved tokens, retrieved tokens and the achieved ratio (``rageval.token_counts``).

Titles count in neither numerator nor denominator, and every path agrees: a
compressor's Context, ``rageval.diagnostics.compression.compression`` and the
``metrics/compression`` evaluate module.  ``identity`` is exactly 1.0 on each.
"""

from pathlib import Path

import pytest
from rageval.compressors import get

from rageval.data import load_examples, sample_path
from rageval.diagnostics.compression import compression
from rageval.retrieval import retrieve
from rageval.token_counts import achieved_ratio, evidence_token_counts, evidence_tokens
from rageval.types import Context, SourceSnippet, Unit

ROOT = Path(__file__).resolve().parents[1]


def test_titles_count_in_neither_numerator_nor_denominator():
    units = [Unit("Paris is big.", ("d0.s0",), title="Paris, France"), {"text": "Lyon.", "title": "Lyon"}]
    snips = [
        SourceSnippet("d0.s0", "Paris is big.", "d0", title="Paris, France"),
        SourceSnippet("d1.s0", "Lyon.", "d1"),
    ]
    assert evidence_token_counts(units, "regex") == [4, 2]
    assert evidence_tokens(units, "regex") == evidence_tokens(snips, None) == 6
    assert evidence_tokens([], "regex") == 0
    assert achieved_ratio(6, 6) == 1.0
    assert achieved_ratio(0, 0) is None and achieved_ratio(3, 0) is None


def test_context_uses_the_one_definition():
    units = [Unit("Paris is big.", ("d0.s0",), title="Paris")]
    ctx = Context.measure(units, tokenizer="regex", retrieved_tokens=8, budget_tokens=5, budget=5)
    assert ctx.achieved_tokens == 4 and ctx.achieved_ratio == 0.5
    assert Context.from_dict(ctx.to_dict()) == ctx
    assert Context((), achieved_tokens=0, retrieved_tokens=0).achieved_ratio is None
    with pytest.raises(TypeError, match=r"Context.units\[0\]"):
        Context.measure(["Paris"], tokenizer="regex", retrieved_tokens=1)


def _identity_inputs(n=4, tokenizer="regex"):
    """Identity contexts for the first HotpotQA sample questions (BM25 over their 10 titled paragraphs)."""
    comp = get("identity")
    ctxs, units, sources = [], [], []
    for ex in load_examples("hotpotqa", sample_path("hotpotqa"), limit=n):
        r = retrieve(ex, method="bm25", k=10)
        ctx = comp.compress(ex.question, r.snippets, None, tokenizer=tokenizer)
        assert all(u.title for u in ctx.units)  # titles present: the case the definitions used to disagree on
        ctxs.append(ctx)
        units.append([u.to_dict() for u in ctx.units])
        sources.append([{"id": s.id, "text": s.text, "title": s.title} for s in r.snippets])
    return ctxs, ["An answer [1]."] * n, units, sources


@pytest.mark.parametrize("tokenizer", ["regex", "whitespace"])
def test_identity_is_exactly_one_through_the_compressor_and_the_diagnostic(tokenizer):
    ctxs, preds, units, sources = _identity_inputs(tokenizer=tokenizer)
    assert [c.achieved_ratio for c in ctxs] == [1.0] * len(ctxs)
    res = compression(preds, units, sources, tokenizer=tokenizer)
    assert res["compression"] == 1.0
    assert [q["compression"] for q in res["per_question"]] == [1.0] * len(ctxs)
    assert [q["achieved_tokens"] for q in res["per_question"]] == [c.achieved_tokens for c in ctxs]
    assert [q["retrieved_tokens"] for q in res["per_question"]] == [c.retrieved_tokens for c in ctxs]


def test_identity_is_exactly_one_through_the_evaluate_module(monkeypatch):
    evaluate = pytest.importorskip("evaluate")
    monkeypatch.chdir(ROOT)
    ctxs, preds, units, sources = _identity_inputs(n=3)
    module = evaluate.load("metrics/compression")
    res = module.compute(predictions=preds, units=units, sources=sources)
    assert res["compression"] == 1.0
    assert [q["compression"] for q in res["per_question"]] == [1.0] * len(ctxs)
    assert [q["achieved_tokens"] for q in res["per_question"]] == [c.achieved_tokens for c in ctxs]


@pytest.mark.parametrize("name, budget", [("naive", 96), ("submodular", 0.25), ("extractive", 160)])
def test_compressed_contexts_agree_with_the_diagnostic(name, budget):
    comp = get(name)
    for ex in load_examples("hotpotqa", sample_path("hotpotqa"), limit=3):
        r = retrieve(ex, method="bm25", k=10)
        ctx = comp.compress(ex.question, r.snippets, budget)
        res = compression(
            ["x [1]."],
            [[u.to_dict() for u in ctx.units]],
            [[{"id": s.id, "text": s.text, "title": s.title} for s in r.snippets]],
        )
        q = res["per_question"][0]
        assert (q["achieved_tokens"], q["retrieved_tokens"]) == (ctx.achieved_tokens, ctx.retrieved_tokens)
        assert q["compression"] == ctx.achieved_ratio < 1.0
