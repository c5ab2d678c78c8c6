"""Dataset loaders: each layout on a real sample, FlashRAG rows written by hand, precise errors."""

import json
from pathlib import Path

import pytest

from rageval.data import (
    DataLoadError,
    Document,
    Example,
    corpus_doc_id,
    examples_from_records,
    load_corpus,
    load_examples,
    sample_path,
)

FIXTURES = Path(__file__).parent / "fixtures"


# -- real samples ---------------------------------------------------------------------


def test_hotpotqa_original_layout_maps_supporting_facts_to_sentence_ids():
    exs = load_examples("hotpotqa", sample_path("hotpotqa"))
    assert len(exs) == 100
    ex = exs[0]
    assert ex.id == "5a77ec115542992a6e59dff7"
    assert ex.answers == ("a spirit",)
    assert len(ex.documents) == 10
    # supporting facts [["Alû", 3], ["Lilu (mythology)", 0]]
    titles = {d.id: d.title for d in ex.documents}
    assert [titles[g] for g in ex.gold_doc_ids] == ["Alû", "Lilu (mythology)"]
    alu = ex.document(ex.gold_doc_ids[0])
    assert ex.supporting_facts[0] == f"{alu.id}.s3"
    assert [s.id for s in alu.snippets][3] == f"{alu.id}.s3"
    # HotpotQA sentences carry their leading space; the document text is the paragraph as written
    assert "  " not in alu.text and alu.text.startswith(alu.snippets[0].text)
    assert ex.meta["type"] == "bridge" and ex.meta["level"] == "easy"
    assert all(len(e.gold_doc_ids) == 2 for e in exs)


def test_hotpotqa_yes_no_questions_are_typed():
    exs = load_examples("hotpotqa", sample_path("hotpotqa"))
    yes_no = [e for e in exs if e.answer_type == "yes_no"]
    assert yes_no and all(e.answers[0].lower() in ("yes", "no") for e in yes_no)
    assert all(e.answer_type == "span" for e in exs if e.answers[0].lower() not in ("yes", "no"))


def test_musique_twenty_paragraphs_with_supporting_gold_and_aliases():
    exs = load_examples("musique", sample_path("musique"), limit=3)
    assert len(exs) == 3
    ex = exs[0]
    assert ex.answers == ("G. Stanley Hall", "Stanley Hall")
    assert len(ex.documents) == 20
    assert ex.gold_doc_ids == ("d6", "d10")
    assert ex.document("d6").source_key == "6"
    assert ex.document("d6").snippets[0].id == "d6.s0"
    assert ex.meta["answerable"] is True
    assert len(ex.meta["question_decomposition"]) == 2


def test_2wiki_original_layout_keeps_evidence_triples():
    exs = load_examples("2wiki", sample_path("2wikimultihopqa"))
    ex = exs[0]
    assert ex.question == "When did Lothair Ii's mother die?"
    assert ex.answers == ("20 March 851",)
    assert [ex.document(g).title for g in ex.gold_doc_ids] == ["Lothair II", "Ermengarde of Tours"]
    assert ex.meta["evidences"][0] == ["Lothair II", "mother", "Ermengarde of Tours"]
    # 2Wiki sentences have no leading space: the document text joins them with one
    teut = ex.document("d0")
    assert teut.text.startswith(
        "Teutberga( died 11 November 875) was a queen of Lotharingia by marriage to Lothair II. She"
    )


def test_asqa_din0s_layout_has_qa_pairs_and_gold_passages_in_the_corpus():
    exs = load_examples("asqa", sample_path("asqa"))
    assert len(exs) == 100
    ex = exs[0]
    assert ex.id == "-7013890438520559398"
    assert ex.qa_pairs == (("Daei", "Ali Daei"), ("Bican", "Josef Bican"), ("Sinclair", "Christine Sinclair"))
    assert ex.str_em_references == ex.qa_pairs
    assert "Josef Bican" in ex.answers
    assert ex.documents == ()  # the din0s rows have no retrieved docs
    assert ex.answer_type == "long_form" and len(ex.meta["long_answers"]) == 2
    corpus = load_corpus("asqa", sample_path("asqa"))
    ids = [d.id for d in corpus]
    assert len(ids) == len(set(ids))
    assert all(g in set(ids) for e in exs for g in e.gold_doc_ids)
    # "No context provided" is not a passage
    assert not any(d.text == "No context provided" for d in corpus)
    # ids do not depend on which questions were loaded
    assert load_examples("asqa", sample_path("asqa"), limit=1)[0].gold_doc_ids == ex.gold_doc_ids


