"""One definition, one number: every diagnostic of every record of a demo run, recomputed from the record's
saved inputs through the pure functions and through the evaluate modules, equals what the run wrote; and the
demo's emitted - grounded gap is exactly 0 for every compressor whose units are joins of their declared
snippets, with the lexical judge and with a judge that says yes only to the exact emitted premise string.

The pure functions' inputs are built here, from :meth:`ScoringInput.from_record` and each catalog entry's
function signature (never through the runner's scorers), so a module default that differs from what a
suite applies (the evidence-F1 citation cap was one) is a failing test.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from test_premises import JOINS, ExactJudge, expected_premises

from rageval.diagnostics import CATALOG
from rageval.diagnostics.attribution import attribution_scores_batch
from rageval.diagnostics.catalog import get
from rageval.diagnostics.evidence import evidence_f1
from rageval.diagnostics.inputs import ScoringInput
from rageval.readers import PromptTemplate
from rageval.suite.load import load_suite
from rageval.suite.plan import scoring_options
from rageval.suite.run import run_suite
from rageval.types import Record

ROOT = Path(__file__).resolve().parents[1]

#: record key -> the key the pure function's per_question uses, where they differ
MODULE_KEY = {f"verification_cost_{m}": f"cost_{m}" for m in ("summary_checked", "declared_span", "recovered_source")}


def arguments(name, xs, opts, tokenizer):
    """The pure function's inputs for diagnostic ``name`` from the records' saved inputs and the suite's options."""
    a = opts.attribution
    data = {
        "predictions": [x.answer for x in xs],
        "units": [x.unit_dicts() for x in xs],
        "sources": [x.source_dicts() for x in xs],
    }
    gate = {"threshold": a.threshold, "max_citations": a.max_citations, "alce_compat": a.alce_compat}
    recovery = {"recovery_threshold": a.recovery_threshold, "k": a.k, "multi_snippet": a.multi_snippet}
    recovery["candidates"] = a.candidates
    nc = {"no_citation_precision": a.no_citation_precision}
    gold_docs = [list(x.gold.gold_doc_ids) for x in xs]
    table = {
        "answer_in_context": lambda: {
            "contexts": [list(x.shown) for x in xs],
            "references": [x.gold.aliases for x in xs],
        },
        "str_em": lambda: {
            "predictions": data["predictions"],
            "references": [[list(p) for p in x.gold.qa_pairs] for x in xs],
            "alce_compat": a.alce_compat,
        },
        "answer_f1": lambda: {"predictions": data["predictions"], "references": [list(x.gold.answers) for x in xs]},
        "retrieval_recall": lambda: {
            "retrieved": [list(x.retrieved_ids) for x in xs],
            "references": gold_docs,
            "k": opts.retrieval_k,
        },
        "gold_coverage": lambda: {"units": data["units"], "references": gold_docs, "doc_of": [x.doc_of() for x in xs]},
        "emitted_precision": lambda: {**data, **gate, **nc},
        "emitted_recall": lambda: {**data, **gate},
        "grounded_precision": lambda: {**data, **gate, **nc, **recovery},
        "grounded_recall": lambda: {**data, **gate, **recovery},
        "re_attributability": lambda: {**data, "threshold": a.threshold, **recovery},
        "verification": lambda: {**data, **gate, **recovery},
        "compression": lambda: {
            **data,
            **gate,
            **recovery,
            "budget_tokens": [x.budget_tokens for x in xs],
            "reader_input_tokens": [x.reader_input_tokens for x in xs],
            "tokenizer": tokenizer,  # achieved and retrieved tokens recounted here, not copied from the record
        },
        "qampari_f1": lambda: {
            "predictions": data["predictions"],
            "references": [[list(g) for g in x.gold.answer_lists] for x in xs],
            "alce_compat": a.alce_compat,
        },
        "rouge_lsum": lambda: {
            "predictions": data["predictions"],
            "references": [list(x.gold.reference) for x in xs],
            "alce_compat": a.alce_compat,
        },
        "claim_support": lambda: {
            **data,
            **gate,
            **recovery,
            "claims": [None if x.answer_claims is None else list(x.answer_claims) for x in xs],
            "claim_premise": a.claim_premise,
        },
        "claims_recall": lambda: {
            "predictions": data["predictions"],
            "references": [list(x.gold.claims) for x in xs],
            "threshold": a.threshold,
            "alce_compat": a.alce_compat,
        },
        "evidence_f1": lambda: {
            **data,
            "references": [[list(e) for e in x.gold.evidence] for x in xs],
            "paragraph_of": [x.doc_of() for x in xs],
            # no max_citations / alce_compat: the module's defaults must be the suite's (cap 3, default parse)
        },
    }
    assert set(table) == set(CATALOG), "every catalog entry needs its inputs here"
    return table[name]()


