"""The one parser of a judge spec, the judge and reader parameter models, and the one budget check.

Expected values are written out by hand from the rules in rageval.judges.spec,
rageval.readers.spec and rageval.budget (no network, no model).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rageval.budget import BudgetError, budget_problem, check_budget, check_budgets, resolve_budget
from rageval.judges.checks import judge_problems
from rageval.judges.spec import (
    JUDGE_PARAMS,
    JudgeOptions,
    JudgeSpec,
    JudgeSpecError,
    judge_param_problem,
    model_and_url,
    options_model,
    parse_judge_spec,
)
from rageval.readers import reader_class
from rageval.readers.spec import ReaderParams, ReaderSpec, check_options, params_model, reader_problems

# ---------------------------------------------------------------------------------------------- the parser


def _ref(spec):
    r = parse_judge_spec(spec)
    return (r.name, r.arg, r.model, r.base_url, r.runs_model, r.windowed, r.problem)


@pytest.mark.parametrize(
    "spec, expected",
    [
        # spec: (name, arg, model, base_url, runs_model, windowed, problem)
        ("lexical", ("lexical", None, None, None, False, False, None)),
        ("minilm", ("minilm", None, None, None, True, False, None)),
        ("replay:runs/r.jsonl", ("replay", "runs/r.jsonl", None, None, False, False, None)),
        ("embedding:/models/e5", ("embedding", "/models/e5", "/models/e5", None, True, False, None)),
        ("nli:/models/deberta", ("nli", "/models/deberta", "/models/deberta", None, True, True, None)),
        ("seq2seq:google/t5_xxl_true_nli_mixture", ("seq2seq", "google/t5_xxl_true_nli_mixture",
                                                    "google/t5_xxl_true_nli_mixture", None, True, True, None)),
        ("/models/nli", (None, None, "/models/nli", None, True, True, None)),
        ("microsoft/deberta-large-mnli", (None, None, "microsoft/deberta-large-mnli", None, True, True, None)),
        ("openai", ("openai", None, None, None, False, False, None)),
        ("openai:m", ("openai", "m", "m", None, False, False, None)),
        (
            "openai:llama3:8b@http://127.0.0.1:11434/v1",
            ("openai", "llama3:8b@http://127.0.0.1:11434/v1", "llama3:8b", "http://127.0.0.1:11434/v1",
             False, False, None),
        ),
    ],
)  # fmt: skip
def test_every_spec_form_is_read_once(spec, expected):
    assert _ref(spec) == expected
    assert parse_judge_spec(spec).checked().spec == spec


def test_the_judges_own_parameters_come_from_the_registry():
    from rageval.judges.openai_compat import PARAMS

    assert parse_judge_spec("openai").params == PARAMS
    assert parse_judge_spec("openai:m@http://h/v1").params == PARAMS
    assert parse_judge_spec("lexical").params == () and parse_judge_spec("/m").params == ()


@pytest.mark.parametrize(
    "spec, problem",
    [
        ("", "judge spec is empty: use 'lexical', 'replay:<path>', a model path or hub id"),
        ("   ", "judge spec is empty: use 'lexical', 'replay:<path>', a model path or hub id"),
        ("replay", "'replay' needs a path after a colon, e.g. 'replay:/models/x'"),
        ("nli", "'nli' needs a path after a colon, e.g. 'nli:/models/x'"),
        ("nli:", "'nli:' names no model; give 'nli:<local folder or hub id>'"),
        ("seq2seq: ", "'seq2seq: ' names no model; give 'seq2seq:<local folder or hub id>'"),
        ("openai:", "'openai:' names no model; give 'openai:<model>@<base_url>'"),
    ],
)
def test_a_spec_that_names_no_judge_has_a_problem_and_build_judge_refuses_it(spec, problem):
    from rageval.judges import build_judge

    ref = parse_judge_spec(spec)
    assert ref.problem == problem
    with pytest.raises(JudgeSpecError) as err:
        ref.checked()
    assert str(err.value) == problem
    with pytest.raises(ValueError, match="empty" if not spec.strip() else "needs a path|names no model"):
        build_judge(spec)


def test_a_prefix_that_names_no_judge_is_a_model_path_to_the_parser():
    ref = parse_judge_spec("nil:/m")
    assert (ref.name, ref.prefix, ref.model, ref.problem) == (None, "nil", "nil:/m", None)
    assert parse_judge_spec("/m").prefix is None
    assert parse_judge_spec("lexical:x").name is None  # lexical takes no argument


def test_model_and_url_and_the_openai_parse_spec_agree():
    from rageval.judges.openai_compat import parse_spec

    for arg, expected in [
        ("m", ("m", None)),
        ("org/m@v2@https://x.org/v1", ("org/m@v2", "https://x.org/v1")),
        ("a@b", ("a@b", None)),  # '@' without a scheme is part of the model name
        ("m@http://h:1/v1", ("m", "http://h:1/v1")),
    ]:
        assert model_and_url(arg) == expected == parse_spec(arg)


def test_execution_follows_the_registry_meta():
    from rageval.judges import build_judge

    with pytest.raises(ValueError, match="judge 'lexical' runs no model"):
        build_judge("lexical", execution="int8")


# ---------------------------------------------------------------------------------------------- judge options


def test_judge_options_model_fields_and_defaults():
    assert JUDGE_PARAMS == ("batch_size", "dtype", "max_length", "device", "revision", "window", "execution")
    o = JudgeOptions()
    assert (o.batch_size, o.dtype, o.max_length, o.device, o.revision, o.window, o.execution) == (
        None, None, 512, None, None, None, None,
    )  # fmt: skip
    ok = JudgeOptions.model_validate(
        {"batch_size": 4, "dtype": "bf16", "max_length": None, "device": "cpu", "revision": "main",
         "window": {"overlap": 32}, "execution": "fp32-batched"}
    )  # fmt: skip
    assert ok.batch_size == 4 and ok.window == {"overlap": 32}


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("batch_size", 0, "must be a positive integer (or null), got 0"),
        ("batch_size", True, "must be a positive integer (or null), got True"),
        ("batch_size", 2.0, "must be a positive integer (or null), got 2.0"),
        ("max_length", -1, "must be a positive integer (or null), got -1"),
        ("dtype", "float8", "must be one of float32, fp32, bfloat16, bf16, float16, fp16 (or null for float32)"),
        ("device", "", "must be a non-empty string (or null), got ''"),
        ("revision", 3, "must be a non-empty string (or null), got 3"),
        ("window", "yes", "window must be true (overlap 128 tokens), {overlap: N} or null/false (off), got 'yes'"),
        ("window", {"overlap": -1}, "window.overlap must be an integer >= 0 (tokens), got -1"),
        ("execution", "fast", "must be one of auto, fp32-loop, fp32-bucketed, fp32-batched, bf16, int8, onnx"),
        ("batch_sise", 1, "unknown judge option. Did you mean 'batch_size'? Accepted: batch_size, dtype,"),
    ],
)
def test_each_judge_option_says_what_is_wrong(key, value, message):
    problem = judge_param_problem(key, value)
    assert problem is not None and problem.startswith(message), problem


@pytest.mark.parametrize("key", JUDGE_PARAMS)
def test_null_is_every_judge_options_default(key):
    assert judge_param_problem(key, None) is None


def test_a_judges_own_parameters_are_accepted_only_for_it():
    own = parse_judge_spec("openai").params
    assert judge_param_problem("model", "m", own) is None
    assert judge_param_problem("concurrency", 3, own) is None  # its value: the judge's to check (built once)
    assert judge_param_problem("model", "m").startswith("unknown judge option.")
    assert judge_param_problem("concurency", 2, own).startswith("unknown judge option. Did you mean 'concurrency'?")
    assert set(options_model(own).model_fields) == {*JUDGE_PARAMS, *own}
    assert options_model(()) is JudgeOptions


# ---------------------------------------------------------------------------------------------- judge_problems


def test_judge_problems_of_good_specs_are_none(tmp_path):
    replay = tmp_path / "r.jsonl"
    replay.write_text(json.dumps({"premise": "a", "hypothesis": "b", "probability": 0.5}) + "\n")
    assert judge_problems("lexical", {}) == []
    assert judge_problems(f"replay:{replay}", {}) == []
    assert judge_problems("nli:/models/x", {"batch_size": 4, "window": True}) == []
    assert judge_problems("org/model", {"revision": "main"}) == []
    assert judge_problems("openai:m@http://127.0.0.1:9/v1", {"concurrency": 2}) == []
    assert judge_problems(str(tmp_path), {}) == []  # an existing folder is a model folder, whatever its name


def test_judge_problems_name_the_field_and_the_fix():
    assert judge_problems("nil:/m", {}) == ["  judge.spec: unknown judge kind 'nil' in 'nil:/m'. Did you mean 'nli'?"]
    assert judge_problems("lexcal", {})[0].startswith(
        "  judge.spec: 'lexcal' is neither a judge name nor a local folder. Did you mean 'lexical'? Known: lexical,"
    )
    assert judge_problems("nli:", {}, where="audit") == [
        "  audit.spec: 'nli:' names no model; give 'nli:<local folder or hub id>'"
    ]
    assert judge_problems("lexical", {"window": True}) == [
        (
            "  judge.params.window: judge 'lexical' reads whole premises (no token window); "
            "window applies to model judges (nli:, seq2seq:, a model folder or hub id)"
        )
    ]
    assert judge_problems("lexical", {"window": False, "batch_size": 0}) == [
        "  judge.params.batch_size: must be a positive integer (or null), got 0"
    ]
    two = judge_problems("nli:/m", {"dtype": "x", "foo": 1})
    assert [p.split(":")[0] for p in two] == ["  judge.params.dtype", "  judge.params.foo"]  # in the params' order


def test_judge_problems_of_the_openai_judge():
    key = judge_problems("openai", {"model": "m", "base_url": "http://h/v1", "api_key": "sk-x"})
    assert len(key) == 1 and key[0].startswith("  judge.params.api_key: do not write a key into a suite")
    assert "sk-x" not in key[0]
    assert judge_problems("openai", {"model": "m"}) == [
        (
            "  judge.params: openai judge: no base_url; write 'openai:<model>@<base_url>' (e.g. "
            "openai:my-model@http://127.0.0.1:8000/v1) or give params base_url"
        )
    ]
    (top,) = judge_problems("openai:m@http://h/v1", {"top_logprobs": 0})
    assert top == "  judge.params: openai judge: top_logprobs must be an integer >= 1, got 0"


def test_the_suite_checks_delegate(tmp_path):
    from rageval.suite.checks import JUDGE_PARAMS as CHECKS_PARAMS
    from rageval.suite.checks import _judge_param_problem, _judge_problems, model_availability
    from rageval.suite.config import JudgeSpec as ConfigJudgeSpec
    from rageval.suite.config import ReaderSpec as ConfigReaderSpec
    from rageval.suite.load import load_suite

    assert CHECKS_PARAMS == JUDGE_PARAMS and ConfigJudgeSpec is JudgeSpec and ConfigReaderSpec is ReaderSpec
    assert _judge_param_problem("dtype", "x") == judge_param_problem("dtype", "x")
    suite_file = tmp_path / "s.yaml"
    suite_file.write_text(
        "name: s\ndataset: {name: hotpotqa, limit: 2}\nsettings: [{compressor: identity}]\n"
        "judge: {spec: 'openai:m@http://127.0.0.1:9/v1'}\n"
    )
    suite = load_suite(suite_file)
    assert _judge_problems(suite) == []
    (avail,) = [a for a in model_availability(suite) if a.where == "judge.spec"]
    assert (avail.ref, avail.problem) == ("http://127.0.0.1:9/v1", None)


def test_judge_spec_dump_is_unchanged():
    assert JudgeSpec().model_dump(mode="json") == {"spec": "lexical", "threshold": 0.5, "params": {}}
    assert ReaderSpec().model_dump(mode="json") == {
        "backend": "extractive",
        "params": {},
        "template": None,
        "batch_size": 8,
    }


# ---------------------------------------------------------------------------------------------- readers


def test_every_reader_declares_its_options():
    expected = {
        "extractive": (["max_sentences", "min_overlap", "tokenizer"], []),
        "saved": (["path", "format", "system", "tokenizer"], ["path"]),
        "transformers": (
            ["model", "revision", "max_new_tokens", "batch_size", "max_input_tokens", "device", "dtype", "gguf_file",
             "tokenizer"],
            ["model"],
        ),
        "llamacpp": (["model", "max_new_tokens", "n_ctx", "n_threads", "max_input_tokens", "tokenizer"], ["model"]),
        "openai": (
            ["model", "base_url", "api_key_env", "max_tokens", "temperature", "timeout", "max_retries", "backoff",
             "max_backoff", "concurrency", "endpoint_concurrency", "cooldown", "extra_body", "trust_env",
             "allow_insecure_key", "tokenizer"],
            ["model", "base_url"],
        ),
    }  # fmt: skip
    for backend, (accepted, required) in expected.items():
        model = params_model(reader_class(backend))
        assert issubclass(model, ReaderParams)
        assert (model.accepted(), model.required()) == (accepted, required), backend


def test_a_reader_class_without_a_params_model_is_named():
    class Bare:
        pass

    with pytest.raises(TypeError, match="reader class Bare declares no Params model"):
        params_model(Bare)


@pytest.mark.parametrize(
    "backend, values, message",
    [
        ("extractive", {"max_sentences": 0}, "extractive reader: max_sentences must be a positive integer, got 0"),
        ("extractive", {"min_overlap": True}, "extractive reader: min_overlap must be a positive integer, got True"),
        ("saved", {"path": 3}, "saved reader: path must name the answers file, got 3"),
        ("saved", {"path": "a.jsonl", "format": ""}, "saved reader: format must be a non-empty string or None"),
        ("saved", {"path": "a.jsonl", "system": "s"}, "saved reader: `system` selects the lines of a file read with"),
        ("transformers", {"model": " "}, "transformers reader: 'model' must name a hub id, a local checkpoint"),
        ("transformers", {"model": "m", "gguf_file": ""}, "transformers reader: gguf_file must be a non-empty string"),
        ("transformers", {"model": "m", "max_new_tokens": -1}, "transformers reader: max_new_tokens must be a pos"),
        ("transformers", {"model": "m", "max_input_tokens": 0}, "max_input_tokens must be a positive integer or None"),
        ("transformers", {"model": "m", "device": ""}, "transformers reader: device must be a non-empty string or"),
        ("transformers", {"model": "m", "dtype": "float8"}, "transformers reader: unknown dtype 'float8' (use one of"),
        ("openai", {"model": "m", "base_url": "ftp://x"}, "base_url must start with http:// or https://"),
        ("openai", {"model": "", "base_url": "http://h/v1"}, "openai reader: 'model' must name the served model"),
        ("openai", {"model": "m", "base_url": "http://h/v1", "timeout": 0}, "timeout must be a positive number of s"),
        ("openai", {"model": "m", "base_url": "http://h/v1", "backoff": math.inf}, "backoff must be a finite number"),
        ("openai", {"model": "m", "base_url": "http://h/v1", "max_retries": -1}, "max_retries must be a non-negative"),
        ("openai", {"model": "m", "base_url": "http://h/v1", "endpoint_concurrency": 0}, "endpoint_concurrency must"),
        ("openai", {"model": "m", "base_url": "http://h/v1", "extra_body": [1]}, "extra_body must be a mapping, got"),
        ("openai", {"model": "m", "base_url": "http://h/v1", "api_key_env": ""}, "api_key_env must name an environ"),
    ],
)
def test_each_readers_model_checks_values_with_the_constructors_message(backend, values, message):
    model = params_model(reader_class(backend))
    with pytest.raises(ValueError) as err:
        model.check(**values)
    assert message in str(err.value) and "\n" not in str(err.value)
    spec = ReaderSpec(backend=backend, params=values)
    (problem,) = reader_problems(spec, "reader")
    assert problem.startswith("  reader.params: ") and message in problem


def test_good_reader_values_pass_the_model():
    assert reader_class("extractive").Params.check(max_sentences=3).max_sentences == 3
    p = reader_class("openai").Params.check(model="m", base_url=["http://a/v1", "http://b/v1"], api_key_env=None)
    assert p.base_url == ["http://a/v1", "http://b/v1"] and p.endpoint_concurrency is None
    assert reader_class("transformers").Params.check(model="m", dtype="bfloat16").dtype == "bfloat16"


def test_unknown_and_missing_reader_options():
    assert reader_problems(ReaderSpec(params={"max_sentence": 2}), "settings[1].reader") == [
        (
            "  settings[1].reader.params.max_sentence: unknown option for reader 'extractive'. Did you mean "
            "'max_sentences'? Accepted: max_sentences, min_overlap, tokenizer."
        )
    ]
    assert reader_problems(ReaderSpec(backend="saved"), "reader") == ["  reader.params: reader 'saved' needs 'path'"]
    assert reader_problems(ReaderSpec(backend="openai", params={}), "reader") == [
        "  reader.params: reader 'openai' needs 'model', 'base_url'"
    ]
    assert reader_problems(ReaderSpec(backend="transformers", params={"model": "/no/such"}), "reader") == []
    with pytest.raises(ValueError, match=r"Unknown option 'sleep' for reader 'openai'\..* Accepted: model, base_url"):
        check_options("openai", reader_class("openai"), {"model": "m", "base_url": "http://h/v1", "sleep": 0})
    with pytest.raises(ValueError, match=r"reader 'transformers' needs option\(s\) 'model'"):
        check_options("transformers", reader_class("transformers"), {"template": {}})


def test_a_model_free_reader_is_still_built_once(tmp_path):
    missing = tmp_path / "none.jsonl"
    (problem,) = reader_problems(ReaderSpec(backend="saved", params={"path": str(missing)}), "reader")
    assert problem.startswith("  reader.params: saved reader: answers file not found:")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "q", "answer": "a"}\nnot json\n')
    (problem,) = reader_problems(ReaderSpec(backend="saved", params={"path": str(bad)}), "reader")
    assert "bad.jsonl line 2: not valid JSON" in problem
    good = tmp_path / "good.jsonl"
    good.write_text('{"question_id": "q", "answer": "a"}\n')
    assert reader_problems(ReaderSpec(backend="saved", params={"path": Path(good).as_posix()}), "reader") == []


# ---------------------------------------------------------------------------------------------- budgets


@pytest.mark.parametrize("good", [None, 1, 160, 10**9, 1.0, 0.25, 1e-6])
def test_valid_budgets(good):
    assert budget_problem(good) is None
    check_budget(good)


FIX = (
    "give a token count (a positive integer, e.g. 160), a fraction in (0, 1] of the retrieved tokens (e.g. 0.25), "
    "or null (None) for no budget"
)
ABOVE = "a float is a fraction in (0, 1]; for a token count write an integer"


@pytest.mark.parametrize(
    "bad, message",
    [
        (True, f"budget True is not a number: {FIX}"),
        ("50", f"budget '50' is not a number: {FIX}"),
        ([160], f"budget [160] is not a number: {FIX}"),
        (math.nan, f"budget nan is not a finite number: {FIX}"),
        (math.inf, f"budget inf is not a finite number: {FIX}"),
        (0, f"budget 0 is not positive: {FIX}"),
        (-5, f"budget -5 is not positive: {FIX}"),
        (0.0, f"budget 0.0 is not positive: {FIX}"),
        (1.5, f"budget 1.5 is a float above 1: {ABOVE} (e.g. 1)"),
        (160.0, f"budget 160.0 is a float above 1: {ABOVE} (e.g. 160)"),
    ],
)  # fmt: skip
def test_invalid_budgets_say_how_to_write_them(bad, message):
    assert budget_problem(bad) == message
    with pytest.raises(BudgetError) as err:
        check_budget(bad)
    assert str(err.value) == message
    with pytest.raises(BudgetError):
        check_budgets([None, bad])


def test_a_budget_list():
    assert check_budgets([None]) == [None]
    assert check_budgets([96, 0.5]) == [96, 0.5]
    for bad in ([], None, 96, (96,)):
        with pytest.raises(BudgetError, match=r"budgets must list at least one budget \(use \[null\] for no budget\)"):
            check_budgets(bad)


def test_resolve_budget_by_hand():
    assert resolve_budget(None, retrieved_tokens=100) is None
    assert resolve_budget(160, retrieved_tokens=100) == 160  # an absolute budget is not capped by the retrieval
    assert resolve_budget(0.25, retrieved_tokens=1000) == 250
    assert resolve_budget(0.29, retrieved_tokens=100) == 29  # 0.29 * 100 = 28.999999999999996 -> 29, not 28
    assert resolve_budget(0.5, retrieved_tokens=7) == 3  # floor(3.5)
    assert resolve_budget(0.01, retrieved_tokens=7) == 1  # at least one token of a non-empty retrieval
    assert resolve_budget(0.5, retrieved_tokens=0) == 0
    with pytest.raises(BudgetError, match="budget 0 is not positive"):
        resolve_budget(0, retrieved_tokens=10)


def test_the_compressors_and_the_suite_share_the_budget_check(tmp_path):
    from rageval.compressors import BudgetError as CompressorsBudgetError
    from rageval.compressors import get
    from rageval.compressors import resolve_budget as compressors_resolve
    from rageval.compressors.base import check_budget as compressors_check

    from rageval import budget
    from rageval.suite.config import SuiteError
    from rageval.suite.load import load_suite

    assert CompressorsBudgetError is budget.BudgetError and compressors_resolve is budget.resolve_budget
    assert compressors_check is budget.check_budget
    with pytest.raises(BudgetError) as err:
        get("naive").compress("q", [{"id": "a", "text": "x y"}], 1.5)
    assert str(err.value) == budget_problem(1.5)
    suite_file = tmp_path / "s.yaml"
    suite_file.write_text(
        "name: s\ndataset: {name: hotpotqa, limit: 2}\nsettings: [{compressor: naive, budgets: [96, 1.5]}]\n"
    )
    with pytest.raises(SuiteError) as err:
        load_suite(suite_file)
    assert f"settings[0].budgets: {budget_problem(1.5)}" in str(err.value)
