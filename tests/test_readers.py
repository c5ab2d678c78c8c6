"""Reader protocol, prompt template, registry, extractive and saved readers."""

import json

import pytest

from rageval.citations import parse_answer
from rageval.data import load_examples, sample_path
from rageval.readers import (
    DEFAULT_TEMPLATE,
    PromptTemplate,
    ReaderOutput,
    ReaderRequest,
    get_reader,
    needs_model,
    template_hash,
)
from rageval.readers.extractive import ExtractiveReader
from rageval.retrieval import retrieve
from rageval.text import get_tokenizer, remove_citations
from rageval.types import Unit

UNITS = (
    Unit("Bananas are yellow. They grow in the tropics.", source_ids=("d0.s0", "d0.s1"), title="Banana"),
    Unit("Paris is the capital of France. It lies on the Seine.", source_ids=("d1.s0", "d1.s1"), title="Paris"),
    Unit("France is a country in Europe. Its capital city is Paris, France.", source_ids=("d2.s0", "d2.s1")),
)


# -- template ----------------------------------------------------------------------------


def test_default_template_numbers_units_and_shows_titles():
    msgs = DEFAULT_TEMPLATE.messages("What is the capital of France?", UNITS)
    assert [m["role"] for m in msgs] == ["user"]
    user = msgs[0]["content"]
    assert "Question: What is the capital of France?" in user
    assert "Document [1] (Title: Banana): Bananas are yellow. They grow in the tropics." in user
    assert "Document [3]: France is a country in Europe." in user
    assert user.index("[1]") < user.index("[2]") < user.index("[3]")
    assert user.endswith("Answer:")


def test_template_hash_changes_with_any_field_and_is_stable():
    assert template_hash() == DEFAULT_TEMPLATE.hash == template_hash(DEFAULT_TEMPLATE.to_dict())
    assert len(template_hash()) == 16
    assert PromptTemplate(instruction="Answer briefly.").hash != template_hash()
    assert PromptTemplate(show_titles=False).hash != template_hash()
    assert PromptTemplate(system="You cite sources.").hash != template_hash()


def test_template_without_titles_and_with_system_message():
    t = PromptTemplate(show_titles=False, system="Be brief. {instruction}", instruction="Cite.")
    msgs = t.messages("q?", UNITS[:1])
    assert msgs[0] == {"role": "system", "content": "Be brief. Cite."}
    assert "Document [1]: Bananas are yellow." in msgs[1]["content"]
    assert t.evidence_text(UNITS[1]) == "Paris is the capital of France. It lies on the Seine."
    assert DEFAULT_TEMPLATE.evidence_text(UNITS[1]).startswith("Paris\nParis is")


def test_template_errors_name_the_field():
    with pytest.raises(ValueError, match=r"PromptTemplate.user uses the placeholder \{doc\}"):
        PromptTemplate(user="{question} {units} {doc}")
    with pytest.raises(ValueError, match=r"unit must contain \{k\} and \{text\}"):
        PromptTemplate(unit="({title}) {text}")
    with pytest.raises(
        ValueError, match=r"Unknown prompt template field\(s\) 'instructions' \(did you mean 'instruction'\?\)"
    ):
        PromptTemplate.from_dict({"instructions": "x"})


# -- registry ------------------------------------------------------------------------------


def test_registry_names_needs_model_and_did_you_mean():
    assert not needs_model("extractive") and not needs_model("saved")
    assert needs_model("transformers") and needs_model("openai")
    with pytest.raises(ValueError, match="Did you mean 'openai'"):
        get_reader("opeanai")
    with pytest.raises(ValueError, match="Did you mean 'max_sentences'"):
        get_reader("extractive", max_sentence=3)
    with pytest.raises(ValueError, match="reader 'saved' needs option\\(s\\) 'path'"):
        get_reader("saved")
    r = ExtractiveReader()
    assert get_reader(r) is r


def test_reader_output_rejects_unknown_status():
    with pytest.raises(ValueError, match="not one of"):
        ReaderOutput("x", status="failed")
    with pytest.raises(TypeError, match="wrap a single request in a list"):
        ExtractiveReader().generate(ReaderRequest("q", "?", ()))


# -- extractive -----------------------------------------------------------------------------


def test_extractive_quotes_relevant_sentences_and_cites_their_units():
    out = get_reader("extractive").generate([ReaderRequest("q", "What is the capital city of France?", UNITS)])[0]
    assert out.status == "ok"
    # "capital", "city", "france" (3) beats "capital", "france" (2)
    assert out.text == "Its capital city is Paris, France [3]. Paris is the capital of France [2]."
    parsed = parse_answer(out.text, n_units=3)
    assert [s.citations for s in parsed.sentences] == [(3,), (2,)]
    # every claim is verbatim text of the unit it cites
    for s in parsed.sentences:
        assert s.text in UNITS[s.citations[0] - 1].text
    tok = get_tokenizer("regex")
    assert out.input_tokens == tok.count(DEFAULT_TEMPLATE.render("What is the capital city of France?", UNITS))


def test_extractive_is_deterministic_breaks_ties_by_unit_order_and_dedupes():
    units = (Unit("Paris is nice."), Unit("Paris is nice."), Unit("Paris has a river"))
    r = ExtractiveReader(max_sentences=3)
    out = r.generate([ReaderRequest("q", "Tell me about Paris", units)] * 2)
    assert out[0] == out[1]
    assert out[0].text == "Paris is nice [1]. Paris has a river [3]."


