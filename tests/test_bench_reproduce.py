"""bench/reproduce_packer.py: the packer reproduction, run through the library's own pipeline."""

import importlib.util
from pathlib import Path

import pytest

from rageval.data import load_examples, sample_path
from rageval.retrieval import retrieve

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "reproduce_packer.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("reproduce_packer", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_script_imports_rageval_as_installed():
    src = SCRIPT.read_text()
    assert "sys.path" not in src and "__file__" not in src  # runs against an installed wheel as well


def test_prepare_uses_the_library_loader_and_retrieval(bench):
    exs = load_examples("hotpotqa", sample_path("hotpotqa"), limit=2)
    prepared = bench.prepare(exs)
    for p, ex in zip(prepared, exs):
        r = p["retrieved"]
        assert r.doc_ids == retrieve(ex, method="bm25").doc_ids and len(r.doc_ids) == 10
        assert sorted({s.doc_rank for s in r.snippets}) == list(range(10))
        assert len(ex.gold_doc_ids) == 2 and set(ex.gold_doc_ids) <= set(r.doc_ids)
        assert p["references"] == list(ex.answers)


def test_main_writes_the_report_on_a_few_questions(bench, tmp_path):
    out = tmp_path / "repro.md"
    assert bench.main(["--limit", "3", "--out", str(out)]) == 0
    text = out.read_text()
    assert bench.COMMAND in text and "python bench/reproduce_packer.py --out docs/packer_reproduction.md" in text
    for name in bench.COMPRESSORS:
        assert f"| {name} |" in text
    for label in bench.ABLATIONS:
        assert f"| {label} |" in text
    assert "the 3 HotpotQA train questions" in text
    assert "(the `identity` context, the ceiling): 1.00" in text
    assert "## What this shows" in text


def test_run_measures_contexts_within_budget(bench):
    exs = load_examples("hotpotqa", sample_path("hotpotqa"), limit=4)
    res = bench.run(exs, compressors=("naive", "submodular"), budgets=(96,), ablations={})
    assert res["n"] == 4 and res["retrieved_aic"] == 1.0
    for (name, b), cell in res["cells"].items():
        assert cell["max_tokens"] <= b
        assert 0.0 <= cell["cov"] <= 1.0 and len(cell["aic_pq"]) == 4
