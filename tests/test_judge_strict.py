"""The strict lexical judge (``lexical-strict``, rageval.judges.strict): hand-written contrast pairs, the real
cases of issue 40 built from the shipped samples, and the old ``lexical`` judge unchanged by name."""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path

import pytest

from rageval.judges import get_judge
from rageval.judges.lexical import LexicalJudge
from rageval.judges.strict import B0, B_COV, B_ENT, B_PAIRS, REFUSED, StrictLexicalJudge, explain, features, numbers
from rageval.score import ScoreOptions, score_files


def p(premise: str, hypothesis: str) -> float:
    return StrictLexicalJudge().predict([premise], [hypothesis])[0]


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def test_ids_and_names():
    assert get_judge("lexical-strict").id == "lexical-strict:v1"
    assert get_judge("lexical").id == "lexical:v1"  # the old judge: its id (its cache keys) unchanged


def test_a_restated_sentence_has_every_signal_at_one():
    # cov = pairs = entities = 1, no rule fires: p = sigmoid(B0 + B_COV + B_PAIRS + B_ENT)
    f = features("Paris is the capital of France.", "Paris is the capital of France.")
    assert (f.cov, f.pairs, f.entities, f.refused) == (1.0, 1.0, 1.0, False)
    assert p("Paris is the capital of France.", "Paris is the capital of France.") == pytest.approx(
        sigmoid(B0 + B_COV + B_PAIRS + B_ENT)
    )
    assert p("Paris is the capital of France.", "Paris is the capital of France.") >= 0.5


@pytest.mark.parametrize(
    ("premise", "supported", "refuted"),
    [
        # negation / polarity
        ("The bridge was opened in 1932.", "The bridge was opened in 1932.", "The bridge was not opened in 1932."),
        (
            "Student loans do not affect credit scores.",
            "Student loans do not affect credit scores.",
            "Student loans affect credit scores.",
        ),
        ("The company never paid a dividend.", "The company never paid a dividend.", "The company paid a dividend."),
        ("He failed to win the election.", "He failed to win the election.", "He won the election."),
        # numbers: values, words, scales
        (
            "At sea level, water boils at 100 degrees Celsius.",
            "Water boils at 100 degrees Celsius.",
            "Water boils at 50 degrees.",
        ),
        ("Spiders are arachnids with eight legs.", "Spiders have eight legs.", "Spiders have six legs."),
        (
            "The city has 1.5 million inhabitants.",
            "The city has 1.5 million inhabitants.",
            "The city has 2.5 million inhabitants.",
        ),
        # units
        ("The trail is 6 km long.", "The trail is 6 km long.", "The trail is 6 miles long."),
        # entities and dates
        ("Paris is the capital of France.", "Paris is the capital of France.", "Berlin is the capital of Germany."),
        (
            "The treaty was signed on 4 March 1921 in Riga.",
            "The treaty was signed in Riga in 1921.",
            "The treaty was signed in Moscow in 1924.",
        ),
        # abstentions: never supported, whatever the premise
        ("The bridge opened in 1932.", "The bridge opened in 1932.", "I don't know."),
        ("Nothing here says when it opened.", "Nothing here says when it opened.", "It cannot be determined."),
    ],
)
def test_contrast_pairs(premise, supported, refuted):
    assert p(premise, supported) >= 0.5, explain(premise, supported)
    assert p(premise, refuted) < 0.5, explain(premise, refuted)


def test_which_rule_refuses():
    assert explain("x", "I don't know [1].")["refused_by"] == ["abstention"]
    assert explain("x", "I don't know [1].")["probability"] == 0.0
    assert explain("Water boils at 100 degrees Celsius.", "Water boils at 50 degrees.")["refused_by"] == ["number"]
    assert explain("Paris is the capital of France.", "Berlin is the capital of Germany.")["refused_by"] == ["entity"]
    assert explain("Student loans do not affect credit scores.", "Student loans can lower credit scores.")[
        "refused_by"
    ] == ["polarity"]


def test_a_refused_pair_is_its_probability_times_refused():
    # the signals are read back; the probability is the fitted one times REFUSED
    f = features("Water boils at 100 degrees Celsius.", "Water boils at 50 degrees.")
    z = B0 + B_COV * f.cov + B_PAIRS * f.pairs + B_ENT * f.entities
    assert p("Water boils at 100 degrees Celsius.", "Water boils at 50 degrees.") == pytest.approx(sigmoid(z) * REFUSED)