def test_extractive_answers_nothing_when_no_sentence_overlaps():
    out = ExtractiveReader().generate([ReaderRequest("q", "Who won the 1998 World Cup?", UNITS[:1])])[0]
    assert out.text == "" and out.status == "ok"
    assert ExtractiveReader().generate([ReaderRequest("q", "Who?", ())])[0].text == ""


def test_extractive_on_a_real_hotpotqa_question():
    ex = load_examples("hotpotqa", sample_path("hotpotqa"), limit=1)[0]
    r = retrieve(ex, method="bm25", k=4)
    units = tuple(Unit(d.text, tuple(s.id for s in d.snippets), d.title) for d in r.documents)
    out = ExtractiveReader().generate([ReaderRequest(ex.id, ex.question, units)])[0]
    parsed = parse_answer(out.text, n_units=len(units))
    assert parsed.sentences and all(len(s.citations) == 1 and not s.invalid for s in parsed.sentences)
    assert all(remove_citations(s.raw) in units[s.citations[0] - 1].text for s in parsed.sentences)


def test_extractive_rejects_bad_options():
    with pytest.raises(ValueError, match="max_sentences must be a positive integer"):
        ExtractiveReader(max_sentences=0)


# -- saved ------------------------------------------------------------------------------------


def _saved(tmp_path, rows):
    p = tmp_path / "answers.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return p


def test_saved_reader_looks_up_question_and_setting(tmp_path):
    p = _saved(
        tmp_path,
        [
            {"question_id": "q1", "setting": "a", "answer": "Paris [2].", "input_tokens": 99},
            {"question_id": "q1", "setting": "b", "answer": "Lyon [1]."},
            {"question_id": "q2", "output": "Any setting [1]."},
            {"question_id": "q3", "setting": "a", "answer": None, "status": "prompt_overflow", "error": "too long"},
        ],
    )
    r = get_reader("saved", path=str(p))
    reqs = [
        ReaderRequest("q1", "?", UNITS, setting="a"),
        ReaderRequest("q1", "?", UNITS, setting="b"),
        ReaderRequest("q2", "?", UNITS, setting="zzz"),
        ReaderRequest("q3", "?", UNITS, setting="a"),
    ]
    out = r.generate(reqs)
    assert [o.text for o in out] == ["Paris [2].", "Lyon [1].", "Any setting [1].", ""]
    assert out[0].input_tokens == 99
    assert out[1].input_tokens == r.count_prompt_tokens(reqs[1])
    assert out[3].status == "prompt_overflow" and out[3].error == "too long"


def test_saved_reader_missing_answer_is_a_reader_error_naming_question_and_setting(tmp_path):
    p = _saved(tmp_path, [{"question_id": "q1", "setting": "a", "answer": "x"}])
    r = get_reader("saved", path=p)
    missing, wrong_setting = r.generate(
        [ReaderRequest("q9", "?", UNITS, setting="a"), ReaderRequest("q1", "?", UNITS, setting="b")]
    )
    assert missing.status == "reader_error" and "no saved answer for question 'q9'" in missing.error
    assert str(p) in missing.error
    assert wrong_setting.status == "reader_error"
    assert "setting 'b'" in wrong_setting.error and "['a']" in wrong_setting.error


def test_saved_reader_file_errors_name_the_line(tmp_path):
    with pytest.raises(ValueError, match=r"line 2: missing field 'question_id'"):
        get_reader("saved", path=_saved(tmp_path, [{"question_id": "q", "answer": "a"}, {"answer": "b"}]))
    with pytest.raises(
        ValueError, match=r"line 2: a second answer for question 'q' and setting 's' \(first at line 1\)"
    ):
        get_reader("saved", path=_saved(tmp_path, [{"question_id": "q", "setting": "s", "answer": "a"}] * 2))
    with pytest.raises(ValueError, match=r"line 1: field 'answer' is int"):
        get_reader("saved", path=_saved(tmp_path, [{"question_id": "q", "answer": 3}]))
    with pytest.raises(FileNotFoundError, match="answers file not found"):
        get_reader("saved", path=tmp_path / "none.jsonl")


def test_saved_reader_replays_the_extractive_reader(tmp_path):
    ex = load_examples("musique", sample_path("musique"), limit=3)
    reqs = []
    for e in ex:
        units = tuple(
            Unit(d.text, tuple(s.id for s in d.snippets), d.title) for d in retrieve(e, method="bm25", k=3).documents
        )
        reqs.append(ReaderRequest(e.id, e.question, units, setting="bm25@3"))
    live = ExtractiveReader().generate(reqs)
    p = _saved(
        tmp_path,
        [
            {"question_id": q.question_id, "setting": q.setting, **o.to_dict(), "answer": o.text}
            for q, o in zip(reqs, live)
        ],
    )
    assert get_reader("saved", path=p).generate(reqs) == live


def test_saved_reader_rejects_bad_token_counts(tmp_path):
    with pytest.raises(ValueError, match=r"line 1: field 'input_tokens' is 'many'"):
        get_reader("saved", path=_saved(tmp_path, [{"question_id": "q", "answer": "a", "input_tokens": "many"}]))
