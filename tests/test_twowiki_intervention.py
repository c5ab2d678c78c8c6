"""The 2WikiMultiHopQA dev sample (120 real questions, samples/PROVENANCE.md) and the `twowiki_intervention` suite:
the packer vs the focused heuristic on gold coverage, answer-in-context and answer F1, with the F1 row's gain
decomposition."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.data import load_examples, sample_path
from rageval.suite.load import load_suite

ORIGINAL_FIELDS = [
    "_id",
    "type",
    "question",
    "context",
    "entity_ids",
    "supporting_facts",
    "evidences",
    "answer",
    "evidences_id",
    "answer_id",
]


def test_the_dev_sample_is_in_the_original_layout_with_resolving_gold():
    raw = json.loads(sample_path("2wikimultihopqa_dev120").read_text(encoding="utf-8"))
    assert len(raw) == 120 and all(list(r) == ORIGINAL_FIELDS for r in raw)
    assert {r["type"] for r in raw} == {"compositional", "comparison", "bridge_comparison", "inference"}
    exs = load_examples("2wiki", sample_path("2wikimultihopqa_dev120"))
    assert len({e.id for e in exs}) == 120
    # the source kept only questions whose supporting facts resolve: every fact is a sentence of its paragraph
    assert not any("unmatched_supporting_facts" in e.meta for e in exs)
    assert all(len(e.documents) == len(r["context"]) for e, r in zip(exs, raw))
    assert all(len(e.supporting_facts) == len(r["supporting_facts"]) for e, r in zip(exs, raw))
    first = exs[0]
    assert first.id == "100c512a0bde11eba7f7acde48001122" and first.answers == ("Cork",)
    assert first.meta["evidences"][1] == ["Sir James Charles Mathew", "place of burial", "Cork"]


def test_the_suite_reads_100_questions_and_plans_three_contrasts():
    suite = load_suite("twowiki_intervention")
    assert suite.dataset.limit == 100 and suite.setting_names() == ["focused@160", "submodular@160"]
    assert suite.judge.spec == "lexical" and suite.reader.backend == "extractive"


@pytest.mark.slow
def test_the_intervention_writes_three_contrasts_and_the_f1_gain_decomposition(tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(
        main, ["suite", "twowiki_intervention", "--limit", "8", "--out", str(out), "--no-progress"]
    )
    assert res.exit_code == 0, res.output
    rows = {r["contrast"]: r for r in csv.DictReader((out / "contrasts.csv").open(encoding="utf-8"))}
    metrics = ("gold_coverage", "answer_in_context", "answer_f1")
    assert set(rows) == {f"submodular@160 - focused@160: {m}" for m in metrics}
    assert {r["family"] for r in rows.values()} == {"intervention"}
    f1 = rows["submodular@160 - focused@160: answer_f1"]
    parts = [float(f1[f"gain_{g}"]) for g in ("new", "lost", "both", "neither", "undefined")]
    assert sum(parts) == pytest.approx(float(f1["effect"]), abs=1e-5)  # the five parts sum to the effect
    assert sum(int(f1[f"gain_{g}_n"]) for g in ("new", "lost", "both", "neither", "undefined")) == int(f1["n"])
    for m in ("gold_coverage", "answer_in_context"):  # answer-quality rows only
        assert rows[f"submodular@160 - focused@160: {m}"]["gain_new"] == ""
