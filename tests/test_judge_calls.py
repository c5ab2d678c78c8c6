"""Calls not made: which judge pairs the attribution diagnostics ask for and which the judge runs.

A small case worked out by hand.  Two units ``alpha beta`` and ``gamma delta``, each the text of one source
snippet, and the answer ``alpha beta [1]. gamma delta [1][2].``, judged by word coverage (1 when every word
of the hypothesis is in the premise, else 0):

* emitted gate: sentence 1 joint (u1, "alpha beta."); sentence 2 joint (u1+u2, "gamma delta."), which
  holds with two citations, so each alone: (u1, ...) fails, (u2, ...) holds, and the others without
  citation 1 = (u2, ...) again: 5 requests, 4 distinct pairs;
* grounded gate: the declared snippets are written exactly as the units (byte-identical premises): the
  same 5 requests, nothing new;
* verification: summary-checked, declared-span and recovered-source premises are the gate's joint
  premises: 6 requests, nothing new.

So the identity setting asks 16 pairs and the judge runs 4; the same context again (another compressor
giving identical units) asks 16 more and runs none.  Without provenance, re-attribution asks each unit's
one BM25 candidate (the other snippet shares no word, so it has no positive score): 2 new pairs
(hypothesis = the unit text); the recovered snippets are the declared ones, so the gate's 10 requests and
verification's 4 (declared-span is a structural rejection, no call) are all answered from memory: 16
asked, 2 run.  The threshold sweep asks the recovery pairs again and the grounded gate once (the
recovered ids are the same at every threshold): 7 asked, none run.  A rerun from the disk cache runs
nothing.
"""

import re

import pytest

from rageval.diagnostics.attribution import attribution_scores_batch
from rageval.diagnostics.attribution.sweep import sweep_batch
from rageval.judges import CallableJudge, JudgeRunner

SOURCES = [{"id": "s0", "text": "alpha beta"}, {"id": "s1", "text": "gamma delta"}]
DECLARED = [{"text": "alpha beta", "source_ids": ["s0"]}, {"text": "gamma delta", "source_ids": ["s1"]}]
NO_PROVENANCE = [{"text": u["text"], "source_ids": None} for u in DECLARED]
ANSWER = "alpha beta [1]. gamma delta [1][2]."


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


class Recorder:
    """Word-coverage judge that records every pair it is made to score."""

    id = "test:coverage"

    def __init__(self):
        self.scored: list[tuple[str, str]] = []

    def predict(self, premises, hypotheses):
        self.scored.extend(zip(premises, hypotheses))
        return [1.0 if _words(h) <= _words(p) else 0.0 for p, h in zip(premises, hypotheses)]


def _counts(runner):
    st = runner.stats()
    return st["requested"], st["executed"]


def _score(runner, units):
    return attribution_scores_batch([ANSWER], [units], [SOURCES], judge=runner)[0]


def test_each_distinct_pair_runs_once_and_shared_judgments_are_not_rerun(tmp_path):
    judge = Recorder()
    runner = JudgeRunner(judge, cache_dir=tmp_path)
    row = _score(runner, DECLARED)
    assert _counts(runner) == (16, 4)
    assert judge.scored == [
        ("alpha beta", "alpha beta."),
        ("alpha beta\ngamma delta", "gamma delta."),
        ("alpha beta", "gamma delta."),
        ("gamma delta", "gamma delta."),
    ]
    # citation 1 of sentence 2 is imprecise (alone it fails, the others still entail): 2 precise of 3
    assert row["emitted_precision"] == row["grounded_precision"] == pytest.approx(2 / 3)
    assert row["unsupported_summary_checked"] == row["unsupported_declared_span"] == 0.0

    _score(runner, DECLARED)  # the same context under another setting
    assert _counts(runner) == (32, 4)

    row = _score(runner, NO_PROVENANCE)
    assert _counts(runner) == (48, 6)
    assert judge.scored[4:] == [("alpha beta", "alpha beta"), ("gamma delta", "gamma delta")]
    assert row["re_attributability"] == 1.0 and row["grounded_precision"] == pytest.approx(2 / 3)
    assert row["structural_rejections_declared_span"] == 2

    sweep_batch([ANSWER], [NO_PROVENANCE], [SOURCES], judge=runner)
    assert _counts(runner) == (55, 6)
    assert len(judge.scored) == len(set(judge.scored)) == 6  # no pair ever scored twice
    runner.close()

    again = JudgeRunner(Recorder(), cache_dir=tmp_path)  # a rerun: every pair from the disk cache
    for units in (DECLARED, DECLARED, NO_PROVENANCE):
        _score(again, units)
    st = again.stats()
    assert (st["requested"], st["executed"], st["cache_hits"]) == (48, 0, 6)
    again.close()