def test_asqa_alce_layout_keeps_docs_in_rank_order():
    exs = load_examples("asqa", sample_path("alce_asqa_demos"))
    assert len(exs) == 4
    ex = exs[0]
    assert ex.question == "Which is the most rainy place on earth?"
    assert [d.id for d in ex.documents] == ["d0", "d1", "d2", "d3", "d4"]
    assert ex.documents[0].title == "Cherrapunji"
    assert ex.documents[2].snippets[0].id == "d2.s0"
    assert "[1]" in ex.meta["long_answers"][0]


def test_alce_eval_layout_reads_qa_pairs():
    rec = {
        "question": "Who wrote it?",
        "sample_id": "s1",
        "qa_pairs": [{"question": "q", "short_answers": ["Ann", "A. Smith"]}],
        "docs": [{"title": "T", "text": "Ann wrote it. Later, she moved.", "id": "123", "score": 1.2}],
    }
    ex = examples_from_records("asqa", [rec])[0]
    assert ex.id == "s1" and ex.qa_pairs == (("Ann", "A. Smith"),)
    assert [s.id for s in ex.snippets] == ["d0.s0", "d0.s1"]
    assert ex.documents[0].source_key == "123"


def test_qasper_schema_sample_one_example_per_question_clustered_by_paper():
    exs = load_examples("qasper", sample_path("qasper"))
    assert {e.cluster_id for e in exs} == {"1912.01214"}
    ex = exs[0]
    assert ex.answers == ("BIBREF19, BIBREF20", "multilingual NMT (MNMT) BIBREF19")
    assert len(ex.evidence) == 2  # one entry per annotator
    assert ex.documents[0].id == "abstract" and ex.documents[0].title == "Abstract"  # a document of its own
    assert ex.documents[1].title == "Introduction"
    assert ex.paragraph_of[ex.document("d3").snippets[0].id] == "d3"


def test_qasper_intact_fixture_maps_evidence_per_annotator():
    exs = {e.id: e for e in load_examples("qasper", sample_path("qasper_intact"))}
    q1 = exs["qh1"]
    para = q1.document("d2")
    assert para.title == "Method ::: Data" and para.text.startswith("We use 412 questions")
    # the second annotator's FLOAT SELECTED caption matches no paragraph: kept as a gold id (official scorer)
    assert q1.evidence[0] == ("d2",) and q1.evidence[1][0] == "d2" and len(q1.evidence[1]) == 2
    assert q1.evidence[1][1].startswith("unmatched:") and q1.gold_doc_ids == ("d2",)
    assert q1.meta["float_evidence"] == 1 and q1.meta["unmatched_evidence"] == 0
    assert q1.answers == ("412 questions", "412")
    assert exs["qh2"].evidence == (("d1", "d5"), ("d5",))
    assert exs["qh2"].answers == ("No",) and exs["qh2"].answer_type == "yes_no"
    assert exs["qh3"].answer_type == "free_form"
    assert exs["qh4"].answers == ("Unanswerable",) and exs["qh4"].evidence == ((),)
    # the abstract first, under its own id; the empty paragraph is skipped, ids stay consecutive
    assert [d.id for d in q1.documents] == ["abstract"] + [f"d{i}" for i in range(7)]
    docs = {d.id for d in q1.documents}
    assert all(p in docs or p.startswith("unmatched:") for e in exs.values() for ev in e.evidence for p in ev)


def test_qasper_hub_columnar_layout_matches_original():
    orig = json.loads(sample_path("qasper_intact").read_text())
    pid, paper = next(iter(orig.items()))
    hub = {
        "id": pid,
        "title": paper["title"],
        "abstract": paper["abstract"],
        "full_text": {
            "section_name": [s["section_name"] for s in paper["full_text"]],
            "paragraphs": [s["paragraphs"] for s in paper["full_text"]],
        },
        "qas": {
            "question": [q["question"] for q in paper["qas"]],
            "question_id": [q["question_id"] for q in paper["qas"]],
            "answers": [{"answer": [a["answer"] for a in q["answers"]]} for q in paper["qas"]],
        },
    }
    a = examples_from_records("qasper", [hub])
    b = load_examples("qasper", sample_path("qasper_intact"))
    assert [e.to_dict() for e in a] == [e.to_dict() for e in b]


# -- FlashRAG layouts (rows written by hand) ------------------------------------------------


