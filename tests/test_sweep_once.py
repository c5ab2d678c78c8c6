"""The recovery-threshold sweep computes candidates and their scores once and applies each threshold to them.

Oracles: (1) the slow path, the engine run once per threshold (what the record sweep did before), on records of a
demo-like suite run (real HotpotQA questions, token pruning whose units declare no provenance); (2) a copy of
the per-threshold recovery algorithm written out here.  Both must give exactly the same values.
"""

import json
import math

import pytest

from rageval.diagnostics._attribution_inputs import prepare_inputs
from rageval.diagnostics.attribution import AttributionOptions, attribution_scores_batch
from rageval.diagnostics.attribution.engine import DEFAULT_SWEEP as SWEEP_THRESHOLDS
from rageval.diagnostics.attribution.engine import wanted_units
from rageval.diagnostics.attribution.premises import fmt
from rageval.diagnostics.attribution.recovery import candidate_ranker, score_recovery
from rageval.diagnostics.attribution.sweep import record_sweeps, sweep_batch
from rageval.diagnostics.inputs import ScoringInput, ScoringOptions
from rageval.judges import get_judge
from rageval.judges.base import JudgeRunner
from rageval.readers import PromptTemplate
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite
from rageval.types import Record

SUITE = """\
name: sweep-once
dataset: {{name: hotpotqa, limit: 14}}
retrieval: {{method: bm25, k: 5, corpus: example}}
tokenizer: regex
settings:
  - {{compressor: identity}}
  - {{compressor: submodular, budgets: [96]}}
  - {{compressor: token_prune, budgets: [0.5, 0.25]}}
reader: {{backend: extractive}}
judge: {{spec: lexical, threshold: 0.5}}
diagnostics: auto
contrasts: [{{vs: identity}}]
output_dir: {out}
seed: 0
"""


@pytest.fixture(scope="module")
def demo_inputs(tmp_path_factory):
    """ScoringInputs of every ok record of a demo-like run (as ``rageval rescore`` builds them)."""
    tmp = tmp_path_factory.mktemp("sweep")
    path = tmp / "suite.yaml"
    path.write_text(SUITE.format(out=tmp / "run"))
    suite = load_suite(path)
    run_suite(suite, tmp / "run", progress=False, build_report=False)
    template = PromptTemplate.coerce(suite.reader.template)
    records = [Record.from_dict(json.loads(line)) for line in (tmp / "run" / "records.jsonl").read_text().splitlines()]
    inputs = [ScoringInput.from_record(r, template.evidence_text) for r in records if r.status == "ok"]
    stored = {(r.question_id, r.setting.name): (r.extra or {}).get("reattribution_sweep") for r in records}
    without = [x for x in inputs if any(u.source_ids is None for u in x.units)]
    assert len(without) >= 20  # token pruning: units without provenance in most records
    return inputs, records, stored


def slow_sweep(inputs, options, judge):
    """What the record sweep did before: the engine once per threshold."""
    idx = [i for i, x in enumerate(inputs) if any(u.source_ids is None for u in x.units)]
    out = {i: {} for i in idx}
    for t in SWEEP_THRESHOLDS:
        opts = options.attribution.model_copy(update={"recovery_threshold": t})
        rows = attribution_scores_batch(
            [inputs[i].answer for i in idx],
            [inputs[i].unit_dicts() for i in idx],
            [inputs[i].source_dicts() for i in idx],
            judge=judge,
            options=opts,
            parts=("grounded", "re_attributability"),
            details=False,
        )
        for i, r in zip(idx, rows):
            out[i][f"{t:.1f}"] = {
                "rate": r.get("re_attributability"),
                "grounded_precision": r.get("grounded_precision"),
            }
    return out


def fast_sweep(inputs, options, judge):
    extras = [{} for _ in inputs]
    for i, extra in record_sweeps(inputs, options, judge).items():
        extras[i].update(extra)
    return {i: e["reattribution_sweep"] for i, e in enumerate(extras) if "reattribution_sweep" in e}


