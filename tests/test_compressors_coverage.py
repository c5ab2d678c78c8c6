"""Gold-document coverage (docs/design.md#gold-coverage) and its catalog entry."""

import pytest

from rageval.diagnostics import CATALOG, get
from rageval.diagnostics.coverage import gold_coverage
from rageval.types import Unit


def test_coverage_counts_gold_documents_with_a_declared_sentence():
    units = [[Unit("a", ("d0.s1",)), Unit("b", ("d3.s0", "d3.s2")), Unit("c", ("d7.s0",))]]
    r = gold_coverage(units, [["d0", "d3", "d5"]])
    assert r["gold_coverage"] == pytest.approx(2 / 3)
    assert r["per_question"][0]["gold_covered"] == ["d0", "d3"]
    assert (r["n"], r["n_undefined"]) == (1, 0)


def test_coverage_reads_declarations_not_text():
    # the unit text mentions gold evidence, but declares another document: not covered
    r = gold_coverage([[{"text": "Gold sentence of d0.", "source_ids": ["d1.s0"]}]], [["d0"]])
    assert r["gold_coverage"] == 0.0


def test_context_without_provenance_is_undefined_but_empty_context_scores_zero():
    r = gold_coverage([[Unit("summary")], []], [["d0"], ["d0"]])
    assert [q["gold_coverage"] for q in r["per_question"]] == [None, 0.0]
    assert (r["gold_coverage"], r["n"], r["n_undefined"]) == (0.0, 1, 1)


def test_no_gold_documents_is_undefined():
    assert gold_coverage([[Unit("a", ("d0.s0",))]], [[]])["gold_coverage"] is None


def test_doc_of_mapping_overrides_the_id_convention():
    r = gold_coverage([[Unit("a", ("p17",))]], [["paper1:para3"]], doc_of=[{"p17": "paper1:para3"}])
    assert r["gold_coverage"] == 1.0


def test_bad_inputs_name_the_field():
    with pytest.raises(ValueError, match="lengths differ"):
        gold_coverage([[]], [["d0"], ["d1"]])
    with pytest.raises(TypeError, match=r"units\[0\]"):
        gold_coverage(["not a list of units"], [["d0"]])
    with pytest.raises(ValueError, match="use None"):
        gold_coverage([[{"text": "a", "source_ids": []}]], [["d0"]])


def test_catalog_entry_points_at_the_pure_function():
    assert CATALOG["gold_coverage"].direction == "higher"
    assert get("gold_coverage") is gold_coverage
