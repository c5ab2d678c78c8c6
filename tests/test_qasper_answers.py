"""QASPER as the attribution-compression paper scores it, and answer-in-context's aliases (docs/design.md
#string-exact-match, #answer-f1, #answer-in-context): every value below is computed by hand."""

import json
from pathlib import Path

import pytest

from rageval.data import examples_from_records, load_examples, sample_path
from rageval.diagnostics.answer import (
    answer_f1,
    answer_in_context,
    score_answer_f1,
    score_str_em,
    squad_token_f1,
    str_em,
)
from rageval.diagnostics.inputs import Gold, ScoringInput, ScoringOptions
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite

# ---- answer_in_context: which aliases drop out ------------------------------------------------


def test_only_yes_no_aliases_drop_out_the_others_are_searched():
    r = answer_in_context(["Paris is big.", "Lyon is big."], [["yes", "Paris"], ["no", "Paris"]])
    # q0: "yes" is not searched, "Paris" is and is found; q1: "Paris" is searched and absent
    assert [q["answer_in_context"] for q in r["per_question"]] == [1.0, 0.0]
    assert (r["n"], r["n_undefined"]) == (2, 0)


def test_a_group_of_only_yes_no_aliases_is_left_out_and_the_reason_counted():
    r = answer_in_context(["Yes, Paris."] * 3, [["yes", "No"], ["Yes"], [[" no "], ["Paris"]]])
    # q0, q1: nothing left -> undefined (yes_no); q2: the yes/no pair is left out, Paris's pair is 1 -> 1.0
    assert [q["answer_in_context"] for q in r["per_question"]] == [None, None, 1.0]
    assert r["undefined_reasons"] == {"yes_no": 2, "unanswerable": 0, "no_alias": 0}


def test_asqa_pair_with_a_yes_alias_keeps_its_other_short_answer():
    # pair 0 = ["yes", "1990"] -> "1990" searched (hit); pair 1 = ["Lyon"] -> miss: mean 1/2
    r = answer_in_context(["Born in 1990."], [[["yes", "1990"], ["Lyon"]]])
    assert r["answer_in_context"] == 0.5


def test_unanswerable_is_not_searched_for_as_a_literal_string():
    # the context literally contains "unanswerable": still undefined, never 1
    r = answer_in_context(["This question is unanswerable."], [["Unanswerable"]])
    assert r["per_question"][0]["answer_in_context"] is None
    assert r["undefined_reasons"] == {"yes_no": 0, "unanswerable": 1, "no_alias": 0}
    # an annotator's real answer next to another's Unanswerable is searched
    r = answer_in_context(["We use 412 questions."], [["412 questions", "Unanswerable"]])
    assert r["answer_in_context"] == 1.0
    # QASPER: No + Unanswerable -> nothing to search; counted under unanswerable
    r = answer_in_context(["No."], [["No", "Unanswerable"]])
    assert r["answer_in_context"] is None and r["undefined_reasons"]["unanswerable"] == 1


def test_aliases_that_normalize_to_nothing_are_counted_as_no_alias():
    r = answer_in_context(["x", "x"], [["the", "."], []])
    assert r["n_undefined"] == 2 and r["undefined_reasons"] == {"yes_no": 0, "unanswerable": 0, "no_alias": 2}


# ---- str_em, QASPER convention --------------------------------------------------------------


def _qem(pred, annotators):
    return str_em([pred], [annotators], convention="qasper")["per_question"][0]


def test_qasper_str_em_every_span_of_an_annotator_must_appear():
    # one annotator with two spans: both present -> 1; one missing -> 0
    assert _qem("They use BERT and ELMo [2].", [["BERT", "ELMo"]]) == {"str_em": 1.0, "str_hit": 1.0}
    assert _qem("They use BERT [2].", [["BERT", "ELMo"]]) == {"str_em": 0.0, "str_hit": 0.0}


def test_qasper_str_em_is_the_max_over_annotators():
    # annotator 0 needs BERT and ELMo (ELMo missing: 0), annotator 1 needs BERT (1): max = 1
    assert _qem("They use BERT.", [["BERT", "ELMo"], ["BERT"]])["str_em"] == 1.0
    assert _qem("They use GPT.", [["BERT", "ELMo"], ["BERT"]])["str_em"] == 0.0


