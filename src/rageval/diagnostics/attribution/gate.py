"""The citation gate (ALCE's ``compute_autoais``), shared by emitted and grounded scores.

For each sentence with valid citations ``c1..cm`` (de-duplicated, capped at
``max_citations``) and hypothesis = the sentence without markers
(docs/design.md#the-citation-gate); a pooled premise is the citations' groups
joined in citation order, **repeats kept** (two cited units that share a source
id each bring its snippet; only recovered-source verification de-duplicates,
:mod:`.verify`):

* *joint*: does the pooled premise of all citations entail the hypothesis?
  That is the sentence's recall (0/1).  A sentence without valid citations has
  recall 0 and costs no judge call.
* precision: if joint fails, every citation is imprecise; if ``m == 1`` the
  citation is precise iff joint holds; if ``m > 1`` and joint holds, citation
  ``c`` is imprecise only when it alone does *not* entail the hypothesis *and*
  the pooled premises of the others still do.
* default mode: each invalid citation (out of range, ``[0]``) is one more
  imprecise citation in the denominator; ``alce_compat``: a sentence with an
  out-of-range citation has recall 0 and adds nothing to the denominator.
* per question: recall = mean over sentences; precision = precise / citations,
  0 when the answer cites nothing (``no_citation_precision="undefined"``: None);
  an empty answer (no sentences) is undefined for both.

**Abstentions.**  A judge may abstain on a pair (probability NaN, decision
None).  The main scores count an abstention as *not entailed* (as the paper
scored non-binary generations 0).  The ``*_excl_abstain`` scores leave out a
sentence whose joint decision abstained (from recall, and its citations from
precision) and a citation whose own or others' decision abstained (from
precision).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval.diagnostics.attribution.premises import Item, fmt, grounded_items, pool, unit_items

__all__ = ["Job", "run_gate", "score_citations"]


@dataclass(slots=True)  # one per sentence of a batch: no __dict__ each
class Job:
    """One sentence through the gate."""

    groups: list[list[Item] | None]  # per citation: its premise items, None = unresolvable
    hyp: str
    joint: bool = False
    joint_abstained: bool = False
    precise: list[bool] = field(default_factory=list)
    abstained: list[bool] = field(default_factory=list)  # per citation: a decision about it abstained
    abstentions: int = 0  # judge decisions on this sentence that abstained


def _decide(runner, asks: list[tuple[Any, str, str]], threshold: float) -> list[tuple[Any, bool | None]]:
    if not asks:
        return []
    dec = runner.decide([p for _, p, _ in asks], [h for _, _, h in asks], threshold=threshold)
    return list(zip((a for a, _, _ in asks), dec))


def run_gate(jobs: Sequence[Job], runner: Any, threshold: float) -> int:
    """Run the gate for many sentences at once (three batched judge calls); return the abstentions."""
    _joint(jobs, runner, threshold)
    multi = [j for j in jobs if j.joint and len(j.groups) > 1]
    alone_ok = _alone(multi, runner, threshold)
    _without(multi, alone_ok, runner, threshold)
    return sum(j.abstentions for j in jobs)


def _joint(jobs: Sequence[Job], runner: Any, threshold: float) -> None:
    """Phase 1: does the pooled premise of a sentence's citations entail it (its recall); every citation's
    precision starts as that decision for a single citation, False for several."""
    for j, d in _decide(runner, [(j, fmt(pool(j.groups)), j.hyp) for j in jobs if any(j.groups)], threshold):
        j.joint, j.joint_abstained = bool(d), d is None
        j.abstentions += d is None
    for j in jobs:
        m = len(j.groups)
        j.precise = [bool(j.joint) and m == 1] * m
        j.abstained = [j.joint_abstained] * m


def _alone(multi: Sequence[Job], runner: Any, threshold: float) -> dict[tuple[int, int], bool]:
    """Phase 2: does each citation of an entailed multi-citation sentence entail it alone?
    ``{(id(job), citation): entailed}``."""
    alone = _decide(
        runner,
        [((j, c), fmt([g]), j.hyp) for j in multi for c, g in enumerate(j.groups) if g],
        threshold,
    )
    alone_ok: dict[tuple[int, int], bool] = {}
    for (j, c), d in alone:
        alone_ok[(id(j), c)] = bool(d)
        j.abstained[c] = j.abstained[c] or d is None
        j.abstentions += d is None
    return alone_ok


def _without(multi: Sequence[Job], alone_ok: dict[tuple[int, int], bool], runner: Any, threshold: float) -> None:
    """Phase 3: a citation that does not entail alone is precise unless the others without it still entail."""
    rest = []
    for j in multi:
        for c in range(len(j.groups)):
            if alone_ok.get((id(j), c)):
                j.precise[c] = True
            elif not j.groups[c]:
                j.precise[c] = False  # the others are the whole (entailing) pool: no credit
            else:
                others = pool(j.groups[:c] + j.groups[c + 1 :])
                if not others:
                    j.precise[c] = True
                else:
                    rest.append(((j, c), fmt(others), j.hyp))
    for (j, c), d in _decide(runner, rest, threshold):
        j.precise[c] = not d
        j.abstained[c] = j.abstained[c] or d is None
        j.abstentions += d is None


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _question_scores(ans, jobs: list[Job], alce_compat: bool, no_citation_precision: str) -> dict[str, Any]:
    n = len(ans.sentences)
    support = precise = denom = 0
    support_x = precise_x = denom_x = n_x = 0
    for s, j in zip(ans.sentences, jobs):
        support += int(j.joint)
        precise += sum(j.precise)
        invalid = 0 if alce_compat else len(s.invalid)
        denom += len(s.citations) + invalid
        if not j.joint_abstained:
            n_x += 1
            support_x += int(j.joint)
            keep = [not a for a in j.abstained]
            precise_x += sum(p for p, k in zip(j.precise, keep) if k)
            denom_x += sum(keep) + invalid
    if n == 0:
        return {
            "precision": None,
            "recall": None,
            "precision_x": None,
            "recall_x": None,
            "citations": denom,
            "precise": precise,
        }
    no_cite = 0.0 if no_citation_precision == "zero" else None
    prec = _ratio(precise, denom) if denom else no_cite
    if denom == 0:
        prec_x = no_cite if n_x else None
    else:
        prec_x = _ratio(precise_x, denom_x)
    return {
        "precision": prec,
        "recall": support / n,
        "precision_x": prec_x,
        "recall_x": _ratio(support_x, n_x),
        "citations": denom,
        "precise": precise,
    }


def score_citations(
    questions,
    parsed,
    runner,
    rec,
    variant: str,
    *,
    threshold: float,
    alce_compat: bool,
    no_citation_precision: str,
    sentences: bool = True,
) -> dict[int, dict[str, Any]]:
    """Per question: precision, recall (and ``_x`` = abstentions left out), per-sentence details (``sentences``:
    else an empty list)."""
    per_q: dict[int, list[Job]] = {}
    statuses: dict[int, list[list[str]]] = {}
    for q, ans in zip(questions, parsed):
        jobs, sts = [], []
        for s in ans.sentences:
            groups: list[list[Item] | None] = []
            st = []
            for c in s.citations:
                if variant == "emitted":
                    groups.append(unit_items(q, c - 1))
                    st.append("unit")
                else:
                    items, status = grounded_items(q, c - 1, rec)
                    groups.append(items)
                    st.append(status)
            jobs.append(Job(groups=groups, hyp=s.text))
            sts.append(st)
        per_q[q.index], statuses[q.index] = jobs, (sts if sentences else [])
    run_gate([j for jobs in per_q.values() for j in jobs], runner, threshold)
    out: dict[int, dict[str, Any]] = {}
    for q, ans in zip(questions, parsed):
        jobs = per_q[q.index]
        r = _question_scores(ans, jobs, alce_compat, no_citation_precision)
        r["abstentions"] = sum(j.abstentions for j in jobs)
        r["sentences"] = (
            [
                {
                    "supported": bool(j.joint),
                    "precise": list(j.precise),
                    "evidence": st,
                    **({"abstained": True} if j.joint_abstained or any(j.abstained) else {}),
                }
                for j, st in zip(jobs, statuses[q.index])
            ]
            if sentences
            else []
        )
        out[q.index] = r
    return out
