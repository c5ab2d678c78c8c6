"""Attribution options (one frozen object; each function takes only the options it uses) and judge
abstentions through the engine, the modules and evaluate.combine — values computed by hand."""

import math
from pathlib import Path

import pytest

from rageval.diagnostics.attribution import (
    AttributionOptions,
    attribution_scores_batch,
    emitted_precision,
    grounded_precision,
    re_attributability,
)
from rageval.diagnostics.verification import verification

ROOT = Path(__file__).resolve().parents[1]
U1, U2 = "Paris is the capital of France.", "Paris has museums."
UNITS = [[{"text": U1, "source_ids": None}, {"text": U2, "source_ids": None}]]
ANSWER = ["Paris is the capital of France [1][2]. Paris has museums [2]."]


def _words(s):
    return {w.strip(".,").lower() for w in s.split()}


def picky(premises, hypotheses):
    """Entailment = every hypothesis word in the premise; abstains on (U2 alone, the capital claim)."""
    out = []
    for p, h in zip(premises, hypotheses):
        if p == U2 and "capital" in h:
            out.append(float("nan"))
        else:
            out.append(1.0 if _words(h) <= _words(p) else 0.0)
    return out


def test_abstention_on_one_citation_alone():
    # sentence 1 cites [1][2]: joint holds; [1] alone holds (precise); [2] alone abstains, the others ([1])
    # still entail -> [2] imprecise, and abstained.  Sentence 2 cites [2]: precise.
    r = attribution_scores_batch(ANSWER, UNITS, [[]], judge=picky, parts=("emitted",))[0]
    assert r["emitted_recall"] == 1.0
    assert r["emitted_precision"] == pytest.approx(2 / 3)  # abstention counted as "not entailed"
    assert r["emitted_precision_excl_abstain"] == 1.0  # (1 + 1) / 2, the abstained citation left out
    assert r["emitted_recall_excl_abstain"] == 1.0
    assert r["judge_abstentions"] == 1


def always_abstain(premises, hypotheses):
    return [float("nan")] * len(premises)


def test_a_judge_that_always_abstains():
    units = [[{"text": U1, "source_ids": None}]]
    sources = [[{"id": "d0.s0", "text": "Paris is the capital of France."}]]
    r = attribution_scores_batch(["Paris is the capital of France [1]."], units, sources, judge=always_abstain)[0]
    assert (r["emitted_recall"], r["emitted_precision"]) == (0.0, 0.0)
    assert r["emitted_recall_excl_abstain"] is None and r["emitted_precision_excl_abstain"] is None
    # the recovery candidate abstained: the unit is not re-attributable, and left out of the _excl rate
    assert r["re_attributability"] == 0.0 and r["re_attributability_excl_abstain"] is None
    assert r["grounded_precision"] == 0.0 and r["citations_missing"] == 1
    assert r["unsupported_summary_checked"] == 1.0 and r["unsupported_summary_checked_excl_abstain"] is None
    # declared-span: a structural rejection, not an abstention
    assert r["unsupported_declared_span"] == 1.0 and r["unsupported_declared_span_excl_abstain"] == 1.0
    # recovery 1 + emitted joint 1 + summary-checked 1 (grounded and the other modes make no call)
    assert r["judge_abstentions"] == 3


def test_judge_that_never_abstains_gives_equal_excl_scores():
    units = [[{"text": U1, "source_ids": ["d0.s0"]}, {"text": "Berlin is big.", "source_ids": None}]]
    sources = [[{"id": "d0.s0", "text": U1}, {"id": "d1.s0", "text": "Berlin is a big city."}]]
    r = attribution_scores_batch(["Paris is the capital of France [1][2]."], units, sources)[0]
    for key in (
        "emitted_precision",
        "emitted_recall",
        "grounded_precision",
        "grounded_recall",
        "re_attributability",
        "unsupported_recovered_source",
    ):
        assert r[f"{key}_excl_abstain"] == r[key]
    assert r["judge_abstentions"] == 0