def test_qasper_str_em_yes_no_is_a_whole_word_spans_are_substrings():
    assert _qem("No, they do not.", [["No"]])["str_em"] == 1.0
    # "no" inside "not" / "know" is no hit (a substring test would say 1)
    assert _qem("They do not know.", [["No"]])["str_em"] == 0.0
    assert _qem("Yes [1].", [["Yes"]])["str_em"] == 1.0
    # spans keep ALCE's substring test: "412" is inside "4120"
    assert _qem("About 4120 of them.", [["412"]])["str_em"] == 1.0
    # a free-form answer is one short answer: all of it must appear
    free = "a DeBERTa NLI model fine-tuned on MNLI"
    assert _qem("They use a DeBERTa NLI model fine-tuned on MNLI [3].", [[free]])["str_em"] == 1.0
    assert _qem("They use a DeBERTa NLI model.", [[free]])["str_em"] == 0.0


def test_qasper_str_em_leaves_unanswerable_annotators_out():
    # annotator 0 unanswerable (left out), annotator 1 needs "412": the value is annotator 1's alone
    assert _qem("Unanswerable.", [[], ["412"]])["str_em"] == 0.0
    assert _qem("412.", [["Unanswerable"], ["412"]])["str_em"] == 1.0
    r = str_em(["Unanswerable.", "x"], [[[]], [[], ["Unanswerable"]]], convention="qasper")
    # every annotator unanswerable -> undefined, counted
    assert [q["str_em"] for q in r["per_question"]] == [None, None]
    assert (r["str_em"], r["n"], r["n_undefined"]) == (None, 0, 2)


def test_qasper_str_em_citations_removed_and_alce_first_line():
    # "[1]" must not make "1" appear
    assert _qem("It is done [1].", [["1"]])["str_em"] == 0.0
    r = str_em(["Rome.\n412."], [[["412"]]], convention="qasper", alce_compat=True)
    assert r["str_em"] == 0.0  # ALCE reads the first line only
    assert _qem("Rome.\n412.", [["412"]])["str_em"] == 1.0


def test_asqa_convention_is_unchanged():
    # mean over qa_pairs of "any short answer", not "all", not max
    r = str_em(["Paris and Lyon."], [[["Paris", "Nice"], ["Lyon"], ["Rome"]]])
    assert r["str_em"] == pytest.approx(2 / 3) and r["str_hit"] == 0.0


def test_str_em_convention_and_reference_errors_name_the_fix():
    with pytest.raises(ValueError, match="convention must be one of 'asqa', 'qasper'"):
        str_em(["x"], [[["x"]]], convention="squad")
    with pytest.raises(TypeError, match=r"references\[0\] must list one entry per annotator"):
        str_em(["x"], [["x", "y"]], convention="qasper")


# ---- answer_f1, QASPER convention ------------------------------------------------------------


def test_qasper_answer_f1_treats_yes_no_as_strings_like_the_official_scorer():
    # "Yes, it does" vs "Yes": overlap 1, precision 1/3, recall 1 -> F1 = 2*(1/3)/(4/3) = 0.5
    assert squad_token_f1("Yes, it does", "Yes") == 0.5
    r = answer_f1(["Yes, it does [1]."], [["Yes"]], convention="qasper")
    assert r["answer_f1"] == 0.5 and r["answer_em"] == 0.0
    # HotpotQA's script scores the same pair 0 (yes/no must match exactly)
    assert answer_f1(["Yes, it does [1]."], [["Yes"]])["answer_f1"] == 0.0


def test_qasper_answer_f1_unanswerable_is_a_string_and_max_over_annotators():
    r = answer_f1(["Unanswerable"], [["Unanswerable", "412 questions"]], convention="qasper")
    assert r["answer_f1"] == 1.0 and r["answer_em"] == 1.0
    # "412" vs "412 questions": p = 1, r = 1/2 -> 2/3; vs "412": 1 -> max 1
    r = answer_f1(["412", "412"], [["412 questions"], ["412 questions", "412"]], convention="qasper")
    assert [q["answer_f1"] for q in r["per_question"]] == [pytest.approx(2 / 3), 1.0]
    # extractive spans joined as the official scorer joins them: "BERT, ELMo" -> tokens bert elmo
    r = answer_f1(["BERT"], [["BERT, ELMo"]], convention="qasper")
    assert r["answer_f1"] == pytest.approx(2 * 1 * 0.5 / 1.5)


