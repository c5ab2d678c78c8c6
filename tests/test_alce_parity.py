"""ALCE parity per item: rageval score on three ALCE result files (ASQA, QAMPARI, ELI5) against the values ALCE's
own eval.py functions returned for each item, its NLI call swapped for the lexical judge's decision (p >= 0.5).

The files and ALCE's outputs are in tests/fixtures/alce_parity (README.md: how each was produced; the procedure
in docs/score.md#alce-parity).  ALCE reports x100; rageval fractions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval.score import ScoreOptions, score_files

HERE = Path(__file__).resolve().parent / "fixtures" / "alce_parity"
ALCE = json.loads((HERE / "alce_outputs.json").read_text(encoding="utf-8"))
FILES = {"alce_asqa.json": "asqa", "alce_qampari.json": "qampari", "alce_eli5.json": "eli5"}
#: ALCE's key -> rageval's record metric (x100 unless a count)
SAME = {
    "length": ("answer_length", 1),
    "rougeLsum": ("rouge_lsum", 100),
    "claims_nli": ("claims_recall", 100),
    "num_preds": ("qampari_num_preds", 1),
    "qampari_prec": ("qampari_precision", 100),
    "qampari_rec": ("qampari_recall", 100),
    "qampari_rec_top5": ("qampari_recall_top5", 100),
    "qampari_f1": ("qampari_f1", 100),
    "qampari_f1_top5": ("qampari_f1_top5", 100),
}
CITATIONS = {"citation_rec": "recall", "citation_prec": "precision"}


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    out = {}
    for name in FILES:
        d = tmp_path_factory.mktemp(name.replace(".", "_")) / "out"
        score_files([str(HERE / name)], d, options=ScoreOptions(), build_report=False)
        recs = [json.loads(x) for x in (d / "records.jsonl").read_text(encoding="utf-8").splitlines()]
        out[name] = {r["question_id"]: r["metrics"] for r in recs}
    return out


def _close(a, b) -> bool:
    return a == pytest.approx(b, abs=1e-9)


@pytest.mark.parametrize("name", list(FILES))
def test_every_alce_value_is_rageval_s_per_item(scored, name):
    alce, ours = ALCE["files"][name], scored[name]
    assert set(alce) == set(ours) and len(alce) == 12
    compared: dict[str, int] = {}
    for qid, want in alce.items():
        got = ours[qid]
        for key, (ours_key, scale) in SAME.items():
            if key in want:
                assert _close(got[ours_key] * scale, want[key]), (qid, key, got[ours_key], want[key])
                compared[key] = compared.get(key, 0) + 1
        if FILES[name] == "asqa":
            assert _close(got["str_em"] * 100, want["str_em"]) and _close(got["str_hit"] * 100, want["str_hit"])
            compared["str_em"] = compared.get("str_em", 0) + 1
        else:  # no qa_pairs: ALCE's eval.py reports 0, rageval leaves str-EM undefined
            assert want["str_em"] == 0 and got.get("str_em") is None
        for key, what in CITATIONS.items():
            emitted, grounded = got.get(f"emitted_{what}"), got.get(f"grounded_{what}")
            assert emitted == grounded  # plain runs: the reader saw the docs' text, ALCE's premises
            if want[key] is None:  # no sentence: ALCE skips the item, rageval leaves it undefined
                assert emitted is None, (qid, key)
            elif FILES[name] == "qampari" and emitted is None:
                # the one known difference: an empty QAMPARI output is ALCE's one sentence "<question> " with no
                # citation (0); rageval's empty answer has no claim, so its citation scores are undefined
                assert want[key] == 0 and got["answer_length"] == 0, (qid, key)
            else:
                assert _close(emitted * 100, want[key]), (qid, key, emitted, want[key])
                compared[key] = compared.get(key, 0) + 1
    # every ALCE value of the dataset was compared on (nearly) every item
    expected = {"asqa": ("length", "rougeLsum", "str_em"), "qampari": ("length", "qampari_f1_top5", "num_preds")}
    expected["eli5"] = ("length", "rougeLsum", "claims_nli")
    for key in expected[FILES[name]]:
        assert compared[key] == 12, (key, compared)
    assert compared["citation_rec"] >= 10 and compared["citation_prec"] >= 10


def test_the_fixture_records_how_alce_was_run():
    assert len(ALCE["alce_commit"]) == 40 and "lexical" in ALCE["nli"]
    # ALCE's eval.py split with NLTK's English punkt_tab model, and so does rageval's ALCE mode here
    assert "English punkt_tab" in ALCE["sent_tokenize"] or "punkt_tab (english)" in ALCE["sent_tokenize"]
    from rageval.text.segment import SUBSTITUTE_SOURCE, nltk_punkt_source

    assert nltk_punkt_source() != SUBSTITUTE_SOURCE and "nupunkt" not in nltk_punkt_source()
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    assert "run_alce_eval.py" in readme and "make_alce_parity.py" in readme
