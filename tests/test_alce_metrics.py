"""ALCE's answer metrics on small cases computed by hand from the definitions (docs/design.md#alce-answer-metrics),
ALCE's QAMPARI citation sentences, and what the ALCE reader keeps as gold."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rageval.citations import parse_answer
from rageval.data.formats import read_input
from rageval.diagnostics.alce import claims_recall, qampari_f1, rouge_lsum

PARITY = Path(__file__).resolve().parent / "fixtures" / "alce_parity"


def test_qampari_precision_recall_f1_by_hand():
    (q,) = qampari_f1(["Ann, Bob, Carl."], [[["Ann", "Anne"], ["Dora"]]])["per_question"]
    # predicted {ann, bob, carl}; gold {ann|anne, dora}: P 1/3, R 1/2, top-5 min(5,1)/min(5,2) = 1/2
    assert q["qampari_precision"] == pytest.approx(1 / 3) and q["qampari_recall"] == 0.5
    assert q["qampari_recall_top5"] == 0.5 and q["qampari_num_preds"] == 3
    assert q["qampari_f1"] == pytest.approx(2 * (1 / 3) * 0.5 / (1 / 3 + 0.5)) == q["qampari_f1_top5"]


def test_qampari_top5_caps_recall_at_five_answers():
    (q,) = qampari_f1(["p, q, r, s, t, u"], [[[x] for x in "pqrstuvw"]])["per_question"]
    # 6 of 8 found: R 3/4; top-5: min(5, 6) / min(5, 8) = 1; P 1
    assert (q["qampari_precision"], q["qampari_recall"], q["qampari_recall_top5"]) == (1.0, 0.75, 1.0)
    assert q["qampari_f1"] == pytest.approx(2 * 0.75 / 1.75) and q["qampari_f1_top5"] == 1.0


def test_qampari_empty_answer_is_zero_and_no_gold_is_undefined():
    r = qampari_f1(["", "Ann"], [[["Ann"]], []])
    empty, none = r["per_question"]
    assert (empty["qampari_precision"], empty["qampari_recall"], empty["qampari_f1"]) == (0.0, 0.0, 0.0)
    assert none["qampari_f1"] is None and (r["n"], r["n_undefined"]) == (1, 1)


def test_qampari_alce_compat_reads_the_first_line_only():
    refs = [[["Ann"], ["Bob"], ["Dora"]]]
    assert qampari_f1(["Ann [1], Bob [2],\nDora"], refs)["qampari_recall"] == 1.0
    assert qampari_f1(["Ann [1], Bob [2],\nDora"], refs, alce_compat=True)["qampari_recall"] == pytest.approx(2 / 3)


def test_rouge_lsum_by_hand_best_reference_and_length():
    r = rouge_lsum(["The cat [1] sat on the mat."], [["A cat sat on a mat."]])
    # tokens the cat sat on the mat / a cat sat on a mat: LCS {cat, sat, on, mat} = 4 of 6 each side -> F 2/3
    assert r["rouge_lsum"] == pytest.approx(2 / 3) and r["answer_length"] == 6  # "The cat sat on the mat."
    two = rouge_lsum(["The cat sat on the mat."], [["A cat sat on a mat.", "the cat sat on the mat"]])
    assert two["rouge_lsum"] == pytest.approx(1.0)


def test_rouge_lsum_without_reference_is_undefined_but_length_is_not():
    r = rouge_lsum(["Two words.", ""], [[], ["A reference."]])
    (a, b) = r["per_question"]
    assert a == {"rouge_lsum": None, "answer_length": 2} and b == {"rouge_lsum": 0.0, "answer_length": 0}
    assert (r["n"], r["n_undefined"]) == (1, 1)


def test_claims_recall_by_hand_with_the_lexical_judge():
    r = claims_recall(["Paris is the capital of France [1]."], [["Paris is the capital.", "Berlin is big."]])
    # {pari, capital}: 2 of 2 in the answer; {berlin, big}: 0 of 2 -> 1 of 2 claims
    assert r["claims_recall"] == 0.5 and r["per_question"][0]["claims_abstentions"] == 0


def test_claims_recall_counts_abstentions_and_no_claims_is_undefined():
    def judge(premises, hypotheses):
        return [math.nan if h.startswith("?") else 1.0 for h in hypotheses]

    r = claims_recall(["x", "y", "z"], [["?a", "b"], ["?c"], []], judge=judge)
    one, two, three = r["per_question"]
    assert one == {"claims_recall": 0.5, "claims_recall_excl_abstain": 1.0, "claims_abstentions": 1}
    assert two == {"claims_recall": 0.0, "claims_recall_excl_abstain": None, "claims_abstentions": 1}
    assert three["claims_recall"] is None and (r["n"], r["n_undefined"]) == (2, 1)
    assert r["claims_abstentions_total"] == 2


def test_alce_qampari_sentences_prefix_the_question_and_keep_empty_pieces():
    a = parse_answer("Ann [1], , Bob [2],.", n_units=2, mode="alce", list_question="Who?")
    assert [(s.raw, s.text, s.citations) for s in a.sentences] == [
        ("Who? Ann [1]", "Who? Ann", (1,)),
        ("Who? ", "Who?", ()),
        ("Who? Bob [2]", "Who? Bob", (2,)),
    ]
    # [1, 2] is cut by the comma: "[1" is read, "2]" is text (as ALCE's eval.py does)
    b = parse_answer("Ann [1, 2].", n_units=2, mode="alce", list_question="Who?")
    assert [(s.text, s.citations) for s in b.sentences] == [("Who? Ann", (1,)), ("Who? 2", ())]
    assert parse_answer("", n_units=2, mode="alce", list_question="Who?").sentences == ()
    # default mode: sentences as usual, the question plays no part
    c = parse_answer("Ann [1], Bob [2].", n_units=2, list_question="Who?")
    assert [s.text for s in c.sentences] == ["Ann, Bob."]


def test_the_alce_reader_keeps_each_dataset_s_gold():
    asqa = read_input(str(PARITY / "alce_asqa.json")).items[0].gold
    assert len(asqa["reference"]) == 2 and asqa["reference"][0].startswith("The Nile is the longest")
    qampari = read_input(str(PARITY / "alce_qampari.json")).items[0].gold
    assert qampari["answer_lists"][0] == ("Alien", "Alien (film)") and qampari["reference"] == ()
    eli5 = read_input(str(PARITY / "alce_eli5.json")).items[0].gold
    assert len(eli5["claims"]) == 3 and eli5["reference"][0].startswith("Air molecules")
