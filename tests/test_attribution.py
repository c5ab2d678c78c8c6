"""Exactness of the attribution diagnostics with a scripted judge and hand-computed values.

The scripted judge entails a hypothesis when every fact token (``F1``, ``F2``, ...)
of the hypothesis appears in the premise, and the hypothesis has at least one.
"""

import re

import pytest

from rageval.diagnostics.attribution import (
    attribution_scores,
    attribution_scores_batch,
    emitted_precision,
    emitted_recall,
    grounded_precision,
    re_attributability,
    re_attributability_sweep,
)
from rageval.diagnostics.compression import compression
from rageval.diagnostics.evidence import evidence_f1
from rageval.diagnostics.verification import verification
from rageval.judges import JudgeRunner, get_judge

FACT = re.compile(r"F\d+")


class Scripted:
    """Entailment iff facts(h) ⊆ facts(p) and facts(h) non-empty; records every pair it scores."""

    id = "scripted:v1"

    def __init__(self):
        self.calls = []

    def predict(self, premises, hypotheses):
        out = []
        for p, h in zip(premises, hypotheses):
            self.calls.append((p, h))
            fh = set(FACT.findall(h))
            out.append(1.0 if fh and fh <= set(FACT.findall(p)) else 0.0)
        return out


def U(text, ids=None, title=None):
    d = {"text": text, "source_ids": ids}
    if title is not None:
        d["title"] = title
    return d


def S(sid, text, title=None):
    d = {"id": sid, "text": text}
    if title is not None:
        d["title"] = title
    return d


def scores(pred, units, sources, **kw):
    return attribution_scores(pred, units, sources, judge=kw.pop("judge", Scripted()), **kw)


# --- the gate -----------------------------------------------------------------------------------


def test_overcited_sentence_loses_precision():
    r = scores("Claim F1 [1][2].", [U("has F1"), U("has F2")], [])
    assert r["emitted_recall"] == 1.0
    assert r["emitted_precision"] == 0.5
    assert r["details"]["sentences"][0]["emitted"]["precise"] == [True, False]


def test_support_only_when_joined_keeps_both_citations_precise():
    r = scores("Claim F1 and F2 [1][2].", [U("has F1"), U("has F2")], [])
    assert (r["emitted_recall"], r["emitted_precision"]) == (1.0, 1.0)


def test_jointly_unsupported_sentence_makes_every_citation_imprecise():
    r = scores("Claim F3 [1][2]. Claim F1 [1].", [U("has F1"), U("has F2")], [])
    assert r["emitted_recall"] == 0.5
    assert r["emitted_precision"] == pytest.approx(1 / 3)


def test_both_alone_sufficient_are_both_precise():
    # each citation alone entails: precise (condition A), no rest check
    judge = Scripted()
    r = scores("Claim F1 [1][2].", [U("F1 here"), U("F1 there")], [], judge=judge)
    assert r["emitted_precision"] == 1.0
    assert len(judge.calls) == 3  # joint + two alone, no rest call


def test_cap_keeps_first_three_citations():
    units = [U("F1"), U("F2"), U("F3"), U("F4")]
    r = scores("Claim F4 [1][2][3][4].", units, [])
    assert r["emitted_recall"] == 0.0  # [4] was capped away
    assert r["details"]["sentences"][0]["capped"] == [4]
    r = scores("Claim F4 [1][2][3][4].", units, [], max_citations=None)
    assert r["emitted_recall"] == 1.0
    assert r["emitted_precision"] == 0.25


def test_out_of_range_citation_counts_imprecise_in_default_mode():
    r = scores("Claim F1 [1][5].", [U("F1"), U("F2")], [])
    assert r["emitted_recall"] == 1.0
    assert r["emitted_precision"] == 0.5  # 1 precise of 1 valid + 1 invalid
    assert r["details"]["sentences"][0]["invalid"] == ["5"]


def test_out_of_range_citation_in_alce_mode_zeroes_sentence_without_denominator():
    r = scores("Claim F1 [1][5]. Claim F2 [2].", [U("F1"), U("F2")], [], alce_compat=True)
    assert r["emitted_recall"] == 0.5
    assert r["emitted_precision"] == 1.0  # only the second sentence's citation counts


