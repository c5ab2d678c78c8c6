"""The attribution-compression study's deviations made explicit (issue 46): the paper's GTR retrieval from ALCE's
file, ASQA's BM25 pool named as its stand-in, identity under a context limit, evidence F1 to 4 decimals."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.report.contrast_tables import contrasts_table
from rageval.suite.config import suite_hash
from rageval.suite.inputs import load_inputs
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite

ROOT = Path(__file__).resolve().parents[1]
SUITES = ROOT / "suites"
OFFLINE = {"judge.spec": "lexical", "judge.params": {}, "reader.backend": "extractive", "reader.params": {}}


def _alce_gtr_file(path: Path, n: int = 3, docs: int = 7) -> Path:
    """A tiny file in the layout of ALCE's asqa_eval_gtr_top100.json: question, answer, qa_pairs, docs in rank
    order with id, title, text and score."""
    rows = []
    for q in range(n):
        rows.append(
            {
                "question": f"Who built bridge number {q}?",
                "answer": f"Bridge {q} was built by Builder {q}.",
                "qa_pairs": [{"question": f"Who built bridge {q}?", "short_answers": [f"Builder {q}"]}],
                "sample_id": f"s{q}",
                "docs": [
                    {
                        "id": str(1000 * q + d),
                        "title": f"Bridge {q} part {d}",
                        "text": f"Bridge {q} stands in town {d}. It was built by Builder {q} in year {1900 + d}.",
                        "score": 2.0 - d / 10,
                    }
                    for d in range(docs)
                ],
            }
        )
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_the_gtr_suite_without_alces_file_says_what_is_missing_offline(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no data/asqa_eval_gtr_top100.json here
    res = CliRunner().invoke(main, ["validate", str(SUITES / "asqa_gtr.yaml"), "--judge", "lexical"])
    assert res.exit_code == 2, res.output
    assert "dataset.path: 'data/asqa_eval_gtr_top100.json' not found" in res.output
    assert "--dataset-path FILE" in res.output


def test_the_gtr_suite_reads_the_top_5_of_alces_file_given_on_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _alce_gtr_file(tmp_path / "gtr.json")
    args = ["validate", str(SUITES / "asqa_gtr.yaml"), "--dataset-path", "gtr.json", "--judge", "lexical"]
    res = CliRunner().invoke(main, [*args, "--reader", "extractive", "--allow-unavailable"])
    assert res.exit_code == 0, res.output
    assert "suite 'asqa_gtr', dataset asqa (3 questions)" in res.output
    suite = load_suite(SUITES / "asqa_gtr.yaml", **OFFLINE, **{"dataset.path": str(tmp_path / "gtr.json")})
    assert (suite.retrieval.method, suite.retrieval.k) == ("given", 5)
    examples, retrieved = load_inputs(suite)
    assert [e.id for e in examples] == ["s0", "s1", "s2"]
    # ALCE's rank order, first 5 of 7: the GTR top-5
    assert [list(r.doc_ids) for r in retrieved] == [["d0", "d1", "d2", "d3", "d4"]] * 3
    assert retrieved[1].snippets[0].text == "Bridge 1 stands in town 0."
    out = tmp_path / "run"
    run = CliRunner().invoke(
        main,
        ["suite", str(SUITES / "asqa_gtr.yaml"), "--dataset-path", "gtr.json", "--out", str(out), "--limit", "1"]
        + ["--judge", "lexical", "--reader", "extractive", "--allow-unavailable", "--no-progress"],
    )
    assert run.exit_code == 0, run.output
    recs = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    identity = next(r for r in recs if r["setting"]["name"] == "identity")
    assert identity["status"] == "ok" and identity["extra"]["retrieved_doc_ids"] == ["d0", "d1", "d2", "d3", "d4"]
    # the GTR passages are the paper's retrieval: no stand-in note
    assert not any("stand-in" in n for n in json.loads((out / "manifest.json").read_text())["notes"])


def _run_with_limit(name: str, tmp_path: Path, limit: int) -> tuple[Path, list[dict]]:
    suite = load_suite(SUITES / f"{name}.yaml", **OFFLINE, **{"dataset.limit": 2, "context_limit": limit})
    out = tmp_path / name
    run_suite(suite, out, allow_unavailable=True, progress=False)
    recs = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return out, recs


@pytest.mark.parametrize(("name", "limit"), [("asqa", 300), ("qasper", 100)])
def test_identity_over_the_context_limit_fails_as_budget_check_counted_and_out_of_the_cohort(name, limit, tmp_path):
    out, recs = _run_with_limit(name, tmp_path, limit)
    over: dict[str, int] = {}
    for r in recs:
        ctx = r.get("context")
        if r["status"] == "unavailable" or ctx is None:
            continue
        tokens = ctx["achieved_tokens"]
        if tokens > limit:  # the definition: a context over the limit fails, whatever its setting
            assert r["status"] == "budget_check" and r["extra"]["context_over_limit"] == tokens - limit, r["error"]
            assert f"over the context limit of {limit}" in r["error"]
            over[r["setting"]["name"]] = over.get(r["setting"]["name"], 0) + 1
        else:
            assert r["status"] == "ok" and "context_over_limit" not in r["extra"]
    assert over.get("identity") == 2  # both questions' uncompressed contexts are over the limit
    stats = json.loads((out / "run_stats.json").read_text())
    assert stats["context_limit"] == {
        "limit": limit,
        "failures": {s: {"budget_check": n, "prompt_overflow": 0} for s, n in over.items()},
    }
    assert stats["status_counts"]["budget_check"] == sum(over.values())
    report = json.loads((out / "report.json").read_text())
    assert report["cohort"]["n"] == 0  # identity failed on both questions: none is ok in every setting
    summary = (out / "summary.md").read_text()
    assert f"{sum(over.values())} record(s) failed for their context's length (identity: 2 budget_check" in summary
    assert "left out of the common cohort" in summary


def test_the_context_limit_defaults_to_the_readers_declared_maximum_input_and_keeps_old_hashes(tmp_path):
    demo = load_suite(SUITES / "demo.yaml")
    assert "context_limit" not in demo.model_dump(mode="json")  # a suite without it dumps as before
    assert set(demo.context_limits().values()) == {None}
    assert suite_hash(load_suite(SUITES / "demo.yaml", context_limit=40)) != suite_hash(demo)
    reader = {"reader.backend": "transformers", "reader.params": {"model": "x/y", "max_input_tokens": 120}}
    declared = load_suite(SUITES / "demo.yaml", **reader)
    assert set(declared.context_limits().values()) == {120}
    assert set(load_suite(SUITES / "demo.yaml", **reader, context_limit=50).context_limits().values()) == {50}
    paper = load_suite(SUITES / "asqa.yaml")
    assert paper.context_limit == 32768  # Qwen2.5-7B-Instruct as shipped (docs/suites.md#context-limit)


def test_asqas_bm25_pool_is_named_a_stand_in_for_gtr_in_the_run_notes(tmp_path):
    suite = load_suite(SUITES / "asqa.yaml", **OFFLINE, **{"dataset.limit": 1})
    from rageval.suite.plan import build_plan

    notes = build_plan(suite).notes
    assert any("a stand-in for the attribution-compression paper's retrieval, ALCE's GTR top-5" in n for n in notes)
    qasper = build_plan(load_suite(SUITES / "qasper.yaml", **OFFLINE, **{"dataset.limit": 1})).notes
    assert not any("stand-in" in n for n in qasper)


def test_evidence_f1_effects_are_printed_to_4_decimals_the_others_to_3():
    an = SimpleNamespace(cohort={}, confidence=0.95, contrasts=())
    base = {"p_value": 0.01, "p_holm": 0.02, "n": 10, "n_dropped": 0, "note": None}
    rows = [
        {**base, "contrast": "e", "metric_a": "evidence_f1", "metric_b": "evidence_f1", "effect": 0.01234}
        | {"ci_low": -0.00051, "ci_high": 0.02049},
        {**base, "contrast": "a", "metric_a": "answer_f1", "metric_b": "answer_f1", "effect": 0.01234}
        | {"ci_low": -0.00051, "ci_high": 0.02049},
    ]
    _, table = contrasts_table(an, rows=rows)
    assert table[0][1:3] == ["+0.0123", "[-0.0005, +0.0205]"]
    assert table[1][1:3] == ["+0.012", "[-0.001, +0.020]"]


def test_context_failures_are_counted_per_setting_both_statuses():
    from rageval.run.cache import CacheTally
    from rageval.types import Record, Setting

    ident, ext = Setting("identity", "identity"), Setting("extractive@0.5", "extractive", 0.5)
    tally = CacheTally()
    tally.count(Record("q1", ident, "budget_check", extra={"context_over_limit": 12}))
    tally.count(Record("q2", ident, "prompt_overflow"))  # the reader refused the prompt as too long
    tally.count(Record("q3", ident, "budget_check"))  # a budget error, not the context limit: not counted here
    tally.count(Record("q1", ext, "ok"))
    assert tally.context_failures == {"identity": {"budget_check": 1, "prompt_overflow": 1}}
    assert tally.status_counts == {"budget_check": 2, "prompt_overflow": 1, "ok": 1}
