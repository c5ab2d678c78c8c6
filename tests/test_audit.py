"""The second-evaluator audit, on a hand-made run: fixed mappings vs re-recovery where they differ, both ways of
counting abstentions, agreement and kappa, the seeded subsample, no new judge calls for what is cached, and the
run's own files untouched."""

import hashlib
import json
import math
import re

import pytest
from click.testing import CliRunner

from rageval.audit.run import AuditError, audit_dir, run_audit
from rageval.audit.sample import select_sample
from rageval.cli import main
from rageval.judges import JUDGES, CallableJudge

STOP = {"the", "is", "in", "it", "a", "of"}


def words(t):
    return {w for w in re.findall(r"[a-z0-9]+", t.lower()) if w not in STOP}


def rule(premises, hypotheses):
    """Support = the share of the hypothesis's content words found in the premise."""
    return [len(words(h) & words(p)) / len(words(h)) if words(h) else 0.0 for p, h in zip(premises, hypotheses)]


def abstaining(premises, hypotheses):
    """The same rule, but no decision at all on anything about Everest."""
    return [math.nan if "everest" in p.lower() else v for p, v in zip(premises, rule(premises, hypotheses))]


@pytest.fixture(autouse=True)
def judges():
    JUDGES.register("audit-rule", lambda arg, o: CallableJudge(rule, judge_id="audit-rule-v1"))
    JUDGES.register("audit-abstain", lambda arg, o: CallableJudge(abstaining, judge_id="audit-abstain-v1"))
    yield
    JUDGES.unregister("audit-rule")
    JUDGES.unregister("audit-abstain")


def _sentence(text, raw, *, emitted, grounded, evidence):
    return {
        "text": text,
        "raw": raw,
        "citations": [1],
        "invalid": [],
        "capped": [],
        "emitted": {"supported": emitted, "precise": [emitted]},
        "grounded": {"supported": grounded, "precise": [grounded]},
        "evidence": [evidence],
    }


# q1: the unit declares no provenance; the first judge "recovered" the wrong snippet (s_c), so grounded fails.
# q2: the unit declares its snippet; everything is supported.
Q1 = {
    "sources": [
        {"id": "a.s0", "text": "The Eiffel Tower is in Paris."},
        {"id": "b.s0", "text": "The tower was finished in 1889."},
        {"id": "c.s0", "text": "Gustave Eiffel built it."},
    ],
    "unit": {"text": "Eiffel Tower in Paris, finished 1889.", "source_ids": None},
    "answer": "The Eiffel Tower is in Paris [1].",
    "sentence": _sentence(
        "The Eiffel Tower is in Paris.",
        "The Eiffel Tower is in Paris [1].",
        emitted=True,
        grounded=False,
        evidence="recovered",
    ),
    "recovery": {"1": {"candidates": ["a.s0", "b.s0", "c.s0"], "recovered": ["c.s0"]}},
    "metrics": {"emitted_precision": 1.0, "emitted_recall": 1.0, "grounded_precision": 0.0, "grounded_recall": 0.0},
}
Q2 = {
    "sources": [
        {"id": "e.s0", "text": "Mount Everest is the highest mountain."},
        {"id": "e.s1", "text": "It lies in Nepal."},
    ],
    "unit": {"text": "Mount Everest is the highest mountain.", "source_ids": ["e.s0"]},
    "answer": "Mount Everest is the highest mountain [1].",
    "sentence": _sentence(
        "Mount Everest is the highest mountain.",
        "Mount Everest is the highest mountain [1].",
        emitted=True,
        grounded=True,
        evidence="declared",
    ),
    "recovery": {},
    "metrics": {"emitted_precision": 1.0, "emitted_recall": 1.0, "grounded_precision": 1.0, "grounded_recall": 1.0},
}