def test_answer_f1_convention_error():
    with pytest.raises(ValueError, match="convention must be one of 'hotpotqa', 'qasper'"):
        answer_f1(["x"], [["x"]], convention="asqa")


# ---- the loader: abstract as a document, per-annotator short answers -------------------------


def test_qasper_abstract_is_a_document_of_its_own_first():
    exs = {e.id: e for e in load_examples("qasper", sample_path("qasper_intact"))}
    paper = json.loads(sample_path("qasper_intact").read_text())
    abstract = next(iter(paper.values()))["abstract"]
    doc = exs["qh1"].documents[0]
    assert (doc.id, doc.title, doc.text) == ("abstract", "Abstract", abstract)
    assert [s.id for s in doc.snippets] == ["abstract.s0"]
    assert exs["qh1"].paragraph_of["abstract.s0"] == "abstract"
    # evidence ids of the full-text paragraphs did not move
    assert exs["qh1"].evidence[0] == ("d2",) and exs["qh1"].evidence[1][0] == "d2"
    assert exs["qh1"].evidence[1][1].startswith("unmatched:")  # the FLOAT SELECTED caption, kept


def test_qasper_without_an_abstract_has_no_abstract_document():
    paper = dict(next(iter(json.loads(sample_path("qasper_intact").read_text()).values())), id="p1")
    paper["abstract"] = ""
    ex = examples_from_records("qasper", [paper])[0]
    assert ex.documents[0].id == "d0"


def test_qasper_annotator_answers_per_kind():
    exs = {e.id: e for e in load_examples("qasper", sample_path("qasper_intact"))}
    assert exs["qh1"].annotator_answers == (("412 questions",), ("412",))  # extractive spans
    assert exs["qh2"].annotator_answers == (("No",), ("No",))  # yes/no word
    assert exs["qh3"].annotator_answers == (("a DeBERTa NLI model fine-tuned on MNLI",),)  # free form
    assert exs["qh4"].annotator_answers == ((),)  # unanswerable
    # the official scorer's reference strings are unchanged
    assert exs["qh4"].answers == ("Unanswerable",)
    # several spans of one annotator stay together
    row = {
        "id": "p2",
        "title": "t",
        "abstract": "",
        "full_text": [{"section_name": "s", "paragraphs": ["We use BERT and ELMo."]}],
        "qas": [
            {
                "question": "Which encoders?",
                "question_id": "q",
                "answers": [{"answer": {"unanswerable": False, "extractive_spans": ["BERT", "ELMo"], "evidence": []}}],
            }
        ],
    }
    ex = examples_from_records("qasper", [row])[0]
    assert ex.annotator_answers == (("BERT", "ELMo"),) and ex.answers == ("BERT, ELMo",)
    assert Gold.of(ex).annotator_answers == (("BERT", "ELMo"),)
    assert Gold.from_dict(Gold.of(ex).to_dict()) == Gold.of(ex)


# ---- the scorers: each question with its own convention, order kept --------------------------


def _input(qid, answer, gold):
    return ScoringInput(qid, answer, (), (), (), gold)


def test_scorers_pick_the_convention_per_question_and_keep_order():
    asqa = Gold(answers=("Paris", "Lyon"), qa_pairs=(("Paris",), ("Lyon",)))
    qasper = Gold(answers=("Yes",), annotator_answers=(("Yes",),))
    hotpot = Gold(answers=("yes",))
    inputs = [
        _input("a", "Paris.", asqa),
        _input("q", "Yes, it does.", qasper),
        _input("h", "Yes, it does.", hotpot),
    ]
    em = score_str_em(inputs, ScoringOptions())
    # asqa: 1 of 2 pairs; qasper: "yes" a whole word -> 1; hotpot: no qa_pairs -> undefined
    assert [q["str_em"] for q in em["per_question"]] == [0.5, 1.0, None]
    assert (em["n"], em["n_undefined"]) == (2, 1)
    f1 = score_answer_f1(inputs, ScoringOptions())
    # asqa (HotpotQA's script): "paris" vs "paris" 1; qasper: 0.5 (official scorer); hotpot: yes/no exact -> 0
    assert [q["answer_f1"] for q in f1["per_question"]] == [1.0, 0.5, 0.0]


# ---- end to end: the QASPER suite with saved answers --------------------------------------------