def test_hotpotqa_flashrag_rows():
    exs = load_examples("hotpotqa", FIXTURES / "flashrag_hotpotqa.jsonl")
    ex = exs[0]
    assert ex.answers == ("the Seine", "Seine", "Seine River")
    assert ex.gold_doc_ids == ("d0", "d2") and ex.supporting_facts == ("d0.s0", "d2.s1")
    assert ex.document("d2").snippets[1].text == "The Seine flows through Paris."
    assert ex.meta["layout"] == "flashrag"
    # a supporting fact past the last sentence is kept in meta, not silently dropped
    assert exs[1].meta["unmatched_supporting_facts"] == [["Eiffel Tower", 7]]
    assert exs[1].answer_type == "yes_no"


def test_2wiki_flashrag_rows_with_content_key():
    ex = load_examples("2wikimultihopqa", FIXTURES / "flashrag_2wiki.jsonl")[0]
    assert ex.answers == ("Charles Babbage",)
    assert ex.supporting_facts == ("d0.s0", "d1.s0")
    assert ex.document("d0").text.endswith("mathematician. She worked on the Analytical Engine.")
    assert ex.meta["evidences"][1][2] == "26 December 1791"


# -- schema ------------------------------------------------------------------------------


def test_example_round_trips_through_json():
    for name in ("hotpotqa", "qasper_intact", "asqa"):
        ds = "qasper" if name.startswith("qasper") else name
        for ex in load_examples(ds, sample_path(name), limit=2):
            again = Example.from_dict(json.loads(json.dumps(ex.to_dict())))
            assert again == ex


def test_example_rejects_duplicate_document_ids_and_bad_answer_type():
    d = Document("d0", "x")
    with pytest.raises(ValueError, match="two documents with id 'd0'"):
        Example("q", "?", documents=(d, d))
    with pytest.raises(ValueError, match="answer_type='boolean'"):
        Example("q", "?", answer_type="boolean")
    with pytest.raises(TypeError, match=r"answers must be a list of strings"):
        Example("q", "?", answers="Paris")


# -- errors ---------------------------------------------------------------------------


def _write(tmp_path, name, rows):
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return p


def test_missing_field_error_names_file_record_field_and_expectation(tmp_path):
    good = json.loads(sample_path("musique").read_text())[0]
    bad = dict(good)
    del bad["question"]
    p = _write(tmp_path, "m.jsonl", [good, bad])
    with pytest.raises(DataLoadError) as e:
        load_examples("musique", p)
    msg = str(e.value)
    assert str(p) in msg and "record 1" in msg and "'question'" in msg and "question string" in msg
    assert e.value.index == 1 and e.value.field == "question"


def test_nested_field_error_names_the_path(tmp_path):
    good = json.loads(sample_path("musique").read_text())[0]
    bad = json.loads(json.dumps(good))
    del bad["paragraphs"][3]["paragraph_text"]
    p = _write(tmp_path, "m.jsonl", [bad])
    with pytest.raises(DataLoadError, match=r"record 0: missing field 'paragraphs\[3\]\.paragraph_text'"):
        load_examples("musique", p)


def test_wrong_type_error_shows_the_value(tmp_path):
    p = _write(tmp_path, "h.jsonl", [{"_id": "x", "question": "q", "answer": 5, "context": []}])
    with pytest.raises(DataLoadError, match=r"field 'answer' is int 5; expected the gold answer string"):
        load_examples("hotpotqa", p)


def test_malformed_context_pair(tmp_path):
    p = _write(tmp_path, "h.jsonl", [{"_id": "x", "question": "q", "answer": "a", "context": [["Title only"]]}])
    with pytest.raises(DataLoadError, match=r"field 'context\[0\]' .*expected a \[title, \[sentences\]\] pair"):
        load_examples("hotpotqa", p)


def test_asqa_record_in_neither_layout(tmp_path):
    p = _write(tmp_path, "a.jsonl", [{"question": "q"}])
    with pytest.raises(DataLoadError, match=r"din0s/asqa layout .* or ALCE's eval layout"):
        load_examples("asqa", p)