def old_recover_units(questions, wanted, runner, *, threshold, k=10, multi_snippet=False, candidates="bm25"):
    """The per-threshold recovery as it was written before (the oracle for RecoveryScores.at)."""
    plan = []
    for qi, ks in wanted.items():
        q = questions[qi]
        todo = [u for u in ks if q.units[u].source_ids is None]
        if todo:
            rank = candidate_ranker(candidates, [s.text for s in q.sources], f"sources[{qi}]")
            plan.extend(((qi, u), rank(q.units[u].text, k)) for u in todo)

    def item(q, i):
        s = q.sources[i]
        return (s.id, s.title, s.text, s.doc)

    def ask(asks):
        prem = [fmt([items]) for _, items, _ in asks]
        hyp = [questions[key[0]].units[key[1]].text for key, _, _ in asks]
        probs = runner(prem, hyp) if prem else []
        return [(key, pay, p, (pr, hy)) for (key, _, pay), p, pr, hy in zip(asks, probs, prem, hyp)]

    out = {key: {"cands": [], "probs": [], "pairs": 0, "tokens": 0, "multi": False, "abst": 0} for key, _ in plan}
    passing = {}
    for key, i, p, pair in ask([(key, [item(questions[key[0]], i)], i) for key, cands in plan for i in cands]):
        r = out[key]
        r["cands"].append(questions[key[0]].sources[i].id)
        r["probs"].append(p)
        r["pairs"] += 1
        r["tokens"] += runner.token_counts(*pair)[0]
        r["abst"] += int(math.isnan(p))
        if p >= threshold:
            passing.setdefault(key, set()).add(i)
    if multi_snippet:
        asks = []
        for key, cands in plan:
            if key in passing or not cands:
                continue
            q = questions[key[0]]
            combos = [(i, i + 1) for i in cands if i + 1 < len(q.sources)]
            top = cands[:3]
            combos += [(a, b) if a < b else (b, a) for x, a in enumerate(top) for b in top[x + 1 :]]
            asks.extend((key, [item(q, a), item(q, b)], (a, b)) for a, b in dict.fromkeys(combos))
        for key, ab, p, pair in ask(asks):
            r = out[key]
            r["pairs"] += 1
            r["tokens"] += runner.token_counts(*pair)[0]
            r["multi"] = True
            r["abst"] += int(math.isnan(p))
            if p >= threshold:
                passing.setdefault(key, set()).update(ab)
    for key, r in out.items():
        r["recovered"] = [questions[key[0]].sources[i].id for i in sorted(passing.get(key, ()))]
    return out


def _same_probs(a, b):
    return len(a) == len(b) and all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b))


# -- the dispatch sweep equals the slow path on demo data --------------------------------------------------------


def test_sweep_equals_the_engine_run_per_threshold_on_demo_records(demo_inputs):
    inputs, records, stored = demo_inputs
    options = ScoringOptions(attribution=AttributionOptions(threshold=0.5, max_citations=3))
    slow = slow_sweep(inputs, options, get_judge("lexical"))
    fast = fast_sweep(inputs, options, get_judge("lexical"))
    assert fast == slow
    assert json.dumps(fast, sort_keys=True) == json.dumps(slow, sort_keys=True)  # byte-identical as written
    # what the suite run wrote into its records (inputs are its ok records, in order) is the same too
    ok = [r for r in records if r.status == "ok"]
    assert len(ok) == len(inputs)
    for i, r in enumerate(ok):
        assert stored[(r.question_id, r.setting.name)] == fast.get(i)
    # the sweep moves with the threshold on this data (it is not a constant)
    rates = {t for s in fast.values() for t, v in s.items() if v["rate"] not in (None, 0.0, 1.0)}
    assert rates


