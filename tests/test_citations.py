import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rageval.citations import alce_remove_citations, parse_answer


def cites(text, n=3, **kw):
    return [(s.text, s.citations, s.invalid) for s in parse_answer(text, n, **kw).sentences]


# ---- default mode, case by case (docs/design.md#default-mode) -----------------------------------


def test_adjacent_markers():
    assert cites("Paris is in France [1][2].") == [("Paris is in France.", (1, 2), ())]


@pytest.mark.parametrize("marker", ["[1, 2]", "[1,2]", "[1 , 2]"])
def test_comma_lists(marker):
    assert cites(f"Paris is in France {marker}.")[0][1] == (1, 2)


@pytest.mark.parametrize("marker", ["[1-3]", "[1–3]", "[1 - 3]"])
def test_ranges_expand(marker):
    assert cites(f"Paris is in France {marker}.")[0][1] == (1, 2, 3)


def test_marker_after_full_stop_belongs_to_previous_sentence():
    assert cites("Paris is in France. [2] Lyon is big [1].") == [
        ("Paris is in France.", (2,), ()),
        ("Lyon is big.", (1,), ()),
    ]


def test_trailing_marker_after_last_full_stop():
    assert cites("Paris is in France. [2][3]") == [("Paris is in France.", (2, 3), ())]


def test_duplicates_count_once_in_first_order():
    assert cites("Paris [2][1][2][1, 2].")[0][1] == (2, 1)


def test_out_of_range_and_zero_are_invalid_never_remapped():
    assert cites("Paris [0][4][1].") == [("Paris.", (1,), ("0", "4"))]


def test_range_with_out_of_range_endpoint_is_one_invalid_citation():
    assert cites("Paris [2-9].") == [("Paris.", (), ("2-9",))]
    assert cites("Paris [3-1].") == [("Paris.", (), ("3-1",))]


def test_cap_keeps_first_valid_citations_and_records_the_rest():
    s = parse_answer("Paris [4][3][9][2][1].", 5).sentences[0]
    assert s.citations == (4, 3, 2) and s.capped == (1,) and s.invalid == ("9",)
    assert parse_answer("Paris [4][3][2][1].", 5, max_citations=None).sentences[0].citations == (4, 3, 2, 1)


def test_sentence_without_citations():
    assert cites("Paris is nice.") == [("Paris is nice.", (), ())]


def test_empty_and_blank_answers_have_no_claims():
    assert parse_answer("", 3).sentences == ()
    assert parse_answer("  \n ", 3).sentences == ()


def test_every_line_is_used_in_default_mode():
    assert len(parse_answer("A is b [1].\nC is d [2].", 3).sentences) == 2


def test_zero_units_makes_every_citation_invalid():
    assert cites("Paris [1].", 0) == [("Paris.", (), ("1",))]


@pytest.mark.parametrize("bad", [dict(n_units=-1), dict(n_units=2.0), dict(max_citations=0), dict(mode="x")])
def test_bad_arguments(bad):
    kw = dict(n_units=3)
    kw.update(bad)
    n = kw.pop("n_units")
    with pytest.raises(ValueError):
        parse_answer("a [1].", n, **kw)


def test_non_string_answer():
    with pytest.raises(TypeError, match="answer must be a string"):
        parse_answer(None, 3)


# ---- alce mode --------------------------------------------------------------------------------


def test_alce_reads_only_first_number_of_a_list_and_maps_zero_to_last():
    s = parse_answer("Paris [1, 2][0].", 3, mode="alce").sentences[0]
    assert s.citations == (1, 3)
    assert s.text == alce_remove_citations("Paris [1, 2][0].").strip()


def test_alce_keeps_duplicates_and_first_line_only():
    a = parse_answer("Paris [1][1].\nIgnored [2].", 3, mode="alce")
    assert len(a.sentences) == 1 and a.sentences[0].citations == (1, 1)


def test_alce_out_of_range_sentence_records_invalid_and_no_citations():
    s = parse_answer("Paris [1][7].", 3, mode="alce").sentences[0]
    assert s.citations == () and s.invalid == ("7",)


def test_alce_cap_applies_after_range_check():
    assert parse_answer("P [1][2][3][1].", 3, mode="alce", max_citations=3).sentences[0].citations == (1, 2, 3)


def test_alce_remove_citations_character_for_character():
    assert alce_remove_citations("Paris [1][2] is | big [3].") == "Paris is big."


# ---- properties -------------------------------------------------------------------------------

_marker = st.one_of(
    st.integers(-3, 40).map(lambda k: f"[{k}]"),
    st.tuples(st.integers(0, 40), st.integers(0, 40)).map(lambda t: f"[{t[0]}, {t[1]}]"),
    st.tuples(st.integers(0, 40), st.integers(0, 40)).map(lambda t: f"[{t[0]}-{t[1]}]"),
)
_piece = st.one_of(st.text(max_size=12), _marker, st.sampled_from([". ", "\n", " ", "[", "]", "Dr. ", "3.5"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_piece, max_size=12).map("".join), st.integers(0, 12), st.sampled_from(["default", "alce"]))
def test_parser_never_crashes_and_never_returns_a_number_outside_1_n(text, n, mode):
    ans = parse_answer(text, n, mode=mode)
    for s in ans.sentences:
        assert all(1 <= k <= n for k in s.citations)
        assert all(1 <= k <= n for k in s.capped)
        if mode == "default":
            assert len(s.citations) <= 3 and len(set(s.citations)) == len(s.citations)
