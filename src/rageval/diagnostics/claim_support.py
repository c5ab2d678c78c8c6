"""Claim support without citations: is each claim of an answer supported by what the reader saw, and by the
sources behind it?  (docs/design.md#claim-support)

::

    claim_support(predictions, units, sources, claims=None, *, judge=DEFAULT_JUDGE, threshold=DEFAULT_THRESHOLD,
                  max_citations=DEFAULT_MAX_CITATIONS, alce_compat=False, claim_premise="single",
                  grounding="single", recovery_threshold=None, k=DEFAULT_RECOVERY_K, multi_snippet=False, candidates="bm25",
                  cache_dir=None)

(the ``DEFAULT_*`` option defaults: :mod:`rageval.scoring`)

**Claims**: ``claims[q]`` when given (a file's own claims, e.g. RAGChecker's ``response_claims``), else the
answer's sentences as the citation scores parse them, markers removed (``claims_given`` says which).  No
citation is read: every unit of the question is evidence for every claim.

* **emitted** support: a claim is supported when the judge finds it entailed by at least one unit the reader
  saw, each unit its own premise (max over single units, as RAGChecker checks each retrieved chunk);
  ``claim_premise="joint"``: one premise pooling every unit (meant for the windowed judge);
* **grounded** support: the same against each unit's source snippets — the declared ones, else those
  re-attribution recovers (the protocol of ``grounded_*``) — written as grounded premises are; a claim
  whose units have no source is unsupported without a judge call (a *structural rejection*, counted).
  ``grounding="union"`` (off by default): a unit without declared provenance has as its one grounded premise
  the union of its top-``k`` recovery candidates (ranked as re-attribution ranks them, positive scores only),
  in source order, whether or not any of them passes the judge alone — for a unit, such as a refiner's text,
  whose claims span several sources, which no single recovered snippet supports; its grounded support then
  asks whether the retrieved documents it was drawn from, together, support the claim.

A claim no premise supports is *abstained* when the judge abstained on at least one of its premises: it
counts as unsupported, and ``*_excl_abstain`` leaves it out.  Per question: the supported-claim rates
``claim_support_emitted`` and ``claim_support_grounded`` (higher is better), ``claim_support_gap`` (emitted −
grounded), the claims, structural rejections, abstained claims (both modes), the pairs the judge truncated
and the verifier tokens of each mode (before and after truncation, per checked pair, as ``verifier_tokens_*``
count them).  The aggregate under ``claim_support`` is the grounded rate.  A question without a claim is
undefined (None, counted), never 0.

A premise of one unit is byte-identical to the citation gate's premise for a sentence citing that unit alone
(and its grounded one to the gate's grounded premise), so under the run's judge runner those pairs are
judged once for both (docs/design.md#claim-support).

>>> units = [[{"text": "Paris is the capital of France.", "source_ids": None},
...           {"text": "Lyon is big.", "source_ids": ["d1"]}]]
>>> sources = [[{"id": "d1", "text": "Lyon is a big city."}, {"id": "d2", "text": "Berlin is in Germany."}]]
>>> r = claim_support(["Paris is the capital of France. Lyon is big."], units, sources)
>>> r["claim_support_emitted"], r["claim_support_grounded"], r["claim_support_gap"]
(1.0, 0.5, 0.5)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval.diagnostics._attribution_inputs import PreparedQuestion, prepare_inputs
from rageval.diagnostics._common import check_list, check_same_length, check_str_list, summarize
from rageval.diagnostics.attribution.engine import resolve_options
from rageval.diagnostics.attribution.fixed import fixed_recovery
from rageval.diagnostics.attribution.premises import declared_items, fmt, grounded_items, pool, source_items, unit_items
from rageval.diagnostics.attribution.recovery import candidate_pools, recover_wanted
from rageval.scoring import (
    DEFAULT_CANDIDATES,
    DEFAULT_CLAIM_PREMISE,
    DEFAULT_GROUNDING,
    DEFAULT_JUDGE,
    DEFAULT_MAX_CITATIONS,
    DEFAULT_MULTI_SNIPPET,
    DEFAULT_RECOVERY_K,
    DEFAULT_THRESHOLD,
)

__all__ = ["MODES", "check_claims", "claim_support", "claims_of", "score_claim_support"]

MODES = ("emitted", "grounded")
_RATES = tuple(f"claim_support_{m}" for m in MODES)
#: the per-question counts (each also summed over the questions as ``total_<key>``)
_COUNTS = (
    "claim_support_claims",
    "claim_support_claims_given",
    "claim_support_structural_rejections",
    "claim_support_abstentions",
    "claim_support_inputs_truncated",
    *(f"claim_support_verifier_tokens_{m}" for m in MODES),
    *(f"claim_support_verifier_tokens_{m}_after_truncation" for m in MODES),
)
_KEYS = (*_RATES, *(f"{r}_excl_abstain" for r in _RATES), "claim_support_gap", *_COUNTS)


@dataclass
class _Claim:
    """One claim in one mode: its premises (none: structurally unsupported) and the judge's decisions."""

    text: str
    premises: list[str]
    decisions: list[bool | None] = field(default_factory=list)

    @property
    def status(self) -> str:
        if any(self.decisions):
            return "supported"
        if not self.premises:
            return "structural_rejection"
        return "abstained" if any(d is None for d in self.decisions) else "unsupported"