@pytest.mark.parametrize(
    "opts",
    [
        {"multi_snippet": True},
        {"multi_snippet": True, "k": 3},
        {"no_citation_precision": "undefined", "max_citations": 1},
        {"threshold": 0.3},
    ],
    ids=["multi_snippet", "multi_snippet-k3", "no-citation-undefined", "gate-0.3"],
)
def test_sweep_equals_the_slow_path_under_other_options(demo_inputs, opts):
    inputs, _, _ = demo_inputs
    options = ScoringOptions(attribution=AttributionOptions(**{"threshold": 0.5, "max_citations": 3, **opts}))
    assert fast_sweep(inputs, options, get_judge("lexical")) == slow_sweep(inputs, options, get_judge("lexical"))


def test_sweep_equals_the_slow_path_with_an_abstaining_judge(demo_inputs):
    """A judge that abstains (NaN) on some pairs: abstentions never pass, at any threshold, in both paths."""
    inputs, _, _ = demo_inputs
    lexical = get_judge("lexical").judge

    def judge(premises, hypotheses):
        probs = lexical.predict(premises, hypotheses)
        return [float("nan") if len(p) % 5 == 0 else v for p, v in zip(premises, probs)]

    options = ScoringOptions(attribution=AttributionOptions(threshold=0.5, multi_snippet=True))
    slow = slow_sweep(inputs, options, JudgeRunner(judge))
    fast = fast_sweep(inputs, options, JudgeRunner(judge))
    assert fast == slow


# -- recovery once, each threshold applied: the oracle ------------------------------------------------------------


@pytest.mark.parametrize("multi_snippet", [False, True])
def test_recovery_scores_at_each_threshold_equal_the_per_threshold_recovery(demo_inputs, multi_snippet):
    inputs, _, _ = demo_inputs
    xs = [x for x in inputs if any(u.source_ids is None for u in x.units)]
    questions = prepare_inputs([x.answer for x in xs], [x.unit_dicts() for x in xs], [x.source_dicts() for x in xs])
    opts = AttributionOptions()
    parsed = [opts.parse(q.prediction, len(q.units)) for q in questions]
    wanted = wanted_units(questions, parsed, ("re_attributability",))
    runner = get_judge("lexical")
    scores = score_recovery(questions, wanted, runner, thresholds=SWEEP_THRESHOLDS, multi_snippet=multi_snippet)
    n_multi = 0
    for t in SWEEP_THRESHOLDS:
        got = scores.at(t)
        want = old_recover_units(questions, wanted, runner, threshold=t, multi_snippet=multi_snippet)
        assert set(got) == set(want) and got
        for key, w in want.items():
            g = got[key]
            assert g.candidates == w["cands"] and _same_probs(g.probabilities, w["probs"])
            assert (g.recovered, g.pairs_scored, g.tokens_scored) == (w["recovered"], w["pairs"], w["tokens"])
            assert (g.multi_snippet_used, g.abstentions) == (w["multi"], w["abst"])
            n_multi += g.multi_snippet_used
    assert (n_multi > 0) == multi_snippet  # the joined pairs were exercised when asked for


def test_threshold_above_the_scored_ones_is_refused_when_joined_pairs_matter(demo_inputs):
    inputs, _, _ = demo_inputs
    xs = [x for x in inputs if any(u.source_ids is None for u in x.units)][:3]
    questions = prepare_inputs([x.answer for x in xs], [x.unit_dicts() for x in xs], [x.source_dicts() for x in xs])
    wanted = {q.index: [k for k, u in enumerate(q.units) if u.source_ids is None] for q in questions}
    runner = get_judge("lexical")
    multi = score_recovery(questions, wanted, runner, thresholds=(0.3, 0.5), multi_snippet=True)
    with pytest.raises(ValueError, match=r"recovery threshold 0.6 is above the thresholds scored \(0.5\)"):
        multi.at(0.6)
    single = score_recovery(questions, wanted, runner, thresholds=(0.3, 0.5))
    assert single.at(0.9) is not None  # without joined pairs every threshold is a comparison only


# -- no repeated work ----------------------------------------------------------------------------------------------