def test_alce_zero_citation_is_last_unit():
    r = scores("Claim F2 [0].", [U("F1"), U("F2")], [], alce_compat=True)
    assert (r["emitted_recall"], r["emitted_precision"]) == (1.0, 1.0)


def test_alce_premise_format_has_title_lines():
    judge = Scripted()
    scores("Claim F1 [1].", [U("F1 text", title="T1")], [], judge=judge, alce_compat=True, parts=("emitted",))
    assert judge.calls == [("Title: T1\nF1 text", "Claim F1.")]


def test_answer_without_citations_scores_zero_not_undefined():
    r = scores("Claim F1.", [U("F1")], [])
    assert (r["emitted_precision"], r["emitted_recall"]) == (0.0, 0.0)
    r = scores("Claim F1.", [U("F1")], [], no_citation_precision="undefined")
    assert (r["emitted_precision"], r["emitted_recall"]) == (None, 0.0)


def test_empty_answer_is_undefined_and_counted():
    res = emitted_precision(["", "Claim F1 [1]."], [[U("F1")], [U("F1")]], [[], []], judge=Scripted())
    assert res["per_question"][0]["emitted_precision"] is None
    assert (res["emitted_precision"], res["n"], res["n_undefined"]) == (1.0, 1, 1)
    rec = emitted_recall(["", "Claim F1 [1]."], [[U("F1")], [U("F1")]], [[], []], judge=Scripted())
    assert (rec["emitted_recall"], rec["n_undefined"]) == (1.0, 1)


def test_sentence_without_citation_has_recall_zero_and_no_judge_call():
    judge = Scripted()
    r = scores("Claim F1 [1]. Claim F2.", [U("F1")], [], judge=judge, parts=("emitted",))
    assert r["emitted_recall"] == 0.5
    assert r["emitted_precision"] == 1.0
    assert len(judge.calls) == 1


# --- grounded -----------------------------------------------------------------------------------


def test_unrecovered_citation_cannot_support_recall():
    units = [U("summary says F1")]  # no provenance, nothing in the sources matches
    sources = [S("d0.s0", "unrelated F9 text")]
    r = scores("Claim F1 [1].", units, sources)
    assert (r["emitted_precision"], r["emitted_recall"]) == (1.0, 1.0)
    assert (r["grounded_precision"], r["grounded_recall"]) == (0.0, 0.0)
    assert r["details"]["sentences"][0]["evidence"] == ["missing"]
    assert r["emitted_minus_grounded_precision"] == 1.0


def test_unrecovered_citation_gets_no_precision_credit_in_joint_sentence():
    units = [U("F1 declared", ["d0.s0"]), U("F1 summary")]
    sources = [S("d0.s0", "source F1"), S("d1.s0", "nothing")]
    r = scores("Claim F1 [1][2].", units, sources, candidates=lambda q, texts, k: [])
    assert r["emitted_precision"] == 1.0
    assert r["grounded_recall"] == 1.0
    assert r["grounded_precision"] == 0.5
    assert r["details"]["sentences"][0]["evidence"] == ["declared", "missing"]


def test_declared_vs_recovered_evidence():
    units = [U("text F1", ["d0.s0"]), U("paraphrase F2 stuff")]
    sources = [S("d0.s0", "source F1"), S("d1.s0", "source F2 stuff"), S("d2.s0", "other")]
    r = scores("Claim F1 [1]. Claim F2 [2].", units, sources)
    assert (r["grounded_precision"], r["grounded_recall"]) == (1.0, 1.0)
    ev = [s["evidence"] for s in r["details"]["sentences"]]
    assert ev == [["declared"], ["recovered"]]
    assert r["citations_declared"] == 1 and r["citations_recovered"] == 1 and r["citations_missing"] == 0
    assert r["details"]["recovery"]["2"]["recovered"] == ["d1.s0"]


def test_declared_provenance_is_used_even_when_the_unit_text_differs():
    # the unit text supports the claim, its declared source does not: emitted 1, grounded 0
    units = [U("text F1", ["d0.s0"])]
    sources = [S("d0.s0", "source F7")]
    r = scores("Claim F1 [1].", units, sources)
    assert (r["emitted_recall"], r["grounded_recall"]) == (1.0, 0.0)
    assert r["emitted_minus_grounded_recall"] == 1.0


