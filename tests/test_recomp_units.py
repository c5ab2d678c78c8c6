"""RECOMP units (compressors/abstractive.py, docs/compressors.md): one summary unit per retrieved document by
default and in the paper suites, the single-summary mode as an option.  A tiny T5 is built here, saved with
``save_pretrained`` and loaded through the compressor's own code; its generation config suppresses the special
tokens so every summary is non-empty (gibberish, but four tokens long), which makes the unit counts exact."""

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from rageval.compressors import get  # noqa: E402
from rageval.compressors.abstractive import recomp_prompt  # noqa: E402
from rageval.compressors.base import join_sentences  # noqa: E402
from rageval.suite.load import load_suite  # noqa: E402
from rageval.suite.runner import run_suite  # noqa: E402
from rageval.data import passage_to_snippets  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HOTPOT = ROOT / "src/rageval/data/samples/hotpotqa/hotpotqa_train100_distractor.json"


def hotpot(n_docs=4):
    ex = json.loads(HOTPOT.read_text())[0]
    snips = []
    for r, (title, sents) in enumerate(ex["context"][:n_docs]):
        snips += passage_to_snippets(sents, doc_id=f"d{r}", title=title, doc_rank=r)
    return ex["question"], snips


@pytest.fixture(scope="module")
def t5(tmp_path_factory):
    import torch
    from tokenizers import SentencePieceUnigramTokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import GenerationConfig, PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    q, snips = hotpot()
    sp = SentencePieceUnigramTokenizer()
    corpus = [q] + [s.text for s in snips] + ["Question: Document: Summary:"]
    specials = ["<pad>", "<s>", "</s>", "<unk>"]
    sp.train_from_iterator(corpus * 3, vocab_size=200, special_tokens=specials, unk_token="<unk>", show_progress=False)
    sp.post_processor = TemplateProcessing(single="$A </s>", special_tokens=[("</s>", sp.token_to_id("</s>"))])
    tok = PreTrainedTokenizerFast(
        tokenizer_object=sp, eos_token="</s>", unk_token="<unk>", pad_token="<pad>", bos_token="<s>"
    )
    torch.manual_seed(0)
    cfg = T5Config(
        vocab_size=len(tok),
        d_model=16,
        d_kv=8,
        d_ff=32,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id,
    )
    model = T5ForConditionalGeneration(cfg)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=tok.pad_token_id,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        # never end or emit an empty piece: every summary has text, so unit counts are exact
        suppress_tokens=[tok.convert_tokens_to_ids(t) for t in [*specials, "▁"]],
    )
    path = tmp_path_factory.mktemp("ckpt") / "tiny-recomp-t5"
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def _docs(snips):
    """(title, text) per document in retrieval order, its sentences joined as a unit joins them."""
    out = {}
    for s in snips:
        out.setdefault(s.doc_id, (s.title, []))[1].append(s.text)
    return [(t, join_sentences(texts)) for t, texts in out.values()]


def _spy(comp):
    """Record every prompt the compressor sends to its model (the model still runs)."""
    seen = []
    real = comp.summarize

    def summarize(prompts):
        seen.append(list(prompts))
        return real(prompts)

    comp.summarize = summarize
    return seen


def test_default_is_one_summary_unit_per_retrieved_document_in_retrieval_order(t5):
    q, snips = hotpot()
    comp = get("abstractive", model=t5, max_new_tokens=4)
    assert comp.params["per_document"] is True
    seen = _spy(comp)
    ctx = comp.compress(q, snips, 0.25)
    # 4 retrieved documents -> 4 prompts, each RECOMP's prompt with that document alone, in retrieval order
    assert seen == [[recomp_prompt(q, [d]) for d in _docs(snips)]]
    assert len(ctx.units) == 4
    assert all(u.source_ids is None and u.title is None and u.text for u in ctx.units)
    assert not ctx.declares_any_provenance
    assert ctx.budget == 0.25  # recorded, not enforced


def test_single_summary_mode_is_kept_as_an_option(t5):
    q, snips = hotpot()
    comp = get("abstractive", model=t5, max_new_tokens=4, per_document=False)
    seen = _spy(comp)
    ctx = comp.compress(q, snips, None)
    assert seen == [[recomp_prompt(q, _docs(snips))]]
    assert len(ctx.units) == 1 and ctx.units[0].source_ids is None


def test_a_document_whose_summary_is_empty_gives_no_unit_and_order_is_kept(t5):
    q, snips = hotpot()
    comp = get("abstractive", model=t5, max_new_tokens=4)
    comp.summarize = lambda prompts: ["first", "", "third", "fourth"][: len(prompts)]
    ctx = comp.compress(q, snips, None)
    assert [u.text for u in ctx.units] == ["first", "third", "fourth"]


def test_no_document_gives_an_empty_context_without_a_model_call(t5):
    comp = get("abstractive", model=t5)
    seen = _spy(comp)
    ctx = comp.compress("Who?", [], None)
    assert ctx.units == () and seen == []


def test_per_document_parameter_is_checked():
    with pytest.raises(ValueError, match="per_document"):
        get("abstractive", model="x", per_document="yes")


@pytest.mark.parametrize("name", ["asqa", "qasper"])
def test_paper_suites_use_per_document_summaries(name):
    suite = load_suite(ROOT / "suites" / f"{name}.yaml")
    abstractive = [s for s in suite.settings if s.compressor == "abstractive"]
    assert abstractive and all(s.params.get("per_document") is True for s in abstractive)


SUITE = """\
name: recomp-units
dataset: {{name: hotpotqa, limit: 2}}
retrieval: {{method: bm25, k: 3}}
settings:
  - {{compressor: identity}}
  - {{compressor: abstractive, budgets: [0.25], params: {{model: {model}, max_new_tokens: 4}}}}
reader: {{backend: extractive}}
judge: {{spec: lexical}}
diagnostics: [re_attributability, emitted_precision]
output_dir: {out}
seed: 0
"""


def test_suite_records_one_unit_per_retrieved_document(t5, tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(SUITE.format(model=t5, out=tmp_path / "run"))
    result = run_suite(load_suite(p), progress=False)
    recs = [json.loads(line) for line in (result.out_dir / "records.jsonl").read_text().splitlines()]
    abstr = [r for r in recs if r["setting"]["compressor"] == "abstractive"]
    assert len(abstr) == 2 and all(r["status"] == "ok" for r in abstr)
    for r in abstr:
        # k = 3 retrieved documents -> 3 units, none declaring provenance
        assert len({s["doc_id"] for s in r["sources"]}) == 3
        assert len(r["context"]["units"]) == 3
        assert all(u["source_ids"] is None for u in r["context"]["units"])
        # every unit lacks provenance, so re-attributability is a share of 3 units: k/3
        v = r["metrics"]["re_attributability"]
        assert v is not None and round(v * 3, 9) == round(v * 3)
