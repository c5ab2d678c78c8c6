"""The paper's 148 planned contrasts, reconstructed in the two paper suites as named families (149 rows: one more,
docs/statistics.md#the-papers-148-planned-contrasts says why)."""

from pathlib import Path

from rageval.stats.contrasts import expand_plan
from rageval.suite.cli import _plan_lines
from rageval.suite.load import load_suite

SUITES = Path(__file__).resolve().parents[1] / "suites"


def _families(name):
    suite = load_suite(SUITES / f"{name}.yaml")
    settings = [{"name": n, "compressor": c, "budget": b} for n, c, b, _ in suite.expand_settings()]
    plan = expand_plan(suite.contrasts, settings, default_metrics=("(default)",))
    return {f: sum(r.family == f for r in plan.rows) for f in plan.families}, plan, suite


def test_the_two_paper_suites_reconstruct_the_planned_contrasts_family_by_family():
    asqa, plan_a, suite_a = _families("asqa")
    qasper, plan_q, suite_q = _families("qasper")
    assert asqa == {"vs_identity": 40, "emitted_vs_grounded": 16, "ecr_vs_extraction": 4, "reattribution_steps": 3}
    assert qasper == {
        "vs_identity": 52,
        "emitted_vs_grounded": 16,
        "ecr_vs_extraction": 8,
        "reattribution_steps": 3,
        "evidence_steps": 7,
        "answer_f1": 20,
    }
    # the paper's plan: every family but the separate one (QASPER's answer F1, adjusted on its own)
    assert plan_a.separate == () and plan_q.separate == ("answer_f1",)
    planned = sum(asqa.values()) + sum(n for f, n in qasper.items() if f not in plan_q.separate)
    assert planned == 63 + 86 == 149  # one more than the paper's 148 (docs/statistics.md says why)
    lines_a, lines_q = _plan_lines(suite_a), _plan_lines(suite_q)
    assert "  total: 63 rows in 4 families, one Holm family" in lines_a
    assert "  total: 86 rows in 5 families, one Holm family" in lines_q
    assert lines_q[-2:] == ["  outside it (each adjusted on its own):", "    answer_f1: 20 rows"]
    assert "  evidence_steps: 7 rows" in lines_q
    rows = {(r.a, r.b, r.metric_a): r.family for r in plan_q.rows}
    # the kinds the paper reports: ECR vs extraction at 0.50, LLMLingua-2's three re-attribution steps,
    # extraction's and ECR's evidence-F1 steps and reranking's last (effect = tighter - looser)
    assert rows[("ecr@0.5", "extractive@0.5", "grounded_precision")] == "ecr_vs_extraction"
    assert rows[("ecr@0.5", "extractive@0.5", "evidence_f1")] == "ecr_vs_extraction"
    steps = [k for k, f in rows.items() if f == "reattribution_steps"]
    assert steps == [
        ("token_prune@0.25", "token_prune@0.5", "re_attributability"),
        ("token_prune@0.1", "token_prune@0.25", "re_attributability"),
        ("token_prune@0.05", "token_prune@0.1", "re_attributability"),
    ]
    assert rows[("extractive@0.1", "extractive@0.25", "evidence_f1")] == "evidence_steps"
    assert rows[("ecr@0.05", "ecr@0.1", "evidence_f1")] == "evidence_steps"
    assert rows[("rerank@0.05", "rerank@0.1", "evidence_f1")] == "evidence_steps"
    assert ("rerank@0.1", "rerank@0.25", "evidence_f1") not in rows  # only the last step is reported
    # QASPER's answer quality on str-EM, as the paper; answer F1 outside the plan
    assert rows[("rerank@0.5", "identity", "str_em")] == "vs_identity"
    assert rows[("rerank@0.5", "identity", "answer_f1")] == "answer_f1"
    assert sum(f == "answer_f1" for f in rows.values()) == 20
    # the paper's fixed 10,000 replicates: its p_Holm 0.0148 is 148/10,001; the reconstruction's floor 149/10,001
    assert round(148 / 10_001, 4) == 0.0148 and round(149 / 10_001, 4) == 0.0149