def test_ecr_unit_declaring_several_ids_pools_them():
    judge = Scripted()
    units = [U("merged F1 F2", ["d0.s0", "d1.s0"], title="T")]
    sources = [S("d0.s0", "F1 here", title="A"), S("d1.s0", "F2 there", title="B")]
    r = scores("Claim F1 F2 [1].", units, sources, judge=judge, parts=("grounded",))
    assert (r["grounded_precision"], r["grounded_recall"]) == (1.0, 1.0)
    assert ("Title: A\nF1 here\nTitle: B\nF2 there", "Claim F1 F2.") in judge.calls


def test_grounded_pool_keeps_repeated_source_ids_verification_deduplicates_them():
    # the paper de-duplicates source ids for recovered-source verification only (docs/design.md#premises)
    judge = Scripted()
    units = [U("a F1", ["d0.s0"]), U("b F1", ["d0.s0"])]
    sources = [S("d0.s0", "F1")]
    r = scores("Claim F1 [1][2].", units, sources, judge=judge, parts=("grounded",))
    assert r["grounded_precision"] == 1.0  # each alone entails
    assert ("F1\nF1", "Claim F1.") in judge.calls  # the joint premise: both cited units' snippets
    judge = Scripted()
    r = scores("Claim F1 [1][2].", units, sources, judge=judge, parts=("verification",))
    assert r["unsupported_recovered_source"] == 0.0
    assert ("F1", "Claim F1.") in judge.calls and ("F1\nF1", "Claim F1.") not in judge.calls


# --- re-attributability ---------------------------------------------------------------------------


def test_re_attributability_counts_units_without_provenance_only():
    units = [[U("about F1 paris"), U("about F2 lyon"), U("x", ["d0.s0"])]]
    sources = [[S("d0.s0", "paris F1"), S("d1.s0", "lyon F3")]]
    r = re_attributability([""], units, sources, judge=Scripted())
    q = r["per_question"][0]
    assert (q["units_without_provenance"], q["re_attributable_units"]) == (2, 1)
    assert r["re_attributability"] == 0.5


def test_re_attributability_undefined_when_everything_declares():
    r = re_attributability([""], [[U("x", ["d0.s0"])]], [[S("d0.s0", "x")]], judge=Scripted())
    assert (r["re_attributability"], r["n_undefined"]) == (None, 1)


def test_multi_snippet_recovery_joins_adjacent_snippets():
    units = [[U("paris F1 F2")]]
    sources = [[S("d0.s0", "paris F1"), S("d0.s1", "paris F2")]]
    single = re_attributability([""], units, sources, judge=Scripted())
    multi = re_attributability([""], units, sources, judge=Scripted(), multi_snippet=True)
    assert single["re_attributability"] == 0.0
    assert multi["re_attributability"] == 1.0


