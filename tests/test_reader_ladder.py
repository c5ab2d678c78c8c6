"""The reader ladder suites (docs/papers.md#scope-map): `reader_ladder` names the paper's three served readers per
setting; its offline form `reader_ladder_offline` runs SmolLM2 in-process and the extractive reader as two rungs and
writes the reader interaction row — (packer − focused under SmolLM2) − (packer − focused under extractive) — with
its interval and Holm p."""

from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner
from smollm2 import need_llama_cpp, smollm2_path

from rageval.cli import main
from rageval.suite.load import load_suite


def test_the_paper_ladder_gives_each_rung_its_own_served_reader():
    suite = load_suite("reader_ladder")
    readers = suite.setting_readers()
    assert list(readers) == [f"{c}_{size}@160" for size in ("3b", "7b", "14b") for c in ("focused", "submodular")]
    for size, model in (("3b", "Qwen2.5-3B"), ("7b", "Qwen2.5-7B"), ("14b", "Qwen2.5-14B")):
        pair = {readers[f"focused_{size}@160"].params["model"], readers[f"submodular_{size}@160"].params["model"]}
        assert pair == {f"Qwen/{model}-Instruct"}  # both settings of a rung read with the one reader
        assert readers[f"focused_{size}@160"].backend == "openai"
    assert len({r.params["base_url"] for r in readers.values()}) == 3


def test_the_offline_ladder_plans_two_rungs():
    suite = load_suite("reader_ladder_offline")
    backends = {name: spec.backend for name, spec in suite.setting_readers().items()}
    assert backends == {
        "focused_smollm2@160": "llamacpp",
        "submodular_smollm2@160": "llamacpp",
        "focused_extractive@160": "extractive",
        "submodular_extractive@160": "extractive",
    }


@pytest.mark.slow
def test_the_offline_ladder_writes_the_reader_interaction_with_ci_and_holm_p(tmp_path):
    need_llama_cpp()
    smollm2_path()
    out = tmp_path / "out"
    res = CliRunner().invoke(
        main, ["suite", "reader_ladder_offline", "--limit", "3", "--out", str(out), "--no-progress"]
    )
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader((out / "contrasts.csv").open(encoding="utf-8")))
    (inter,) = [r for r in rows if r["kind"] == "interaction"]
    assert inter["family"] == "interactions" and inter["metric_a"] == "answer_f1"
    assert inter["a"] == "submodular_smollm2@160 - focused_smollm2@160"
    assert inter["b"] == "submodular_extractive@160 - focused_extractive@160"
    assert int(inter["n"]) + int(inter["n_dropped"]) == 3
    # the effect is the mean per-question interaction: the two pair means' difference over the same questions
    assert float(inter["effect"]) == pytest.approx(float(inter["mean_a"]) - float(inter["mean_b"]), abs=1e-5)
    assert inter["ci_low"] != "" and inter["ci_high"] != ""
    assert float(inter["ci_low"]) <= float(inter["effect"]) <= float(inter["ci_high"])
    assert 0.0 < float(inter["p_holm"]) <= 1.0  # its own Holm family of one row: p_holm = p
    assert float(inter["p_holm"]) == pytest.approx(float(inter["p_value"]))
    packer = [r for r in rows if r["family"] == "packer_vs_focused"]
    assert len(packer) == 2