SUITE = """\
name: qasper-12b
dataset: {{name: qasper, sample: qasper_intact}}
retrieval: {{method: given}}
settings:
  - {{compressor: identity}}
reader: {{backend: saved, params: {{path: {answers}}}}}
judge: {{spec: lexical}}
diagnostics: [str_em, answer_f1, answer_in_context]
output_dir: {out}
seed: 0
"""


def test_qasper_suite_scores_str_em_answer_f1_and_answer_in_context(tmp_path):
    answers = tmp_path / "answers.jsonl"
    rows = [
        ("qh1", "They use 412 questions [3]."),  # annotators: "412 questions" / "412"
        ("qh2", "No, they do not [2]."),  # annotators: No / No
        ("qh3", "A DeBERTa model [5]."),  # annotator: the whole free-form answer
        ("qh4", "Unanswerable."),  # annotator: unanswerable
    ]
    answers.write_text("".join(json.dumps({"question_id": q, "answer": a}) + "\n" for q, a in rows))
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.format(answers=answers, out=tmp_path / "run"))
    result = run_suite(load_suite(suite), progress=False)
    recs = {r["question_id"]: r for r in map(json.loads, (result.out_dir / "records.jsonl").read_text().splitlines())}
    m = {q: recs[q]["metrics"] for q in recs}
    assert [m[q]["str_em"] for q in ("qh1", "qh2", "qh3", "qh4")] == [1.0, 1.0, 0.0, None]
    # qh1: "they use 412 questions" vs "412 questions": p 2/4, r 1 -> 2/3; vs "412": p 1/4 r 1 -> 2/5; max 2/3
    assert m["qh1"]["answer_f1"] == pytest.approx(2 / 3)
    # qh2: "no they do not" vs "no": p 1/4, r 1 -> 2/5 (HotpotQA's script would give 0)
    assert m["qh2"]["answer_f1"] == pytest.approx(2 / 5)
    # qh3: "deberta model" vs "deberta nli model finetuned on mnli" (6 tokens): p 1, r 1/3 -> 1/2
    assert m["qh3"]["answer_f1"] == pytest.approx(1 / 2)
    assert m["qh4"]["answer_f1"] == 1.0  # "unanswerable" vs the string "Unanswerable"
    # identity shows every paragraph: 412 questions is in one unit; No and Unanswerable are not searched
    assert m["qh1"]["answer_in_context"] == 1.0
    assert m["qh2"]["answer_in_context"] is None and m["qh4"]["answer_in_context"] is None
    # the abstract is a unit of its own, declaring its own snippet, first
    units = recs["qh1"]["context"]["units"]
    assert units[0]["source_ids"] == ["abstract.s0"] and units[0]["title"] == "Abstract"
    assert recs["qh1"]["extra"]["gold"]["annotator_answers"] == [["412 questions"], ["412"]]
    assert Path(result.out_dir / "summary.csv").is_file()


def _paper(**kw):
    row = {
        "id": "p3",
        "title": "t",
        "abstract": "We compress contexts. Citations survive.",
        "full_text": [{"section_name": "Intro", "paragraphs": ["Body text here."]}],
        "qas": [
            {
                "question": "What survives?",
                "question_id": "q",
                "answers": [
                    {
                        "answer": {
                            "unanswerable": False,
                            "extractive_spans": ["Citations"],
                            "evidence": ["We compress contexts. Citations survive."],
                        }
                    }
                ],
            }
        ],
    }
    row.update(kw)
    return row


def test_qasper_abstract_sentences_are_its_snippets_and_evidence_can_point_at_it():
    ex = examples_from_records("qasper", [_paper()])[0]
    assert [s.id for s in ex.documents[0].snippets] == ["abstract.s0", "abstract.s1"]
    assert [d.id for d in ex.documents] == ["abstract", "d0"]
    # an annotator who highlighted the abstract has it as gold evidence paragraph
    assert ex.evidence == (("abstract",),) and ex.gold_doc_ids == ("abstract",)


def test_qasper_abstract_missing_null_or_wrong_type():
    row = _paper()
    del row["abstract"]
    assert [d.id for d in examples_from_records("qasper", [row])[0].documents] == ["d0"]
    assert [d.id for d in examples_from_records("qasper", [_paper(abstract=None)])[0].documents] == ["d0"]
    with pytest.raises(ValueError, match=r"record 0: field 'abstract' is int 3; expected the abstract"):
        examples_from_records("qasper", [_paper(abstract=3)])
