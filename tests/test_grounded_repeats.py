"""De-duplication where the paper puts it (docs/design.md#premises, #verification-modes).

Grounded citation scoring pools the cited units' source snippets as they are, repeats kept (a snippet
two cited units share is read twice); recovered-source (and declared-span) verification removes
repeated source ids before pooling.  So ``unsupported_recovered_source`` need not equal
1 - ``grounded_recall``: with a judge that truncates its premise the longer grounded premise can lose
the evidence the de-duplicated one keeps.  Without truncation (a judge that reads its premise as a set of
words) the two coincide.

Every expected number is computed by hand in the comments; the judge is a stub that reads only the
first ``limit`` words of a premise.
"""

from __future__ import annotations

import re

import pytest

from rageval.diagnostics.attribution import attribution_scores_batch


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


class TruncatingJudge:
    """Share of the hypothesis's words found in the first ``limit`` words of the premise (a model judge
    truncates the premise first); ``token_counts`` reports the cut as a model judge does."""

    def __init__(self, limit: int):
        self.limit = limit
        self.id = f"truncating-words-test:{limit}"
        self.asked: list[tuple[str, str]] = []

    def predict(self, premises, hypotheses):
        out = []
        for p, h in zip(premises, hypotheses):
            self.asked.append((p, h))
            read, hyp = set(_words(p)[: self.limit]), set(_words(h))
            out.append(len(hyp & read) / len(hyp) if hyp else 0.0)
        return out

    def token_counts(self, premise: str, hypothesis: str) -> tuple[int, int]:
        n_p, n_h = len(_words(premise)), len(_words(hypothesis))
        return n_p + n_h, min(n_p, self.limit) + n_h


# two snippets of one document (no title); unit 2 shares snippet a with unit 1
SOURCES = [
    {"id": "a", "text": "Alpha one.", "doc_id": "d"},
    {"id": "b", "text": "Beta two.", "doc_id": "d"},
]
DECLARED = [
    {"text": "Alpha one.", "source_ids": ["a"]},
    {"text": "Alpha one. Beta two.", "source_ids": ["a", "b"]},
]
# the same units without provenance: recovery finds the same snippets (below)
UNDECLARED = [{"text": u["text"], "source_ids": None} for u in DECLARED]
ANSWER = "Beta two [1][2]. Alpha one [1]."

# claim 1 "Beta two." cites both units:
#   gate (emitted and grounded, repeats kept):  "Alpha one.\nAlpha one. Beta two."   (6 words)
#   verification (ids de-duplicated):           "Alpha one.\nBeta two."              (4 words)
# claim 2 "Alpha one." cites unit 1 alone: premise "Alpha one." everywhere.
GATE_JOINT = "Alpha one.\nAlpha one. Beta two."
DEDUPED = "Alpha one.\nBeta two."


@pytest.mark.parametrize("units", [DECLARED, UNDECLARED], ids=["declared", "recovered"])
def test_a_repeated_source_id_makes_grounded_recall_differ_from_recovered_source_under_truncation(units):
    judge = TruncatingJudge(limit=4)
    row = attribution_scores_batch([ANSWER], [units], [SOURCES], judge=judge)[0]
    if units is UNDECLARED:
        # recovery: unit 1 "Alpha one." has candidate a only (p = 1); unit 2 "Alpha one. Beta two." has
        # candidates a and b, each p = 2/4 = 0.5 >= 0.5: both recovered, as unit 2 declares
        assert row["citations_recovered"] == 3 and row["citations_declared"] == 0
    # claim 1: the judge reads "Alpha one. Alpha one." of the gate's joint premise: p = 0/2, not supported,
    # both citations imprecise; claim 2: supported, its one citation precise
    assert (GATE_JOINT, "Beta two.") in judge.asked
    assert row["grounded_recall"] == 0.5  # (0 + 1) / 2
    assert row["grounded_precision"] == pytest.approx(1 / 3)  # 1 precise of 3 citations
    # verification reads the whole de-duplicated premise (4 words): both claims supported
    assert (DEDUPED, "Beta two.") in judge.asked
    assert row["unsupported_recovered_source"] == 0.0
    assert row["unsupported_recovered_source"] != 1 - row["grounded_recall"]
    # summary-checked pools what the reader saw, as the emitted gate does: they still coincide
    assert row["emitted_recall"] == 0.5
    assert row["unsupported_summary_checked"] == 1 - row["emitted_recall"] == 0.5
    if units is DECLARED:
        assert row["unsupported_declared_span"] == 0.0  # the same de-duplicated premise
        # identity-style units: the grounded joint premise is byte-identical to the emitted one, so no gap
        assert row["emitted_minus_grounded_recall"] == 0.0
    else:
        assert row["unsupported_declared_span"] == 1.0  # nothing declared: structural rejections
    # the judge inputs verification asked: the 6-word summary-checked premise was cut (4 + 2 of 6 + 2)
    assert row["judge_inputs_truncated"] == 1


@pytest.mark.parametrize("units", [DECLARED, UNDECLARED], ids=["declared", "recovered"])
def test_without_truncation_grounded_recall_and_recovered_source_coincide(units):
    # a judge that reads all of a premise as a set of words cannot tell a repeated snippet from one read once
    row = attribution_scores_batch([ANSWER], [units], [SOURCES], judge=TruncatingJudge(limit=100))[0]
    # claim 1: joint supported; unit 1 alone "Alpha one." p = 0 -> not alone, and the others (unit 2) still
    # entail -> imprecise; unit 2 alone p = 1 -> precise.  Claim 2: supported, precise.
    assert row["grounded_recall"] == 1.0
    assert row["grounded_precision"] == pytest.approx(2 / 3)
    assert row["unsupported_recovered_source"] == 0.0 == 1 - row["grounded_recall"]
    assert row["judge_inputs_truncated"] == 0


def test_a_claim_citing_units_without_shared_ids_has_the_same_premise_in_the_gate_and_verification():
    units = [{"text": "Alpha one.", "source_ids": ["a"]}, {"text": "Beta two.", "source_ids": ["b"]}]
    judge = TruncatingJudge(limit=4)
    row = attribution_scores_batch(["Beta two [1][2]."], [units], [SOURCES], judge=judge)[0]
    # "Alpha one.\nBeta two." everywhere: no repeat, so no difference whatever the judge
    assert {p for p, _ in judge.asked if p.count("\n")} == {DEDUPED}
    assert row["unsupported_recovered_source"] == 1 - row["grounded_recall"] == 0.0
