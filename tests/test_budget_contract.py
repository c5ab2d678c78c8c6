"""The budget contract (docs/compressors.md#the-budget-contract): each compressor declares whether it promises
its budget; only a promise is checked.  A best-effort compressor over its budget (an LLMLingua-2 stand-in) keeps
its records ok and the common cohort whole, its overshoot recorded and counted; a promising compressor over its
budget is still ``budget_check``.  No compressor is exempted by name."""

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from rageval.compressors import (
    BUDGET_CONTRACTS,
    REGISTRY,
    BaseCompressor,
    CompressorConfigError,
    budget_contract,
    get,
    names,
)

from rageval.suite.load import load_suite
from rageval.suite.run import run_suite
from rageval.types import Unit

ROOT = Path(__file__).resolve().parents[1]


class Overshooting(BaseCompressor):
    """An LLMLingua-2 stand-in: token pruning to the budget, then two tokens more (as a compressor counting with
    its own tokenizer can miss by); ``contract`` is what it declares."""

    name = "overshooting"
    PARAMS: ClassVar[dict[str, Any]] = {"contract": "best_effort"}

    def _check_params(self):
        self.budget_contract = self.params["contract"]
        self._prune = get("token_prune")

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        units = self._prune._compress(question, snippets, costs, budget_tokens, tokenizer)
        last = units[-1]
        return [*units[:-1], Unit(last.text + " two more", source_ids=None, title=last.title)]


@pytest.fixture
def overshooting():
    REGISTRY.register("overshooting", Overshooting)
    yield
    REGISTRY.unregister("overshooting")


def _run(tmp_path, contract, build_report=True):
    p = tmp_path / "s.yaml"
    p.write_text(f"""\
name: contract
dataset: {{name: hotpotqa, limit: 6}}
retrieval: {{method: bm25, k: 3}}
settings:
  - {{compressor: identity}}
  - {{compressor: overshooting, budgets: [0.25], params: {{contract: {contract}}}}}
reader: {{backend: extractive}}
judge: {{spec: lexical}}
diagnostics: [answer_in_context, emitted_precision]
output_dir: {tmp_path / "out"}
seed: 0
""")
    result = run_suite(load_suite(p), progress=False, build_report=build_report)
    recs = [json.loads(x) for x in (result.out_dir / "records.jsonl").read_text().splitlines()]
    return result, [r for r in recs if r["setting"]["compressor"] == "overshooting"]


def test_a_best_effort_compressor_over_its_budget_leaves_the_cohort_whole(overshooting, tmp_path):
    result, recs = _run(tmp_path, "best_effort")
    assert result.status_counts == {"ok": 12}
    assert len(recs) == 6 and all(r["status"] == "ok" and r["metrics"] for r in recs)
    for r in recs:  # the achieved size is in the context, the overshoot beside it
        ctx = r["context"]
        assert ctx["achieved_tokens"] == ctx["budget_tokens"] + 2
        assert r["extra"]["budget_overshoot"] == 2
    cohort = json.loads(Path(result.report["report_json"]).read_text())["cohort"]
    assert cohort["n"] == cohort["n_questions"] == 6
    counted = {"overshooting@0.25": {"records": 6, "ok": 6, "tokens": 12, "max": 2}}
    assert result.over_budget == counted
    assert json.loads((result.out_dir / "run_stats.json").read_text())["over_budget"] == counted
    # a rerun reuses the records and counts them the same
    again, _ = _run(tmp_path, "best_effort", build_report=False)
    assert again.reused == 12 and again.over_budget == counted


def test_a_promising_compressor_over_its_budget_is_still_budget_check(overshooting, tmp_path):
    result, recs = _run(tmp_path, "exact", build_report=False)
    assert result.status_counts == {"ok": 6, "budget_check": 6}
    assert all(r["status"] == "budget_check" and not r["metrics"] for r in recs)
    assert all(r["error"].endswith(f"over the budget of {r['context']['budget_tokens']}") for r in recs)
    assert all(r["extra"]["budget_overshoot"] == 2 for r in recs)
    assert result.over_budget == {"overshooting@0.25": {"records": 6, "ok": 0, "tokens": 12, "max": 2}}


def test_a_budget_blind_compressor_is_not_checked_either(overshooting, tmp_path):
    result, _ = _run(tmp_path, "none", build_report=False)
    assert result.status_counts == {"ok": 12}


def test_records_within_the_budget_carry_no_overshoot(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(f"""\
name: within
dataset: {{name: hotpotqa, limit: 2}}
retrieval: {{method: bm25, k: 3}}
settings: [{{compressor: naive, budgets: [40]}}, {{compressor: identity, budgets: [40]}}]
reader: {{backend: extractive}}
judge: {{spec: lexical}}
diagnostics: [answer_in_context]
output_dir: {tmp_path / "out"}
""")
    result = run_suite(load_suite(p), progress=False, build_report=False)
    recs = [json.loads(x) for x in (result.out_dir / "records.jsonl").read_text().splitlines()]
    naive = [r for r in recs if r["setting"]["compressor"] == "naive"]
    assert all(r["status"] == "ok" and "budget_overshoot" not in r["extra"] for r in naive)
    # identity promises nothing it can keep but is checked: its budget binds (the reference over the budget)
    ident = [r for r in recs if r["setting"]["compressor"] == "identity"]
    assert all(r["status"] == "budget_check" and r["extra"]["budget_overshoot"] > 0 for r in ident)


def test_every_compressor_declares_a_contract_and_token_prune_depends_on_its_backend():
    declared = {}
    for n in names():
        params = {"model": "some-model"} if n == "abstractive" else {}
        declared[n] = budget_contract(get(n, **params))
    assert set(declared.values()) <= set(BUDGET_CONTRACTS)
    assert declared == {
        "abstractive": "best_effort",
        "ecr": "exact",
        "extractive": "exact",
        "focused": "exact",
        "given": "none",
        "identity": "exact",
        "mmr": "exact",
        "naive": "exact",
        "rerank": "exact",
        "submodular": "exact",
        "token_prune": "exact",  # the idf backend selects exactly
    }
    llm = get("token_prune", backend="llmlingua2", model="llmlingua-2-xlm-roberta-large-meetingbank")
    assert budget_contract(llm) == "best_effort"
    assert budget_contract(get("token_prune", backend="token_classifier", model="x")) == "exact"
    # the docs' table says the same, one row per compressor
    section = (ROOT / "docs" / "compressors.md").read_text().split("## The budget contract", 1)[1]
    rows = [line for line in section.split("\n## ", 1)[0].splitlines() if line.startswith("| `")]
    for n, c in declared.items():
        row = next(line for line in rows if f"`{n}`" in line.split("|")[1])
        assert f"`{c}`" in row.split("|")[2], (n, row)


def test_a_user_subclass_declares_its_contract_and_a_wrong_one_fails_with_a_hint():
    class Mine(BaseCompressor):
        name = "mine"
        budget_contract = "best-effort"

    with pytest.raises(CompressorConfigError, match="Did you mean 'best_effort'"):
        Mine()
    assert budget_contract(object()) == "exact"  # a protocol compressor that declares nothing is checked


def test_no_compressor_is_exempted_by_name():
    for path in (ROOT / "src" / "rageval" / "run").glob("*.py"):
        text = path.read_text()
        assert "ignores_budget" not in text, path
        for n in names():
            assert f'== "{n}"' not in text and f"== '{n}'" not in text, (path, n)
