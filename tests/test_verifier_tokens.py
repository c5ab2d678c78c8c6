"""Verifier tokens before and after the judge's truncation, and the judge inputs it truncated
(docs/design.md#decision-verifier-tokens).

``verifier_tokens_<mode>`` counts the verifier input before truncation (as the paper's cost table
counts it), ``verifier_tokens_<mode>_after_truncation`` what the judge read, and every record counts
its distinct judge inputs (``judge_inputs``) and the truncated ones (``judge_inputs_truncated``).
Every figure below is counted by hand in the comments.
"""

from __future__ import annotations

import csv
import json

import pytest

from rageval.diagnostics.attribution import attribution_scores_batch
from rageval.diagnostics.compression import compression
from rageval.diagnostics.verification import verification
from rageval.judges import get_judge

MODES = ("summary_checked", "declared_span", "recovered_source")

# unit 1 declares d0.s0 (its text equals the unit's); unit 2 declares nothing and is recovered from d1.s0
UNITS = [
    [
        {"text": "Paris is the capital of France.", "source_ids": ["d0.s0"]},
        {"text": "Lyon is big.", "source_ids": None},
    ]
]
SOURCES = [[{"id": "d0.s0", "text": "Paris is the capital of France."}, {"id": "d1.s0", "text": "Lyon is a big city."}]]
ANSWER = ["Paris is the capital [1]. Lyon is big [2]."]


class CuttingJudge:
    """Supports everything; a pair is its words (premise + hypothesis), cut at 6."""

    id = "cutting-test"
    LIMIT = 6

    def predict(self, premises, hypotheses):
        return [1.0] * len(premises)

    def token_counts(self, premise, hypothesis):
        n = len(premise.split()) + len(hypothesis.split())
        return n, min(n, self.LIMIT)


# The pairs (words before -> after the cut at 6):
#   A = ("Paris is the capital of France.", "Paris is the capital.")   6 + 4 = 10 -> 6   truncated
#   B = ("Lyon is big.", "Lyon is big.")                                3 + 3 = 6  -> 6
#   R = ("Lyon is a big city.", "Lyon is big.")                         5 + 3 = 8  -> 6   truncated
# recovery of unit 2 asks R; emitted asks A, B; grounded asks A (declared = the unit text), R (recovered);
# summary-checked checks A, B; declared-span A (claim 2: a structural rejection); recovered-source A, R.


def test_counts_before_and_after_truncation_by_hand():
    r = verification(ANSWER, UNITS, SOURCES, judge=CuttingJudge())
    q = r["per_question"][0]
    assert (q["verifier_tokens_summary_checked"], q["verifier_tokens_summary_checked_after_truncation"]) == (16, 12)
    assert (q["verifier_tokens_declared_span"], q["verifier_tokens_declared_span_after_truncation"]) == (10, 6)
    assert (q["verifier_tokens_recovered_source"], q["verifier_tokens_recovered_source_after_truncation"]) == (18, 12)
    assert q["recovery_tokens"] == 8  # R, before truncation
    assert (q["judge_inputs"], q["judge_inputs_truncated"]) == (3, 2)  # distinct A, B, R; A and R cut
    assert r["total_verifier_tokens_declared_span"] == 10
    assert r["total_verifier_tokens_declared_span_after_truncation"] == 6
    assert r["total_judge_inputs_truncated"] == 2


def test_judge_inputs_and_recovery_cost_do_not_depend_on_the_other_parts_that_ran():
    # a third unit without provenance, never cited: re-attributability recovers it when it runs, which must
    # change neither verification's judge inputs nor the cost of checking the answer
    units = [UNITS[0] + [{"text": "Paris is nice.", "source_ids": None}]]
    judge = CuttingJudge()
    alone = attribution_scores_batch(ANSWER, units, SOURCES, judge=judge, parts=("verification",))[0]
    every = attribution_scores_batch(ANSWER, units, SOURCES, judge=judge)[0]
    for key in ("judge_inputs", "judge_inputs_truncated", "recovery_candidates_scored", "recovery_tokens"):
        assert alone[key] == every[key], key
    assert (every["judge_inputs"], every["judge_inputs_truncated"]) == (3, 2)
    assert (every["recovery_candidates_scored"], every["recovery_tokens"]) == (1, 8)  # R only
    # re-attributability's own cost: R and ("Paris is the capital of France.", "Paris is nice.") = 6 + 3 words
    assert (every["reattribution_candidates_scored"], every["reattribution_tokens"]) == (2, 8 + 9)
    assert "judge_inputs" not in attribution_scores_batch(ANSWER, units, SOURCES, judge=judge, parts=("emitted",))[0]


def test_cost_roll_up_uses_the_count_before_truncation():
    r = compression(ANSWER, UNITS, SOURCES, judge=CuttingJudge(), reader_input_tokens=[100])
    q = r["per_question"][0]
    assert q["cost_summary_checked"] == 100 + 16
    assert q["cost_declared_span"] == 100 + 10
    assert q["cost_recovered_source"] == 100 + 18 + 8  # + recovery tokens
    assert (q["verifier_tokens_recovered_source_after_truncation"], q["judge_inputs_truncated"]) == (12, 2)