@pytest.mark.parametrize(
    ("premise", "hypothesis"),
    [
        ("The city has 1,500,000 inhabitants.", "The city has 1.5 million inhabitants."),
        ("The trail is 6 km long.", "The trail is 6,000 metres long."),
        ("Water boils at 100 degrees Celsius.", "Water boils at 212 degrees Fahrenheit."),
    ],
)
def test_equal_values_after_normalization_are_no_number_mismatch(premise, hypothesis):
    # the number rule compares values (scales, units converted); the overlap signals still read the tokens
    # ("1500000" is not "15 million"), so such a restatement is not supported by overlap alone: a limit
    assert "number" not in explain(premise, hypothesis)["refused_by"]


def test_numbers_are_read_after_normalization():
    assert [(n.value, n.dim) for n in numbers("2.5% of $1.5 million, 6 km, twenty-five, 1,200")] == [
        (2.5, "pct"),
        (1_500_000.0, "usd"),
        (6.0, "len"),
        (25.0, None),
        (1200.0, None),
    ]
    assert numbers("COVID-19 and F-16") == ()  # a number inside a name is not a quantity


def test_a_number_missing_without_a_rival_is_not_a_mismatch():
    # the premise says nothing numeric near the claim: the year is missing, not contradicted (rule 2); the
    # entity rule reads it (one of three entity tokens, Riga and Treaty found: above the floor)
    assert explain("The Treaty was signed in Riga.", "The Treaty was signed in Riga in 1921.")["refused_by"] == []


# -------------------------------------------------------------- the real cases (issue 40), from shipped samples


def test_eli5_credit_score_claim_is_not_entailed_by_an_answer_saying_the_opposite():
    # built from the quoted text (ALCE's ELI5 claim "Student loans can lower credit scores." judged
    # against an answer saying student loans "do not affect credit scores"), not from ALCE's file
    answer = "Student loans themselves do not affect credit scores as long as you pay on time."
    claim = "Student loans can lower credit scores."
    assert LexicalJudge().predict([answer], [claim])[0] >= 0.5  # the old judge: entailed
    assert p(answer, claim) < 0.5


def test_water_at_50_degrees_is_not_supported_by_a_passage_saying_100():
    example = resources.files("rageval.data") / "samples" / "score" / "example.jsonl"
    q2 = next(json.loads(x) for x in example.read_text("utf-8").splitlines() if '"id": "q2"' in x)
    premise = f"Title: {q2['sources'][0]['title']}\n{q2['sources'][0]['text']}"  # "... boils at 100 degrees Celsius."
    assert LexicalJudge().predict([premise], ["Water boils at 50 degrees [1]."])[0] >= 0.5
    assert p(premise, "Water boils at 50 degrees [1].") < 0.5
    assert p(premise, q2["answer"]) >= 0.5  # "Water boils at 100 degrees Celsius at sea level [1]."


def _flashrag_hotpotqa(tmp_path: Path, pred: str) -> Path:
    """A FlashRAG-shaped intermediate_data.json (tests/fixtures/peers/README.md) over the shipped HotpotQA sample:
    each question's ten context paragraphs as its retrieval result, ``pred`` as every answer."""
    hp = json.loads(
        (resources.files("rageval.data") / "samples" / "hotpotqa" / "hotpotqa_train100_distractor.json").read_text(
            "utf-8"
        )
    )
    items = [
        {
            "id": f"q{i}",
            "question": q["question"],
            "golden_answers": [q["answer"]],
            "metadata": {},
            "output": {
                "retrieval_result": [
                    {"id": f"{i}-{k}", "contents": f'"{title}"\n' + "".join(sents)}
                    for k, (title, sents) in enumerate(q["context"])
                ],
                "prompt": "",
                "raw_pred": pred,
                "pred": pred,
            },
        }
        for i, q in enumerate(hp)
    ]
    path = tmp_path / "intermediate_data.json"
    path.write_text(json.dumps(items, indent=4), encoding="utf-8")
    return path


@pytest.mark.parametrize(("judge", "expected"), [("lexical-strict", 0), ("lexical", 8)])
def test_i_dont_know_over_a_flashrag_hotpotqa_file(tmp_path, judge, expected):
    # the old judge: {dont, know} against ten paragraphs; 8 of the 100 hold "know" (1/2 >= 0.5) -- measured,
    # kept here so the contrast stays visible; the strict judge: never, an abstention-shaped claim
    path = _flashrag_hotpotqa(tmp_path, "I don't know.")
    out = tmp_path / judge
    score_files([str(path)], out, options=ScoreOptions(judge=judge), build_report=False)
    recs = [json.loads(x) for x in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(recs) == 100
    assert sum(r["metrics"]["claim_support_emitted"] == 1.0 for r in recs) == expected