def _record(qid, q, setting="tp@0.5", status="ok"):
    metrics = dict(q["metrics"])
    metrics.update({f"{k}_excl_abstain": v for k, v in q["metrics"].items()})
    metrics["judge_abstentions"] = 0
    return {
        "question_id": qid,
        "setting": {"name": setting, "compressor": setting.split("@")[0], "budget": 0.5, "reader": "extractive"},
        "status": status,
        "context": {
            "units": [q["unit"]],
            "budget": 0.5,
            "budget_tokens": 10,
            "achieved_tokens": 7,
            "retrieved_tokens": 20,
            "achieved_ratio": 0.35,
        }
        if status == "ok"
        else None,
        "sources": q["sources"],
        "answer": {"text": q["answer"], "mode": "default", "sentences": [q["sentence"]]} if status == "ok" else None,
        "metrics": metrics if status == "ok" else {},
        "extra": {"attribution": {"sentences": [q["sentence"]], "recovery": q["recovery"], "n_units": 1}}
        if status == "ok"
        else {},
        "error": None,
    }


def make_run(tmp_path, records=None, settings=("tp@0.5",)):
    d = tmp_path / "run"
    d.mkdir()
    records = records or [_record("q1", Q1), _record("q2", Q2)]
    (d / "records.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    config = {
        "name": "audit-toy",
        "dataset": {"name": "hotpotqa"},
        "settings": [{"compressor": s.split("@")[0], "budgets": [0.5]} for s in settings],
        "judge": {"spec": "lexical", "threshold": 0.5},
        "seed": 3,
    }
    manifest = {
        "suite": {
            "name": "audit-toy",
            "hash": "h",
            "seed": 3,
            "settings": [{"name": s, "compressor": s.split("@")[0], "budget": 0.5} for s in settings],
            "config": config,
        },
        "models": {"judge": "lexical"},
    }
    (d / "manifest.json").write_text(json.dumps(manifest))
    return d


def _digest(d):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir()) if p.is_file()}


def _score(result, evaluator, metric, way="as_unsupported", setting="tp@0.5"):
    row = next(
        r
        for r in result["scores"]
        if r["setting"] == setting and r["evaluator"] == evaluator and r["abstentions"] == way
    )
    return row[metric], row[f"{metric}_n"]


