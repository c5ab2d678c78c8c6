"""Verification in three modes: how many answer claims are unsupported?

Claims are the answer's sentences.  Per question and mode, unsupported rate =
unsupported claims / claims (docs/design.md#verification-modes):

* **summary_checked**: the pooled texts of the units a claim cites must entail it
  (the emitted joint premise of the citation gate);
* **declared_span**: the pooled declared source snippets of its cited units (ids
  de-duplicated, each unit's snippets written as in grounded premises); a claim
  whose cited units declare nothing is unsupported without a judge call (a
  *structural rejection*);
* **recovered_source**: a cited unit without declared provenance contributes
  its recovered snippets (the grounded groups of the citation gate), source ids
  de-duplicated across the claim's citations (a later citation keeps only its
  new snippets); a claim left with no evidence is unsupported without a call.
  The gate's grounded joint premise keeps repeats, so where two cited units
  share a source id the two premises differ and ``unsupported_recovered_source``
  need not equal 1 - ``grounded_recall`` (as in the paper).

A claim without valid citations is unsupported in every mode, with no call.  A
judge abstention counts as unsupported; ``unsupported_<mode>_excl_abstain``
leaves the abstained claims out.  ``verifier_tokens_<mode>`` counts the
verifier input of the pairs each mode checks, per checked claim, *before* the
judge's truncation (as a paper's cost table counts it);
``verifier_tokens_<mode>_after_truncation`` counts what the judge read
(docs/design.md#decision-verifier-tokens).
"""

from __future__ import annotations

from typing import Any

from rageval.diagnostics.attribution.premises import declared_items, fmt, grounded_items, pool, unit_items

__all__ = ["MODES", "verify_claims"]

MODES = ("summary_checked", "declared_span", "recovered_source")


def _plan_question(q, ans, rec, asks: dict[str, list]) -> dict[str, Any]:
    r: dict[str, Any] = {
        "claims": len(ans.sentences),
        "structural_rejections_declared_span": 0,
        "unrecovered_claims": 0,
        "claims_without_citations": 0,
        "claim_status": [],
    }
    for si, s in enumerate(ans.sentences):
        if not s.citations:
            r["claims_without_citations"] += 1
            r["structural_rejections_declared_span"] += 1
            r["unrecovered_claims"] += 1
            r["claim_status"].append({m: "no_citation" for m in MODES})
            continue
        status: dict[str, str] = {}
        asks["summary_checked"].append((q.index, si, fmt(pool([unit_items(q, c - 1) for c in s.citations])), s.text))
        declared = pool([declared_items(q, c - 1) for c in s.citations], dedupe=True)
        recovered = pool([grounded_items(q, c - 1, rec)[0] for c in s.citations], dedupe=True)
        if declared:
            asks["declared_span"].append((q.index, si, fmt(declared), s.text))
        else:
            r["structural_rejections_declared_span"] += 1
            status["declared_span"] = "structural_rejection"
        if recovered:
            asks["recovered_source"].append((q.index, si, fmt(recovered), s.text))
        else:
            r["unrecovered_claims"] += 1
            status["recovered_source"] = "no_evidence"
        r["claim_status"].append(status)
    return r


def _rates(r: dict[str, Any]) -> None:
    for m in MODES:
        r.setdefault(f"verifier_tokens_{m}", 0)
        r.setdefault(f"verifier_tokens_{m}_after_truncation", 0)
        if r["claims"] == 0:
            r[f"unsupported_{m}"] = r[f"unsupported_{m}_excl_abstain"] = None
            continue
        for st in r["claim_status"]:
            st.setdefault(m, "unsupported")
        unsup = sum(1 for st in r["claim_status"] if st[m] != "supported")
        abst = sum(1 for st in r["claim_status"] if st[m] == "abstained")
        r[f"unsupported_{m}"] = unsup / r["claims"]
        kept = r["claims"] - abst
        r[f"unsupported_{m}_excl_abstain"] = (unsup - abst) / kept if kept else None


def verify_claims(questions, parsed, runner: Any, rec, *, threshold: float) -> dict[int, dict[str, Any]]:
    """Per question: the unsupported rates of the three modes, their token counts, per-claim status and the
    distinct (premise, hypothesis) pairs the modes asked (``asked``)."""
    asks: dict[str, list] = {m: [] for m in MODES}  # (qi, si, premise, hyp)
    out = {q.index: _plan_question(q, ans, rec, asks) for q, ans in zip(questions, parsed)}
    for m in MODES:
        rows = asks[m]
        dec = runner.decide([p for _, _, p, _ in rows], [h for _, _, _, h in rows], threshold=threshold) if rows else []
        for (qi, si, p, h), d in zip(rows, dec):
            r = out[qi]
            r["claim_status"][si][m] = "abstained" if d is None else ("supported" if d else "unsupported")
            r["abstentions"] = r.get("abstentions", 0) + (d is None)
            before, after = runner.token_counts(p, h)
            r[f"verifier_tokens_{m}"] = r.get(f"verifier_tokens_{m}", 0) + before
            key = f"verifier_tokens_{m}_after_truncation"
            r[key] = r.get(key, 0) + after
            r.setdefault("asked", {})[(p, h)] = None
    for r in out.values():
        r.setdefault("abstentions", 0)
        r.setdefault("asked", {})
        _rates(r)
    return out
