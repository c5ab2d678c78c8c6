"""Claim support's grounding rule (docs/design.md#claim-support): ``single`` (the default: a unit without
provenance grounded in the snippets that pass the judge one by one) and ``union`` (in its top-k recovery
candidates together), by hand with the lexical judge (p = share of the hypothesis's content tokens found in the
premise), on a FlashRAG-shaped file whose refined text is copied from two documents, and as a run's scoring
option (manifest, cache, report)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.diagnostics.claim_support import claim_support
from rageval.judges import CallableJudge
from rageval.judges.lexical import LexicalJudge
from rageval.report.grounding import gap_grounding, gaps_grounding_note
from rageval.score import ScoreOptions, score_files
from rageval.scoring import AttributionConfig, ScoringConfig

PEERS = Path(__file__).resolve().parent / "fixtures" / "peers"

S1 = "Paris is the capital of France."
S2 = "The Seine flows through Paris."
SOURCES = [{"id": "s1", "text": S1}, {"id": "s2", "text": S2}, {"id": "s3", "text": "Berlin is in Germany."}]
REFINED = f"{S1} {S2}"  # one unit without provenance, drawn from s1 and s2
UNITS = [{"text": REFINED, "source_ids": None}]
# one claim spanning both documents: content tokens {paris, capital, france, seine, flows} (5)
ANSWER = "Paris is the capital of France and the Seine flows through Paris."


class Recording:
    """The lexical judge, recording every (premise, hypothesis) it is asked."""

    def __init__(self):
        self.asked: list[tuple[str, str]] = []

    def __call__(self, premises, hypotheses):
        self.asked.extend(zip(premises, hypotheses))
        return LexicalJudge().predict(premises, hypotheses)


def _one(grounding, **kw):
    return claim_support([ANSWER], [UNITS], [SOURCES], grounding=grounding, threshold=0.8, **kw)["per_question"][0]


def test_single_rule_recovers_no_document_of_a_text_drawn_from_two():
    r = _one("single")
    # emitted: the claim against the refined unit: 5 of 5 -> 1.0 >= 0.8
    assert r["claim_support_emitted"] == 1.0
    # recovery of the unit (its text the hypothesis, 5 content tokens): s1 holds {paris, capital, france} 3/5 = 0.6,
    # s2 {seine, flows, paris} 3/5 = 0.6, both < 0.8; s3 shares no term (no BM25 candidate) -> not recovered:
    # the claim has no grounded premise (a structural rejection, no call)
    assert r["claim_support_grounded"] == 0.0 and r["claim_support_gap"] == 1.0
    assert r["claim_support_structural_rejections"] == 1


def test_union_rule_grounds_the_text_in_its_candidates_together():
    judge = Recording()
    r = _one("union", judge=CallableJudge(judge))
    # the candidates: s1 and s2 (s3 scores 0), in source order, each its own document -> joined with "\n";
    # the claim against them: 5 of 5 -> supported: grounded = emitted
    assert r["claim_support_grounded"] == r["claim_support_emitted"] == 1.0
    assert r["claim_support_gap"] == 0.0 and r["claim_support_structural_rejections"] == 0
    # no recovery call: the emitted pair and the one union premise only
    assert judge.asked == [(REFINED, ANSWER), (f"{S1}\n{S2}", ANSWER)]


def test_union_takes_the_top_k_candidates_in_source_order():
    def ranked(query, texts, k):
        return [1, 0][:k]  # s2 ranked above s1

    judge = Recording()
    r = _one("union", judge=CallableJudge(judge), candidates=ranked, k=2)
    assert judge.asked[-1] == (f"{S1}\n{S2}", ANSWER)  # source order, not rank order
    assert r["claim_support_grounded"] == 1.0
    judge = Recording()
    r = _one("union", judge=CallableJudge(judge), candidates=ranked, k=1)
    # k = 1: s2 alone, {seine, flows, paris} 3/5 = 0.6 < 0.8: judged and unsupported, not a structural rejection
    assert judge.asked[-1] == (S2, ANSWER)
    assert r["claim_support_grounded"] == 0.0 and r["claim_support_structural_rejections"] == 0


def test_union_keeps_declared_provenance_and_leaves_invented_claims_unsupported():
    units = [{"text": "Alpha beta.", "source_ids": ["a"]}]
    sources = [{"id": "a", "text": "Alpha beta gamma."}, {"id": "b", "text": "Alpha delta."}]
    # a unit declaring "a": grounded in "a" under both rules (b is never added): "delta" 0/1 in a -> 0 both ways
    for g in ("single", "union"):
        r = claim_support(["Delta."], [units], [sources], grounding=g)["per_question"][0]
        assert r["claim_support_grounded"] == 0.0 and r["claim_support_structural_rejections"] == 0
    # a claim no retrieved document states stays unsupported under union: {berlin, rome} 0/2 in s1 + s2
    r = claim_support(["Berlin is in Rome."], [UNITS], [SOURCES], grounding="union")["per_question"][0]
    assert r["claim_support_grounded"] == 0.0


def test_grounding_is_validated():
    with pytest.raises(ValueError, match="grounding"):
        _one("both")


# ---------------------------------------------------------------- a FlashRAG-shaped file, as a run


def _flashrag(tmp_path: Path) -> Path:
    item = {
        "id": "q0",
        "question": "What is Paris?",
        "golden_answers": ["capital of France"],
        "metadata": {},
        "output": {
            "retrieval_result": [
                {"id": "d1", "contents": f'"Paris"\n{S1}'},
                {"id": "d2", "contents": f'"Seine"\n{S2}'},
                {"id": "d3", "contents": '"Berlin"\nBerlin is in Germany.'},
            ],
            "refine_result": REFINED,  # the refiner copied one sentence of each of d1 and d2
            "prompt": "Answer the question based on the given document...",
            "pred": ANSWER,  # copied from the refined text
        },
    }
    path = tmp_path / "refined_intermediate_data.json"
    path.write_text(json.dumps([item]), encoding="utf-8")
    return path


def _run(path: Path, out: Path, grounding: str, build_report: bool = False):
    attribution = None if grounding == "single" else AttributionConfig.model_validate({"grounding": grounding})
    options = ScoreOptions(threshold=0.8, attribution=attribution, diagnostics=["claim_support"])
    res = score_files([str(path)], out, options=options, build_report=build_report, progress=False)
    rec = json.loads((out / "records.jsonl").read_text(encoding="utf-8").splitlines()[0])
    return res, rec["metrics"], json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def test_flashrag_refined_from_two_sources_union_grounded_equals_emitted(tmp_path):
    path = _flashrag(tmp_path)
    res, single, manifest = _run(path, tmp_path / "single", "single")
    # the titles enter the grounded premises ("Title: Paris\n..."), not the claim: the values of the hand case
    assert (single["claim_support_emitted"], single["claim_support_grounded"]) == (1.0, 0.0)
    assert manifest["scoring"]["attribution"] == {}  # the default is not recorded: as before the option
    # the importer's note suggests the union rule for a refined run
    assert any("--grounding union" in n and "1 of 1 carry output.refine_result" in n for n in res.notes)
    _, union, manifest = _run(path, tmp_path / "union", "union")
    assert union["claim_support_grounded"] == union["claim_support_emitted"] == 1.0
    # the premise: d1 and d2 under their titles, source order: "Title: Paris\n{S1}\nTitle: Seine\n{S2}"; regex
    # tokens: 3 + 7 + 3 + 6 = 19, the claim 12 words and its full stop 13 -> one pair of 32 verifier tokens
    assert union["claim_support_verifier_tokens_grounded"] == 32
    assert manifest["scoring"]["attribution"]["grounding"] == "union"
    assert ScoringConfig.model_validate(
        {k: manifest["scoring"][k] for k in ScoringConfig.model_fields}
    ).attribution == AttributionConfig(grounding="union")


def test_a_record_scored_under_one_rule_is_not_reused_under_the_other(tmp_path):
    path, out = _flashrag(tmp_path), tmp_path / "out"
    _run(path, out, "single")
    res, union, _ = _run(path, out, "union")
    assert (res.computed, res.reused) == (1, 0) and union["claim_support_grounded"] == 1.0
    res, union, _ = _run(path, out, "union")  # the same rule again: reused
    assert (res.computed, res.reused) == (0, 1) and union["claim_support_grounded"] == 1.0
    res, single, _ = _run(path, out, "single")
    assert res.computed == 1 and single["claim_support_grounded"] == 0.0


def test_the_report_names_the_rule_beside_the_gap(tmp_path):
    path = _flashrag(tmp_path)
    _run(path, tmp_path / "single", "single", build_report=True)
    summary = (tmp_path / "single" / "summary.md").read_text(encoding="utf-8")
    assert "`gap_claim_support`: grounding `single`: a unit without provenance in the snippets recovered" in summary
    findings = json.loads((tmp_path / "single" / "report.json").read_text(encoding="utf-8"))["findings"]
    gap = [f["text"] for f in findings if f["kind"] == "gap"]
    assert len(gap) == 1 and "(gap +1.000) (grounding `single`:" in gap[0]
    html = (tmp_path / "single" / "report.html").read_text(encoding="utf-8")
    assert "gap_claim_support: grounding single: a unit without provenance" in html
    _run(path, tmp_path / "union", "union", build_report=True)
    summary = (tmp_path / "union" / "summary.md").read_text(encoding="utf-8")
    assert "grounding `union`: a unit without provenance in its top-10 recovery candidates together" in summary


def test_gap_grounding_citation_gaps_keep_the_single_rule():
    manifest = {"scoring": {"attribution": {"grounding": "union", "k": 10}}}
    assert gap_grounding(manifest, "gap_precision").startswith("grounding `single`")
    assert gaps_grounding_note(manifest, ["gap_precision", "gap_recall", "gap_claim_support"]) == (
        "Grounded side: `gap_precision`, `gap_recall`: grounding `single`: a unit without provenance in the snippets "
        "recovered one by one; `gap_claim_support`: grounding `union`: a unit without provenance in its top-10 "
        "recovery candidates together."
    )
    assert gaps_grounding_note(manifest, []) == ""


def test_cli_flag(tmp_path):
    path = _flashrag(tmp_path)
    args = ["score", str(path), "--out", str(tmp_path / "o"), "--no-report", "--no-progress", "--threshold", "0.8"]
    r = CliRunner().invoke(main, [*args, "--grounding", "union", "--diagnostics", "claim_support"])
    assert r.exit_code == 0, r.output
    rec = json.loads((tmp_path / "o" / "records.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert rec["metrics"]["claim_support_grounded"] == 1.0
    r = CliRunner().invoke(main, [*args, "--grounding", "joint"])
    assert r.exit_code == 2 and "--grounding" in r.output
