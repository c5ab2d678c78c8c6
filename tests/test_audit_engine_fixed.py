"""The engine's fixed mappings (the audit's first mode): recovered source ids given from outside replace
re-attribution, with no recovery call; a unit without an entry is unrecovered; a foreign id is an error."""

import pytest

from rageval.diagnostics.attribution import attribution_scores_batch
from rageval.judges import get_judge

UNITS = [[{"text": "Paris is the capital of France.", "source_ids": None}]]
SOURCES = [[{"id": "a.s0", "text": "Paris is the capital of France."}, {"id": "b.s0", "text": "Berlin is in Germany."}]]
ANSWER = ["Paris is the capital of France [1]."]


def _score(recovered=None):
    runner = get_judge("lexical")
    row = attribution_scores_batch(
        ANSWER, UNITS, SOURCES, judge=runner, parts=("emitted", "grounded"), recovered=recovered
    )[0]
    return row, runner.stats()["requested"]


def test_recovery_runs_when_no_mapping_is_given():
    row, requested = _score()
    assert row["details"]["recovery"]["1"]["recovered"] == ["a.s0"]
    assert row["grounded_precision"] == 1.0 and row["citations_recovered"] == 1
    # one recovery candidate (the Berlin snippet shares no BM25 term with the unit), the emitted and the
    # grounded joint pair
    assert row["recovery_candidates_scored"] == 1 and requested == 3


def test_fixed_ids_replace_recovery_without_a_recovery_call():
    row, requested = _score([{0: ["b.s0"]}])  # the first judge "recovered" the wrong snippet
    assert row["details"]["recovery"]["1"]["recovered"] == ["b.s0"]
    assert row["details"]["recovery"]["1"]["candidates"] == []  # nothing was ranked or judged
    assert row["emitted_precision"] == 1.0 and row["grounded_precision"] == 0.0 and row["grounded_recall"] == 0.0
    assert row["recovery_candidates_scored"] == 0
    assert requested == 2  # the emitted and the grounded joint pair only


def test_a_unit_without_an_entry_is_unrecovered():
    row, requested = _score([{}])
    assert row["citations_missing"] == 1 and row["grounded_precision"] == 0.0
    assert requested == 1  # no premise for the grounded citation: only the emitted pair is judged


def test_foreign_ids_and_wrong_lengths_are_errors():
    with pytest.raises(ValueError, match=r"recovered\[0\]\[0\] names 'c.s9', which is not among the 2 sources"):
        _score([{0: ["c.s9"]}])
    with pytest.raises(ValueError, match="recovered has 2 entries for 1 questions"):
        _score([{}, {}])