def test_a_judge_without_token_counts_truncates_nothing():
    class Legacy:
        id = "legacy-test"

        def predict(self, premises, hypotheses):
            return [1.0] * len(premises)

        def input_tokens(self, premise, hypothesis):  # what it reads; truncation unknown
            return 7

    q = verification(ANSWER, UNITS, SOURCES, judge=Legacy())["per_question"][0]
    for m in MODES:
        assert q[f"verifier_tokens_{m}"] == q[f"verifier_tokens_{m}_after_truncation"]
    assert q["verifier_tokens_summary_checked"] == 14 and q["judge_inputs_truncated"] == 0
    # the lexical judge has no tokenizer: the suite tokenizer counts, nothing is truncated
    q = verification(ANSWER, UNITS, SOURCES, judge="lexical")["per_question"][0]
    # regex tokens (words and punctuation): A = 7 + 5, B = 4 + 4
    assert (q["verifier_tokens_summary_checked"], q["verifier_tokens_summary_checked_after_truncation"]) == (20, 20)
    assert q["judge_inputs_truncated"] == 0


def test_runner_memoizes_token_counts_once_per_pair():
    calls = []

    class Counting(CuttingJudge):
        def token_counts(self, premise, hypothesis):
            calls.append((premise, hypothesis))
            return super().token_counts(premise, hypothesis)

    runner = get_judge(Counting())
    assert runner.token_counts("a b", "c") == (3, 3) == runner.token_counts("a b", "c")
    assert runner.input_tokens("a b c d", "e f g") == 6
    assert calls == [("a b", "c"), ("a b c d", "e f g")]


# ---------------------------------------------------------------- a real (tiny) NLI model

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from test_judges_models import build_nli

# Both units declare provenance (no recovery: the pairs asked do not depend on the random model's answers).
NLI_UNITS = [
    [
        {"text": "Paris is the capital of France.", "source_ids": ["d0.s0"]},
        {"text": "Lyon is big.", "source_ids": ["d1.s0"]},
    ]
]
# WordLevel tokens (words and punctuation) + [CLS] p [SEP] h [SEP]:
#   A = "Paris is the capital of France ." (7) + "Paris is the capital ." (5) + 3 = 15 -> 12  truncated
#   B = "Lyon is big ." (4) + "Lyon is big ." (4) + 3 = 11                                   not truncated
#   G = "Lyon is a big city ." (6) + "Lyon is big ." (4) + 3 = 13 -> 12                     truncated


@pytest.fixture(scope="module")
def nli_path(tmp_path_factory):
    return build_nli(tmp_path_factory.mktemp("nli") / "tiny-nli")


def test_nli_judge_counts_tokens_before_and_after_its_max_length(nli_path):
    runner = get_judge(f"nli:{nli_path}", max_length=12)
    q = verification(ANSWER, NLI_UNITS, SOURCES, judge=runner)["per_question"][0]
    assert (q["verifier_tokens_summary_checked"], q["verifier_tokens_summary_checked_after_truncation"]) == (26, 23)
    assert (q["verifier_tokens_declared_span"], q["verifier_tokens_declared_span_after_truncation"]) == (28, 24)
    assert (q["verifier_tokens_recovered_source"], q["verifier_tokens_recovered_source_after_truncation"]) == (28, 24)
    assert (q["judge_inputs"], q["judge_inputs_truncated"]) == (3, 2)
    assert runner.stats()["truncated"] == 2  # the backend cut the same two pairs when it scored them
    # without truncation nothing is cut and both counts agree
    q = verification(ANSWER, NLI_UNITS, SOURCES, judge=get_judge(f"nli:{nli_path}", max_length=None))
    q = q["per_question"][0]
    assert q["verifier_tokens_declared_span"] == q["verifier_tokens_declared_span_after_truncation"] == 28
    assert q["judge_inputs_truncated"] == 0


SUITE = """\
name: truncation
dataset: {{name: hotpotqa, limit: 3}}
retrieval: {{method: bm25, k: 3}}
settings:
  - {{compressor: identity}}
  - {{compressor: extractive, budgets: [40]}}
reader: {{backend: extractive}}
judge: {{spec: "nli:{path}", params: {{max_length: 24}}}}
diagnostics: [emitted_precision, grounded_precision, verification, compression]
output_dir: {out}
seed: 0
"""


@pytest.mark.slow
def test_suite_records_and_summary_show_truncated_judge_inputs(nli_path, tmp_path):
    from rageval.suite.load import load_suite
    from rageval.suite.run import run_suite

    p = tmp_path / "s.yaml"
    p.write_text(SUITE.format(path=nli_path, out=tmp_path / "run"))
    result = run_suite(load_suite(p), progress=False)
    records = [json.loads(x) for x in (result.out_dir / "records.jsonl").read_text().splitlines()]
    ok = [r for r in records if r["status"] == "ok"]
    assert ok
    for r in ok:
        m = r["metrics"]
        assert 0 <= m["judge_inputs_truncated"] <= m["judge_inputs"]
        for mode in MODES:
            assert m[f"verifier_tokens_{mode}"] >= m[f"verifier_tokens_{mode}_after_truncation"]
    # identity's whole-document premises exceed 24 tokens: some inputs were cut, and the counts differ
    ident = [r["metrics"] for r in ok if r["setting"]["name"] == "identity"]
    assert sum(m["judge_inputs_truncated"] for m in ident) > 0
    assert sum(m["verifier_tokens_declared_span"] - m["verifier_tokens_declared_span_after_truncation"] for m in ident)
    with open(result.out_dir / "summary.csv", newline="") as f:
        rows = {r["setting"]: r for r in csv.DictReader(f)}
    mean = sum(m["judge_inputs_truncated"] for m in ident) / len(ident)
    assert float(rows["identity"]["judge_inputs_truncated"]) == pytest.approx(mean)
    assert "verifier_tokens_declared_span_after_truncation" in rows["identity"]
    assert "judge_inputs_truncated" in (result.out_dir / "summary.md").read_text()