def test_fixed_mappings_and_re_recovery_differ_as_computed_by_hand(tmp_path):
    run = make_run(tmp_path)
    before = _digest(run)
    res = run_audit(run, "audit-rule", n=100, n_resamples=200)
    assert res["questions"] == ["q1", "q2"] and res["n_records"] == 2
    # first judge: the run's own values
    assert _score(res, "first", "grounded_precision") == (0.5, 2)
    # fixed mappings keep c.s0 for q1: "Gustave Eiffel built it." holds 1 of the 3 content words (eiffel,
    # tower, paris) of the sentence -> 0.33 < 0.5, not supported; q2 declared -> supported
    assert _score(res, "second (fixed mappings)", "grounded_precision") == (0.5, 2)
    assert _score(res, "second (fixed mappings)", "emitted_precision") == (1.0, 2)
    # re-recovery: the unit's 5 content words (eiffel, tower, paris, finished, 1889): a.s0 holds 3 (0.6), b.s0 3
    # (tower, finished, 1889: 0.6), c.s0 1 (0.2) -> a.s0 and b.s0 recovered; the pooled premise holds the sentence
    assert _score(res, "second (re-recovery)", "grounded_precision") == (1.0, 2)
    assert _score(res, "second (re-recovery)", "grounded_recall") == (1.0, 2)
    rec = [json.loads(x) for x in (audit_dir(run, "audit-rule") / "records.jsonl").read_text().splitlines()]
    assert rec[0]["second_rerecover"]["recovery"]["1"]["recovered"] == ["a.s0", "b.s0"]
    assert rec[0]["second_fixed"]["recovery"]["1"]["recovered"] == ["c.s0"]
    # cross-judge (second - first): re-recovery grounded precision +0.5 (diffs 1 and 0), fixed +0
    cross = {
        (r["mode"], r["metric"]): r
        for r in res["cross_judge"]
        if r["setting"] == "tp@0.5" and r["abstentions"] == "as_unsupported"
    }
    assert cross[("re-recovery", "grounded_precision")]["effect"] == pytest.approx(0.5)
    assert cross[("fixed mappings", "grounded_precision")]["effect"] == 0.0
    # exact sign-flip test over 2 questions: every sign vector reaches |T| = 1 -> p = 1; Holm over the 6 rows
    assert cross[("re-recovery", "grounded_precision")]["p_value"] == 1.0
    assert cross[("both (emitted)", "emitted_precision")]["holm_family_size"] == 6
    # gaps under each evaluator: emitted - grounded precision per question (1, 0) -> 0.5, re-recovery (0, 0) -> 0
    gaps = {
        (r["evaluator"], r["gap"]): r["effect"]
        for r in res["gaps"]
        if r["setting"] == "tp@0.5" and r["abstentions"] == "as_unsupported"
    }
    assert gaps[("first", "precision")] == pytest.approx(0.5)
    assert gaps[("second (fixed mappings)", "precision")] == pytest.approx(0.5)
    assert gaps[("second (re-recovery)", "precision")] == 0.0
    # agreement: under fixed mappings both judges say q1 unsupported, q2 supported on the grounded pairs
    ag = {(r["premise"], r["decision"]): r for r in res["agreement"] if r["setting"] == "tp@0.5"}
    g = ag[("grounded", "sentence support (joint decision)")]
    assert g["confusion"] == [[1, 0], [0, 1]] and g["rate"] == 1.0 and g["kappa"] == 1.0
    e = ag[("emitted", "sentence support (joint decision)")]
    assert e["confusion"] == [[0, 0], [0, 2]] and e["kappa"] is None  # one label only: kappa undefined
    r = ag[("grounded (re-recovery: premises may differ)", "sentence support (joint decision)")]
    assert r["confusion"] == [[0, 1], [0, 1]] and r["rate"] == 0.5
    # files in RUN_DIR/audit-<judge>/, the run's own files untouched
    out = audit_dir(run, "audit-rule")
    assert out.name == "audit-audit-rule"
    for f in ("audit.json", "audit.md", "scores.csv", "gaps.csv", "cross_judge.csv", "agreement.csv"):
        assert (out / f).is_file()
    assert _digest(run) == before
    md = (out / "audit.md").read_text()
    assert "## Cross-judge differences (second − first)" in md and "Cohen's κ" in md


def test_no_new_judge_calls_for_what_is_cached(tmp_path):
    run = make_run(tmp_path)
    first = run_audit(run, "audit-rule", n_resamples=100)
    assert first["second_judge_stats"]["executed"] > 0
    again = run_audit(run, "audit-rule", n_resamples=100)
    assert again["second_judge_stats"]["executed"] == 0
    assert again["scores"] == first["scores"]


def test_abstentions_are_shown_both_ways(tmp_path):
    res = run_audit(make_run(tmp_path), "audit-abstain", n_resamples=100, modes=("fixed",))
    # q2's pairs are about Everest: no decision. As not supported: (1 + 0) / 2; left out: q1 alone
    assert _score(res, "second (fixed mappings)", "emitted_precision") == (0.5, 2)
    assert _score(res, "second (fixed mappings)", "emitted_precision", way="left_out") == (1.0, 1)
    ab = next(r for r in res["abstentions"] if r["evaluator"] == "second (fixed mappings)")
    assert ab["sentences_abstained_emitted"] == 1 and ab["sentences_abstained_grounded"] == 1
    assert ab["judge_abstentions"] == 2 and ab["records_with_abstentions"] == 1
    first = next(r for r in res["abstentions"] if r["evaluator"] == "first")
    assert first["judge_abstentions"] == 0
    g = next(r for r in res["agreement"] if r["premise"] == "grounded" and r["decision"].startswith("sentence"))
    assert g["n"] == 1 and g["n_missing"] == 1  # q2's pair left out of the agreement and counted