def _load(run_dir: Path, suite_path: Path):
    suite = load_suite(suite_path)
    template = PromptTemplate.coerce(suite.reader.template)
    records = [Record.from_dict(json.loads(x)) for x in (run_dir / "records.jsonl").read_text().splitlines()]
    ok = [r for r in records if r.status == "ok"]
    xs = [ScoringInput.from_record(r, template.evidence_text) for r in ok]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    return suite, ok, xs, manifest["suite"]["diagnostics"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "run"
    run_suite(load_suite(ROOT / "suites" / "demo.yaml"), out, progress=False)
    return out


QASPER_SUITE = """\
name: one-path-qasper
dataset: {{name: qasper, limit: 4, sample: qasper_intact}}
retrieval: {{method: given}}
settings:
  - {{compressor: identity}}
  - {{compressor: extractive, budgets: [60]}}
  - {{compressor: token_prune, budgets: [0.5]}}
reader: {{backend: extractive}}
judge: {{spec: lexical}}
diagnostics: [evidence_f1, grounded_precision, verification, compression]
output_dir: {out}
seed: 0
"""
ASQA_SUITE = """\
name: one-path-asqa
dataset: {{name: asqa, limit: 4}}
retrieval: {{method: bm25, k: 3, corpus: dataset}}
settings:
  - {{compressor: identity}}
  - {{compressor: mmr, budgets: [60]}}
reader: {{backend: extractive}}
judge: {{spec: lexical}}
diagnostics: [str_em, answer_in_context, emitted_recall]
output_dir: {out}
seed: 0
"""


def _small_run(tmp_path: Path, text: str) -> tuple[Path, Path]:
    p = tmp_path / "suite.yaml"
    p.write_text(text.format(out=tmp_path / "run"))
    run_suite(load_suite(p), progress=False, build_report=False)
    return tmp_path / "run", p


def _check_every_value(run_dir: Path, suite_path: Path) -> int:
    """Recompute every diagnostic of every ok record both ways; return how many values were compared."""
    import evaluate

    suite, ok, xs, diagnostics = _load(run_dir, suite_path)
    opts = scoring_options(suite)
    assert ok and diagnostics
    compared = 0
    for name in diagnostics:
        spec = CATALOG[name]
        kwargs = arguments(name, xs, opts, suite.tokenizer)
        judge = {"judge": suite.judge.spec} if spec.uses_judge else {}
        pure = get(name)(**kwargs, **judge)["per_question"]
        module = evaluate.load(str(ROOT / "metrics" / name))
        via_module = module.compute(**kwargs, **judge)["per_question"]
        assert len(pure) == len(via_module) == len(ok)
        for i, r in enumerate(ok):
            for key in spec.keys:
                saved = r.metrics[key]
                mk = MODULE_KEY.get(key, key)
                assert pure[i][mk] == saved, (name, key, r.question_id, r.setting.name, pure[i][mk], saved)
                assert via_module[i][mk] == saved, (name, key, r.question_id, r.setting.name, via_module[i][mk], saved)
                compared += 1
        if (
            name == "compression"
        ):  # the achieved ratio: Context and the module, one definition (titles count in neither)
            for i, r in enumerate(ok):
                assert pure[i]["achieved_ratio"] == r.context.achieved_ratio, (r.question_id, r.setting.name)
                assert pure[i]["achieved_tokens"] == r.context.achieved_tokens
                assert pure[i]["retrieved_tokens"] == r.context.retrieved_tokens
    return compared


@pytest.mark.slow
def test_every_diagnostic_of_every_demo_record_is_the_same_through_both_paths(demo):
    _, ok, _, diagnostics = _load(demo, ROOT / "suites" / "demo.yaml")
    assert len(ok) == 1700  # the demo: the 100 shipped HotpotQA questions x 17 settings, every record ok
    # HotpotQA has no qa_pairs, evidence, long references, answer lists or claims
    assert set(diagnostics) >= set(CATALOG) - {"str_em", "evidence_f1", "rouge_lsum", "qampari_f1", "claims_recall"}
    n = _check_every_value(demo, ROOT / "suites" / "demo.yaml")
    assert n == len(ok) * sum(len(CATALOG[d].keys) for d in diagnostics)


@pytest.mark.slow
def test_evidence_f1_and_str_em_records_are_the_same_through_both_paths(tmp_path):
    for i, text in enumerate((QASPER_SUITE, ASQA_SUITE)):
        (tmp_path / str(i)).mkdir()
        run_dir, suite_path = _small_run(tmp_path / str(i), text)
        assert _check_every_value(run_dir, suite_path) > 0


def test_evidence_f1_reads_citations_as_the_gate_does_cap_three_by_hand(tmp_path):
    # [1][2][3][4] against gold p0-p3: the gate keeps [1][2][3] -> p0, p1, p2; P = 1, R = 3/4, F1 = 6/7
    units = [[{"text": f"Fact {i}.", "source_ids": [f"p{i}.s0"]} for i in range(4)]]
    sources = [[{"id": f"p{i}.s0", "text": f"Fact {i}."} for i in range(4)]]
    gold = [[["p0", "p1", "p2", "p3"]]]
    answer = ["Facts [1][2][3][4]."]
    r = evidence_f1(answer, units, sources, references=gold)
    assert r["evidence_f1"] == pytest.approx(6 / 7)
    assert r["per_question"][0]["predicted_paragraphs"] == ["p0", "p1", "p2"]
    row = attribution_scores_batch(answer, units, sources, judge="lexical", parts=("emitted",))[0]
    assert row["details"]["sentences"][0]["citations"] == [1, 2, 3]  # the gate's reading, the same three
    assert evidence_f1(answer, units, sources, references=gold, max_citations=None)["evidence_f1"] == 1.0
    # ALCE-compatible parsing reads "[1, 2]" as [1] in both
    r = evidence_f1(["Facts [1, 2]."], units, sources, references=gold, alce_compat=True)
    assert r["per_question"][0]["predicted_paragraphs"] == ["p0"]
    row = attribution_scores_batch(["Facts [1, 2]."], units, sources, alce_compat=True, parts=("emitted",))[0]
    assert row["details"]["sentences"][0]["citations"] == [1]


def test_evidence_f1_module_and_a_suite_give_the_same_number():
    import evaluate

    from rageval.diagnostics.dispatch import score
    from rageval.diagnostics.inputs import Gold, ScoringOptions
    from rageval.types import Context, SourceSnippet, Unit

    snips = [SourceSnippet(f"p{i}.s0", f"Fact {i}.", doc_id=f"p{i}") for i in range(4)]
    ctx = Context.measure(
        [Unit(s.text, source_ids=(s.id,)) for s in snips], tokenizer="regex", retrieved_tokens=8, budget_tokens=None
    )
    x = ScoringInput.build(
        question_id="q",
        answer="Facts [1][2][3][4].",
        context=ctx,
        sources=snips,
        gold=Gold(evidence=(("p0", "p1", "p2", "p3"),)),
        evidence_text=lambda u: u.text,
    )
    suite_value = score([x], ["evidence_f1"], ScoringOptions(), "lexical")[0][0]["evidence_f1"]
    module = evaluate.load(str(ROOT / "metrics" / "evidence_f1"))
    module_value = module.compute(
        predictions=[x.answer],
        units=[x.unit_dicts()],
        sources=[x.source_dicts()],
        references=[[list(x.gold.evidence[0])]],
    )["evidence_f1"]
    assert suite_value == module_value == pytest.approx(6 / 7)


# ---------------------------------------------------------------- the demo's gap (issue "Done when")


def _summary(run_dir: Path) -> dict[str, dict[str, str]]:
    with open(run_dir / "summary.csv", newline="") as f:
        return {r["setting"]: r for r in csv.DictReader(f)}


def _compressor(setting: str) -> str:
    return setting.split("@")[0]


@pytest.mark.slow
def test_demo_gap_is_exactly_zero_for_join_compressors_with_the_lexical_judge(demo):
    rows = _summary(demo)
    joins = [s for s in rows if _compressor(s) in JOINS]
    assert len(joins) == 13
    for s in joins:
        assert float(rows[s]["gap_precision"]) == 0.0 and float(rows[s]["gap_recall"]) == 0.0, s
        assert int(rows[s]["gap_precision_n"]) > 0


@pytest.mark.slow
def test_demo_gap_is_exactly_zero_for_join_compressors_with_the_exact_string_judge(demo):
    _, ok, xs, _ = _load(demo, ROOT / "suites" / "demo.yaml")
    # per record, a judge that knows only that record's emitted premises
    nonzero_controls = 0
    for r, x in zip(ok, xs):
        units = x.unit_dicts()
        judge = ExactJudge(expected_premises([x.answer], [units]))
        row = attribution_scores_batch([x.answer], [units], [x.source_dicts()], judge=judge, details=False)[0]
        gaps = (row["emitted_minus_grounded_precision"], row["emitted_minus_grounded_recall"])
        if _compressor(r.setting.name) in JOINS:
            assert gaps in ((0.0, 0.0), (None, None)), (r.setting.name, r.question_id, gaps)
        else:
            nonzero_controls += any(g for g in gaps if g is not None)
    assert nonzero_controls > 0  # ECR / token pruning: the judge tells their grounded premises apart


@pytest.mark.slow
def test_demo_summary_with_the_exact_string_judge(demo, tmp_path):
    from rageval.judges import JUDGES
    from rageval.rescoring.run import rescore

    xs = _load(demo, ROOT / "suites" / "demo.yaml")[2]
    expected = expected_premises([x.answer for x in xs], [x.unit_dicts() for x in xs])
    judge = ExactJudge(expected)
    copy = tmp_path / "demo"
    shutil.copytree(demo, copy)
    shutil.rmtree(copy / "cache" / "judge", ignore_errors=True)
    JUDGES.register("exact-string-test", lambda arg, o: judge)
    try:
        result = rescore(copy, judge="exact-string-test")
    finally:
        JUDGES.unregister("exact-string-test")
    out = getattr(result, "out_dir", copy)  # the rescored run's folder
    assert json.loads((out / "run_stats.json").read_text())["judge"]["judge_id"] == "exact-string-test"
    rows = _summary(out)
    for s, row in rows.items():
        if _compressor(s) in JOINS:
            assert float(row["gap_precision"]) == 0.0 and float(row["gap_recall"]) == 0.0, s
            assert float(row["emitted_recall"]) > 0.5, s  # the judge did say yes to the emitted premises
    controls = [s for s in rows if _compressor(s) not in JOINS]
    assert any(float(rows[s]["gap_recall"]) > 0 for s in controls), {s: rows[s]["gap_recall"] for s in controls}


@pytest.mark.slow
def test_demo_claim_support_gap_is_zero_for_joins_and_grounded_below_emitted_where_it_must_be(demo):
    rows = _summary(demo)
    _, ok, _, _ = _load(demo, ROOT / "suites" / "demo.yaml")
    # the summary derives the per-question gap from the catalog (gap_claim_support): exactly 0 for every join
    for s in (s for s in rows if _compressor(s) in JOINS):
        assert float(rows[s]["gap_claim_support"]) == 0.0 and int(rows[s]["gap_claim_support_n"]) > 0, s
    must = 0
    for r in ok:
        m = r.metrics
        if m["claim_support_emitted"] is None:
            continue
        gap = m["claim_support_emitted"] - m["claim_support_grounded"]
        if _compressor(r.setting.name) in JOINS:
            assert gap == 0.0, (r.setting.name, r.question_id)
        # token pruning declares nothing: where no unit is recovered every claim is a structural rejection in
        # grounded mode (0), so any emitted support puts grounded strictly below emitted
        if m["claim_support_structural_rejections"] == m["claim_support_claims"] and m["claim_support_emitted"] > 0:
            assert _compressor(r.setting.name) == "token_prune"
            assert m["claim_support_grounded"] == 0.0 < m["claim_support_emitted"]
            must += 1
    assert must > 0
