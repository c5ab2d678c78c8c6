"""Compressors: registry, budgets, bad input, honest provenance, per-strategy rules (model-free)."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rageval.compressors import (
    BudgetError,
    CompressorConfigError,
    SnippetError,
    get,
    names,
    resolve_budget,
)

from rageval.data import passage_to_snippets
from rageval.text import get_tokenizer
from rageval.types import SourceSnippet

ROOT = Path(__file__).resolve().parents[1]
HOTPOT = ROOT / "src/rageval/data/samples/hotpotqa/hotpotqa_train100_distractor.json"
MODEL_FREE = ["identity", "naive", "rerank", "extractive", "focused", "mmr", "ecr", "submodular", "token_prune"]
PACKERS = ["naive", "rerank", "extractive", "focused", "mmr", "ecr", "submodular", "token_prune"]
SENTENCE_LEVEL = ["extractive", "mmr", "submodular"]
TOK = get_tokenizer("regex")


def hotpot(k=0):
    ex = json.loads(HOTPOT.read_text())[k]
    snips = []
    for r, (title, sents) in enumerate(ex["context"]):
        snips += passage_to_snippets(sents, doc_id=f"d{r}", title=title, doc_rank=r)
    return ex["question"], snips


def snip(doc, pos, text, rank=None, title=None):
    return SourceSnippet(
        f"d{doc}.s{pos}",
        text,
        f"d{doc}",
        title=title or f"Doc {doc}",
        position=pos,
        doc_rank=doc if rank is None else rank,
    )


# ----------------------------------------------------------------------------- registry


def test_registry_lists_the_ten_strategies():
    assert names() == sorted(
        [
            "identity",
            "naive",
            "rerank",
            "extractive",
            "abstractive",
            "token_prune",
            "ecr",
            "mmr",
            "focused",
            "submodular",
            "given",  # the units a dataset file gives (docs/score.md#suites-that-read-the-same-files)
        ]
    )


def test_unknown_name_and_parameter_suggest_the_fix():
    with pytest.raises(CompressorConfigError, match="Did you mean 'submodular'"):
        get("submodluar")
    with pytest.raises(CompressorConfigError, match="Did you mean 'lambda_'"):
        get("mmr", lambd=0.5)
    with pytest.raises(CompressorConfigError, match="threshold=1.5"):
        get("ecr", threshold=1.5)
    with pytest.raises(CompressorConfigError, match="w_div"):
        get("submodular", w_div=-1)
    with pytest.raises(CompressorConfigError, match="needs model="):
        get("token_prune", backend="token_classifier")
    with pytest.raises(CompressorConfigError, match="xlm-roberta-large"):
        get("token_prune", backend="llmlingua2", model="/models/my-pruner")
    with pytest.raises(CompressorConfigError, match="model="):
        get("abstractive")


def test_mmr_accepts_lambda_as_written_in_a_suite():
    assert get("mmr", **{"lambda": 0.5}).params["lambda_"] == 0.5
    with pytest.raises(CompressorConfigError, match="not both"):
        get("mmr", **{"lambda": 0.5, "lambda_": 0.6})


def test_needs_model_follows_parameters():
    assert all(not get(n).needs_model for n in MODEL_FREE)
    assert get("mmr", similarity="minilm").needs_model
    assert get("rerank", scorer="cross-encoder:/x").needs_model
    assert get("token_prune", backend="token_classifier", model="/x").needs_model
    assert get("abstractive", model="/x").needs_model


def test_importing_compressors_does_not_import_torch():
    code = (
        "import sys, rageval.compressors as c\n"
        "for n in c.names():\n    c.compressor_class(n)\n"
        "c.get('submodular').compress('q?', [])\n"
        "print(sorted(m for m in ('torch', 'transformers', 'llmlingua') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_model_id_names_the_model_of_model_backed_settings():
    assert get("submodular").model_id is None
    assert get("mmr", similarity="minilm").model_id == "minilm"
    assert get("token_prune", backend="token_classifier", model="/ckpt").model_id == "/ckpt"


def test_config_records_name_version_and_defaults():
    cfg = get("mmr").config
    assert cfg["name"] == "mmr" and cfg["params"]["lambda_"] == 0.7 and cfg["version"]


# ----------------------------------------------------------------------------- budgets


def test_budget_resolution():
    assert resolve_budget(160, retrieved_tokens=1000) == 160
    assert resolve_budget(0.25, retrieved_tokens=1000) == 250
    assert resolve_budget(1.0, retrieved_tokens=7) == 7
    assert resolve_budget(0.01, retrieved_tokens=7) == 1
    assert resolve_budget(None, retrieved_tokens=7) is None


@pytest.mark.parametrize("bad", [0, -5, 0.0, -0.5, 1.5, float("nan"), True, "160", [160]])
def test_invalid_budgets_are_rejected_with_the_fix(bad):
    q, snips = hotpot()
    with pytest.raises(BudgetError, match=r"^budget \S+ is "):
        get("naive").compress(q, snips, bad)


def test_context_records_nominal_budget_achieved_tokens_and_ratio():
    q, snips = hotpot()
    retrieved = sum(TOK.count(s.text) for s in snips)
    ctx = get("submodular").compress(q, snips, 0.25, tokenizer="regex")
    assert ctx.budget == 0.25 and ctx.budget_tokens == int(0.25 * retrieved)
    assert ctx.retrieved_tokens == retrieved
    assert ctx.achieved_tokens == sum(TOK.count(u.text) for u in ctx.units) <= ctx.budget_tokens
    assert ctx.achieved_ratio == pytest.approx(ctx.achieved_tokens / retrieved)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("name", MODEL_FREE)
def test_empty_snippet_list_gives_a_defined_empty_context(name):
    ctx = get(name).compress("Who?", [], 100)
    assert ctx.units == () and ctx.achieved_tokens == 0 and ctx.retrieved_tokens == 0
    assert ctx.achieved_ratio is None


@pytest.mark.parametrize("name", PACKERS)
def test_budget_smaller_than_every_snippet_gives_an_empty_context(name):
    snips = [
        snip(0, 0, "Paris is the capital and largest city of France."),
        snip(1, 0, "Berlin is the capital of Germany since reunification."),
    ]
    ctx = get(name).compress("capital of France?", snips, 3)
    if name == "token_prune":  # prunes below the sentence: fills the 3 tokens exactly
        assert ctx.achieved_tokens <= 3 and all(u.source_ids is None for u in ctx.units)
    elif name == "naive":  # leading-sentence rule: no whole sentence fits
        assert ctx.units == ()
    else:
        assert ctx.units == ()
    assert ctx.budget_tokens == 3


@pytest.mark.parametrize("name", MODEL_FREE)
def test_duplicate_ids_are_rejected(name):
    snips = [snip(0, 0, "One."), snip(0, 0, "Other.")]
    with pytest.raises(SnippetError, match=r"duplicate snippet id 'd0.s0' at snippets\[0\] and snippets\[1\]"):
        get(name).compress("q", snips, 10)


@pytest.mark.parametrize("name", MODEL_FREE)
def test_non_text_inputs_are_type_errors(name):
    with pytest.raises(TypeError, match="question must be a string"):
        get(name).compress(None, [snip(0, 0, "x")], 10)
    with pytest.raises(TypeError, match=r"snippets\[1\]"):
        get(name).compress("q", [snip(0, 0, "x"), 42], 10)
    with pytest.raises(TypeError, match="text must be a string"):
        get(name).compress("q", [{"id": "d0.s0", "text": 3}], 10)


def test_dict_snippets_are_accepted_and_empty_texts_never_emitted():
    snips = [{"id": "d0.s0", "text": "Paris is in France."}, {"id": "d0.s1", "text": "   "}]
    for name in MODEL_FREE:
        ctx = get(name).compress("Where is Paris?", snips, None)
        assert all(u.text.strip() for u in ctx.units), name
        declared = {i for u in ctx.units for i in (u.source_ids or ())}
        assert "d0.s1" not in declared


# ----------------------------------------------------------------------------- provenance honesty


@pytest.mark.parametrize("name", MODEL_FREE)
@pytest.mark.parametrize("budget", [40, 96, 0.3, None])
def test_declared_provenance_is_exactly_the_text_the_unit_contains(name, budget):
    q, snips = hotpot(3)
    by_id = {s.id: s for s in snips}
    ctx = get(name).compress(q, snips, budget)
    for u in ctx.units:
        if name == "token_prune":
            assert u.source_ids is None
            continue
        assert u.source_ids, name
        assert all(i in by_id for i in u.source_ids)
        members = [by_id[i] for i in u.source_ids]
        assert u.title == members[0].title
        if name == "ecr":
            assert u.text == members[0].text  # the representative, verbatim
        elif name in SENTENCE_LEVEL:
            assert len(members) == 1 and u.text == members[0].text
        else:  # document-level units: their sentences, in order, joined
            assert len({m.doc_id for m in members}) == 1
            assert u.text == " ".join(m.text for m in members)
            assert [m.position for m in members] == sorted(m.position for m in members)


@pytest.mark.parametrize("name", ["extractive", "focused", "mmr", "ecr", "submodular"])
def test_selected_sentences_are_emitted_in_source_order(name):
    q, snips = hotpot(5)
    by_id = {s.id: s for s in snips}
    ctx = get(name).compress(q, snips, 150)
    keys = [(by_id[u.source_ids[0]].doc_rank, by_id[u.source_ids[0]].position) for u in ctx.units]
    assert keys == sorted(keys)


# ----------------------------------------------------------------------------- budgets are never exceeded

words = st.sampled_from("paris france capital river seine city museum louvre tower eiffel the of is a in . ,".split())
sentence = st.lists(words, min_size=0, max_size=25).map(" ".join)


@st.composite
def snippet_sets(draw):
    n_docs = draw(st.integers(1, 5))
    out = []
    for d in draw(st.permutations(range(n_docs))):
        for p in range(draw(st.integers(1, 5))):
            out.append(snip(d, p, draw(sentence), rank=d))
    return out


@pytest.mark.parametrize("name", PACKERS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snips=snippet_sets(), budget=st.one_of(st.integers(1, 120), st.floats(0.01, 1.0)))
def test_packers_never_exceed_the_budget(name, snips, budget):
    ctx = get(name).compress("What is the capital city of France on the Seine?", snips, budget)
    assert ctx.budget_tokens is not None
    assert ctx.achieved_tokens <= ctx.budget_tokens
    assert ctx.achieved_tokens == sum(TOK.count(u.text) for u in ctx.units)


def test_subword_tokenizer_budget_is_still_respected(tmp_path):
    """With a tokenizer whose counts are not additive over joined sentences, the guard trims whole steps."""
    tokenizers = pytest.importorskip("tokenizers")
    from transformers import PreTrainedTokenizerFast

    q, snips = hotpot(2)
    corpus = [s.text for s in snips]
    tk = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="[UNK]"))
    tk.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tk.train_from_iterator(corpus, tokenizers.trainers.BpeTrainer(vocab_size=300, special_tokens=["[UNK]"]))
    PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]").save_pretrained(tmp_path / "tok")
    tok = get_tokenizer(str(tmp_path / "tok"))
    for name in PACKERS:
        for budget in (30, 97, 0.2):
            ctx = get(name).compress(q, snips, budget, tokenizer=tok)
            assert ctx.achieved_tokens <= ctx.budget_tokens, (name, budget)


# ----------------------------------------------------------------------------- strategy rules


def test_naive_keeps_leading_sentences_of_the_first_document_that_does_not_fit_then_stops():
    snips = [
        snip(0, 0, "a b c d e"),
        snip(0, 1, "f g h"),
        snip(1, 0, "i j k"),
        snip(1, 1, "l m n o p q r s"),
        snip(2, 0, "t"),
    ]
    ctx = get("naive").compress("q", snips, 12)
    assert [u.source_ids for u in ctx.units] == [("d0.s0", "d0.s1"), ("d1.s0",)]
    assert ctx.units[1].text == "i j k"
    skip = get("naive", partial="skip").compress("q", snips, 12)
    assert [u.source_ids for u in skip.units] == [("d0.s0", "d0.s1"), ("d2.s0",)]
    stop = get("naive", partial="stop").compress("q", snips, 12)
    assert [u.source_ids for u in stop.units] == [("d0.s0", "d0.s1")]


def test_naive_follows_retrieval_rank_not_input_order():
    snips = [snip(0, 0, "zero", rank=1), snip(1, 0, "one", rank=0)]
    assert get("naive").compress("q", snips, 1).units[0].source_ids == ("d1.s0",)


def test_rerank_moves_the_relevant_document_first():
    snips = [snip(0, 0, "Bananas are yellow fruit."), snip(1, 0, "The Eiffel Tower stands in Paris.")]
    ctx = get("rerank").compress("Where is the Eiffel Tower?", snips, 7)
    assert ctx.units[0].source_ids == ("d1.s0",)
    both = get("rerank", order="source").compress("Where is the Eiffel Tower?", snips, None)
    assert [u.source_ids for u in both.units] == [("d0.s0",), ("d1.s0",)]


def test_focused_takes_a_plus_minus_one_window_around_the_best_sentence():
    snips = [
        snip(0, p, t)
        for p, t in enumerate(
            [
                "Intro words here.",
                "He moved to the city.",
                "The Louvre museum opened in 1793.",
                "It is large.",
                "Unrelated tail sentence.",
            ]
        )
    ]
    ctx = get("focused").compress("When did the Louvre museum open?", snips, 17)
    assert [u.source_ids for u in ctx.units] == [("d0.s1", "d0.s2", "d0.s3")]
    assert ctx.units[0].text == "He moved to the city. The Louvre museum opened in 1793. It is large."
    narrow = get("focused", window=0).compress("When did the Louvre museum open?", snips, 9)
    assert [u.source_ids for u in narrow.units] == [("d0.s2",)]


def test_focused_falls_back_to_the_sentence_alone_when_its_window_does_not_fit():
    snips = [
        snip(0, 0, "one two three four five six seven eight nine"),
        snip(0, 1, "Louvre museum."),
        snip(0, 2, "ten eleven twelve thirteen fourteen fifteen"),
    ]
    ctx = get("focused").compress("Louvre museum?", snips, 5)
    assert [u.source_ids for u in ctx.units] == [("d0.s1",)]


def test_mmr_lambda_trades_relevance_for_novelty():
    snips = [
        snip(0, 0, "The Louvre museum in Paris."),
        snip(1, 0, "The Louvre museum in Paris, France."),
        snip(2, 0, "The museum has the Mona Lisa."),
    ]
    q = "Louvre museum Paris France"
    rel_only = get("mmr", lambda_=1.0).compress(q, snips, 15)
    diverse = get("mmr", lambda_=0.3).compress(q, snips, 15)
    assert {u.source_ids[0] for u in rel_only.units} == {"d0.s0", "d1.s0"}
    assert "d2.s0" in {u.source_ids[0] for u in diverse.units}


def test_ecr_emits_the_most_relevant_member_and_declares_the_whole_cluster():
    snips = [
        snip(0, 0, "The Louvre museum is in Paris."),
        snip(1, 0, "The Louvre museum is in Paris!"),
        snip(2, 0, "Paris is the capital of France and the Louvre museum is in Paris."),
        snip(3, 0, "Bananas grow in warm climates."),
    ]
    ctx = get("ecr").compress("Where is the Louvre museum?", snips, None)
    dup = [u for u in ctx.units if len(u.source_ids) > 1]
    assert len(dup) == 1 and set(dup[0].source_ids) == {"d0.s0", "d1.s0"}
    assert dup[0].text == {s.id: s.text for s in snips}[dup[0].source_ids[0]]
    loose = get("ecr", threshold=0.1).compress("Where is the Louvre museum?", snips, None)
    assert len(loose.units) < len(ctx.units)


def test_identity_keeps_everything_and_records_but_does_not_enforce_the_budget():
    q, snips = hotpot()
    ctx = get("identity").compress(q, snips, 50)
    assert sorted(i for u in ctx.units for i in u.source_ids) == sorted(s.id for s in snips)
    assert ctx.budget_tokens == 50 and ctx.achieved_tokens == ctx.retrieved_tokens
    assert len(get("identity", level="sentence").compress(q, snips).units) == len(snips)


def test_token_prune_drops_stopwords_first_and_declares_nothing():
    q, snips = hotpot(1)
    ctx = get("token_prune").compress(q, snips, 0.3)
    assert ctx.units and all(u.source_ids is None for u in ctx.units)
    assert ctx.achieved_tokens == ctx.budget_tokens  # word-level pruning fills the budget exactly
    kept = " ".join(u.text for u in ctx.units).lower().split()
    assert sum(w in ("the", "of", "and", "a", "is") for w in kept) == 0
    assert {u.title for u in ctx.units} <= {s.title for s in snips}


def test_token_prune_keeps_original_spacing_between_kept_neighbours():
    snips = [snip(0, 0, "Marie Curie's laboratory, in Paris.")]
    ctx = get("token_prune").compress("q", snips, None)  # rate 0.5 of 9 tokens
    assert ctx.achieved_tokens == 4
    full = get("token_prune", rate=1.0).compress("q", snips, None)
    assert full.units[0].text == "Marie Curie's laboratory, in Paris."


def test_no_model_free_compressor_crashes_on_the_whole_sample():
    data = json.loads(HOTPOT.read_text())[:8]
    for k in range(len(data)):
        q, snips = hotpot(k)
        for name in MODEL_FREE:
            for budget in (96, 0.1):
                ctx = get(name).compress(q, snips, budget)
                assert math.isfinite(ctx.achieved_ratio)


def test_documents_sharing_a_rank_are_not_interleaved():
    snips = [
        {"id": "a.s0", "text": "Paris is big."},
        {"id": "a.s1", "text": "Paris has museums.", "position": 1},
        {"id": "b.s0", "text": "Paris is in France."},
    ]
    for name in ("extractive", "mmr", "submodular"):
        ctx = get(name).compress("Paris?", snips, None)
        assert [u.source_ids[0] for u in ctx.units] == ["a.s0", "a.s1", "b.s0"], name


def test_token_prune_with_a_token_to_source_map_declares_the_sentence_each_unit_came_from():
    q, snips = hotpot(1)
    by_id = {s.id: s for s in snips}
    ctx = get("token_prune", provenance="sentence").compress(q, snips, 0.3)
    assert ctx.units and ctx.achieved_tokens <= ctx.budget_tokens
    for u in ctx.units:
        assert len(u.source_ids) == 1
        src = TOK.tokenize(by_id[u.source_ids[0]].text)
        kept = TOK.tokenize(u.text)
        it = iter(src)
        assert all(tok in it for tok in kept)  # the unit's tokens are a subsequence of its declared sentence
    with pytest.raises(CompressorConfigError, match="token-to-source map"):
        get("token_prune", backend="llmlingua2", model="/m/xlm-roberta-large", provenance="sentence")
