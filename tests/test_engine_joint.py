"""The engine's means for the audit: settings scored jointly (one judge call across them) and a saved record's
recovered source ids kept (``Saved(fixed_recovery=True)``), each against what a plan without them gives."""

import pytest

from rageval.judges import JUDGES, CallableJudge
from rageval.judges.spec import JudgeSpec
from rageval.run.engine import execute
from rageval.run.plan import Item, Origin, Plan, Saved, SettingPlan
from rageval.rundir.manifest import RunDir
from rageval.scoring import ScoringConfig
from rageval.types import Record, Setting

SOURCES = [
    {"id": "a.s0", "text": "Paris is the capital of France."},
    {"id": "b.s0", "text": "Berlin is in Germany."},
]


def same(premises, hypotheses):
    """Support 1 where the premise holds the hypothesis word for word, else 0."""
    return [1.0 if h.rstrip(".") in p else 0.0 for p, h in zip(premises, hypotheses)]


@pytest.fixture(autouse=True)
def judge():
    JUDGES.register("joint-same", lambda arg, o: CallableJudge(same, judge_id="joint-same-v1"))
    yield
    JUDGES.unregister("joint-same")


def _record(setting, recovered):
    """An ok record whose one unit declares no provenance and whose first judge recovered ``recovered``."""
    return Record.from_dict(
        {
            "question_id": "q1",
            "setting": {"name": setting, "compressor": "c", "budget": 0.5, "reader": "r"},
            "status": "ok",
            "context": {
                "units": [{"text": "Paris is the capital of France.", "source_ids": None}],
                "budget": 0.5,
                "achieved_tokens": 6,
                "retrieved_tokens": 10,
            },
            "sources": SOURCES,
            "answer": {"text": "Paris is the capital of France [1].", "mode": "default"},
            "metrics": {},
            "extra": {"attribution": {"recovery": {"1": {"recovered": recovered}}}},
        }
    )


def _plan(joint, fixed=False, recovered=("b.s0",), diagnostics=("emitted_precision",)):
    settings = tuple(
        SettingPlan(
            Setting(name, "c", 0.5, "r"),
            Saved(fixed_recovery=fixed),
            diagnostics,
            {"judge_id": None, "setting": name},
            (Item(None, None, saved=_record(name, list(recovered))),),
            batch_size=8,
            joint=joint,
        )
        for name in ("A", "B")
    )
    return Plan(
        origin=Origin("audit", "joint", "h"),
        settings=settings,
        question_order=("q1",),
        scoring=ScoringConfig(judge=JudgeSpec(spec="joint-same")),
        diagnostics=diagnostics,
    )


def _run(tmp_path, name, plan):
    out = RunDir(tmp_path / name)
    result = execute(plan, out, progress_bar=False)
    return result, {r.setting.name: r for r in out.records()}


def test_joint_settings_are_scored_in_one_judge_call(tmp_path):
    # each record asks one pair (the sentence against its one cited unit), the same pair in A and B
    alone, recs_alone = _run(tmp_path, "alone", _plan(None))
    joint, recs_joint = _run(tmp_path, "joint", _plan("x"))
    # alone: two calls of one pair each, the second answered from memory
    assert (alone.judge_stats["requested"], alone.judge_stats["unique"]) == (2, 2)
    assert (alone.judge_stats["executed"], alone.judge_stats["memory_hits"]) == (1, 1)
    # joint: one call of the two pairs, the duplicate counted once
    assert (joint.judge_stats["requested"], joint.judge_stats["unique"]) == (2, 1)
    assert (joint.judge_stats["executed"], joint.judge_stats["memory_hits"]) == (1, 0)
    for name in ("A", "B"):  # the same records either way
        assert recs_joint[name].metrics == recs_alone[name].metrics
        assert recs_joint[name].metrics["emitted_precision"] == 1.0


def test_fixed_recovery_keeps_the_saved_recovered_ids(tmp_path):
    diagnostics = ("grounded_precision",)
    # re-recovery: BM25 ranks a.s0 first and the judge supports it -> grounded precision 1
    _, again = _run(tmp_path, "again", _plan("x", fixed=False, diagnostics=diagnostics))
    assert again["A"].extra["attribution"]["recovery"]["1"]["recovered"] == ["a.s0"]
    assert again["A"].metrics["grounded_precision"] == 1.0
    # fixed: the saved b.s0 ("Berlin is in Germany.") is kept, nothing ranked -> grounded precision 0
    _, fixed = _run(tmp_path, "fixed", _plan("x", fixed=True, diagnostics=diagnostics))
    rec = fixed["A"].extra["attribution"]["recovery"]["1"]
    assert rec["recovered"] == ["b.s0"] and rec["candidates"] == []
    assert fixed["A"].metrics["grounded_precision"] == 0.0
    assert fixed["B"].metrics == fixed["A"].metrics


def test_joint_settings_must_share_their_diagnostics(tmp_path):
    plan = _plan("x")
    a, b = plan.settings
    b = SettingPlan(b.setting, b.source, ("grounded_precision",), b.key, b.items, batch_size=8, joint="x")
    bad = Plan(plan.origin, (a, b), plan.question_order, plan.scoring, diagnostics=plan.diagnostics)
    with pytest.raises(ValueError, match="differ in diagnostics"):
        execute(bad, RunDir(tmp_path / "bad"), progress_bar=False)