def claims_of(q: PreparedQuestion, given: Sequence[str] | None, opts: Any) -> list[str]:
    """A question's claims: the given ones, else its answer's sentences (markers removed, as the gate reads them)."""
    if given is not None:
        return list(given)
    return [s.text for s in q.parse(opts).sentences]


def _grounded_group(q: PreparedQuestion, k: int, rec, pools: dict[tuple[int, int], list[str]] | None):
    """Unit ``k``'s grounded premise items: declared snippets, else (``pools``: the union rule) its candidates'
    union, else (the single rule) the snippets re-attribution recovered; None when no source stands behind it."""
    if pools is None:
        return grounded_items(q, k, rec)[0]
    declared = declared_items(q, k)
    if declared is not None:
        return declared
    ids = pools.get((q.index, k))
    return source_items(q, ids) if ids else None


def _premises(q: PreparedQuestion, rec, mode: str, joint: bool, pools=None) -> list[str]:
    """The premises a claim of question ``q`` is checked against in ``mode``: one per unit with evidence, or
    (``joint``) one pooling them all (grounded: source ids once, as verification pools them)."""
    if mode == "emitted":
        groups: list[Any] = [unit_items(q, k) for k in range(len(q.units))]
    else:
        groups = [_grounded_group(q, k, rec, pools) for k in range(len(q.units))]
    if joint:
        pooled = pool(groups, dedupe=mode == "grounded")
        return [fmt(pooled)] if pooled else []
    return [fmt([g]) for g in groups if g]


def check_claims(claims: Any, n: int) -> list[list[str] | None]:
    """Per question its claims (checked strings), or None where the answer's sentences are the claims."""
    if claims is None:
        return [None] * n
    claims = check_list(claims, "claims")
    check_same_length(predictions=range(n), claims=claims)
    return [None if c is None else check_str_list(c, "claims", q) for q, c in enumerate(claims)]


#: the attribution options claim support takes (its pure function's keywords besides the judge and the cache)
_OPTIONS = (
    "threshold",
    "max_citations",
    "alce_compat",
    "claim_premise",
    "grounding",
    "recovery_threshold",
    "k",
    "multi_snippet",
    "candidates",
)


def _recoveries(questions, wanted, runner, opts, recovered):
    """``(recoveries, pools)`` of the units without provenance: fixed mappings when given (no recovery call),
    the candidates' union (ranked, not judged one by one) or re-attribution."""
    if recovered is not None and opts.grounding != "union":
        return fixed_recovery(questions, wanted, recovered), None
    if opts.grounding == "union":
        return {}, candidate_pools(questions, wanted, k=opts.k, candidates=opts.candidates)
    return recover_wanted(questions, wanted, runner, opts), None


def claim_support(
    predictions,
    units,
    sources,
    claims=None,
    *,
    judge: Any = DEFAULT_JUDGE,
    threshold: float = DEFAULT_THRESHOLD,
    max_citations: int | None = DEFAULT_MAX_CITATIONS,
    alce_compat: bool = False,
    claim_premise: str = DEFAULT_CLAIM_PREMISE,
    grounding: str = DEFAULT_GROUNDING,
    recovery_threshold: float | None = None,
    k: int = DEFAULT_RECOVERY_K,
    multi_snippet: bool = DEFAULT_MULTI_SNIPPET,
    candidates: Any = DEFAULT_CANDIDATES,
    cache_dir: Any = None,
) -> dict[str, Any]:
    """Supported-claim rates against the units the reader saw and against their sources (see the module doc).

    ``claims``: per question its claims (a list of strings), or None to take the answer's sentences; leave it
    out for every question's sentences.  ``max_citations`` and ``alce_compat`` only shape how an answer is
    split into sentences (as for the citation scores); the re-attribution options are ``grounded_*``'s.
    ``grounding``: ``"single"`` (the paper's rule) or ``"union"`` (a unit without provenance grounded in its
    top-``k`` candidates together; see the module doc).
    """
    return _claim_support(
        predictions,
        units,
        sources,
        claims,
        judge=judge,
        cache_dir=cache_dir,
        recovered=None,
        options=dict(
            threshold=threshold,
            max_citations=max_citations,
            alce_compat=alce_compat,
            claim_premise=claim_premise,
            grounding=grounding,
            recovery_threshold=recovery_threshold,
            k=k,
            multi_snippet=multi_snippet,
            candidates=candidates,
        ),
    )


