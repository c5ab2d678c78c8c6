"""Token-cost contrasts (docs/suites.md#token-cost-contrasts): ``achieved_tokens`` and ``achieved_ratio`` are
contrast metrics where a suite names them (direction: lower is cheaper), never in the default set; ``rageval
validate`` accepts them.  The paired test's row is checked by hand on a 5-question run."""

import json

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.report.analysis import analyze
from rageval.report.load import load_run
from rageval.types import Context, Record, Setting, Unit

# achieved tokens per question: the packer, focused (retrieved: 200 tokens each)
PACKER = [90, 95, 80, 100, 97]
FOCUSED = [94, 97, 86, 100, 100]
# packer - focused by hand: -4, -2, -6, 0, -3; mean -15/5 = -3.0.  The exact sign-flip p: |sum| = 15 is reached
# only when the four non-zero differences share a sign (2 of 16 patterns; the zero's sign is free): 4/32 = 0.125
EFFECT, P = -3.0, 0.125
SETS = [("submodular@96", "submodular", PACKER), ("focused@96", "focused", FOCUSED)]


def write_run(path, contrasts):
    path.mkdir(parents=True, exist_ok=True)
    with (path / "records.jsonl").open("w") as fh:
        for name, comp, tokens in SETS:
            for q, n in enumerate(tokens):
                ctx = Context(units=(Unit("t", ("d0.s0",)),), achieved_tokens=n, retrieved_tokens=200, budget=96)
                rec = Record(
                    question_id=f"q{q}",
                    setting=Setting(name, comp, 96, "extractive"),
                    status="ok",
                    context=ctx,
                    metrics={"answer_f1": float(q % 2), "answer_in_context": 1.0},
                )
                fh.write(json.dumps(rec.to_dict(), sort_keys=True) + "\n")
    manifest = {
        "suite": {
            "name": path.name,
            "hash": "abc123",
            "dataset": "toy-qa",
            "seed": 3,
            "contrasts": contrasts,
            "settings": [{"name": n, "compressor": c, "budget": 96} for n, c, _ in SETS],
            "cluster_key": None,
        },
        "package": {"name": "rageval", "version": "0.1.0"},
        "models": {"reader": "extractive", "judge": "lexical"},
        "inputs": {"dataset_hash": "d1"},
    }
    (path / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return path


def test_the_paired_test_of_achieved_tokens_equals_a_hand_computation(tmp_path):
    plan = [{"a": "submodular@96", "b": "focused@96", "metrics": ["achieved_tokens", "achieved_ratio"]}]
    an = analyze(load_run(write_run(tmp_path / "r", plan)), n_resamples=2000)
    tokens, ratio = an.contrasts
    assert (tokens["metric"], tokens["direction"], tokens["kind"]) == ("achieved_tokens", "lower", "pair")
    assert tokens["effect"] == pytest.approx(EFFECT) and (tokens["n"], tokens["n_dropped"]) == (5, 0)
    assert tokens["mean_a"] == pytest.approx(sum(PACKER) / 5) and tokens["mean_b"] == pytest.approx(sum(FOCUSED) / 5)
    assert tokens["p_method"].startswith("exact") and tokens["p_value"] == pytest.approx(P)
    assert tokens["ci_high"] <= 0  # every resampled mean of -4, -2, -6, 0, -3 is at most 0
    # the ratio: the same differences over 200 retrieved tokens, the same test
    assert (ratio["metric"], ratio["direction"]) == ("achieved_ratio", "lower")
    assert ratio["effect"] == pytest.approx(EFFECT / 200) and ratio["p_value"] == pytest.approx(P)
    # two rows in the one family: Holm over both (equal p: both 2 x 0.125)
    assert tokens["p_holm"] == pytest.approx(2 * P) and an.holm["family_sizes"] == {"all": 2}


def test_achieved_tokens_is_not_a_default_metric(tmp_path):
    an = analyze(load_run(write_run(tmp_path / "r", [{"a": "submodular@96", "b": "focused@96"}])), n_resamples=200)
    # the default set: the metrics with a direction the records carry; the context measures only where named
    assert sorted(c["metric"] for c in an.contrasts) == ["answer_f1", "answer_in_context"]


SUITE = """\
name: cost
dataset: {{name: hotpotqa, limit: 3}}
retrieval: {{method: bm25, k: 3}}
settings:
  - {{compressor: submodular, budgets: [96]}}
  - {{compressor: focused, budgets: [96]}}
reader: {{backend: extractive}}
judge: {{spec: lexical}}
diagnostics: [answer_in_context, answer_f1]
contrasts:
  families: [{{planned: [{{a: submodular@96, b: focused@96, metrics: [answer_f1]}}]}}]
  separate: [{{token_cost: [{{a: submodular@96, b: focused@96, metrics: [{metric}]}}]}}]
output_dir: {out}
"""


def test_validate_accepts_achieved_tokens_contrasts(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(SUITE.format(metric="achieved_tokens", out=tmp_path / "run"))
    res = CliRunner().invoke(main, ["validate", str(p)])
    assert res.exit_code == 0, res.output
    assert "token_cost: 1 rows" in res.output and "planned: 1 rows" in res.output
    p.write_text(SUITE.format(metric="achieved_tokenz", out=tmp_path / "run"))
    res = CliRunner().invoke(main, ["validate", str(p)])
    assert res.exit_code != 0 and "achieved_tokenz" in res.output and "achieved_tokens" in res.output


def test_a_suite_run_writes_the_token_cost_row(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(SUITE.format(metric="achieved_tokens", out=tmp_path / "run"))
    res = CliRunner().invoke(main, ["suite", str(p), "--no-progress"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    by = {(r["setting"]["name"], r["question_id"]): r["context"]["achieved_tokens"] for r in rows}
    diffs = [by[("submodular@96", q)] - by[("focused@96", q)] for (s, q) in by if s == "submodular@96"]
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    (row,) = [c for c in report["contrasts"] if c["family"] == "token_cost"]
    assert row["metric"] == "achieved_tokens" and row["direction"] == "lower"
    assert row["effect"] == pytest.approx(sum(diffs) / len(diffs))
    assert report["holm"]["family_sizes"]["token_cost"] == 1  # its own family, beside the planned one
