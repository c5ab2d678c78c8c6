"""Execution paths of the model judges (rageval.judges.paths), each forced, on tiny models built here.

The tiny DeBERTa-v2 NLI and T5 checkpoints of tests/test_judges_models.py are saved and loaded through the
real loading code; a tiny BERT stands in for MiniLM in the embedding judge.  Reference values are computed
here straight from the saved model (softmax of the logits of each pair on its own), not through the judge.
Nothing is downloaded.
"""

import math
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from test_judges_models import HYPS, PREMS, build_nli, build_t5

from rageval.errors import ModelUnavailable
from rageval.judges import get_judge, paths
from rageval.judges.paths import CpuFeatures, resolve

HAS_ORT = True
try:
    import onnxruntime  # noqa: F401
except ImportError:  # pragma: no cover - the test extra installs it
    HAS_ORT = False

PREMS3 = PREMS + ["Title: Paris\nParis is the capital of France. Lyon is a big city."]
HYPS3 = HYPS + ["The Nile is in France."]
NO_UNITS = CpuFeatures(frozenset({"avx2", "fma"}), "AVX2")
BF16_CPU = CpuFeatures(frozenset({"avx2", "avx512f", "avx512_bf16", "avx512_vnni"}), "AVX512")
AMX_CPU = CpuFeatures(frozenset({"avx512f", "avx512_bf16", "amx_bf16", "amx_tile", "amx_int8"}), "AVX512")

#: max |p - p_fp32| allowed per path on these tiny random models; exact paths: float rounding only
TOL = {"fp32-loop": 1e-6, "fp32-bucketed": 1e-5, "fp32-batched": 1e-5, "onnx": 1e-5, "bf16": 0.05, "int8": 0.05}


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory):
    return build_nli(tmp_path_factory.mktemp("tiny") / "tiny-deberta-nli")


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory):
    return build_t5(tmp_path_factory.mktemp("tiny") / "tiny-t5-true")


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv(paths.ENV_VAR, raising=False)