def test_sweep_builds_one_bm25_index_per_question_and_asks_fewer_pairs(demo_inputs, monkeypatch):
    from rageval import bm25

    inputs, _, _ = demo_inputs
    xs = [x for x in inputs if any(u.source_ids is None for u in x.units)]
    built = []
    real_init = bm25.BM25Index.__init__

    def counting_init(self, *a, **kw):
        built.append(1)
        real_init(self, *a, **kw)

    monkeypatch.setattr(bm25.BM25Index, "__init__", counting_init)
    options = ScoringOptions(attribution=AttributionOptions(threshold=0.5, multi_snippet=True))
    fast_runner, slow_runner = get_judge("lexical"), get_judge("lexical")
    fast_sweep(xs, options, fast_runner)
    fast_built = len(built)
    built.clear()
    slow_sweep(xs, options, slow_runner)
    assert fast_built == len(xs)  # every question has a unit to re-attribute: one index each
    assert len(built) == len(SWEEP_THRESHOLDS) * len(xs)
    fast_req, slow_req = fast_runner.stats()["requested"], slow_runner.stats()["requested"]
    assert 0 < fast_req < slow_req / 2  # recovery asked once instead of six times; the gate re-asked only on change


def test_sweep_batch_rows_equal_the_engine_rows(demo_inputs):
    """The public sweep function: every value of the rows (not only the two the report keeps)."""
    inputs, _, _ = demo_inputs
    xs = [x for x in inputs if any(u.source_ids is None for u in x.units)][:12]
    args = ([x.answer for x in xs], [x.unit_dicts() for x in xs], [x.source_dicts() for x in xs])
    runner = get_judge("lexical")
    got = sweep_batch(*args, judge=runner, thresholds=(0.8, 0.3, 0.55), multi_snippet=True)
    for t in (0.8, 0.3, 0.55):
        want = attribution_scores_batch(
            *args,
            judge=runner,
            recovery_threshold=t,
            multi_snippet=True,
            parts=("grounded", "re_attributability"),
            details=False,
        )
        assert got[t] == want
    with pytest.raises(TypeError, match="pass thresholds"):
        sweep_batch(*args, recovery_threshold=0.4)
    with pytest.raises(ValueError, match="the sweep computes"):
        sweep_batch(*args, parts=("emitted",))


def test_sweep_without_units_lacking_provenance_is_empty(demo_inputs):
    inputs, _, _ = demo_inputs
    declared = [x for x in inputs if all(u.source_ids is not None for u in x.units)]
    assert declared
    assert fast_sweep(declared, ScoringOptions(), get_judge("lexical")) == {}


def test_public_re_attributability_sweep_equals_the_engine_per_threshold(demo_inputs):
    from rageval.diagnostics._common import mean_defined, summarize
    from rageval.diagnostics.attribution import re_attributability_sweep

    inputs, _, _ = demo_inputs
    xs = [x for x in inputs if any(u.source_ids is None for u in x.units)][:30]
    args = ([x.answer for x in xs], [x.unit_dicts() for x in xs], [x.source_dicts() for x in xs])
    got = re_attributability_sweep(*args, judge="lexical", multi_snippet=True)
    assert [g["threshold"] for g in got] == list(SWEEP_THRESHOLDS)
    for g in got:
        rows = attribution_scores_batch(
            *args,
            judge="lexical",
            recovery_threshold=g["threshold"],
            multi_snippet=True,
            parts=("grounded", "re_attributability"),
            details=False,
        )
        ra = summarize([{"re_attributability": r["re_attributability"]} for r in rows], "re_attributability")
        assert g["re_attributability"] == ra["re_attributability"] and (g["n"], g["n_undefined"]) == (
            ra["n"],
            ra["n_undefined"],
        )
        assert g["grounded_precision"] == mean_defined([r["grounded_precision"] for r in rows])[0]
        assert g["grounded_recall"] == mean_defined([r["grounded_recall"] for r in rows])[0]
    with pytest.raises(TypeError, match="pass thresholds"):
        re_attributability_sweep(*args, recovery_threshold=0.5)
