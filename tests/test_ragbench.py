"""The RAGBench loader (docs/datasets.md#ragbench): rows in RAGBench's published layout, built from the field list
pinned in ``samples/ragbench/ragbench_fields.json`` (no RAGBench rows are shipped: none could be reached without
the hub, samples/PROVENANCE.md), its gold mapping and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.data import DataLoadError, examples_from_records, load_examples, sample_path
from rageval.data.ragbench import FIELDS, REQUIRED

REFERENCE = Path(__file__).resolve().parents[1] / "src/rageval/data/samples/ragbench/ragbench_fields.json"
PINNED = json.loads(REFERENCE.read_text(encoding="utf-8"))

#: one value per dtype of the card: every field of a row has the type the card declares
_VALUES = {
    "string": "x",
    "bool": True,
    "float64": 0.5,
    "sequence<string>": [],
}


def ragbench_row(**fields) -> dict:
    """A row with every pinned field (a value of its declared dtype), then ``fields`` over it: two documents,
    CovidQA-style (``Title: ...`` first sentence), keys as RAGBench writes them."""
    row = {}
    for f in PINNED["fields"]:
        dtype = f["dtype"]
        row[f["name"]] = _VALUES.get(dtype, []) if not dtype.startswith("list<") else []
    row.update(
        id="covidqa_42",
        question="What does the spike protein bind?",
        documents=[
            "Title: Entry\nPassage: The spike protein binds ACE2. Entry follows.",
            "Title: Other\nPassage: Masks reduce spread.",
        ],
        response="It binds ACE2.",
        dataset_name="covidqa_test",
        documents_sentences=[
            [["0a", "Title: Entry"], ["0b", "Passage: The spike protein binds ACE2."], ["0c", "Entry follows."]],
            [["1a", "Title: Other"], ["1b", "Passage: Masks reduce spread."]],
        ],
        response_sentences=[["a", "It binds ACE2."]],
        sentence_support_information=[
            {
                "explanation": "0b says so.",
                "fully_supported": True,
                "response_sentence_key": "a",
                "supporting_sentence_keys": ["0b"],
            }
        ],
        all_relevant_sentence_keys=["0b", "0c"],
        all_utilized_sentence_keys=["0b"],
        overall_supported=True,
        relevance_score=0.4,
        utilization_score=0.2,
    )
    row.update(fields)
    return row


def test_the_field_list_is_the_pinned_reference():
    assert [f["name"] for f in PINNED["fields"]] == list(FIELDS)
    assert PINNED["read_by_rageval"] == list(REQUIRED)
    assert set(REQUIRED) <= set(FIELDS)
    assert PINNED["rows_shipped"] == 0  # the loader's docs and PROVENANCE.md say so; the test keeps them honest


def test_a_row_in_the_published_layout_maps_relevance_to_gold_and_keeps_utilization():
    (ex,) = examples_from_records("ragbench", [ragbench_row()])
    assert ex.id == "covidqa_42" and ex.dataset == "ragbench"
    assert [d.id for d in ex.documents] == ["d0", "d1"]
    assert [s.id for s in ex.snippets] == ["d0.s0", "d0.s1", "d0.s2", "d1.s0", "d1.s1"]
    assert ex.document("d0").snippets[1].text == "Passage: The spike protein binds ACE2."
    # relevance -> the gold sentences and the documents holding them; utilization kept beside
    assert ex.supporting_facts == ("d0.s1", "d0.s2")
    assert ex.gold_doc_ids == ("d0",)
    assert ex.meta["utilized_sentences"] == ["d0.s1"]
    assert ex.meta["sentence_keys"] == {"d0.s0": "0a", "d0.s1": "0b", "d0.s2": "0c", "d1.s0": "1a", "d1.s1": "1b"}
    # no short gold answer: the response is a reference (answer F1), never an answer (answer-in-context, EM)
    assert ex.answers == () and ex.reference == ("It binds ACE2.",)
    assert ex.meta["subset"] == "covidqa_test" and ex.meta["overall_supported"] is True
    assert ex.meta["relevance_score"] == 0.4 and "unmatched_sentence_keys" not in ex.meta


def test_a_key_naming_no_sentence_is_kept_not_raised():
    (ex,) = examples_from_records(
        "ragbench", [ragbench_row(all_relevant_sentence_keys=["0b", "7z"], all_utilized_sentence_keys=["9a"])]
    )
    assert ex.supporting_facts == ("d0.s1",)
    assert ex.meta["unmatched_sentence_keys"] == ["7z", "9a"]
    assert ex.meta["utilized_sentences"] == []


def test_no_relevant_sentence_means_no_gold():
    (ex,) = examples_from_records("ragbench", [ragbench_row(all_relevant_sentence_keys=[])])
    assert ex.supporting_facts == () and ex.gold_doc_ids == ()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"documents_sentences": None}, r"record 0: field 'documents_sentences' is NoneType None; expected a list"),
        (
            {"documents_sentences": [[["0a", "Title: Entry"]]]},
            r"field 'documents_sentences' is list .*; expected one list of sentences per document \(2 documents\), not 1",
        ),
        (
            {"documents_sentences": [[["0a"]], [["1a", "t"]]]},
            r"field 'documents_sentences\[0\]\[0\]' is list \['0a'\]; expected a \[key, sentence\] pair of two strings",
        ),
        (
            {"all_relevant_sentence_keys": "0b"},
            r"field 'all_relevant_sentence_keys' is str '0b'; expected a list of strings",
        ),
        ({"question": 3}, r"field 'question' is int 3; expected the question string"),
    ],
)
def test_a_malformed_row_names_record_field_and_expectation(change, message):
    with pytest.raises(DataLoadError, match=message):
        examples_from_records("ragbench", [ragbench_row(**change)], source="covidqa.jsonl")


def test_a_missing_field_is_named():
    row = ragbench_row()
    del row["all_utilized_sentence_keys"]
    with pytest.raises(DataLoadError, match=r"covidqa.jsonl: record 0: missing field 'all_utilized_sentence_keys'"):
        examples_from_records("ragbench", [row], source="covidqa.jsonl")


def test_no_sample_is_shipped_and_a_file_of_rows_loads(tmp_path):
    with pytest.raises(KeyError, match="No shipped sample 'ragbench'"):
        sample_path("ragbench")
    path = tmp_path / "covidqa_test.jsonl"
    path.write_text("".join(json.dumps(ragbench_row(id=f"q{i}")) + "\n" for i in range(3)), encoding="utf-8")
    exs = load_examples("ragbench", path)
    assert [e.id for e in exs] == ["q0", "q1", "q2"]


def test_ragbench_scope_runs_on_a_file_of_rows(tmp_path):
    """The shipped suite reads RAGBench rows from --dataset-path (its hub source replaced) and writes its contrasts;
    rows of one gold document each, single-pass as RAGBench's are."""
    path = tmp_path / "covidqa_test.jsonl"
    path.write_text("".join(json.dumps(ragbench_row(id=f"q{i}")) + "\n" for i in range(4)), encoding="utf-8")
    out = tmp_path / "out"
    res = CliRunner().invoke(
        main, ["suite", "ragbench_scope", "--dataset-path", str(path), "--out", str(out), "--no-progress"]
    )
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suite"]["dataset"] == "ragbench"
    assert manifest["inputs"]["dataset"] == str(path) and manifest["inputs"]["questions"] == 4
    rows = (out / "contrasts.csv").read_text().splitlines()
    assert any("submodular@160 - focused@160: gold_coverage" in r for r in rows)
    assert any("submodular@160 - focused@160: answer_f1" in r for r in rows)