def test_a_callable_judge_without_id_is_counted_the_same_way():
    runner = JudgeRunner(CallableJudge(Recorder().predict))  # memory only, no disk cache
    for units in (DECLARED, DECLARED, NO_PROVENANCE):
        _score(runner, units)
    assert _counts(runner) == (48, 6)
    assert runner.stats()["executed_over_requested"] == pytest.approx(6 / 48)


def _records(predict) -> list:
    runner = JudgeRunner(CallableJudge(predict, judge_id="test:flip"))
    out: list = [_score(runner, units) for units in (DECLARED, DECLARED, NO_PROVENANCE)]
    out.append(sweep_batch([ANSWER], [NO_PROVENANCE], [SOURCES], judge=runner))
    return out


def test_every_executed_pair_decides_a_recorded_value():
    """Flip the decision of one executed pair at a time: every flip changes some record (so none of the 6 pairs
    could have been left unasked without changing a value)."""
    judge = Recorder()
    reference = _records(judge.predict)
    pairs = list(dict.fromkeys(judge.scored))
    assert len(pairs) == 6
    for pair in pairs:

        def flipped(premises, hypotheses, pair=pair):
            values = Recorder().predict(premises, hypotheses)
            return [1.0 - v if pq == pair else v for pq, v in zip(zip(premises, hypotheses), values)]

        assert _records(flipped) != reference, pair


def test_claim_support_shares_the_gates_judge_calls():
    """Claim support of the same answer: its claims "alpha beta." and "gamma delta." against each unit alone,
    emitted and grounded (the declared snippets are byte-identical premises): 8 requests, 4 distinct pairs, of
    which the gate already judged 3 ((u1, "alpha beta."), (u1, "gamma delta."), (u2, "gamma delta.")): one new
    pair, (u2, "alpha beta.").  Through the run's scoring (one runner for every diagnostic) the same: 24 asked,
    5 run."""
    from rageval.diagnostics.claim_support import claim_support
    from rageval.diagnostics.dispatch import score
    from rageval.diagnostics.inputs import Gold, ScoringInput, ScoringOptions
    from rageval.types import Context, SourceSnippet, Unit

    judge = Recorder()
    runner = JudgeRunner(judge)
    _score(runner, DECLARED)
    assert _counts(runner) == (16, 4)
    r = claim_support([ANSWER], [DECLARED], [SOURCES], judge=runner)["per_question"][0]
    assert _counts(runner) == (24, 5)
    assert judge.scored[4:] == [("gamma delta", "alpha beta.")]
    assert r["claim_support_emitted"] == r["claim_support_grounded"] == 1.0
    alone = JudgeRunner(Recorder())  # without the gate: all 4 distinct pairs run
    claim_support([ANSWER], [DECLARED], [SOURCES], judge=alone)
    assert _counts(alone) == (8, 4)

    snippets = [SourceSnippet(s["id"], s["text"], doc_id=s["id"]) for s in SOURCES]
    units = [Unit(u["text"], source_ids=tuple(u["source_ids"])) for u in DECLARED]
    ctx = Context.measure(units, tokenizer="regex", retrieved_tokens=4, budget_tokens=None)
    x = ScoringInput.build(
        question_id="q",
        answer=ANSWER,
        context=ctx,
        sources=snippets,
        gold=Gold(),
        evidence_text=lambda u: u.text,
    )
    run_judge = Recorder()
    run_runner = JudgeRunner(run_judge)
    metrics = score(
        [x], ["emitted_recall", "grounded_recall", "verification", "claim_support"], ScoringOptions(), run_runner
    )
    assert _counts(run_runner) == (24, 5)
    assert metrics[0][0]["claim_support_emitted"] == 1.0