def test_each_function_takes_only_the_options_it_uses():
    with pytest.raises(TypeError):
        emitted_precision(ANSWER, UNITS, [[]], k=999)
    with pytest.raises(TypeError):
        emitted_precision(ANSWER, UNITS, [[]], multi_snippet=True)
    with pytest.raises(TypeError):
        re_attributability(ANSWER, UNITS, [[]], max_citations=2)
    with pytest.raises(TypeError):
        verification(ANSWER, UNITS, [[]], no_citation_precision="zero")
    with pytest.raises(TypeError, match="did you mean|Did you mean"):
        attribution_scores_batch(ANSWER, UNITS, [[]], tresholds=0.5)


@pytest.mark.parametrize(
    "bad",
    [
        {"threshold": True},
        {"threshold": 1.5},
        {"k": 0},
        {"k": 2.5},
        {"candidates": "sparse"},
        {"no_citation_precision": "none"},
        {"max_citations": 0},
        {"recovery_threshold": float("nan")},
    ],
)
def test_invalid_option_values_are_errors_naming_the_option(bad):
    name = next(iter(bad))
    with pytest.raises(ValueError, match=name):
        AttributionOptions.build(**bad)
    with pytest.raises(ValueError, match=name):
        attribution_scores_batch(ANSWER, UNITS, [[]], **bad)


def test_options_are_frozen_and_shared_with_the_suite_config():
    from pydantic import ValidationError

    from rageval.suite.config import AttributionSpec

    o = AttributionOptions(k=5)
    with pytest.raises(ValidationError):
        o.k = 6
    assert issubclass(AttributionOptions, AttributionSpec)
    # the same options object through options= or keywords gives the same scores
    a = grounded_precision(ANSWER, UNITS, [[{"id": "d0.s0", "text": U1}]], k=1)
    b = attribution_scores_batch(
        ANSWER,
        UNITS,
        [[{"id": "d0.s0", "text": U1}]],
        options=o.model_copy(update={"k": 1}),
        parts=("emitted", "grounded"),
    )
    assert a["per_question"][0]["grounded_precision"] == b[0]["grounded_precision"]


@pytest.fixture(scope="module")
def modules():
    evaluate = pytest.importorskip("evaluate")
    import os

    old = os.getcwd()
    os.chdir(ROOT)
    try:
        return evaluate, {
            n: evaluate.load(f"metrics/{n}") for n in ("emitted_precision", "grounded_precision", "answer_f1")
        }
    finally:
        os.chdir(old)


def test_module_ignores_other_modules_options_and_rejects_unknown_names(modules):
    _, m = modules
    base = m["emitted_precision"].compute(predictions=ANSWER, units=UNITS, sources=[[]])
    with_k = m["emitted_precision"].compute(
        predictions=ANSWER, units=UNITS, sources=[[]], k=5, multi_snippet=True, references=[["x"]]
    )
    assert with_k["emitted_precision"] == base["emitted_precision"] == pytest.approx(2 / 3)
    with pytest.raises(TypeError, match="tresholds"):
        m["emitted_precision"].compute(predictions=ANSWER, units=UNITS, sources=[[]], tresholds=0.4)


def test_evaluate_combine_gives_each_module_its_own_inputs(modules):
    evaluate, m = modules
    combined = evaluate.combine([m["emitted_precision"], m["answer_f1"]])
    r = combined.compute(
        predictions=["Paris is the capital of France [1]."],
        references=[["Paris"]],
        units=[[{"text": U1, "source_ids": None}]],
        sources=[[]],
        threshold=0.5,
    )
    assert r["emitted_precision"] == 1.0
    # normalized answer: paris is capital of france (5 tokens, "the" dropped); P = 1/5, R = 1 -> F1 = 1/3
    assert r["answer_f1"] == pytest.approx(2 * (1 / 5) * 1 / (1 / 5 + 1))


def test_abstentions_reach_the_module_output(modules):
    _, m = modules
    r = m["emitted_precision"].compute(predictions=ANSWER, units=UNITS, sources=[[]], judge=picky)
    assert r["emitted_precision"] == pytest.approx(2 / 3)
    assert r["emitted_precision_excl_abstain"] == 1.0
    assert r["per_question"][0]["judge_abstentions"] == 1
    assert not math.isnan(r["emitted_precision"])
