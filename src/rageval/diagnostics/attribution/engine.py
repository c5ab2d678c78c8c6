"""The attribution engine: every attribution value of many questions, one batched judge call per phase.

:func:`attribution_scores_batch` prepares the inputs, parses the answers,
re-attributes the units that need it (:mod:`.recovery`), runs the citation gate
for emitted and grounded premises (:mod:`.gate`) and the three verification
modes (:mod:`.verify`), and flattens the results per question.  The public
per-diagnostic functions in :mod:`rageval.diagnostics.attribution` and the
suite's scoring both call it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rageval.diagnostics._attribution_inputs import PreparedQuestion, prepare_inputs
from rageval.diagnostics.attribution.fixed import fixed_recovery
from rageval.diagnostics.attribution.gate import score_citations
from rageval.diagnostics.attribution.options import AttributionOptions
from rageval.diagnostics.attribution.premises import cited_units
from rageval.diagnostics.attribution.recovery import Recovery, recover_wanted
from rageval.diagnostics.attribution.verify import MODES, verify_claims
from rageval.judges import get_judge
from rageval.registry import did_you_mean
from rageval.scoring import DEFAULT_JUDGE

__all__ = [
    "PARTS",
    "DEFAULT_SWEEP",
    "attribution_scores_batch",
    "attribution_scores",
    "resolve_options",
]

PARTS = ("emitted", "grounded", "re_attributability", "verification")
DEFAULT_SWEEP = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)

_VERIFICATION_KEYS = (
    tuple(f"unsupported_{m}" for m in MODES)
    + tuple(f"unsupported_{m}_excl_abstain" for m in MODES)
    + tuple(f"verifier_tokens_{m}" for m in MODES)
    + tuple(f"verifier_tokens_{m}_after_truncation" for m in MODES)
    + ("claims", "structural_rejections_declared_span", "unrecovered_claims", "claims_without_citations")
)


def resolve_options(options: AttributionOptions | None, overrides: dict[str, Any]) -> AttributionOptions:
    """``options`` updated with keyword ``overrides`` (validated; an unknown name is an error)."""
    unknown = sorted(set(overrides) - set(AttributionOptions.model_fields))
    if unknown:
        raise TypeError(
            f"unknown attribution option {unknown[0]!r}."
            f"{did_you_mean(unknown[0], list(AttributionOptions.model_fields))}"
        )
    if options is None:
        return AttributionOptions.build(**overrides)
    return AttributionOptions.build(**{**options.model_dump(), **overrides}) if overrides else options


def wanted_units(questions: Sequence[PreparedQuestion], parsed, parts) -> dict[int, list[int]]:
    wanted: dict[int, list[int]] = {}
    for q, ans in zip(questions, parsed):
        ks: set[int] = set()
        if "re_attributability" in parts:
            ks.update(range(len(q.units)))
        elif "grounded" in parts or "verification" in parts:
            ks.update(cited_units(ans))
        wanted[q.index] = sorted(k for k in ks if q.units[k].source_ids is None)
    return wanted


def _emitted(r, det, e) -> None:
    r["emitted_precision"], r["emitted_recall"] = e["precision"], e["recall"]
    r["emitted_precision_excl_abstain"], r["emitted_recall_excl_abstain"] = e["precision_x"], e["recall_x"]
    r["n_citations"] = e["citations"]
    if det is None:  # no details asked for
        return
    for s, d in zip(det["sentences"], e["sentences"]):
        s["emitted"] = {"supported": d["supported"], "precise": d["precise"]}
        if d.get("abstained"):
            s["emitted"]["abstained"] = True


def _grounded(r, det, g) -> None:
    r["grounded_precision"], r["grounded_recall"] = g["precision"], g["recall"]
    r["grounded_precision_excl_abstain"], r["grounded_recall_excl_abstain"] = g["precision_x"], g["recall_x"]
    r["n_citations"] = g["citations"]
    counts = {"declared": 0, "recovered": 0, "missing": 0}
    for d in g["sentences"]:
        for st in d["evidence"]:
            counts[st] += 1
    if det is not None:  # details asked for
        for s, d in zip(det["sentences"], g["sentences"]):
            s["grounded"] = {"supported": d["supported"], "precise": d["precise"]}
            if d.get("abstained"):
                s["grounded"]["abstained"] = True
            s["evidence"] = d["evidence"]
    r.update({f"citations_{k}": v for k, v in counts.items()})


def _re_attributability(r, q: PreparedQuestion, q_rec: dict[int, Recovery]) -> None:
    no_prov = [k for k, u in enumerate(q.units) if u.source_ids is None]
    r["units_without_provenance"] = len(no_prov)
    r["reattribution_candidates_scored"] = sum(q_rec[k].pairs_scored for k in no_prov if k in q_rec)
    r["reattribution_tokens"] = sum(q_rec[k].tokens_scored for k in no_prov if k in q_rec)
    n_ok = sum(1 for k in no_prov if q_rec.get(k) is not None and q_rec[k].recovered)
    n_abst = sum(1 for k in no_prov if q_rec.get(k) is not None and q_rec[k].abstained)
    r["re_attributable_units"] = n_ok
    r["re_attributability"] = n_ok / len(no_prov) if no_prov else None
    kept = len(no_prov) - n_abst
    r["re_attributability_excl_abstain"] = n_ok / kept if kept else None


def _judge_inputs(r: dict[str, Any], pairs: dict[tuple[str, str], None], runner: Any) -> None:
    """``judge_inputs``: the distinct pairs verification asked the judge (its three modes and the recovery of
    the cited units without provenance), ``judge_inputs_truncated``: how many of them the judge truncated
    (its token count after truncation is below the one before), and ``judge_inputs_windowed``: how many a
    windowed judge read in two or more windows (None when the judge does not window: :mod:`rageval.judges.windowed`)."""
    truncated = 0
    for p, h in pairs:
        before, after = runner.token_counts(p, h)
        truncated += after < before
    r["judge_inputs"] = len(pairs)
    r["judge_inputs_truncated"] = truncated
    windows = getattr(getattr(runner, "judge", None), "window_count", None)
    r["judge_inputs_windowed"] = sum(windows(p, h) > 1 for p, h in pairs) if callable(windows) else None


def recoveries_by_question(rec: dict[tuple[int, int], Recovery]) -> dict[int, dict[int, Recovery]]:
    """``{question index: {unit index: recovery}}`` of the engine's ``{(question, unit): recovery}``, in one pass
    (each question's units in the order they were recovered)."""
    out: dict[int, dict[int, Recovery]] = {}
    for (qi, k), v in rec.items():
        out.setdefault(qi, {})[k] = v
    return out


def question_row(
    q: PreparedQuestion, ans, parts, q_rec: dict[int, Recovery], emitted, grounded, verif, details: bool, runner
) -> dict[str, Any]:
    """The flat values (and details) of one question from the engine's per-part results (``q_rec``: this
    question's recoveries, :func:`recoveries_by_question`)."""
    r: dict[str, Any] = {}
    # the details (per sentence, per unit) only when they are returned
    det: dict[str, Any] | None = (
        {"sentences": [s.to_dict() for s in ans.sentences], "n_units": len(q.units)} if details else None
    )
    abstentions = sum(v.abstentions for v in q_rec.values())
    if "emitted" in parts:
        _emitted(r, det, emitted[q.index])
        abstentions += emitted[q.index]["abstentions"]
    if "grounded" in parts:
        _grounded(r, det, grounded[q.index])
        abstentions += grounded[q.index]["abstentions"]
    if "emitted" in parts and "grounded" in parts:
        _gaps(r)
    if "re_attributability" in parts:
        _re_attributability(r, q, q_rec)
    # the cost of checking this answer: re-attribution of its cited units without provenance only, so the
    # count does not depend on whether re-attributability (every unit: ``reattribution_*``) ran too
    cited = [q_rec[k] for k in cited_units(ans) if k in q_rec]
    r["recovery_candidates_scored"] = sum(v.pairs_scored for v in cited)
    r["recovery_tokens"] = sum(v.tokens_scored for v in cited)
    if det is not None:
        det["recovery"] = {str(k + 1): v.to_dict() for k, v in sorted(q_rec.items())}
    if "verification" in parts:
        abstentions += _verification(r, det, verif[q.index], cited, runner)
    r["judge_abstentions"] = abstentions
    if det is not None:
        r["details"] = det
    return r


def _gaps(r: dict[str, Any]) -> None:
    """``emitted_minus_grounded_{precision,recall}``: None where either side is undefined."""
    for m in ("precision", "recall"):
        e_v, g_v = r[f"emitted_{m}"], r[f"grounded_{m}"]
        r[f"emitted_minus_grounded_{m}"] = None if e_v is None or g_v is None else e_v - g_v


def _verification(
    r: dict[str, Any], det: dict[str, Any] | None, v: dict[str, Any], cited: list[Recovery], runner
) -> int:
    """The verification values and each sentence's claim status; the judge inputs verification asked (its own and
    the recovery of the cited units); return its abstentions."""
    r.update({key: v[key] for key in _VERIFICATION_KEYS})
    pairs = dict(v["asked"])
    for rr in cited:
        pairs.update(dict.fromkeys(rr.pairs))
    _judge_inputs(r, pairs, runner)
    if det is not None:
        for s, st in zip(det["sentences"], v["claim_status"]):
            s["verification"] = st
    return v["abstentions"]


def attribution_scores_batch(
    predictions,
    units,
    sources,
    *,
    judge: Any = DEFAULT_JUDGE,
    options: AttributionOptions | None = None,
    parts: Sequence[str] = PARTS,
    cache_dir: Any = None,
    details: bool = True,
    recovered: Sequence[Any] | None = None,
    list_questions: Sequence[str | None] | None = None,
    **option_values: Any,
) -> list[dict[str, Any]]:
    """Every attribution value of every question, sharing one judge runner (one batched call per phase).

    Options come as an :class:`AttributionOptions` (``options=``) and/or as keywords
    (``threshold=``, ``recovery_threshold=``, ``k=``, ``multi_snippet=``,
    ``candidates=``, ``max_citations=``, ``alce_compat=``, ``no_citation_precision=``);
    an unknown keyword is an error.

    ``recovered`` (fixed mappings, :mod:`.fixed`): per question ``{unit index (0-based): recovered
    source ids}`` used instead of re-attribution (no recovery call); a unit without an entry is not
    recovered.  ``list_questions``: per question, its text when it is a list question (QAMPARI: in ALCE mode
    its claims are ALCE's comma-split sentences, each prefixed with the question), else None.

    Returns one dict per question with the flat values ``emitted_precision``,
    ``emitted_recall``, ``grounded_precision``, ``grounded_recall`` (each also
    ``*_excl_abstain``), ``emitted_minus_grounded_precision``,
    ``emitted_minus_grounded_recall``, ``re_attributability``,
    ``unsupported_<mode>`` (and ``_excl_abstain``), ``verifier_tokens_<mode>``,
    ``recovery_candidates_scored``, ``recovery_tokens``, ``judge_abstentions``,
    evidence status counts, and (``details=True``) a ``details`` dict: per
    sentence its citations, support, precision flags and per-citation evidence
    status, per unit its re-attribution.  Undefined values are None.
    """
    bad = [p for p in parts if p not in PARTS]
    if bad:
        raise ValueError(f"unknown parts {bad}; choose from {PARTS}")
    opts = resolve_options(options, option_values)
    runner = get_judge(judge, cache_dir=cache_dir)
    return _scores(predictions, units, sources, runner, opts, parts, details, recovered, list_questions)


def _scores(predictions, units, sources, runner, opts, parts, details, recovered, list_questions):
    questions = prepare_inputs(predictions, units, sources, list_questions)
    parsed = [q.parse(opts) for q in questions]
    wanted = wanted_units(questions, parsed, parts)
    rec = (
        fixed_recovery(questions, wanted, recovered)
        if recovered is not None
        else recover_wanted(questions, wanted, runner, opts)
    )
    gate: dict[str, Any] = dict(
        threshold=opts.threshold, alce_compat=opts.alce_compat, no_citation_precision=opts.no_citation_precision
    )
    emitted = (  # its per-sentence values only go to the details
        score_citations(questions, parsed, runner, rec, "emitted", sentences=details, **gate)
        if "emitted" in parts
        else {}
    )
    grounded = score_citations(questions, parsed, runner, rec, "grounded", **gate) if "grounded" in parts else {}
    verif = verify_claims(questions, parsed, runner, rec, threshold=opts.threshold) if "verification" in parts else {}
    by_q = recoveries_by_question(rec)
    return [
        question_row(q, ans, parts, by_q.get(q.index, {}), emitted, grounded, verif, details, runner)
        for q, ans in zip(questions, parsed)
    ]


def attribution_scores(prediction: str, units, sources, *, judge: Any = DEFAULT_JUDGE, **options) -> dict[str, Any]:
    """All attribution values of one question (see :func:`attribution_scores_batch` for keys and options).

    ``units`` and ``sources`` are that question's lists.  Pass a
    :class:`~rageval.judges.JudgeRunner` as ``judge`` to share its cache across questions.
    """
    return attribution_scores_batch([prediction], [units], [sources], judge=judge, **options)[0]
