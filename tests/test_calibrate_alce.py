"""Human calibration of the citation scores on ALCE's human citation evaluation format, on a small file written
by hand (tests/fixtures/alce_human_small.json); every figure below is worked out by hand from that file with the
lexical judge (share of the sentence's content words found in the premise, threshold 0.5)."""

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval.calibrate.alce import calibrate_alce_human, load_alce_human
from rageval.cli import main
from rageval.stats.agreement import agreement, cohen_kappa, confusion

FILE = Path(__file__).parent / "fixtures" / "alce_human_small.json"


def test_kappa_on_a_small_confusion_table_by_hand():
    # p_o = 35/50 = 0.7; margins 25/25 and 30/20: p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = 0.2 / 0.5
    assert cohen_kappa([[20, 5], [10, 15]]) == pytest.approx(0.4)
    # p_o = 3/5; p_e = 0.6*0.6 + 0.4*0.4 = 0.52; kappa = 0.08 / 0.48 = 1/6
    assert cohen_kappa([[2, 1], [1, 1]]) == pytest.approx(1 / 6)
    assert cohen_kappa([[0, 0], [0, 7]]) is None  # one label only: chance agreement is 1
    assert cohen_kappa([[0, 0], [0, 0]]) is None
    assert cohen_kappa([[0, 3], [3, 0]]) == pytest.approx(-1.0)
    table, missing = confusion([1, 0, 1, None, 0], [1, 1, 0, 0, 0])
    assert table == [[1, 1], [1, 1]] and missing == 1
    ag = agreement([1, 0, 1, None, 0], [1, 1, 0, 0, 0])
    assert ag["n"] == 4 and ag["agree"] == 2 and ag["rate"] == 0.5 and ag["kappa"] == 0.0
    with pytest.raises(ValueError, match="labels must be 0 or 1"):
        confusion([2], [1])


def test_the_file_is_read_without_re_splitting_and_the_summary_key_is_skipped():
    sents = load_alce_human(str(FILE))
    assert [(s.system[-6:], s.item, s.index) for s in sents] == [
        ("a.json", "q1", 0),
        ("a.json", "q1", 1),
        ("a.json", "q2", 0),
        ("a.json", "q2", 1),
        ("b.json", "q1", 0),
    ]
    assert sents[0].docs[1] == ("Globe Theatre", "The Globe Theatre was built in 1599.")
    assert sents[0].auto_citation == [1, 1] and sents[4].auto_recall is None  # system b records no automatic scores


def test_agreement_with_humans_by_hand():
    r = calibrate_alce_human(load_alce_human(str(FILE)), judge="lexical")
    rg = r["rageval"]
    # sentence support, human label first: a.q1.s0 (1, 1), a.q1.s1 (0, 0), a.q2.s0 (1, 0: 2 of 5 words),
    # a.q2.s1 (0, 0: no citation, no judge call), b.q1.s0 (0, 1: 2 of 4 words)
    assert rg["sentence_recall"]["confusion"] == [[2, 1], [1, 1]]
    assert rg["sentence_recall"]["rate"] == pytest.approx(0.6)
    assert rg["sentence_recall"]["kappa"] == pytest.approx(1 / 6)
    # citations: a.q1.s0 [Hamlet (2 -> 1, precise), Globe (0, imprecise)], a.q1.s1 [Globe: human 1 but the
    # sentence is unsupported -> 0; rageval 0], a.q2.s0 [(2 -> 1, 0)], b.q1.s0 [human 1 but unsupported -> 0; 1]
    assert rg["citation_precision"]["confusion"] == [[2, 1], [1, 1]]
    assert rg["citation_precision"]["n"] == 5 and rg["citation_precision"]["kappa"] == pytest.approx(1 / 6)
    # analyze.py's detection of unsupported labels: recall n00/(n00+n01), precision n00/(n00+n10)
    assert rg["sentence_recall"]["unsupported_recall"] == pytest.approx(2 / 3)
    assert rg["sentence_recall"]["unsupported_precision"] == pytest.approx(2 / 3)
    # ALCE's recorded decisions (system a only): recall agrees everywhere; its citation labels
    # a.q1.s0 [1, 1] vs human [1, 0], a.q1.s1 [0] (recall 0), a.q2.s0 [1] vs [1]
    al = r["alce_automatic"]
    assert al["n_sentences"] == 4
    assert al["sentence_recall"]["confusion"] == [[2, 0], [0, 2]] and al["sentence_recall"]["kappa"] == 1.0
    assert al["citation_precision"]["confusion"] == [[1, 1], [0, 2]]
    assert al["citation_precision"]["kappa"] == pytest.approx(0.5)  # p_o 3/4, p_e 0.5
    assert r["n_sentences"] == 5 and r["n_citations"] == 5 and r["n_items"] == 3


