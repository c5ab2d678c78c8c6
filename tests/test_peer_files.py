"""Every peer's file scored as the peer scores it: small files in each peer's real layout (tests/fixtures/peers,
how each was written: its README.md), with the values per record computed by hand in the comment beside them
(lexical judge: p = share of the hypothesis's content tokens found in the premise; decision p >= 0.5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval.data.formats import detect, read_input
from rageval.score import ScoreOptions, score_files

PEERS = Path(__file__).resolve().parent / "fixtures" / "peers"


def score(tmp_path: Path, *files: str, **kw):
    out = tmp_path / "out"
    res = score_files([str(PEERS / f) for f in files], out, options=ScoreOptions(), build_report=False, **kw)
    recs = {}
    for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        recs[(r["setting"]["name"], r["question_id"])] = r
    return res, recs


# ---------------------------------------------------------------- RAGAS: the same rows from every writer

RAGAS_FILES = ["ragas_datasets.csv", "ragas_datasets.jsonl", "ragas_datasets.parquet", "ragas_pandas.csv"]


@pytest.mark.parametrize("name", RAGAS_FILES)
def test_ragas_rows_from_every_writer_give_the_same_records(tmp_path, name):
    assert detect(str(PEERS / name)) == "ragas"
    _, recs = score(tmp_path, name)
    setting = Path(name).stem
    r1, r2 = recs[(setting, "#1")], recs[(setting, "#2")]
    # three retrieved contexts, three units -- Dataset.to_csv's numpy text ['a' 'b'\n 'c'] included
    assert [u["text"] for u in r2["context"]["units"]] == [
        "The Seine flows through Paris, the capital of France, on its way to the English Channel at Le Havre.",
        "Lyon is a city in France.",
        "It's the river's \"left bank\" that artists loved.",
    ]
    assert len(r1["context"]["units"]) == 3
    # #1: "William Shakespeare wrote Hamlet." {william, shakespeare, wrote, hamlet}; [1] holds 3 of 4 -> supported
    # #2: "The Seine flows through Paris." 3/3 in [1]; "Lyon is a French city." {lyon, french, city}: 2/3 in [2]
    for r in (r1, r2):
        assert r["metrics"]["emitted_precision"] == r["metrics"]["emitted_recall"] == 1.0
        assert r["metrics"]["grounded_precision"] == 1.0  # contexts without sources: grounded = emitted
    # the references "William Shakespeare" (2 regex tokens) and "The Seine" (2) are at most 10 tokens: also the
    # short answers (the same strings, so answer F1 is unchanged). Answer F1: [william, shakespeare, wrote, hamlet]
    # vs 2 tokens -> P 1/2, R 1 -> 2/3; [seine, flows, through, paris, lyon, is, french, city] vs [seine] -> P 1/8,
    # R 1 -> 2/9
    assert r1["metrics"]["answer_f1"] == pytest.approx(2 / 3)
    assert r2["metrics"]["answer_f1"] == pytest.approx(2 / 9)
    # answer-in-context, defined without --map: "william shakespeare" is in [1] "Hamlet is a tragedy by William
    # Shakespeare."; "seine" (the article dropped) in [1] "The Seine flows through Paris, ..." -> 1 and 1
    assert r1["metrics"]["answer_in_context"] == r2["metrics"]["answer_in_context"] == 1.0


def test_ragas_datasets_csv_and_pandas_csv_read_alike():
    a, b = (read_input(str(PEERS / n)) for n in ("ragas_datasets.csv", "ragas_pandas.csv"))
    assert [(i.question, i.answer, [u.text for u in i.units]) for i in a.items] == [
        (i.question, i.answer, [u.text for u in i.units]) for i in b.items
    ]


# ---------------------------------------------------------------- FlashRAG: intermediate_data.json


def test_flashrag_without_refine_result_the_reader_saw_every_document(tmp_path):
    name = "flashrag_intermediate_data.json"
    assert detect(str(PEERS / name)) == "flashrag"
    res, recs = score(tmp_path, name)
    r0, r1 = recs[("flashrag_intermediate_data", "test_0")], recs[("flashrag_intermediate_data", "test_1")]
    # units: the two retrieved documents, titles from the first line of `contents` (quotes dropped)
    assert [(u["text"], u["title"]) for u in r0["context"]["units"]] == [
        ("Hamlet is a tragedy written by William Shakespeare.", "Hamlet"),
        ("Macbeth is a play.", "Macbeth"),
    ]
    m0, m1 = r0["metrics"], r1["metrics"]
    assert (m0["answer_em"], m0["answer_f1"], m0["answer_in_context"]) == (1.0, 1.0, 1.0)  # pred == gold
    # test_1: "The Seine flows through Paris [1]." vs "Seine": [seine, flows, through, paris] -> P 1/4, R 1 -> 0.4
    assert m1["answer_f1"] == pytest.approx(0.4) and m1["answer_in_context"] == 1.0
    # the claim {seine, flow, pari}, all in doc 201 as the reader saw it: emitted = grounded = 1
    assert m1["emitted_recall"] == m1["grounded_recall"] == m1["emitted_precision"] == 1.0
    # test_0 does not cite in a setting that cites: 0, as ALCE scores it
    assert m0["emitted_recall"] == 0.0
    assert any("metric_score (2 items) is not read" in n for n in res.notes)


@pytest.mark.parametrize("name", ["flashrag_refine_intermediate_data.json", "flashrag_refine_intermediate_data.jsonl"])
def test_flashrag_refine_result_is_what_the_reader_saw_and_documents_are_the_sources(tmp_path, name):
    assert detect(str(PEERS / name)) == "flashrag"
    res, recs = score(tmp_path, name)
    setting = Path(name).stem
    r0, r1 = recs[(setting, "test_0")], recs[(setting, "test_1")]
    # one unit: the refiner's text, declaring nothing; the sources: the retrieved documents
    assert [(u["text"], u.get("source_ids")) for u in r1["context"]["units"]] == [
        ("Paris is the capital of France.", None)
    ]
    item = next(i for i in read_input(str(PEERS / name)).items if i.id == "test_1")
    assert [(s.id, s.text) for s in item.sources] == [
        ("201", "Paris is the capital of France. The Seine flows through Paris."),
        ("202", "Lyon is a city in France."),
    ]
    m0, m1 = r0["metrics"], r1["metrics"]
    # test_0: the refiner dropped "William": the gold "William Shakespeare" is no longer in what the reader saw
    assert m0["answer_in_context"] == 0.0 and m0["answer_em"] == 1.0
    # test_1: the refiner dropped the Seine sentence: answer-in-context 0 ("Seine" is not in the refined text)
    assert m1["answer_in_context"] == 0.0
    # emitted: claim {seine, flow, pari} against "Paris is the capital of France." {pari, capital, france}: 1/3 -> 0
    assert m1["emitted_recall"] == m1["emitted_precision"] == 0.0
    # grounded: the unit re-attributed to doc 201, whose text holds all three -> 1
    assert m1["grounded_recall"] == m1["grounded_precision"] == 1.0 and m1["re_attributability"] == 1.0
    assert any("2 of 2 carry output.refine_result" in n for n in res.notes)


def test_map_reaches_nested_fields(tmp_path):
    got = read_input(
        str(PEERS / "flashrag_intermediate_data.json"),
        "ragas",
        mapping={"answer": "output.pred", "answers": "golden_answers"},
    )
    assert [(i.answer, i.gold["answers"]) for i in got.items] == [
        ("William Shakespeare", ("William Shakespeare",)),
        ("The Seine flows through Paris [1].", ("Seine", "the Seine")),
    ]
    assert "answer←output.pred" in got.notes[0]


# ---------------------------------------------------------------- RAGChecker: checking_inputs / checking_outputs


@pytest.mark.parametrize("name", ["ragchecker_checking_inputs.json", "ragchecker_checking_outputs.json"])
def test_ragchecker_input_and_output_files_score_alike(tmp_path, name):
    assert detect(str(PEERS / name)) == "ragchecker"
    res, recs = score(tmp_path, name)
    setting = Path(name).stem
    m0, m1 = recs[(setting, "0")]["metrics"], recs[(setting, "1")]["metrics"]
    # gt_answer is the reference, and at most 10 regex tokens also the short answers: #0 "The Nile is the longest
    # river in the world." is 9 words and a full stop, 10 tokens; #1 "Leonardo da Vinci" 3. Answer F1 (the same
    # strings either way): #0 holds the same tokens in another order -> F1 1, EM 0
    assert (m0["answer_f1"], m0["answer_em"]) == (1.0, 0.0)
    assert (m1["answer_f1"], m1["answer_em"]) == (0.0, 0.0)  # Raphael vs Leonardo da Vinci
    # answer-in-context: "nile is longest river in world" is in context 1 ("The Nile is the longest river in the
    # world, at about 6,650 km."), "leonardo da vinci" in the one context of #1 -> 1 and 1
    assert m0["answer_in_context"] == m1["answer_in_context"] == 1.0
    assert any("gt_answer of at most 10 tokens is also read as the short answers" in n for n in res.notes)
    # no response cites: the citation diagnostics are undefined (None), never 0
    assert m0.get("emitted_recall") is None and m1.get("grounded_precision") is None
    assert recs[(setting, "0")]["context"]["units"][1]["text"] == "The Amazon is the largest river by discharge."
    own = [n for n in res.notes if "RAGChecker's own checks and metrics are not read" in n]
    if name.endswith("outputs.json"):  # its claims are read (tests/test_claim_support.py), its checks are not
        assert len(own) == 1 and "answer2response (2 results)" in own[0] and "the file's metrics" in own[0]
        assert "response_claims (" not in own[0] and "gt_answer_claims (" not in own[0]
    else:
        assert own == []


# ---------------------------------------------------------------- ALCE: result files of its three datasets


def _alce(tmp_path, name):
    res, recs = score(tmp_path, name)
    ((_, rec),) = recs.items()
    return res, rec["metrics"]


def test_alce_asqa_plain_and_summary_runs(tmp_path):
    res, plain = _alce(tmp_path / "p", "alce_asqa_plain.json")
    _, summ = _alce(tmp_path / "s", "alce_asqa_summary.json")
    # str-EM: "Ali Daei" and "Christine Sinclair" both in the output -> 1, hit 1 (both runs: the same output)
    assert (plain["str_em"], plain["str_hit"], summ["str_em"]) == (1.0, 1.0, 1.0)
    # plain: s1 {ali, daei, scored, 109, international, goal} all in doc 1; s2 likewise in doc 2 -> 1 and 1
    assert plain["emitted_recall"] == plain["grounded_recall"] == plain["emitted_precision"] == 1.0
    # summary: s2 against "Title: Christine Sinclair\nSinclair plays for Canada." holds 2 of 6 -> unsupported;
    # s1 against "Title: Ali Daei\nDaei scored 109 goals." 5 of 6 -> supported: emitted 1/2; grounded (the docs'
    # text, what ALCE's eval.py judges) 1
    assert (summ["emitted_recall"], summ["emitted_precision"]) == (0.5, 0.5)
    assert (summ["grounded_recall"], summ["grounded_precision"]) == (1.0, 1.0)
    assert any("ALCE ASQA file (told by args.dataset_name = 'asqa')" in n for n in res.notes)


def test_alce_qampari_is_told_apart_and_what_is_not_applied_is_noted(tmp_path):
    assert read_input(str(PEERS / "alce_qampari_plain.json")).meta["dataset"] == "qampari"
    res, m = _alce(tmp_path, "alce_qampari_plain.json")
    notes = "\n".join(res.notes)
    assert "ALCE QAMPARI file (told by args.dataset_name = 'qampari')" in notes
    assert "QAMPARI's rules apply" in notes and "MAUVE is not computed" in notes
    assert m.get("str_em") is None  # no qa_pairs: undefined, never 0
    # ALCE's QAMPARI sentences: "<question> Alien [1]" and "<question> Blade Runner [2]"; the first's content
    # {film, ridley, scott, direct, alien}: 4 of 5 in doc 1 ("directed" is not "direct"); the second's 5 of 6 in
    # doc 2: recall 1, precision 1 (one citation each)
    assert (m["emitted_recall"], m["emitted_precision"]) == (1.0, 1.0)
    # predictions {alien, blade runner} of the 3 gold answers: precision 1, recall 2/3, F1 0.8; no ROUGE
    assert (m["qampari_precision"], m["qampari_recall"], m["qampari_recall_top5"]) == (1.0, 2 / 3, 2 / 3)
    assert m["qampari_f1"] == m["qampari_f1_top5"] == pytest.approx(0.8)
    assert m.get("rouge_lsum") is None and m["answer_length"] == 3  # "Alien, Blade Runner."


def test_alce_eli5_claims_are_noted_and_the_dataset_is_told_by_its_fields(tmp_path):
    import copy

    top = json.loads((PEERS / "alce_eli5_summary.json").read_text(encoding="utf-8"))
    res, m = _alce(tmp_path, "alce_eli5_summary.json")
    assert any("ELI5's claims recall applies" in n for n in res.notes)
    # claim 1 {air, molecule, scatter, blue, light}: all in the output; claim 2 {blue, light, scattered, red}: 3 of 4
    assert m["claims_recall"] == 1.0 and m["claims_abstentions"] == 0
    # emitted: s1 against "Blue scatters." 2 of 6; s2 {sky, look, blue} against "The sky is blue." 2 of 3 -> 1/2
    assert (m["emitted_recall"], m["grounded_recall"]) == (0.5, 1.0)
    no_args = copy.deepcopy(top)
    del no_args["args"]["dataset_name"]
    p = tmp_path / "eli5_no_name.json"
    p.write_text(json.dumps(no_args), encoding="utf-8")
    got = read_input(str(p))
    assert got.meta["dataset"] == "eli5" and any("told by its items' `claims`" in n for n in got.notes)
