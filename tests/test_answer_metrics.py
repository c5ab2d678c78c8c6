import pytest

from rageval.diagnostics.answer import answer_f1, answer_in_context, str_em, token_f1
from rageval.diagnostics.retrieval_recall import retrieval_recall

# ---- answer_in_context ---------------------------------------------------------------------


def test_answer_in_context_hand_computed():
    r = answer_in_context(
        ["The capital is Paris.", ["Lyon is big", "in France"], "nothing here", "whatever"],
        [["Paris", "City of Light"], ["Lyon is big in France"], ["Paris"], ["Yes"]],
    )
    # q0: hit; q1: the match spans two units -> 1 in the packed context, 0 inside one unit; q2: 0; q3: yes/no ->
    # undefined
    assert [q["answer_in_context"] for q in r["per_question"]] == [1.0, 1.0, 0.0, None]
    assert [q["answer_in_context_unit"] for q in r["per_question"]] == [1.0, 0.0, 0.0, None]
    assert r["answer_in_context"] == pytest.approx(2 / 3)
    assert r["answer_in_context_unit"] == pytest.approx(1 / 3)
    assert (r["n"], r["n_undefined"]) == (3, 1)


def test_answer_in_context_is_token_subsequence_not_substring():
    assert answer_in_context(["a party in town"], [["art"]])["answer_in_context"] == 0.0


def test_answer_in_context_asqa_mean_over_qa_pairs():
    r = answer_in_context(["Born in 1990 in Paris"], [[["1990"], ["Lyon", "Paris"], ["2001"]]])
    assert r["answer_in_context"] == pytest.approx(2 / 3)


def test_answer_in_context_undefined_cases_are_none_not_zero():
    r = answer_in_context(["x", "y"], [[], ["the"]])
    assert r["answer_in_context"] is None and r["n"] == 0 and r["n_undefined"] == 2


def test_answer_in_context_empty_context_scores_zero():
    assert answer_in_context([""], [["Paris"]])["answer_in_context"] == 0.0
    assert answer_in_context([[]], [["Paris"]])["answer_in_context"] == 0.0


# ---- str_em ----------------------------------------------------------------------------------


def test_str_em_hand_computed():
    r = str_em(["Paris [1] and Lyon.", "Nothing."], [[["paris"], ["Lyon", "LY"], ["Nice"]], [["Rome"]]])
    assert r["per_question"][0] == {"str_em": pytest.approx(2 / 3), "str_hit": 0.0}
    assert r["per_question"][1] == {"str_em": 0.0, "str_hit": 0.0}
    assert r["str_em"] == pytest.approx(1 / 3)


def test_str_em_substring_rule_and_citations_removed():
    # ALCE's rule is a substring test on normalized text: "1" is inside "1999".
    assert str_em(["In 1999 [1]."], [[["1"]]])["str_em"] == 1.0
    # The citation number itself must not match a short answer.
    assert str_em(["It happened [1]."], [[["1"]]])["str_em"] == 0.0


def test_str_em_alce_compat_first_line_and_empty_short_answer():
    assert str_em(["Rome.\nParis."], [[["Paris"]]], alce_compat=True)["str_em"] == 0.0
    assert str_em(["Rome.\nParis."], [[["Paris"]]])["str_em"] == 1.0
    assert str_em(["Rome."], [[["the"]]], alce_compat=True)["str_em"] == 1.0
    assert str_em(["Rome."], [[["the"]]])["str_em"] is None


def test_str_em_question_without_qa_pairs_is_undefined():
    r = str_em(["x"], [[]])
    assert r["str_em"] is None and r["n_undefined"] == 1


# ---- answer_f1 -------------------------------------------------------------------------------


def test_token_f1_hand_computed():
    f1, p, r = token_f1("the big red house", "red house on hill")
    # pred tokens: big red house (3); gold: red house on hill (4); overlap 2
    assert (p, r) == (pytest.approx(2 / 3), pytest.approx(2 / 4))
    assert f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_answer_f1_yes_no_follow_hotpotqa():
    r = answer_f1(["yes", "no way", "yes [1]"], [["no"], ["no"], ["yes"]])
    # a yes/no gold scores 0 unless the normalized prediction is exactly that word
    assert [q["answer_f1"] for q in r["per_question"]] == [0.0, 0.0, 1.0]
    assert [q["answer_em"] for q in r["per_question"]] == [0.0, 0.0, 1.0]


def test_answer_f1_max_over_aliases_and_undefined():
    r = answer_f1(["JFK", "x"], [["John F. Kennedy", "JFK"], ["the", ""]])
    assert r["per_question"][0]["answer_f1"] == 1.0
    assert r["per_question"][1]["answer_f1"] is None and r["n_undefined"] == 1


# ---- retrieval_recall ------------------------------------------------------------------------


def test_retrieval_recall_at_k():
    r = retrieval_recall([["a", "b", "c", "d"], ["x"], ["a"]], [["c", "d"], ["x"], []], k=3)
    assert [q["retrieval_recall"] for q in r["per_question"]] == [0.5, 1.0, None]
    assert [q["all_gold"] for q in r["per_question"]] == [0.0, 1.0, None]
    assert r["retrieval_recall"] == 0.75 and r["n_undefined"] == 1


def test_retrieval_recall_bad_k():
    with pytest.raises(ValueError, match="k must be"):
        retrieval_recall([["a"]], [["a"]], k=0)


# ---- bad input names the field and the question ------------------------------------------------


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: answer_in_context(["a"], [["a"], ["b"]]), "lengths differ"),
        (lambda: answer_in_context(["a", 3], [["a"], ["b"]]), r"contexts\[1\]"),
        (lambda: answer_in_context(["a"], [["a", 3]]), r"references\[0\]"),
        (lambda: answer_in_context("abc", [["a"]]), "contexts must be a list"),
        (lambda: str_em([None], [[["a"]]]), r"predictions\[0\]"),  # type: ignore[list-item]  # wrong on purpose
        (lambda: answer_f1(["a"], ["a"]), r"references\[0\]"),
        (lambda: retrieval_recall([["a"]], [[1]]), r"references\[0\]\[0\]"),  # type: ignore[list-item]  # on purpose
    ],
)
def test_bad_inputs_name_field_and_question(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()
