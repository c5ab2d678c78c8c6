"""The conventions that move the paper's numbers, each hand-computed both ways: str-EM's answer lines (ALCE's
first line in ALCE mode), answer-in-context across unit boundaries (joined as the prompt joins the units), QASPER's unmatched gold evidence, and
sparse settings on the Pareto frontier."""

import json

import numpy as np
import pytest

from rageval.data import load_examples
from rageval.diagnostics.answer import answer_in_context, score_answer_in_context, str_em
from rageval.diagnostics.evidence import evidence_f1
from rageval.report.frontier import _pair


def test_str_em_reads_every_line_by_default_and_alce_s_first_line_in_alce_mode():
    # the answer names Paris on its second line only; the one qa_pair's short answer is Paris
    pred, ref = ["It is Lyon [1].\nActually Paris [2]."], [[["Paris"]]]
    assert str_em(pred, ref)["str_em"] == 1.0  # default citation mode: the whole answer
    assert str_em(pred, ref, alce_compat=True)["str_em"] == 0.0  # ALCE's eval.py: the first line only
    # a suite in citations: {mode: alce} scores with alce_compat (the first line); mode default does not
    from rageval.diagnostics.inputs import scoring_options
    from rageval.scoring import CitationConfig, ScoringConfig

    assert scoring_options(ScoringConfig(citations=CitationConfig(mode="alce"))).alce_compat
    assert not scoring_options(ScoringConfig(citations=CitationConfig(mode="default"))).alce_compat


def test_answer_in_context_inside_one_unit_or_across_unit_boundaries():
    units, gold = [["Gustave Eiffel built the tower in", "1889 for the fair."]], [["tower in 1889"]]
    out = answer_in_context(units, gold)
    assert out["answer_in_context"] == 1.0  # the packing paper's definition: across the boundary
    assert out["answer_in_context_unit"] == 0.0  # inside one unit: split by the boundary
    # ASQA: the mean over qa_pairs; pair 1 inside unit 0, pair 2 across the boundary: unit 1/2, packed 2/2
    two = answer_in_context(units, [[["Eiffel"], ["tower in 1889"]]])
    assert (two["answer_in_context"], two["answer_in_context_unit"]) == (1.0, 0.5)


def test_the_packed_context_joins_the_units_as_the_prompt_does():
    """What lies between two units in the prompt lies between them in the packed context: a title line, the
    separator's words; a unit boundary is a token boundary (never two half-words glued into one)."""
    gold = [["capital of France"]]
    # unit 2's title line sits between "capital" and "of France" where the prompt shows titles
    assert answer_in_context([["the capital", "Geography\nof France"]], gold)["answer_in_context"] == 0.0
    assert answer_in_context([["the capital", "of France"]], gold)["answer_in_context"] == 1.0  # titles not shown
    # a separator that normalizes to nothing (punctuation, a newline) adds no token; its words do
    for sep in ("\n", "\n\n", " | ", "|", "---"):
        assert answer_in_context([["the capital", "of France"]], gold, separator=sep)["answer_in_context"] == 1.0
    assert answer_in_context([["capital", "of France"]], gold, separator="\nNext:\n")["answer_in_context"] == 0.0
    # "Par" + "|" + "is": normalizing the joined text would read "paris"; the boundary keeps two tokens
    glued = answer_in_context([["Par", "is"]], [["Paris"]], separator="|")
    assert (glued["answer_in_context"], glued["answer_in_context_unit"]) == (0.0, 0.0)
    # an empty unit adds nothing between its neighbours; an empty context scores 0, never undefined
    assert answer_in_context([["capital", "", "of France"]], gold)["answer_in_context"] == 1.0
    assert answer_in_context([[]], gold)["answer_in_context"] == 0.0


