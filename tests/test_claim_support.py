"""Claim support without citations (docs/design.md#claim-support): hand cases with the lexical judge
(p = share of the hypothesis's content tokens found in the premise; supported when p >= 0.5), the peers'
files (RAGChecker, RAGAS, a FlashRAG refiner that summarizes), claims recall against RAGChecker's gold claims,
and the property that units joining their declared snippets have a gap of exactly 0."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from rageval.compressors import get as get_compressor
from test_premises import JOINS, _question, emitted_premise

from rageval.data.formats import read_input
from rageval.data.formats.layout import ScoreInputError
from rageval.diagnostics.attribution.options import AttributionSettings
from rageval.diagnostics.claim_support import claim_support
from rageval.diagnostics.inputs import ScoringInput
from rageval.judges import CallableJudge
from rageval.score import ScoreOptions, score_files
from rageval.types import Record

PEERS = Path(__file__).resolve().parent / "fixtures" / "peers"

# u1 declares s0; u2 declares nothing and no source recovers it (see test_emitted_and_grounded_by_hand)
SOURCES = [{"id": "s0", "text": "Alpha beta gamma."}, {"id": "s1", "text": "Epsilon zeta."}]
UNITS = [{"text": "Alpha beta.", "source_ids": ["s0"]}, {"text": "Gamma delta epsilon.", "source_ids": None}]


def _one(answer, units=UNITS, sources=SOURCES, **kw):
    return claim_support([answer], [units], [sources], **kw)["per_question"][0]


def test_emitted_and_grounded_by_hand():
    r = _one("Alpha beta [1]. Gamma delta epsilon [2]. Zeta omega.")
    # claims, markers removed: {alpha, beta}, {gamma, delta, epsilon}, {zeta, omega}
    # emitted, each unit alone: c1 2/2 in u1; c2 3/3 in u2; c3 0 in both -> 2 of 3
    assert r["claim_support_emitted"] == pytest.approx(2 / 3)
    # u2's recovery: s0 holds {gamma} 1/3, s1 {epsilon} 1/3 -> not recovered: u2 has no source
    # grounded: c1 against s0 "Alpha beta gamma." 2/2; c2 {gamma} 1/3; c3 0 -> 1 of 3
    assert r["claim_support_grounded"] == pytest.approx(1 / 3)
    assert r["claim_support_gap"] == pytest.approx(1 / 3)
    assert r["claim_support_claims"] == 3 and r["claim_support_claims_given"] == 0
    assert r["claim_support_structural_rejections"] == 0  # u1 has a source, so every claim had a premise
    assert r["claim_support_abstentions"] == 0 and r["claim_support_inputs_truncated"] == 0


def test_a_claim_whose_units_have_no_source_is_rejected_without_a_call():
    asked = []

    def judge(premises, hypotheses):
        asked.extend(zip(premises, hypotheses))
        return [1.0] * len(premises)

    r = _one("Gamma delta epsilon.", units=UNITS[1:], sources=[], judge=CallableJudge(judge))
    # no sources at all: nothing to recover, the one unit has no source -> grounded 0, structural, no call
    assert (r["claim_support_emitted"], r["claim_support_grounded"]) == (1.0, 0.0)
    assert r["claim_support_structural_rejections"] == 1
    assert asked == [("Gamma delta epsilon.", "Gamma delta epsilon.")]  # the emitted pair only
    assert (
        r["claim_support_verifier_tokens_grounded"],
        r["claim_support_verifier_tokens_grounded_after_truncation"],
    ) == (
        0,
        0,
    )
    # the emitted pair in regex tokens: "Gamma delta epsilon." is 4 (three words and the full stop), twice
    assert r["claim_support_verifier_tokens_emitted"] == 8


def test_joint_premise_pools_every_unit():
    units = [{"text": "Alpha beta.", "source_ids": ["s0"]}, {"text": "Gamma rho.", "source_ids": ["s2"]}]
    sources = [{"id": "s0", "text": "Alpha beta."}, {"id": "s2", "text": "Gamma rho."}]
    answer = "Alpha beta gamma rho sigma."
    # each unit alone holds 2 of the 5 content tokens (0.4): unsupported; pooled, 4 of 5: supported
    single = _one(answer, units, sources)
    joint = _one(answer, units, sources, claim_premise="joint")
    assert (single["claim_support_emitted"], single["claim_support_grounded"]) == (0.0, 0.0)
    assert (joint["claim_support_emitted"], joint["claim_support_grounded"]) == (1.0, 1.0)
    assert joint["claim_support_gap"] == 0.0
    with pytest.raises(ValueError, match="claim_premise"):
        _one(answer, units, sources, claim_premise="pairs")
    assert AttributionSettings(claim_premise="joint").claim_premise == "joint"  # a suite's attribution section


def test_abstentions_count_as_unsupported_and_are_counted():
    def judge(premises, hypotheses):  # supports a hypothesis word found in the premise; abstains on "omega"
        out = []
        for p, h in zip(premises, hypotheses):
            word = h.rstrip(".").lower()
            out.append(math.nan if word == "omega" else float(word in p.lower()))
        return out

    units = [{"text": "Alpha beta.", "source_ids": ["s0"]}]
    r = _one("Alpha. Omega. Gamma.", units, [{"id": "s0", "text": "Alpha beta."}], judge=CallableJudge(judge))
    # "Alpha." supported; "Omega." abstained (counted as unsupported); "Gamma." unsupported; the same in both modes
    assert r["claim_support_emitted"] == r["claim_support_grounded"] == pytest.approx(1 / 3)
    assert r["claim_support_emitted_excl_abstain"] == r["claim_support_grounded_excl_abstain"] == 0.5
    assert r["claim_support_abstentions"] == 2  # one abstained claim in each mode


def test_given_claims_and_undefined_questions():
    r = claim_support(
        ["", "", "Alpha beta [1].", "x"],
        [UNITS] * 4,
        [SOURCES] * 4,
        [None, ["Alpha beta."], None, []],
    )
    pq = r["per_question"]
    # an empty answer has no sentence: undefined, never 0; given claims are checked whatever the answer
    assert pq[0]["claim_support_emitted"] is None and pq[0]["claim_support_claims"] == 0
    assert (pq[1]["claim_support_emitted"], pq[1]["claim_support_claims_given"]) == (1.0, 1)
    assert pq[2]["claim_support_emitted"] == pq[2]["claim_support_grounded"] == 1.0
    assert pq[3]["claim_support_emitted"] is None  # an empty list of given claims: no claim
    assert (r["n"], r["n_undefined"], r["claim_support_emitted"]) == (2, 2, 1.0)
    assert r["total_claim_support_claims_given"] == 2
    with pytest.raises(ValueError, match="lengths differ"):
        claim_support(["x"], [UNITS], [SOURCES], [None, None])
    with pytest.raises(TypeError, match=r"claims\[0\]\[0\] must be a string"):
        claim_support(["x"], [UNITS], [SOURCES], [[1]])


# ---------------------------------------------------------------- the peers' files


def _score(tmp_path, *files):
    out = tmp_path / "out"
    res = score_files([str(PEERS / f) for f in files], out, options=ScoreOptions(), build_report=False)
    recs = {}
    for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        recs[(r["setting"]["name"], r["question_id"])] = r
    return res, recs


def test_ragchecker_files_claims_and_gold_claims(tmp_path):
    _, recs = _score(tmp_path, "ragchecker_checking_outputs.json", "ragchecker_checking_inputs.json")
    out0, out1 = (recs[("ragchecker_checking_outputs", q)] for q in "01")
    in0, in1 = (recs[("ragchecker_checking_inputs", q)] for q in "01")
    # the output file's response_claims (triplets, parts joined by spaces) are the claims, stated in the record
    assert out0["extra"]["answer_claims"] == ["Nile is longest river in the world"]
    assert out1["extra"]["answer_claims"] == ["Mona Lisa painted by Raphael"]
    assert out0["metrics"]["claim_support_claims_given"] == 1 and in0["metrics"]["claim_support_claims_given"] == 0
    # #0 {nile, longest, river, world}: 4/4 in context 1 -> 1; contexts are their own sources: grounded = emitted
    assert out0["metrics"]["claim_support_emitted"] == out0["metrics"]["claim_support_grounded"] == 1.0
    # #1 {mona, lisa, painted, raphael} vs "The Mona Lisa is a portrait by Leonardo da Vinci.": 2/4 = 0.5 ->
    # supported (the lexical judge knows no contradiction)
    assert out1["metrics"]["claim_support_emitted"] == out1["metrics"]["claim_support_grounded"] == 1.0
    # the input file has no claims: the response's sentences. #0 "The longest river in the world is the Nile."
    # 4/4 -> 1; #1 "It was painted by Raphael." {painted, raphael}: 0/2 -> 0
    assert in0["metrics"]["claim_support_emitted"] == in0["metrics"]["claim_support_grounded"] == 1.0
    assert in1["metrics"]["claim_support_emitted"] == in1["metrics"]["claim_support_grounded"] == 0.0
    for r in (out0, out1, in0, in1):
        assert r["metrics"]["claim_support_structural_rejections"] == 0
        assert r["metrics"].get("unsupported_summary_checked") is None  # verification: undefined, no citations
    # claims recall against gt_answer_claims, the answer the premise: #0 "Nile is longest river in the world"
    # 4/4 in "The longest river in the world is the Nile." -> 1; #1 {mona, lisa, painted, leonardo, da, vinci}:
    # only {painted} in "It was painted by Raphael." -> 0; the input file has no gold claims: undefined
    assert (out0["metrics"]["claims_recall"], out1["metrics"]["claims_recall"]) == (1.0, 0.0)
    assert in0["metrics"].get("claims_recall") is None


def test_ragchecker_claims_that_are_neither_text_nor_triplets_are_refused(tmp_path):
    top = json.loads((PEERS / "ragchecker_checking_outputs.json").read_text(encoding="utf-8"))
    top["results"][1]["response_claims"] = [["Mona Lisa", 3]]
    bad = tmp_path / "checking_outputs.json"
    bad.write_text(json.dumps(top), encoding="utf-8")
    with pytest.raises(ScoreInputError, match=r"results\[1\] field 'response_claims'\[0\]: a claim is a string"):
        read_input(str(bad))


@pytest.mark.parametrize("name", ["ragas_datasets.jsonl", "ragas_pandas.csv"])
def test_ragas_rows(tmp_path, name):
    _, recs = _score(tmp_path, name)
    setting = Path(name).stem
    m1, m2 = recs[(setting, "#1")]["metrics"], recs[(setting, "#2")]["metrics"]
    # #1 "William Shakespeare wrote Hamlet." {william, shakespeare, wrote, hamlet}: 3/4 in context 1 -> 1
    # #2 "The Seine flows through Paris." 3/3 in context 1; "Lyon is a French city." {lyon, french, city}: 2/3
    # in context 2 -> 1 of 1 and 2 of 2; plain contexts are their own sources: grounded = emitted, gap 0
    for m, n in ((m1, 1), (m2, 2)):
        assert m["claim_support_emitted"] == m["claim_support_grounded"] == 1.0
        assert m["claim_support_claims"] == n and m["claim_support_claims_given"] == 0


def test_flashrag_refiner_that_summarizes(tmp_path):
    _, recs = _score(tmp_path, "flashrag_summary_intermediate_data.json", "flashrag_refine_intermediate_data.json")
    m = {q: r["metrics"] for (_, q), r in recs.items()}
    # sum_0: the refined unit restates doc 301, recovered by re-attribution: supported in both modes
    assert (m["sum_0"]["claim_support_emitted"], m["sum_0"]["claim_support_grounded"]) == (1.0, 1.0)
    # the verifier tokens (regex): "Paris is the capital of France." is 7, so the emitted pair 7 + 7 = 14; the
    # grounded premise "Title: France\nParis is the capital of France." 3 + 7, so 10 + 7 = 17
    assert m["sum_0"]["claim_support_verifier_tokens_emitted"] == 14
    assert m["sum_0"]["claim_support_verifier_tokens_grounded"] == 17
    # sum_1: the refiner states what no document says: {eiffel, tower, finished, 1889, gustave} holds 2 of 5 in
    # doc 401 -> not recovered: the reader saw it (emitted 1), no source stands behind it (grounded 0, no call)
    assert (m["sum_1"]["claim_support_emitted"], m["sum_1"]["claim_support_grounded"]) == (1.0, 0.0)
    assert m["sum_1"]["claim_support_structural_rejections"] == 1
    assert m["sum_1"]["claim_support_verifier_tokens_grounded"] == 0
    # the refiner that dropped a sentence (test_1): "The Seine flows through Paris." {seine, flow, pari} holds 1/3
    # in the refined "Paris is the capital of France." (emitted 0); recovered doc 201 holds all (grounded 1)
    assert (m["test_1"]["claim_support_emitted"], m["test_1"]["claim_support_grounded"]) == (0.0, 1.0)


def test_answer_claims_survive_a_rescore(tmp_path):
    _score(tmp_path, "ragchecker_checking_outputs.json")
    line = (tmp_path / "out" / "records.jsonl").read_text(encoding="utf-8").splitlines()[0]
    x = ScoringInput.from_record(Record.from_dict(json.loads(line)), lambda u: u.text)
    assert x.answer_claims == ("Nile is longest river in the world",)


# ---------------------------------------------------------------- the property: joins have gap exactly 0


class OnlyEmitted:
    """Says yes only to a premise that is exactly one unit as the reader saw it."""

    id = "exact-unit-test"

    def __init__(self, units):
        self.premises = {emitted_premise(u) for u in units}

    def predict(self, premises, hypotheses):
        return [1.0 if p in self.premises else 0.0 for p in premises]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(question=_question())
def test_model_free_join_compressors_have_gap_exactly_zero(question):
    snippets, budget = question
    sources = [{"id": s.id, "text": s.text, "title": s.title, "doc_id": s.doc_id} for s in snippets]
    answer = "Claim one. Claim two [1]."
    for name in JOINS:
        ctx = get_compressor(name).compress("which capital city river", snippets, budget, tokenizer="regex")
        units = [u.to_dict() for u in ctx.units]
        if not units:
            continue
        r = claim_support([answer], [units], [sources], judge=OnlyEmitted(units))["per_question"][0]
        # the judge said yes to every claim against a unit; each unit's grounded premise is the same string
        assert r["claim_support_emitted"] == 1.0, name
        assert r["claim_support_grounded"] == 1.0 and r["claim_support_gap"] == 0.0, name
        assert r["claim_support_structural_rejections"] == 0, name


def test_token_pruning_and_an_ecr_style_unit_are_told_apart_by_the_same_judge():
    from rageval.types import SourceSnippet

    snippets = [
        SourceSnippet(f"d{d}.s{i}", f"Word{d}{i} capital river {i}.", doc_id=f"d{d}", position=i, doc_rank=d)
        for d in range(2)
        for i in range(3)
    ]
    sources = [{"id": s.id, "text": s.text, "title": s.title, "doc_id": s.doc_id} for s in snippets]
    ctx = get_compressor("token_prune").compress("which capital river", snippets, 12, tokenizer="regex")
    units = [u.to_dict() for u in ctx.units]
    assert units and all(u["source_ids"] is None for u in units)
    r = claim_support(["Claim one."], [units], [sources], judge=OnlyEmitted(units))["per_question"][0]
    # token pruning cuts the text and declares nothing: a recovered source is never the cut text -> gap 1
    assert r["claim_support_gap"] == 1.0
    # ECR's unit: one member shown, both declared: its grounded premise "Word00 ... Word01 ..." is not the unit
    ecr = [{"text": snippets[0].text, "source_ids": [snippets[0].id, snippets[1].id]}]
    r = claim_support(["Claim one."], [ecr], [sources], judge=OnlyEmitted(ecr))["per_question"][0]
    assert (r["claim_support_emitted"], r["claim_support_grounded"]) == (1.0, 0.0)


# ---------------------------------------------------------------- picked up from the catalog


def test_the_catalog_gives_the_report_its_gap_and_a_suite_its_gap_family():
    from rageval.diagnostics import DERIVED, contrasted_by_default, direction_of
    from rageval.stats.contrasts import expand_plan
    from rageval.suite.checks import metric_names_of

    assert DERIVED["gap_claim_support"] == ("claim_support_emitted", "claim_support_grounded", "none")
    assert direction_of("claim_support_emitted") == direction_of("claim_support_grounded") == "higher"
    assert contrasted_by_default("claim_support_grounded") and not contrasted_by_default("claim_support_gap")
    assert not contrasted_by_default("claim_support_grounded_excl_abstain")  # a view
    known = metric_names_of()
    assert "gap_claim_support" in known
    settings = [{"name": n, "compressor": n.split("@")[0], "budget": None} for n in ("identity", "token_prune@0.5")]
    plan = expand_plan(
        {"families": {"claim_gap": {"gap": ["claim_support_emitted", "claim_support_grounded"]}}},
        settings,
        known_metrics=known,
    )
    assert [(r.a, r.b, r.metric_a, r.metric_b, r.kind) for r in plan.rows] == [
        (s["name"], s["name"], "claim_support_emitted", "claim_support_grounded", "gap") for s in settings
    ]
