"""The paper's 148 planned contrasts, reconstructed in the two paper suites as named families
(docs/statistics.md#the-papers-148-planned-contrasts)."""

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


def test_the_two_paper_suites_reconstruct_the_148_contrasts_family_by_family():
    asqa, _, suite_a = _families("asqa")
    qasper, plan_q, _ = _families("qasper")
    assert asqa == {"vs_identity": 40, "emitted_vs_grounded": 16, "ecr_vs_extraction": 4, "reattribution_steps": 3}
    assert qasper == {
        "vs_identity": 52,
        "emitted_vs_grounded": 16,
        "ecr_vs_extraction": 8,
        "reattribution_steps": 3,
        "evidence_steps": 6,
    }
    assert sum(asqa.values()) + sum(qasper.values()) == 148
    assert "  total: 63 rows in 4 families" in _plan_lines(suite_a)
    rows = {(r.a, r.b, r.metric_a) for r in plan_q.rows}
    # the kinds the paper reports: ECR vs extraction at 0.50, LLMLingua-2's re-attribution steps, extraction's
    # and ECR's evidence-F1 steps (effect = tighter - looser)
    assert ("ecr@0.5", "extractive@0.5", "grounded_precision") in rows
    assert ("ecr@0.5", "extractive@0.5", "evidence_f1") in rows
    assert ("token_prune@0.25", "token_prune@0.5", "re_attributability") in rows
    assert ("extractive@0.1", "extractive@0.25", "evidence_f1") in rows
    assert ("ecr@0.05", "ecr@0.1", "evidence_f1") in rows
    # the paper's fixed 10,000 replicates: the Holm floor over the union is 148/10,001 = 0.0148, its p_Holm
    assert round(148 / 10_001, 4) == 0.0148