def test_threshold_sweep_is_monotone_and_reuses_scores():
    class Graded:
        id = "graded"

        def predict(self, p, h):
            return [0.35 if "weak" in x else 0.75 for x in p]

    units = [[U("lyon"), U("nice")]]
    sources = [[S("a", "lyon weak"), S("b", "nice")]]
    runner = get_judge(Graded())
    sweep = re_attributability_sweep(["Lyon [1]. Nice [2]."], units, sources, judge=runner)
    rates = [row["re_attributability"] for row in sweep]
    assert [row["threshold"] for row in sweep] == [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    assert rates == [1.0, 0.5, 0.5, 0.5, 0.5, 0.0]
    assert runner.stats()["executed"] < runner.stats()["requested"]


def test_custom_candidates_callable():
    units = [[U("claim F1")]]
    sources = [[S("a", "zzz F1"), S("b", "yyy")]]
    r = re_attributability([""], units, sources, judge=Scripted(), candidates=lambda q, texts, k: [0])
    assert r["re_attributability"] == 1.0


# --- verification ---------------------------------------------------------------------------------


def test_verification_three_modes_and_structural_rejections():
    judge = Scripted()
    runner = get_judge(judge)
    units = [[U("summary F1"), U("span F3", ["d2.s0"])]]
    sources = [[S("d0.s0", "source F1"), S("d1.s0", "source F5"), S("d2.s0", "source F3")]]
    pred = ["Claim F1 [1]. Claim F2 [1]. Claim F3 [2]. Claim F4."]
    r = verification(pred, units, sources, judge=runner)
    q = r["per_question"][0]
    assert q["claims"] == 4
    assert q["unsupported_summary_checked"] == 0.5  # claim F2 and the uncited claim
    assert q["unsupported_declared_span"] == 0.75  # claims 1, 2 structural, 4 uncited
    assert q["structural_rejections_declared_span"] == 3
    assert q["claims_without_citations"] == 1
    # unit 1 recovers d0.s0 (F1) only: claim F2 unsupported, claim F4 uncited
    assert q["unsupported_recovered_source"] == 0.5
    assert r["verification"] == 0.5
    assert q["verifier_tokens_declared_span"] > 0
    # declared-span asked the judge once only (claim 3)
    span_calls = [c for c in judge.calls if c[0] == "source F3"]
    assert len(span_calls) == 1


def test_verification_excludes_zero_claim_answers():
    r = verification(["", "Claim F1 [1]."], [[U("F1")], [U("F1")]], [[], []], judge=Scripted())
    assert r["n_zero_claim"] == 1
    assert r["per_question"][0]["unsupported_summary_checked"] is None
    assert r["n_undefined"] == 1
    assert r["unsupported_summary_checked"] == 0.0


def test_recovered_source_deduplicates_ids():
    judge = Scripted()
    units = [[U("paris F1"), U("paris F1 too")]]
    sources = [[S("d0.s0", "paris F1")]]
    verification(["Claim F1 [1][2]."], units, sources, judge=judge)
    pooled = [p for p, h in judge.calls if h == "Claim F1." and p.startswith("paris F1")]
    assert "paris F1" in pooled and "paris F1\nparis F1" not in pooled


# --- evidence_f1 and compression ----------------------------------------------------------------


def test_evidence_f1_qasper_conventions():
    units = [[U("a", ["p1.s0", "p1.s1"]), U("b", ["p2.s0"]), U("c")]]
    sources = [[S("p1.s0", "a"), S("p1.s1", "a2"), S("p2.s0", "b")]]
    r = evidence_f1(["X [1][3]."], units, sources, references=[[["p2"], ["p1", "p2"]]])
    assert r["evidence_f1"] == pytest.approx(2 / 3)
    assert r["per_question"][0]["predicted_paragraphs"] == ["p1"]
    # no citation: predicted empty; gold empty annotator -> 1
    r = evidence_f1(["X."], units, sources, references=[[["p1"], []]])
    assert r["evidence_f1"] == 1.0


def test_evidence_f1_undefined_without_declared_provenance():
    r = evidence_f1(["X [1]."], [[U("a")]], [[S("p1.s0", "a")]], references=[[["p1"]]])
    assert (r["evidence_f1"], r["n_undefined"]) == (None, 1)


def test_evidence_f1_paragraph_of_mapping():
    units = [[U("a", ["s-7"])]]
    r = evidence_f1(["X [1]."], units, [[S("s-7", "a")]], references=[[["para9"]]], paragraph_of={"s-7": "para9"})
    assert r["evidence_f1"] == 1.0


def test_compression_cost_rollup():
    units = [[U("Paris F1", ["d0.s0"]), U("Lyon F2")]]
    sources = [[S("d0.s0", "Paris F1"), S("d1.s0", "Lyon F2"), S("d2.s0", "Nice F3 is far away")]]
    r = compression(
        ["Claim F1 [1]. Claim F2 [2]."], units, sources, budget_tokens=[3], reader_input_tokens=[100], judge=Scripted()
    )
    q = r["per_question"][0]
    assert q["achieved_tokens"] == 4 and q["retrieved_tokens"] == 9
    assert r["compression"] == pytest.approx(4 / 9)
    assert q["over_budget"] is True
    assert q["recovery_candidates_scored"] == 1  # bm25: only d1.s0 shares a term with "Lyon F2"
    assert q["cost_declared_span"] == 100 + q["verifier_tokens_declared_span"]
    assert q["cost_recovered_source"] == 100 + q["verifier_tokens_recovered_source"] + q["recovery_tokens"]


# --- sharing and bad input ------------------------------------------------------------------------


def test_one_runner_shares_calls_between_metrics():
    judge = Scripted()
    runner = get_judge(judge)
    units = [[U("F1"), U("F2")]]
    emitted_precision(["Claim F1 [1][2]."], units, [[]], judge=runner)
    n = len(judge.calls)
    emitted_recall(["Claim F1 [1][2]."], units, [[]], judge=runner)
    assert len(judge.calls) == n
    assert runner.stats()["executed"] == n


def test_batch_equals_per_question():
    units = [[U("F1"), U("F2")], [U("x F3", ["a"])]]
    sources = [[], [S("a", "F3")]]
    preds = ["Claim F1 [1][2].", "Claim F3 [1]. Other F4 [1]."]
    batch = attribution_scores_batch(preds, units, sources, judge=Scripted(), details=False)
    single = [attribution_scores(p, u, s, judge=Scripted(), details=False) for p, u, s in zip(preds, units, sources)]
    assert batch == single


def test_missing_source_for_declared_id_is_an_error():
    with pytest.raises(ValueError, match=r"units\[0\]\[0\]\.source_ids names 'd9'"):
        grounded_precision(["a [1]."], [[U("a", ["d9"])]], [[S("d0", "a")]], judge=Scripted())


def test_empty_source_ids_list_is_rejected():
    with pytest.raises(ValueError, match="use None"):
        grounded_precision(["a [1]."], [[U("a", [])]], [[]], judge=Scripted())


def test_mismatched_lengths_and_wrong_types():
    with pytest.raises(ValueError, match="lengths differ"):
        emitted_precision(["a", "b"], [[]], [[]])
    with pytest.raises(TypeError, match=r"units\[0\]\[0\]"):
        emitted_precision(["a"], [["plain string"]], [[]])
    with pytest.raises(TypeError, match=r"predictions\[0\]"):
        emitted_precision([None], [[]], [[]])
    with pytest.raises(ValueError, match="duplicated"):
        emitted_precision(["a"], [[]], [[S("x", "a"), S("x", "b")]])
    with pytest.raises(ValueError, match="threshold"):
        emitted_precision(["a"], [[]], [[]], threshold=1.5)


def test_citation_to_nonexistent_unit_is_recorded_not_remapped():
    r = scores("Claim F1 [3].", [U("F1")], [])
    s = r["details"]["sentences"][0]
    assert s["citations"] == [] and s["invalid"] == ["3"]
    assert (r["emitted_precision"], r["emitted_recall"]) == (0.0, 0.0)
    assert r["n_citations"] == 1


def test_runner_passed_through_is_not_rewrapped():
    runner = get_judge(Scripted())
    assert isinstance(runner, JudgeRunner)
    assert get_judge(runner) is runner


def test_grounded_equals_emitted_when_units_declare_exactly_what_they_show():
    units = [U("Paris F1", ["a"], title="P"), U("Lyon F2", ["b"], title="P"), U("Nice F3", ["c"])]
    sources = [S("a", "Paris F1", title="P"), S("b", "Lyon F2", title="P"), S("c", "Nice F3")]
    r = scores("Claim F1 [1][2]. Claim F2 F3 [2][3]. Claim F9 [1]. Claim F3 [9].", units, sources)
    assert r["emitted_precision"] == r["grounded_precision"]
    assert r["emitted_recall"] == r["grounded_recall"] == 0.5


def test_alce_semantics_duplicates_and_list_citations_hand_computed():
    # ALCE: re.findall(r"\[\d+") reads "[1, 2]" as [1]; "[2][2]" keeps both -> ref = [1, 1] (0-based)
    units = [U("F1", title="A"), U("F2", title="B")]
    judge = Scripted()
    r = scores("Claim F1 [1, 2]. Claim F2 [2][2].", units, [], judge=judge, alce_compat=True, parts=("emitted",))
    s1, s2 = r["details"]["sentences"]
    assert s1["citations"] == [1] and s2["citations"] == [2, 2]
    # sentence 2: joint "B\nB" entails; each duplicate alone entails -> both precise: 3 precise of 3
    assert (r["emitted_recall"], r["emitted_precision"]) == (1.0, 1.0)
    assert ("Title: B\nF2\nTitle: B\nF2", "Claim F2.") in judge.calls


def test_alce_first_line_only():
    r = scores("Claim F1 [1].\nClaim F9 [1].", [U("F1")], [], alce_compat=True)
    assert (r["emitted_recall"], r["emitted_precision"]) == (1.0, 1.0)
    r = scores("Claim F1 [1].\nClaim F9 [1].", [U("F1")], [])
    assert r["emitted_recall"] == 0.5