def test_bad_jsonl_line_and_bad_top_level(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n{not json\n')
    with pytest.raises(DataLoadError, match=r"line 2: not valid JSON"):
        load_examples("hotpotqa", p)
    q = tmp_path / "x.json"
    q.write_text("42")
    with pytest.raises(DataLoadError, match=r"top-level JSON is int"):
        load_examples("hotpotqa", q)


def test_record_that_is_not_an_object(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('["just a string"]')
    with pytest.raises(DataLoadError, match=r"record 0: the record is str; expected a JSON object"):
        load_examples("musique", p)


def test_duplicate_question_ids_are_rejected(tmp_path):
    row = json.loads(sample_path("musique").read_text())[0]
    p = _write(tmp_path, "m.jsonl", [row, row])
    with pytest.raises(DataLoadError, match="occurs twice"):
        load_examples("musique", p)


def test_unknown_dataset_suggests_a_name_and_path_or_hub_is_required(tmp_path):
    with pytest.raises(ValueError, match="Did you mean 'hotpotqa'"):
        load_examples("hotpotq", tmp_path / "x.json")
    with pytest.raises(ValueError, match="exactly one of path="):
        load_examples("hotpotqa")
    with pytest.raises(FileNotFoundError, match="dataset file not found"):
        load_examples("hotpotqa", tmp_path / "missing.json")
    with pytest.raises(KeyError, match="No shipped sample"):
        sample_path("hotpot")


def test_limit_keeps_the_first_questions():
    exs = load_examples("qasper", sample_path("qasper_intact"), limit=2)
    assert [e.id for e in exs] == ["qh1", "qh2"]
    with pytest.raises(ValueError, match="limit must be"):
        load_examples("qasper", sample_path("qasper_intact"), limit=-1)


def test_corpus_doc_id_ignores_whitespace_runs():
    assert corpus_doc_id("a  b\nc") == corpus_doc_id("a b c")
    assert corpus_doc_id("a b c") != corpus_doc_id("a b d")


def test_musique_flashrag_style_rows():
    row = {
        "id": "2hop__x",
        "question": "Who founded the company that makes the Walkman?",
        "golden_answers": ["Masaru Ibuka", "Ibuka"],
        "metadata": {
            "answerable": True,
            "paragraphs": [
                {
                    "idx": 0,
                    "title": "Walkman",
                    "paragraph_text": "The Walkman is made by Sony. It plays cassettes.",
                    "is_supporting": True,
                },
                {
                    "idx": 1,
                    "title": "Sony",
                    "paragraph_text": "Sony was founded by Masaru Ibuka and Akio Morita.",
                    "is_supporting": True,
                },
                {"idx": 2, "title": "Tea", "paragraph_text": "Tea is a drink.", "is_supporting": False},
            ],
        },
    }
    ex = examples_from_records("musique", [row])[0]
    assert ex.answers == ("Masaru Ibuka", "Ibuka") and ex.gold_doc_ids == ("d0", "d1")
    assert [s.id for s in ex.document("d0").snippets] == ["d0.s0", "d0.s1"]
    assert ex.meta["layout"] == "flashrag"


def test_unanswerable_musique_question_is_typed():
    row = json.loads(sample_path("musique").read_text())[0]
    row = {**row, "answerable": False}
    assert examples_from_records("musique", [row])[0].answer_type == "unanswerable"


def test_json_lines_in_a_json_file_are_read(tmp_path):
    rows = json.loads(sample_path("hotpotqa").read_text())[:2]
    p = tmp_path / "two.json"
    p.write_text("\n".join(json.dumps(r) for r in rows))
    assert [e.id for e in load_examples("hotpotqa", p)] == [r["_id"] for r in rows]


class _FakeDatasets:
    """Stands in for the ``datasets`` package: records the call, returns rows or raises."""

    def __init__(self, rows=None, error=None):
        self.rows, self.error, self.calls = rows, error, []

    def load_dataset(self, hub_id, config=None, split=None):
        self.calls.append((hub_id, config, split))
        if self.error:
            raise self.error
        return self.rows


def test_hub_code_path_converts_rows_and_defaults_the_split(monkeypatch):
    rows = [json.loads(line) for line in sample_path("asqa").read_text().splitlines()[:3]]
    fake = _FakeDatasets(rows=rows)
    monkeypatch.setitem(__import__("sys").modules, "datasets", fake)
    exs = load_examples("asqa", hub_id="din0s/asqa", limit=2)
    assert fake.calls == [("din0s/asqa", None, "dev")]
    assert [e.id for e in exs] == [r["sample_id"] for r in rows[:2]]
    load_examples("hotpotqa", hub_id="hotpot_qa", hub_config="distractor", split="train", limit=0)
    assert fake.calls[-1] == ("hotpot_qa", "distractor", "train")


def test_hub_failure_says_how_to_work_offline(monkeypatch):
    from rageval.data import DataUnavailable

    fake = _FakeDatasets(error=ConnectionError("Couldn't reach 'x/y' on the Hub (OfflineModeIsEnabled)"))
    monkeypatch.setitem(__import__("sys").modules, "datasets", fake)
    with pytest.raises(
        DataUnavailable, match=r"could not load hub dataset 'x/y'.*--dataset-path FILE.*path=.*sample_path\('qasper'\)"
    ):
        load_examples("qasper", hub_id="x/y")


def test_corpus_is_refused_where_gold_ids_would_not_match():
    with pytest.raises(ValueError, match=r"corpus is built only for ASQA in the din0s/asqa layout; hotpotqa"):
        load_corpus("hotpotqa", sample_path("hotpotqa"))
    with pytest.raises(ValueError, match=r"asqa \(ALCE layout\)"):
        load_corpus("asqa", sample_path("alce_asqa_demos"))


def test_examples_are_hashable_by_identity():
    exs = load_examples("musique", sample_path("musique"), limit=2)
    assert len({exs[0], exs[1], exs[0]}) == 2


# -- one module per dataset, and what they share -------------------------------------


def test_each_dataset_is_built_by_the_public_build_of_its_own_module():
    import importlib

    from rageval.data import DATASETS, LOADERS

    modules = {
        "asqa": "rageval.data.asqa",
        "qasper": "rageval.data.qasper",
        "hotpotqa": "rageval.data.multihop",
        "2wikimultihopqa": "rageval.data.multihop",
        "musique": "rageval.data.musique",
        "ragbench": "rageval.data.ragbench",
    }
    assert set(DATASETS) == set(modules)
    for name, module in modules.items():
        assert LOADERS.get(name) is importlib.import_module(module).build, name


def test_canonical_dataset_accepts_aliases_and_names_the_closest():
    from rageval.data.registry import canonical_dataset

    assert canonical_dataset(" HotPot ") == "hotpotqa" and canonical_dataset("alce") == "asqa"
    with pytest.raises(ValueError, match="Did you mean 'musique'"):
        canonical_dataset("musiqe")
    with pytest.raises(TypeError, match="dataset name must be a string, got int"):
        canonical_dataset(3)


def test_read_records_unwraps_lists_and_papers_and_names_the_bad_line(tmp_path):
    from rageval.data.files import read_records

    (tmp_path / "demos.json").write_text('{"demos": [{"q": 1}]}')
    (tmp_path / "papers.json").write_text('{"p1": {"title": "t"}, "p2": {"id": "own"}}')
    (tmp_path / "bad.txt").write_bytes(b'{"a": 1}\n\xff\n')
    assert read_records(tmp_path / "demos.json") == [{"q": 1}]
    assert read_records(tmp_path / "papers.json") == [{"id": "p1", "title": "t"}, {"id": "own"}]
    with pytest.raises(DataLoadError, match=r"bad.txt: line 2: not UTF-8 text \(byte 0xff at offset 9\)"):
        read_records(tmp_path / "bad.txt")


def test_located_record_names_the_source_record_and_path():
    from rageval.data.fields import LocatedRecord, dedupe, make_doc

    r = LocatedRecord({"docs": [{"text": 1}], "tags": ["a", 2]}, "f.json", 4)
    with pytest.raises(DataLoadError, match=r"^f.json: record 4: field 'docs\[0\].text' is int 1; expected the text$"):
        r.get(r.rec["docs"][0], "text", "the text", "docs[0].text")
    with pytest.raises(DataLoadError, match=r"missing field 'title'; expected the title"):
        r.get(r.rec, "title", "the title", "title")
    assert r.get(r.rec, "title", "the title", "title", optional=True, default="") == ""
    with pytest.raises(DataLoadError, match=r"field 'tags\[1\]' is int 2; expected a string"):
        r.str_list(r.rec["tags"], "tags")
    with pytest.raises(DataLoadError, match=r"record 5: the record is list; expected a JSON object"):
        LocatedRecord([], "f.json", 5)
    assert dedupe(["b", "a", "b"]) == ("b", "a")
    doc = make_doc("d3", ["One.", "Two."], "T", source_key="k")
    assert (doc.text, doc.source_key, [s.id for s in doc.snippets]) == ("One. Two.", "k", ["d3.s0", "d3.s1"])


def test_no_public_name_of_rageval_data_is_one_of_its_modules():
    import pkgutil

    import rageval.data

    modules = {m.name for m in pkgutil.iter_modules(rageval.data.__path__)}
    assert {"asqa", "qasper", "multihop", "musique", "registry", "formats"} <= modules
    assert not set(rageval.data.__all__) & modules  # a submodule import would replace the name
