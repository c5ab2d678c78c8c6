"""Contrasts of contrasts (interactions): ``(A - B) - (C - D)`` per question, checked by hand on a 10-question
table (effect, exact sign-flip p, the bootstrap interval against the exact bootstrap distribution), their own
Holm family, validation, the suite's tables; and contrasts across runs (``rageval report A B --contrasts``)."""

import csv
import itertools
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.report.analysis import analyze
from rageval.report.load import load_run
from rageval.stats.contrasts import expand_plan
from rageval.stats.holm import holm
from rageval.types import Context, Record, Setting, Unit

SETS = [
    ("submodular@160", "submodular", 160),
    ("focused@160", "focused", 160),
    ("submodular@96", "submodular", 96),
    ("focused@96", "focused", 96),
]
# answer F1 per question in (submodular@160, focused@160, submodular@96, focused@96); q9's focused@96 undefined
F1 = [
    (1.0, 0.0, 1.0, 1.0),
    (1.0, 0.5, 0.0, 0.0),
    (0.5, 0.5, 0.5, 0.0),
    (1.0, 0.0, 0.0, 0.0),
    (0.0, 0.0, 0.5, 0.0),
    (1.0, 0.5, 1.0, 0.5),
    (0.75, 0.25, 0.25, 0.25),
    (1.0, 0.0, 0.5, 0.0),
    (0.5, 0.0, 0.0, 0.25),
    (1.0, 0.0, 0.5, None),
]
# (a - b) - (c - d) by hand, q0..q8 (q9 dropped: its d is undefined)
BY_HAND = [1.0, 0.5, -0.5, 1.0, -0.5, 0.0, 0.5, 0.5, 0.75]
INTERACTION = [["submodular@160", "focused@160"], ["submodular@96", "focused@96"]]
PLAN = {
    "families": [{"contrasts": [{"a": "submodular@160", "b": "focused@160", "metrics": ["answer_f1"]}]}],
    "interactions": [{"interaction": INTERACTION, "metrics": ["answer_f1", "answer_in_context"]}],
}


def _records(f1_table, qids=None):
    qids = qids or [f"q{i}" for i in range(len(f1_table))]
    out = []
    for j, (name, comp, budget) in enumerate(SETS):
        for q, row in zip(qids, f1_table):
            f1 = row[j]
            ctx = Context(units=(Unit("t", ("d0.s0",)),), achieved_tokens=budget, retrieved_tokens=300, budget=budget)
            metrics = {"answer_f1": f1, "answer_in_context": None if f1 is None else float(f1 >= 0.5)}
            rec = Record(
                question_id=q,
                setting=Setting(name, comp, budget, "extractive"),
                status="ok",
                context=ctx,
                metrics=metrics,
            )
            out.append(rec.to_dict())
    return out