def test_the_record_scorer_joins_the_units_as_the_reader_s_template_does():
    from rageval.diagnostics.inputs import Gold, ScoringInput
    from rageval.readers.template import PromptTemplate
    from rageval.types import Context, Unit

    units = (
        Unit(text="built the tower in", source_ids=None),
        Unit(text="1889 for the fair.", source_ids=None, title="Expo"),
    )

    def scored(template: PromptTemplate) -> tuple[float, float]:
        x = ScoringInput.build(
            question_id="q",
            answer="1889 [1].",
            context=Context(units=units, achieved_tokens=8, retrieved_tokens=8),
            sources=(),
            gold=Gold(answers=("tower in 1889",)),
            evidence_text=template.evidence_text,
        )
        out = score_answer_in_context([x], None)
        return out["answer_in_context"], out["answer_in_context_unit"]

    assert scored(PromptTemplate()) == (0.0, 0.0)  # the title "Expo" lies between "in" and "1889"
    assert scored(PromptTemplate(show_titles=False)) == (1.0, 0.0)  # nothing between them but a newline
    assert scored(PromptTemplate(show_titles=False, unit_separator="\n\nAlso:\n")) == (0.0, 0.0)


def test_qasper_unmatched_gold_evidence_is_counted_as_the_official_scorer_does(tmp_path):
    paper = {
        "p1": {
            "title": "T",
            "abstract": "An abstract.",
            "full_text": [{"section_name": "S", "paragraphs": ["We use 412 questions.", "Other text."]}],
            "qas": [
                {
                    "question": "How many questions?",
                    "question_id": "q1",
                    "answers": [
                        {
                            "answer": {
                                "extractive_spans": ["412"],
                                "yes_no": None,
                                "free_form_answer": "",
                                "unanswerable": False,
                                "evidence": ["We use 412 questions.", "FLOAT SELECTED: Table 1: counts"],
                            }
                        }
                    ],
                }
            ],
        }
    }
    path = tmp_path / "qasper.json"
    path.write_text(json.dumps(paper))
    ex = load_examples("qasper", path)[0]
    (gold,) = ex.evidence
    assert gold[0] == "d0" and gold[1].startswith("unmatched:") and len(gold) == 2
    assert ex.gold_doc_ids == ("d0",)  # retrieval's gold documents: the matched paragraphs only
    assert ex.meta["float_evidence"] == 1
    # the answer cites the unit declaring d0: P = 1/1, R = 1/2 -> F1 2/3 counted; 1.0 with the string dropped
    kw = dict(units=[[{"text": "412", "source_ids": ["d0.s0"]}]], sources=[[{"id": "d0.s0", "text": "412"}]])
    refs = [[list(gold)]]
    assert evidence_f1(["412 [1]."], references=refs, **kw)["evidence_f1"] == pytest.approx(2 / 3)
    assert evidence_f1(["412 [1]."], references=refs, unmatched_gold="drop", **kw)["evidence_f1"] == 1.0


def _frontier(sparse_mode):
    """Three settings on (achieved_ratio lower, grounded_precision higher) over a cohort of 4 questions:
    A (0.5, 0.6) and C (0.3, 0.5) defined on all 4; B (0.05, 1.0) answers 1 of 4 (share 0.25 < 0.5)."""
    nan = np.nan
    vals = {
        ("A", "achieved_ratio"): np.array([0.5] * 4),
        ("A", "grounded_precision"): np.array([0.6, 0.6, 0.6, 0.6]),
        ("B", "achieved_ratio"): np.array([0.05] * 4),
        ("B", "grounded_precision"): np.array([1.0, nan, nan, nan]),
        ("C", "achieved_ratio"): np.array([0.3] * 4),
        ("C", "grounded_precision"): np.array([0.5, 0.5, 0.5, 0.5]),
    }
    intervals = {
        s: {k: {"mean": float(np.nanmean(vals[(s, k)]))} for k in ("achieved_ratio", "grounded_precision")}
        for s in "ABC"
    }
    return _pair(
        "achieved_ratio",
        "grounded_precision",
        vals,
        intervals,
        ["A", "B", "C"],
        None,
        0,
        200,
        0.05,
        (0.5, sparse_mode),
    )


def test_a_sparse_setting_is_marked_and_kept_off_the_frontier_by_default():
    default = _frontier("exclude")
    # B's one answered question would make it dominate both others and form the frontier alone
    assert default["sparse"] == ["B"] and default["defined"]["B"] == {"n": 1, "n_undefined": 3, "share": 0.25}
    assert default["frontier"] == ["A", "C"] and default["dominated"] == []  # neither A nor C dominates the other
    ranked = _frontier("include")
    assert ranked["frontier"] == ["B"] and sorted(ranked["dominated"]) == ["A", "C"]
    assert ranked["sparse"] == ["B"]  # still marked