def _nli_reference(folder):
    """P(ENTAILMENT) of each pair on its own, fp32, straight from the saved model."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    out = []
    with torch.no_grad():
        for p, h in zip(PREMS3, HYPS3):
            logits = model(**tok(p, h, return_tensors="pt")).logits[0]
            out.append(torch.softmax(logits, -1)[0].item())  # label 0 is ENTAILMENT
    return out


@pytest.mark.parametrize("execution", ["fp32-loop", "fp32-bucketed", "fp32-batched", "bf16", "int8", "onnx"])
def test_each_forced_path_is_within_its_tolerance_of_fp32(nli_dir, execution):
    if execution == "onnx" and not HAS_ORT:
        pytest.skip("onnxruntime not installed")
    ref = _nli_reference(nli_dir)
    runner = get_judge(f"nli:{nli_dir}", execution=execution)
    got = runner(PREMS3, HYPS3)
    assert runner.stats()["execution"] == execution
    diff = max(abs(a - b) for a, b in zip(got, ref))
    assert diff <= TOL[execution], (execution, diff)
    # a random 3-label model puts p near 1/3; the paths must not all collapse to the same value
    assert len({round(p, 6) for p in got}) > 1


def test_ids_one_per_lossy_path_and_fp32_paths_share_theirs(nli_dir):
    ids = {e: get_judge(f"nli:{nli_dir}", execution=e).id for e in ("fp32-loop", "fp32-bucketed", "fp32-batched")}
    ids.update({e: get_judge(f"nli:{nli_dir}", execution=e).id for e in ("bf16", "int8")})
    if HAS_ORT:
        ids["onnx"] = get_judge(f"nli:{nli_dir}", execution="onnx").id
    assert ids["fp32-loop"] == ids["fp32-bucketed"] == ids["fp32-batched"] == get_judge(nli_dir).id
    assert "|float32|" in ids["fp32-loop"] and "execution=" not in ids["fp32-loop"]
    assert "|bfloat16|" in ids["bf16"]
    assert ids["int8"].endswith("|execution=int8")
    lossy = [ids[e] for e in ids if not e.startswith("fp32-")]
    assert len(set(lossy)) == len(lossy) and ids["fp32-loop"] not in lossy
    # the older dtype option is the bf16 path, with the same id (its disk caches stay valid)
    assert get_judge(f"nli:{nli_dir}", dtype="bfloat16").id == ids["bf16"]


def test_lossy_paths_never_share_a_disk_cache_with_fp32(nli_dir, tmp_path):
    fp = get_judge(f"nli:{nli_dir}", cache_dir=tmp_path)
    fp(PREMS3, HYPS3)
    q = get_judge(f"nli:{nli_dir}", execution="int8", cache_dir=tmp_path)
    q(PREMS3, HYPS3)
    assert q.stats()["cache_hits"] == 0 and q.stats()["executed"] == 4
    assert q.cache_path != fp.cache_path
    loop = get_judge(f"nli:{nli_dir}", execution="fp32-loop", cache_dir=tmp_path)
    loop(PREMS3, HYPS3)  # exact path: same id, answered from fp32's cache
    assert loop.stats()["cache_hits"] == 4 and loop.stats()["executed"] == 0


def test_forward_passes_of_loop_bucketed_and_batched(nli_dir, monkeypatch):
    from rageval.judges.hf import NLIJudge

    sizes = []
    real = NLIJudge._predict_batch

    def spy(self, premises, hypotheses):
        sizes.append(len(premises))
        return real(self, premises, hypotheses)

    monkeypatch.setattr(NLIJudge, "_predict_batch", spy)
    get_judge(f"nli:{nli_dir}", execution="fp32-loop", batch_size=4)(PREMS3, HYPS3)
    assert sizes == [1, 1, 1, 1]
    sizes.clear()
    get_judge(f"nli:{nli_dir}", execution="fp32-batched", batch_size=4)(PREMS3, HYPS3)
    assert sizes == [4]
    # bucketed: sorted by tokens, a pass holds inputs while count x longest <= the budget
    judge = get_judge(f"nli:{nli_dir}", execution="fp32-bucketed", batch_size=4).judge
    lengths = judge.full_lengths(PREMS3, HYPS3)
    order = sorted(range(4), key=lambda i: lengths[i])
    budget = 2 * lengths[order[1]]  # exactly the two shortest fit together; the next needs 3 x its length
    assert 3 * lengths[order[2]] > budget
    monkeypatch.setattr(paths, "TOKEN_BUDGET", budget)
    monkeypatch.setattr(paths.groups, "__defaults__", (budget,))
    sizes.clear()
    got = judge.predict(PREMS3, HYPS3)
    assert sizes[0] == 2 and sum(sizes) == 4 and len(sizes) >= 2
    ref = _nli_reference(nli_dir)
    assert max(abs(a - b) for a, b in zip(got, ref)) <= 1e-5  # back in the caller's order


@pytest.mark.parametrize("execution", ["fp32-loop", "int8", "onnx"])
def test_seq2seq_paths_keep_p1_and_abstentions(t5_dir, execution):
    if execution == "onnx" and not HAS_ORT:
        pytest.skip("onnxruntime not installed")
    ref = get_judge(t5_dir, execution="fp32-batched")(PREMS3, HYPS3)
    got = get_judge(t5_dir, execution=execution)(PREMS3, HYPS3)
    assert all(not math.isnan(p) for p in ref)  # the "label" model always answers 0 or 1
    assert max(abs(a - b) for a, b in zip(got, ref)) <= TOL[execution]


# -- auto -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("features", [NO_UNITS, BF16_CPU, AMX_CPU], ids=["avx2", "avx512-bf16", "amx"])
def test_auto_on_a_cpu_is_fp32_batched_whatever_its_units(features):
    choice = resolve("auto", device="cpu", features=features)
    assert (choice.execution, choice.requested) == ("fp32-batched", "auto")
    assert ("bf16 (execution=bf16) has hardware units here" in choice.reason) == features.bf16_units
    assert ("int8 (execution=int8) has VNNI units here" in choice.reason) == features.vnni


def test_auto_on_a_gpu_batches():
    assert resolve("auto", device="cuda:0", features=NO_UNITS).execution == "fp32-batched"


def test_auto_resolves_in_the_judge_from_the_probed_cpu(nli_dir, monkeypatch):
    monkeypatch.setattr(paths, "probe_cpu", lambda: AMX_CPU)
    runner = get_judge(f"nli:{nli_dir}", max_length=500)  # a spec not built before in this process
    st = runner.stats()
    assert st["execution"] == "fp32-batched"
    assert "AMX" in st["execution_reason"] and "bf16 units" in st["execution_reason"]
    monkeypatch.setattr(paths, "probe_cpu", lambda: NO_UNITS)
    st = get_judge(f"nli:{nli_dir}", max_length=501).stats()
    assert st["execution"] == "fp32-batched" and "no bf16, AMX or VNNI units" in st["execution_reason"]


def test_probe_reads_the_flags_line(tmp_path, monkeypatch):
    feats = paths.probe_cpu()
    assert isinstance(feats.flags, frozenset)
    assert CpuFeatures(frozenset({"avx512_bf16"})).bf16_units and not CpuFeatures(frozenset({"avx2"})).bf16_units
    assert CpuFeatures(frozenset({"amx_tile"})).amx and CpuFeatures(frozenset({"avx_vnni"})).vnni


# -- asking: option, environment, refusals ----------------------------------------------------------------------
def test_environment_variable_chooses_and_option_wins(nli_dir, monkeypatch):
    monkeypatch.setenv(paths.ENV_VAR, "int8")
    assert get_judge(f"nli:{nli_dir}").id.endswith("|execution=int8")
    assert get_judge(f"nli:{nli_dir}", execution="fp32-loop").stats()["execution"] == "fp32-loop"
    monkeypatch.setenv(paths.ENV_VAR, "fast")
    with pytest.raises(ValueError, match=paths.ENV_VAR):
        get_judge(f"nli:{nli_dir}")


def test_unknown_and_contradictory_requests_are_errors():
    with pytest.raises(ValueError, match="auto, fp32-loop, fp32-bucketed, fp32-batched, bf16, int8, onnx"):
        resolve("int4")
    with pytest.raises(ValueError, match="two different paths"):
        resolve("int8", dtype="bfloat16")
    with pytest.raises(ValueError, match="CPU only"):
        resolve("int8", device="cuda")
    with pytest.raises(ValueError, match="runs no model"):
        get_judge("lexical", execution="int8")
    assert get_judge("lexical", execution="auto").id == "lexical:v1"


def test_onnx_without_onnxruntime_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime -> ImportError
    with pytest.raises(
        ModelUnavailable, match=r"^execution='onnx' needs onnxruntime, .*: pip install 'rageval\[onnx\]'"
    ):
        resolve("onnx")


def test_bf16_without_bf16_units_is_allowed_and_says_so():
    choice = resolve("bf16", features=NO_UNITS)
    assert choice.execution == "bf16" and "emulates" in choice.reason
    assert "emulates" not in resolve("bf16", features=BF16_CPU).reason
    assert resolve(None, dtype="bfloat16", features=NO_UNITS).execution == "bf16"


# -- the embedding judge (MiniLM's code path on a tiny BERT) ----------------------------------------------------
@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    from test_judges_models import _tokenizer
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    tk = _tokenizer("nli")
    cfg = BertConfig(
        vocab_size=tk.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        pad_token_id=tk.pad_token_id,
    )
    path = tmp_path_factory.mktemp("tiny") / "tiny-bert"
    BertModel(cfg).save_pretrained(path)
    tk.save_pretrained(path)
    return str(path)


@pytest.mark.parametrize("execution", ["fp32-loop", "fp32-bucketed", "bf16", "int8", "onnx"])
def test_embedding_judge_paths(bert_dir, execution):
    if execution == "onnx" and not HAS_ORT:
        pytest.skip("onnxruntime not installed")
    ref = get_judge(f"embedding:{bert_dir}", execution="fp32-batched")
    got = get_judge(f"embedding:{bert_dir}", execution=execution)
    a, b = ref(PREMS3, HYPS3), got(PREMS3, HYPS3)
    assert max(abs(x - y) for x, y in zip(a, b)) <= TOL[execution]
    assert got.stats()["execution"] == execution
    assert (got.id == ref.id) == execution.startswith("fp32-")


def test_a_suite_checks_the_execution_option():
    from rageval.suite.checks import _judge_param_problem

    assert _judge_param_problem("execution", "int8") is None
    assert _judge_param_problem("execution", None) is None
    assert "fp32-bucketed" in _judge_param_problem("execution", "fast")


def test_allocator_setting_is_once_per_process_and_can_be_refused(monkeypatch):
    monkeypatch.setattr(paths, "_ALLOCATOR", [])
    monkeypatch.setenv("RAGEVAL_JUDGE_MALLOPT", "0")
    assert paths.keep_freed_memory() is False
    monkeypatch.delenv("RAGEVAL_JUDGE_MALLOPT")
    assert paths.keep_freed_memory() is False  # decided once per process: the first answer stays