def _claim_support(predictions, units, sources, claims, *, judge, cache_dir, recovered, options) -> dict[str, Any]:
    """:func:`claim_support` with ``options`` as keywords, and ``recovered``: fixed mappings (per question
    ``{unit index: source ids}``, :func:`rageval.diagnostics.attribution.fixed.fixed_recovery`) kept instead of
    recovering the units again (the single rule only; the scorer passes a saved record's)."""
    from rageval.judges import get_judge

    opts = resolve_options(None, dict(options))
    runner = get_judge(judge, cache_dir=cache_dir)
    questions = prepare_inputs(predictions, units, sources)
    given = check_claims(claims, len(questions))
    texts = [claims_of(q, g, opts) for q, g in zip(questions, given)]
    wanted = {q.index: [k for k, u in enumerate(q.units) if u.source_ids is None] for q in questions}
    rec, pools = _recoveries(questions, wanted, runner, opts, recovered)
    joint = opts.claim_premise == "joint"
    # per mode, per question: its claims with their premises, every pair of a mode decided in one batched call
    checked: dict[str, list[list[_Claim]]] = {}
    for mode in MODES:
        checked[mode] = []
        for q, cs in zip(questions, texts):
            # the same premises for each claim of a question: written once (one string object each, its hash taken
            # once by the judge's memo and the token counts); the claims share the list and never change it
            premises = _premises(q, rec, mode, joint, pools) if cs else []
            checked[mode].append([_Claim(c, premises) for c in cs])
        asks = [(cl, p) for cls in checked[mode] for cl in cls for p in cl.premises]
        decided = (
            runner.decide([p for _, p in asks], [cl.text for cl, _ in asks], threshold=opts.threshold) if asks else []
        )
        for (cl, _), d in zip(asks, decided):
            cl.decisions.append(d)
    per_question = [
        _question({m: checked[m][qi] for m in MODES}, given[qi] is not None, runner) for qi in range(len(questions))
    ]
    out = summarize(per_question, "claim_support", extra=_KEYS[: -len(_COUNTS)])
    for key in _COUNTS:
        out[f"total_{key}"] = sum(q[key] for q in per_question)
    return out


def _question(checked: dict[str, list[_Claim]], given: bool, runner: Any) -> dict[str, Any]:
    """The values of one question from its checked claims in each mode."""
    n = len(checked["emitted"])
    r: dict[str, Any] = dict.fromkeys(("claim_support", *_KEYS))
    r.update(claim_support_claims=n, claim_support_claims_given=int(given))
    structural = abstained = 0
    counts: dict[tuple[str, str], tuple[int, int]] = {}  # each distinct pair's verifier tokens, asked once
    for mode in MODES:
        claims = checked[mode]
        statuses = [c.status for c in claims]
        structural += statuses.count("structural_rejection")
        abstained += statuses.count("abstained")
        before = after = 0
        for c in claims:
            for p in c.premises:
                pair = (p, c.text)
                got = counts.get(pair)
                if got is None:
                    got = counts[pair] = runner.token_counts(p, c.text)
                before, after = before + got[0], after + got[1]
        r[f"claim_support_verifier_tokens_{mode}"] = before
        r[f"claim_support_verifier_tokens_{mode}_after_truncation"] = after
        if n:
            ok = statuses.count("supported")
            kept = n - statuses.count("abstained")
            r[f"claim_support_{mode}"] = ok / n
            r[f"claim_support_{mode}_excl_abstain"] = ok / kept if kept else None
    r["claim_support_structural_rejections"] = structural
    r["claim_support_abstentions"] = abstained
    r["claim_support_inputs_truncated"] = sum(a < b for b, a in counts.values())
    if n:
        r["claim_support_gap"] = r["claim_support_emitted"] - r["claim_support_grounded"]
    r["claim_support"] = r["claim_support_grounded"]  # the aggregate under the name: the sources' question
    return r


def score_claim_support(inputs, options, judge) -> dict[str, Any]:
    """Claim support of every scored record, through the run's judge and attribution options; the claims a
    record's file supplies (``answer_claims``) where it has them, else its answer's sentences."""
    a = options.attribution
    return _claim_support(
        [x.answer for x in inputs],
        [list(x.units) for x in inputs],  # Unit and SourceSnippet objects: checked when made, as the engine takes them
        [list(x.sources) for x in inputs],
        [None if x.answer_claims is None else list(x.answer_claims) for x in inputs],
        judge=judge,
        cache_dir=None,
        options={k: getattr(a, k) for k in _OPTIONS},
        recovered=[x.recovered for x in inputs] if inputs and all(x.recovered is not None for x in inputs) else None,
    )
