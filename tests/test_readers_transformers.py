"""The transformers reader on a tiny Llama checkpoint built here and loaded through the real path."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from rageval.readers import ModelUnavailable, ReaderRequest, get_reader
from rageval.readers.hf import TransformersReader
from rageval.types import Unit

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

TEXT = [
    "Paris is the capital of France. The Seine flows through Paris.",
    "Document [1] (Title: Paris): Question: Answer: Write an accurate answer and cite [1][2][3].",
    "<|user|> <|assistant|> <|system|> The Eiffel Tower was completed in 1889.",
] * 20


def _build(folder, *, chat=True, positions=2048):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<s>", "</s>", "<pad>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tk.train_from_iterator(TEXT, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    if chat:
        tok.chat_template = CHAT_TEMPLATE
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=positions,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    return str(_build(tmp_path_factory.mktemp("tiny-llama")))


def _req(qid, n_units=2, question="What is the capital of France?"):
    units = tuple(Unit(f"Paris is the capital of France. Fact number {i}.", title="Paris") for i in range(n_units))
    return ReaderRequest(qid, question, units, setting="s")


def test_generates_greedily_through_the_chat_template(tiny_llama):
    reader = get_reader("transformers", model=tiny_llama, max_new_tokens=6, batch_size=2)
    assert reader.chat_template is True
    req = _req("q1")
    prompt = reader.prompt(req)
    assert prompt.startswith("<s><|user|>\n") and prompt.endswith("<|assistant|>\n")
    assert "Document [2] (Title: Paris): Paris is the capital of France. Fact number 1." in prompt
    out = reader.generate([req])[0]
    assert out.status == "ok" and out.error is None
    assert out.input_tokens == len(reader.hf_tokenizer(prompt, add_special_tokens=False)["input_ids"])
    # greedy: the same answer twice
    assert reader.generate([req])[0].text == out.text
    assert reader.info()["params"]["decoding"] == "greedy"


def test_batched_generation_matches_one_at_a_time(tiny_llama):
    reader = TransformersReader(tiny_llama, max_new_tokens=5, batch_size=3)
    reqs = [_req("a", 1), _req("b", 3, "Who?"), _req("c", 2, "Which river flows through Paris, France?")]
    batched = reader.generate(reqs)
    single = [reader.generate([r])[0] for r in reqs]
    assert [o.text for o in batched] == [o.text for o in single]
    assert [o.input_tokens for o in batched] == [o.input_tokens for o in single]
    assert len({o.input_tokens for o in batched}) == 3  # different lengths really were padded together


def test_prompt_overflow_is_a_status_and_is_not_generated(tiny_llama, monkeypatch):
    reader = TransformersReader(tiny_llama, max_new_tokens=4, template={"instruction": "Answer; cite [k]."})
    short = ReaderRequest("short", "Paris?", (Unit("Paris."),))
    long_req = _req("long", 30)
    n_short = len(reader.hf_tokenizer(reader.prompt(short), add_special_tokens=False)["input_ids"])
    reader.max_input_tokens = n_short + 5
    calls = []
    real = reader.model.generate

    def counting(*a, **k):
        calls.append(k["input_ids"].shape[0])
        return real(*a, **k)

    monkeypatch.setattr(reader.model, "generate", counting)
    outs = reader.generate([long_req, short])
    assert outs[0].status == "prompt_overflow"
    assert outs[0].input_tokens > n_short + 5 and f"limit is {n_short + 5}" in outs[0].error
    assert outs[1].status == "ok" and outs[1].input_tokens == n_short
    assert calls == [1]  # only the short one reached generate()


def test_context_limit_defaults_to_positions_minus_new_tokens(tiny_llama):
    reader = TransformersReader(tiny_llama, max_new_tokens=56)
    assert reader.max_input_tokens == 2048 - 56


def test_tokenizer_without_chat_template_gets_the_plain_prompt(tmp_path):
    folder = str(_build(tmp_path / "plain", chat=False))
    reader = TransformersReader(folder, max_new_tokens=3)
    req = _req("q")
    assert reader.chat_template is False
    assert reader.prompt(req) == reader.template.render(req.question, req.units)
    assert reader.generate([req])[0].status == "ok"


def test_missing_weights_raise_model_unavailable_with_the_fix(tmp_path):
    with pytest.raises(
        ModelUnavailable, match=r"could not load the transformers reader .*local checkpoint folder.*--reader extractive"
    ):
        get_reader("transformers", model=str(tmp_path / "no-such-model"))


def test_bad_options_fail_early(tiny_llama):
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        TransformersReader(tiny_llama, batch_size=0)
    with pytest.raises(ValueError, match="Did you mean 'max_new_tokens'"):
        get_reader("transformers", model=tiny_llama, max_new_token=3)


def test_hub_id_offline_raises_model_unavailable():
    # conftest sets HF_HUB_OFFLINE=1: the hub path fails at once, with the fix in the message
    with pytest.raises(ModelUnavailable, match=r"'rageval-test/no-such-reader'.*--reader extractive"):
        TransformersReader("rageval-test/no-such-reader")