def test_the_subsample_is_seeded_and_the_cohort_spans_the_audited_settings(tmp_path):
    ids = [f"q{i}" for i in range(10)]
    s = select_sample(ids, 4, seed=5)
    assert s == select_sample(ids, 4, seed=5) and len(s) == 4 and s == sorted(s, key=ids.index)
    assert select_sample(ids, 4, seed=6) != s or select_sample(ids, 4, seed=7) != s
    assert select_sample(ids, 20, seed=0) == ids
    recs = [
        _record("q1", Q1),
        _record("q2", Q2),
        _record("q1", Q1, setting="ext@0.5", status="reader_error"),
        _record("q2", Q2, setting="ext@0.5"),
    ]
    run = make_run(tmp_path, records=recs, settings=("tp@0.5", "ext@0.5"))
    res = run_audit(run, "audit-rule", n=1, seed=0, n_resamples=50)
    assert res["questions"] == ["q2"] and res["n_cohort"] == 1 and res["n_records"] == 2
    assert {r["setting"] for r in res["scores"]} == {"tp@0.5", "ext@0.5", "all audited settings"}
    only = run_audit(run, "audit-rule", settings=["tp@0.5"], n_resamples=50)
    assert only["questions"] == ["q1", "q2"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"settings": ["tp@0.25"]}, "audit setting 'tp@0.25' is not a setting of this run. Did you mean 'tp@0.5'?"),
        ({"modes": ("fixd",)}, "audit modes must be among fixed, rerecover"),
        ({"judge": "lexical"}, "is the run's own judge"),
    ],
)
def test_bad_requests_name_the_fix(tmp_path, kwargs, message):
    judge = kwargs.pop("judge", "audit-rule")
    with pytest.raises(AuditError) as err:
        run_audit(make_run(tmp_path), judge, **kwargs)
    assert message in str(err.value)


def test_records_without_saved_decisions_are_refused(tmp_path):
    bad = _record("q1", Q1)
    bad["extra"] = {}
    with pytest.raises(AuditError, match=r"no per-sentence decisions.*rageval rescore"):
        run_audit(make_run(tmp_path, records=[bad]), "audit-rule")


def test_cli_prints_the_tables_path_and_errors_without_a_traceback(tmp_path):
    run = make_run(tmp_path)
    res = CliRunner().invoke(main, ["audit", str(run), "--judge", "audit-rule", "--resamples", "100"])
    assert res.exit_code == 0, res.output
    assert "2 questions x 1 settings = 2 records" in res.output and "audit.md" in res.output
    res = CliRunner().invoke(main, ["audit", str(run)])
    assert res.exit_code != 0 and "no second judge: pass --judge" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(main, ["audit", str(run), "--judge", "audit-rule", "--settings", "nope"])
    assert res.exit_code != 0 and "audit setting 'nope'" in res.output and "Traceback" not in res.output


def test_audit_folders_are_folder_safe_and_never_shared(tmp_path):
    """Two judge specs never share an audit folder (nli:/m/deberta and nli-m/deberta did), and every folder is
    one safe name inside the run directory."""
    assert audit_dir(tmp_path, "minilm") == tmp_path / "audit-minilm"
    specs = [
        "nli:/m/deberta",
        "nli-m/deberta",
        "nli_m_deberta",
        "nli:/m/deberta ",
        "nli:/m/Deberta",
        "../x",
        "a" * 300,
        "a" * 301,
        "openai:m@http://127.0.0.1:1/v1",
        "é",
        "\\",
    ]
    dirs = [audit_dir(tmp_path, s) for s in specs]
    assert len(set(dirs)) == len(specs)
    for d in dirs:
        assert d.parent == tmp_path and re.fullmatch(r"audit-[A-Za-z0-9._-]+", d.name) and len(d.name) < 100