def test_per_system_means_follow_the_analysis_script():
    r = calibrate_alce_human(load_alce_human(str(FILE)), judge="lexical")
    a = next(s for s in r["systems"] if s["system"] == "asqa-toy-system-a.json")
    assert a["items"] == 2 and a["sentences"] == 4
    assert a["human_recall"] == pytest.approx(0.5)  # q1 (1+0)/2, q2 (1+0)/2
    assert a["human_citation_precision"] == pytest.approx((1 / 3 + 1) / 2)  # q1 [1, 0, 0], q2 [1]
    assert a["human_sentence_precision"] == pytest.approx(0.25)  # min(recall, precision): q1 0, q2 (1+0)/2
    assert a["rageval_recall"] == pytest.approx(0.25)  # q1 (1+0)/2, q2 0
    b = next(s for s in r["systems"] if s["system"] == "asqa-toy-system-b.json")
    assert b["alce_recall"] is None and b["alce_recall_items"] == 0  # not recorded: undefined, not 0


def test_judge_abstentions_are_left_out_and_counted():
    def abstain_on_globe(premises, hypotheses):
        return [math.nan if "Globe" in p else 1.0 for p in premises]

    from rageval.judges import CallableJudge

    r = calibrate_alce_human(load_alce_human(str(FILE)), judge=CallableJudge(abstain_on_globe, judge_id="t"))
    # a.q1.s0's joint premise holds the Globe document: its joint decision abstains (recall left out, and its
    # two citations); a.q1.s1 cites only Globe: left out too
    assert r["rageval"]["sentence_recall"]["n_missing"] == 2 and r["rageval"]["sentence_recall"]["n"] == 3
    assert r["rageval"]["citation_precision"]["n_missing"] == 3
    assert r["judge_abstentions"] == 2


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda d: d["asqa"]["asqa-toy-system-b.json"]["q1"]["sentences"][0].update(sentence_recall_score=2),
            "sentence_recall_score must be one of [0, 1]",
        ),
        (
            lambda d: d["asqa"]["asqa-toy-system-a.json"]["q1"]["sentences"][0]["citations"][0].update(
                citation_precision_score=3
            ),
            "asqa/asqa-toy-system-a.json/q1.sentences[0].citations[0].citation_precision_score",
        ),
        (
            lambda d: d["asqa"]["asqa-toy-system-a.json"]["q1"].update(automatic_citation_precision_scores=[[1], [0]]),
            "automatic_citation_precision_scores[0] must list one score per citation (2)",
        ),
        (lambda d: d["asqa"]["asqa-toy-system-a.json"]["q2"].pop("sentences"), "q2 has no 'sentences' list"),
    ],
)
def test_malformed_files_are_refused_with_the_place(tmp_path, mutate, message):
    data = json.loads(FILE.read_text())
    mutate(data)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data))
    with pytest.raises(ValueError) as err:
        load_alce_human(str(p))
    assert message in str(err.value)


def test_cli(tmp_path):
    out = tmp_path / "r.json"
    res = CliRunner().invoke(
        main, ["calibrate", "--format", "alce-human", str(FILE), "--judge", "lexical", "--json", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert "| rageval gate (lexical:v1) | sentence recall | 5 | 0.600 | 0.167 | [[2, 1], [1, 1]] | 0 |" in res.output
    assert "| ALCE's recorded automatic | citation precision | 4 | 0.750 | 0.500 |" in res.output
    assert json.loads(out.read_text())["rageval"]["citation_precision"]["n"] == 5
    res = CliRunner().invoke(main, ["calibrate", "--format", "alce-human"])
    assert res.exit_code != 0 and "needs the file" in res.output and "Traceback" not in res.output
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    res = CliRunner().invoke(main, ["calibrate", "--format", "alce-human", str(bad)])
    assert res.exit_code == 2 and "x.json line 1: not valid JSON" in res.output and "Traceback" not in res.output