def write_run(path, contrasts=PLAN, f1_table=F1, qids=None, seed=5):
    path.mkdir(parents=True, exist_ok=True)
    with (path / "records.jsonl").open("w") as fh:
        for r in _records(f1_table, qids):
            fh.write(json.dumps(r, sort_keys=True) + "\n")
    manifest = {
        "suite": {
            "name": path.name,
            "hash": "abc123",
            "dataset": "toy-qa",
            "seed": seed,
            "contrasts": contrasts,
            "settings": [{"name": n, "compressor": c, "budget": b} for n, c, b in SETS],
            "cluster_key": None,
        },
        "package": {"name": "rageval", "version": "0.1.0"},
        "models": {"reader": "extractive", "judge": "lexical"},
        "inputs": {"dataset_hash": "d1"},
    }
    (path / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return path


def _exact_bootstrap_quantiles(x, probs):
    """The exact bootstrap distribution of the mean of ``x`` (every multiset of len(x) draws, with its
    multinomial probability), and its quantiles at ``probs`` (the smallest value whose CDF reaches each)."""
    n = len(x)
    means, weights = [], []
    for combo in itertools.combinations_with_replacement(range(n), n):
        counts = np.bincount(combo, minlength=n)
        w = math.factorial(n) / np.prod([math.factorial(int(c)) for c in counts]) / n**n
        means.append(float(np.dot(counts, x)) / n)
        weights.append(w)
    order = np.argsort(means, kind="stable")
    m, cdf = np.array(means)[order], np.cumsum(np.array(weights)[order])
    return [float(m[np.searchsorted(cdf, p - 1e-12)]) for p in probs]


def test_interaction_plan_expands_to_its_own_family():
    plan = expand_plan(PLAN, [n for n, _, _ in SETS], default_metrics=["answer_f1"])
    inter = [r for r in plan.rows if r.kind == "interaction"]
    assert [(r.a, r.b, r.c, r.d, r.metric_a) for r in inter] == [
        ("submodular@160", "focused@160", "submodular@96", "focused@96", m) for m in ("answer_f1", "answer_in_context")
    ]
    assert plan.families == ("contrasts", "interactions") and plan.separate == ("interactions",)
    assert plan.holm_group("interactions") == "interactions" and plan.holm_group("contrasts") == "all"
    assert inter[0].label == "(submodular@160 - focused@160) - (submodular@96 - focused@96): answer_f1"
    # the bare form, alone, and the default metrics
    alone = expand_plan({"interactions": [INTERACTION]}, [n for n, _, _ in SETS], default_metrics=["answer_f1"])
    assert [(r.family, r.kind, r.metric_a) for r in alone.rows] == [("interactions", "interaction", "answer_f1")]


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            {"interactions": [[["submodular@160", "focused@16"], ["submodular@96", "focused@96"]]]},
            "Unknown setting 'focused@16' in contrasts.interactions[0].interaction[0][1]",
        ),
        ({"interactions": [[["submodular@160", "focused@160"]]]}, "must be two pairs of settings"),
        (
            {"interactions": [[["focused@96", "focused@96"], ["submodular@96", "focused@96"]]]},
            "compares 'focused@96' with itself",
        ),
        ({"interactions": [[INTERACTION[0], INTERACTION[0]]]}, "names the pair (submodular@160, focused@160) twice"),
        ({"interactions": [{"a": "submodular@160", "b": "focused@160"}]}, "must be an interaction"),
        ({"interactions": [INTERACTION, INTERACTION]}, "again"),
        ({"interactions": [{"interaction": INTERACTION, "settings": ["focused@96"]}]}, "an 'interaction' item takes"),
        (
            {"families": {"interactions": {"vs": "focused@96"}}, "interactions": [INTERACTION]},
            "is the family of contrasts.interactions",
        ),
    ],
)
def test_bad_interactions_are_refused(spec, message):
    with pytest.raises(ValueError) as err:
        expand_plan(spec, [n for n, _, _ in SETS], default_metrics=["answer_f1"])
    assert message in str(err.value)


def test_interaction_row_equals_a_hand_computation(tmp_path):
    an = analyze(load_run(write_run(tmp_path / "r")), n_resamples=4000)
    pair, i_f1, i_aic = an.contrasts
    assert pair["family"] == "contrasts" and pair["kind"] == "pair"
    assert (i_f1["family"], i_f1["kind"], i_f1["metric"]) == ("interactions", "interaction", "answer_f1")
    assert i_f1["a"] == "submodular@160 - focused@160" and i_f1["b"] == "submodular@96 - focused@96"
    assert i_f1["direction"] == "none"
    assert (i_f1["n"], i_f1["n_dropped"]) == (9, 1)
    assert i_f1["effect"] == pytest.approx(3.25 / 9) == pytest.approx(np.mean(BY_HAND))
    assert i_f1["mean_a"] == pytest.approx(5 / 9) and i_f1["mean_b"] == pytest.approx(1.75 / 9)
    # the sign-flip p over all 2^9 sign vectors, enumerated here
    x = np.array(BY_HAND)
    hits = sum(abs(np.dot(s, x)) >= abs(x.sum()) - 1e-12 for s in itertools.product((1, -1), repeat=len(x)))
    assert i_f1["p_method"].startswith("exact") and i_f1["p_value"] == pytest.approx(hits / 2**9)
    # the percentile interval against the exact bootstrap distribution of the mean: between its 2% and 3%
    # (97% and 98%) quantiles (4,000 replicates: the Monte-Carlo percentile lies within ~0.3% of 2.5%)
    lo2, lo3, hi97, hi98 = _exact_bootstrap_quantiles(x, [0.02, 0.03, 0.97, 0.98])
    assert lo2 <= i_f1["ci_low"] <= lo3 and hi97 <= i_f1["ci_high"] <= hi98
    # Holm within the interactions family only (two rows); the pair row alone in its family
    np.testing.assert_allclose([i_f1["p_holm"], i_aic["p_holm"]], holm([i_f1["p_value"], i_aic["p_value"]]))
    assert pair["p_holm"] == pair["p_value"]
    assert an.holm["family_sizes"] == {"all": 1, "interactions": 2} and an.holm["separate"] == ["interactions"]


def test_a_report_writes_the_interaction_rows(tmp_path):
    run = write_run(tmp_path / "r")
    res = CliRunner().invoke(main, ["report", str(run), "--resamples", "500", "--no-plots"])
    assert res.exit_code == 0, res.output
    with open(run / "contrasts.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    inter = [r for r in rows if r["kind"] == "interaction"]
    assert [r["contrast"] for r in inter] == [
        f"(submodular@160 - focused@160) - (submodular@96 - focused@96): {m}"
        for m in ("answer_f1", "answer_in_context")
    ]
    assert all(r["ci_low"] and r["ci_high"] and r["p_holm"] and r["family"] == "interactions" for r in inter)
    md = (run / "contrasts.md").read_text()
    assert "## interactions (2 contrasts" in md


SUITE = """\
name: tiny
dataset: {name: hotpotqa, limit: 6}
retrieval: {method: bm25, k: 5}
tokenizer: regex
settings:
  - {compressor: focused, budgets: [96, 160]}
  - {compressor: submodular, budgets: [96, 160]}
reader: {backend: extractive}
judge: {spec: lexical}
diagnostics: [answer_in_context, answer_f1, retrieval_recall]
contrasts:
  families: [{contrasts: [{a: submodular@160, b: focused@160, metrics: [answer_f1]}]}]
  interactions:
    - {interaction: [[submodular@160, focused@160], [submodular@96, focused@96]], metrics: [answer_f1]}
statistics: {resamples: 1000}
seed: 0
"""


def test_a_suite_run_writes_an_interaction_row_with_its_interval_and_holm_p(tmp_path):
    suite = tmp_path / "tiny.yaml"
    suite.write_text(SUITE)
    res = CliRunner().invoke(main, ["validate", str(suite)])
    assert res.exit_code == 0, res.output
    assert "    interactions: 1 rows" in res.output and "outside it (each adjusted on its own)" in res.output
    res = CliRunner().invoke(main, ["suite", str(suite), "--out", str(tmp_path / "run"), "--no-progress"])
    assert res.exit_code == 0, res.output
    with open(tmp_path / "run" / "contrasts.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    (inter,) = [r for r in rows if r["kind"] == "interaction"]
    assert inter["family"] == "interactions" and inter["a"] == "submodular@160 - focused@160"
    assert inter["ci_low"] != "NA" and inter["ci_high"] != "NA" and inter["p_holm"] != "NA"
    # alone in its family: Holm changes nothing; the effect is the mean of the four settings' per-question values
    assert inter["p_holm"] == inter["p_value"]
    recs = [json.loads(x) for x in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    f1 = {(r["question_id"], r["setting"]["name"]): r["metrics"]["answer_f1"] for r in recs}
    qids = sorted({q for q, _ in f1})
    by_q = [
        (f1[q, "submodular@160"] - f1[q, "focused@160"]) - (f1[q, "submodular@96"] - f1[q, "focused@96"]) for q in qids
    ]
    assert float(inter["effect"]) == pytest.approx(np.mean(by_q), abs=1e-6)
    # the findings state the mediation result and the declared packer contrast's gain decomposition
    found = json.loads((tmp_path / "run" / "report.json").read_text())["findings"]
    kinds = [f["kind"] for f in found]
    assert kinds.count("mediation") == 1
    (gain,) = [f for f in found if f["kind"] == "gain"]
    assert gain["text"].startswith("Gain decomposition by answer-in-context of 1 of 1 contrast on `answer_f1`")
    (pair,) = [r for r in rows if r["kind"] == "pair" and r["metric_a"] == "answer_f1"]
    (item,) = gain["items"]
    assert item.startswith(f"`submodular@160` − `focused@160` on `answer_f1`, {float(pair['effect']):+.3f} over ")
    page = (tmp_path / "run" / "report.html").read_text()
    assert "<code>submodular@160</code> − <code>focused@160</code> on <code>answer_f1</code>, " in page
    assert ">mediation</span> Mediation" in page
    # an interaction naming an unknown setting is refused by validate
    suite.write_text(SUITE.replace("[submodular@96, focused@96]]", "[submodular@64, focused@96]]"))
    res = CliRunner().invoke(main, ["validate", str(suite)])
    assert res.exit_code != 0 and "Unknown setting 'submodular@64' in contrasts.interactions[0].interaction[1][0]" in (
        res.output
    )


# ------------------------------------------------------------------ contrasts across runs

# a second reader's answer F1 on the same ten questions (hand-written): run "big"
F1_BIG = [
    (1.0, 1.0, 1.0, 0.5),
    (1.0, 1.0, 0.5, 0.0),
    (0.5, 0.0, 0.5, 0.5),
    (1.0, 0.5, 1.0, 0.0),
    (1.0, 0.0, 0.5, 0.5),
    (1.0, 1.0, 1.0, 1.0),
    (0.25, 0.25, 0.0, 0.25),
    (1.0, 0.5, 0.5, 0.5),
    (0.5, 0.5, 0.0, 0.0),
    (1.0, 0.0, 0.5, 1.0),
]
CROSS = """\
labels: {%s: small}
contrasts:
  families: [{readers: [{a: "big:submodular@160", b: "small:submodular@160", metrics: [answer_f1]}]}]
  interactions:
    - {interaction: [["small:submodular@160", "small:focused@160"], ["big:submodular@160", "big:focused@160"]],
       metrics: [answer_f1]}
"""


def test_report_over_two_runs_tests_contrasts_across_them(tmp_path):
    small = write_run(tmp_path / "run_small")
    big = write_run(tmp_path / "big", f1_table=F1_BIG, seed=9)
    spec = tmp_path / "cross.yaml"
    spec.write_text(CROSS % small)
    res = CliRunner().invoke(
        main, ["report", str(small), str(big), "--contrasts", str(spec), "--resamples", "1000", "--no-plots"]
    )
    assert res.exit_code == 0, res.output
    assert "Cross-run cohort: 10 questions in the common cohort of every run" in res.output
    out = tmp_path / "cross"  # beside the file, named after it
    with open(out / "contrasts.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    pair, inter = rows
    # big - small on submodular@160, by hand over the ten questions
    by_hand = [F1_BIG[i][0] - F1[i][0] for i in range(10)]
    assert (pair["family"], pair["a"], pair["b"]) == ("readers", "big:submodular@160", "small:submodular@160")
    assert float(pair["effect"]) == pytest.approx(np.mean(by_hand), abs=1e-6) and pair["n"] == "10"
    # (small's packer gain) - (big's packer gain) per question
    gain = [(F1[i][0] - F1[i][1]) - (F1_BIG[i][0] - F1_BIG[i][1]) for i in range(10)]
    assert inter["kind"] == "interaction" and inter["family"] == "interactions"
    assert inter["a"] == "small:submodular@160 - small:focused@160"
    assert float(inter["effect"]) == pytest.approx(np.mean(gain), abs=1e-6)
    assert inter["p_holm"] == inter["p_value"] and pair["p_holm"] == pair["p_value"]  # one row per Holm family
    assert inter["ci_low"] != "NA" and float(inter["ci_low"]) <= float(inter["effect"]) <= float(inter["ci_high"])
    doc = json.loads((out / "cross_run.json").read_text())
    assert doc["cohort"]["n_shared"] == 10 and doc["cohort"]["runs"]["big"]["n_left_out"] == 0
    # the pair's gain decomposition by hand (answer-in-context = F1 >= 0.5 in these records): big - small differs
    # on q4 (+1, only big has the answer: "new") and q6 (-0.5, only small has it: "lost"); the 8 others are "both"
    # with difference 0
    assert (pair["gain_new_n"], pair["gain_lost_n"], pair["gain_both_n"], pair["gain_neither_n"]) == (
        "1",
        "1",
        "8",
        "0",
    )
    assert float(pair["gain_new"]) == pytest.approx(0.1) and float(pair["gain_lost"]) == pytest.approx(-0.05)
    assert float(pair["gain_new_share"]) == pytest.approx(2.0) and float(pair["gain_both"]) == 0.0
    assert inter["gain_new"] == ""  # an interaction row carries no decomposition
    md = (out / "contrasts.md").read_text()
    assert "## Gain decomposition" in md and "| big:submodular@160 - small:submodular@160: answer_f1 |" in md
    # the runs' own reports are written as before
    assert (small / "contrasts.csv").is_file() and (big / "contrasts.csv").is_file()


def test_runs_with_different_questions_say_which_they_share(tmp_path):
    small = write_run(tmp_path / "small")
    # the big run: q3..q12 (q10..q12 not in small; q0..q2 not in big)
    qids = [f"q{i}" for i in range(3, 13)]
    big = write_run(tmp_path / "big", f1_table=F1_BIG, qids=qids)
    spec = tmp_path / "cross.yaml"
    spec.write_text("- {a: 'big:submodular@160', b: 'small:submodular@160', metrics: [answer_f1]}\n")
    res = CliRunner().invoke(
        main,
        ["report", str(small), str(big), "--contrasts", str(spec), "--out", str(tmp_path / "u"), "--no-plots"],
    )
    assert res.exit_code == 0, res.output
    line = (
        "Cross-run cohort: 7 questions in the common cohort of every run (small: 10 questions, 3 left out; "
        "big: 10 questions, 3 left out). The runs' question sets differ: every contrast uses the shared questions only."
    )
    assert line in " ".join(res.output.split())
    assert line in (tmp_path / "u" / "contrasts.md").read_text()
    doc = json.loads((tmp_path / "u" / "cross_run.json").read_text())
    assert doc["cohort"]["runs"]["small"]["left_out"] == ["q0", "q1", "q2"]
    assert doc["cohort"]["runs"]["big"]["left_out"] == ["q10", "q11", "q12"]
    (row,) = doc["contrasts"]
    # small's q3..q9 against big's first seven rows (big's q3..q9)
    by_hand = [F1_BIG[i - 3][0] - F1[i][0] for i in range(3, 10)]
    assert row["n"] == 7 and row["effect"] == pytest.approx(np.mean(by_hand))


def test_a_bad_cross_run_file_is_refused_before_any_report(tmp_path):
    small, big = write_run(tmp_path / "small"), write_run(tmp_path / "big", f1_table=F1_BIG)
    spec = tmp_path / "cross.yaml"
    spec.write_text("- {a: 'huge:submodular@160', b: 'small:submodular@160', metrics: [answer_f1]}\n")
    res = CliRunner().invoke(main, ["report", str(small), str(big), "--contrasts", str(spec), "--no-plots"])
    assert res.exit_code != 0 and "Unknown setting 'huge:submodular@160'" in res.output
    spec.write_text("labels: {nowhere: x}\ncontrasts: [{vs: 'small:focused@96'}]\n")
    res = CliRunner().invoke(main, ["report", str(small), str(big), "--contrasts", str(spec), "--no-plots"])
    assert res.exit_code != 0 and "labels names 'nowhere'" in res.output
    assert not (small / "contrasts.csv").exists()
    res = CliRunner().invoke(main, ["report", str(small), "--contrasts", str(spec)])
    assert res.exit_code != 0 and "--contrasts takes several RUN_DIRs" in res.output
