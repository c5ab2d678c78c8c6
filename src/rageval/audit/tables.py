"""The audit's tables, from the audited records (:class:`rageval.audit.sample.AuditItem`) once both judges scored
them: the scores under each evaluator, the emitted - grounded gaps, the cross-judge differences (Holm-adjusted),
the agreement of the two judges' decisions and each judge's abstentions (docs/statistics.md#second-evaluator-audit).

Each table is one row per setting (and, with several settings, the pooled ``all audited settings``), evaluator or
mode, and way of counting an abstention (:data:`WAYS`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rageval.audit.sample import SCORES, AuditItem
from rageval.stats import paired_tests
from rageval.stats.agreement import agreement
from rageval.stats.holm import holm
from rageval.stats.resolution import Replicates

__all__ = [
    "MODE_LABELS",
    "GAPS",
    "WAYS",
    "scores_table",
    "gaps_table",
    "gaps_holm_summary",
    "holm_planned_gaps",
    "is_planned_gap",
    "planned_gap_count",
    "cross_judge_table",
    "cross_judge_family",
    "agreement_table",
    "abstentions_table",
]

MODE_LABELS = {"fixed": "fixed mappings", "rerecover": "re-recovery"}
GAPS = (("precision", "emitted_precision", "grounded_precision"), ("recall", "emitted_recall", "grounded_recall"))
#: the two ways of counting a judge abstention (docs/design.md#abstentions)
WAYS = (("as_unsupported", ""), ("left_out", "_excl_abstain"))
#: the pooled group's name (a summary: never in a Holm family)
POOLED = "all audited settings"


def _v(x: Any) -> float:
    return math.nan if x is None else float(x)


def _mean(xs: Sequence[float]) -> tuple[float | None, int]:
    a = np.array(xs, dtype=float)
    ok = np.isfinite(a)
    return (float(a[ok].mean()) if ok.any() else None), int(ok.sum())


def _evaluators(modes: Sequence[str]) -> list[tuple[str, str | None]]:
    """``[(label, mode)]``: the first judge, then the second under each mode."""
    return [("first", None)] + [(f"second ({MODE_LABELS[m]})", m) for m in modes]


def _values(it: AuditItem, mode: str | None) -> Mapping[str, Any]:
    return it.first if mode is None else it.second[mode]


def _groups(items: Sequence[AuditItem], settings: Sequence[str]) -> list[tuple[str, list[AuditItem]]]:
    by = [(s, [it for it in items if it.key[1] == s]) for s in settings]
    return by + ([(POOLED, list(items))] if len(settings) > 1 else [])


def scores_table(items, settings, modes) -> list[dict[str, Any]]:
    """Emitted and grounded precision and recall per group, evaluator and abstention rule (means and counts)."""
    rows = []
    for group, its in _groups(items, settings):
        for label, mode in _evaluators(modes):
            for way, suffix in WAYS:
                row: dict[str, Any] = {"setting": group, "evaluator": label, "abstentions": way}
                for m in SCORES:
                    mean, n = _mean([_v(_values(it, mode).get(m + suffix)) for it in its])
                    row[m], row[f"{m}_n"] = mean, n
                rows.append(row)
    return rows


def _tests(cols: list[np.ndarray], clusters, seed: int, reps: Replicates):
    if not cols:
        return None
    return paired_tests(
        np.column_stack(cols), clusters=clusters, n_resamples=reps.bootstrap, n_test_resamples=reps.test, seed=seed
    )


def _row_stats(res, c: int) -> dict[str, Any]:
    r = res.row(c)
    return {
        "effect": r["estimate"],
        "ci_low": r["ci_low"],
        "ci_high": r["ci_high"],
        "p_value": r["p_value"],
        "p_method": res.p_method,
        "p_resamples": res.n_test_resamples,
        "n": r["n"],
        "n_dropped": r["n_dropped"],
        "note": r["reason"],
    }


def gaps_table(items, settings, modes, clusters_of, seed, reps: Replicates) -> list[dict[str, Any]]:
    """Paired emitted - grounded gap per setting, evaluator and abstention rule (one engine call per setting;
    ``reps``: sized for the planned gaps' Holm family, :func:`planned_gap_count` summed over the runs adjusted
    together).  Each row says whether it is a planned gap (:func:`is_planned_gap`); Holm: :func:`holm_planned_gaps`."""
    rows = []
    for group, its in _groups(items, settings):
        specs, cols = [], []
        for label, mode in _evaluators(modes):
            for way, suffix in WAYS:
                for name, e, g in GAPS:
                    vals = [_values(it, mode) for it in its]
                    cols.append(np.array([_v(v.get(e + suffix)) - _v(v.get(g + suffix)) for v in vals]))
                    specs.append({"setting": group, "evaluator": label, "abstentions": way, "gap": name})
        res = _tests(cols, clusters_of(its), seed, reps)
        rows += [{**spec, **_row_stats(res, c)} for c, spec in enumerate(specs)] if res is not None else []
    for r in rows:
        r["planned"] = is_planned_gap(r, settings)
    return rows


#: the gaps of the planned family: the paper's audit adjusted its emitted - grounded *precision* gaps (the
#: recall gaps are reported beside them, raw p only)
PLANNED_GAPS = ("precision",)


def is_planned_gap(row: Mapping[str, Any], settings: Sequence[str]) -> bool:
    """A planned gap: the second judge's precision gap (:data:`PLANNED_GAPS`), in one audited setting (the first
    judge's gaps are the run's own, the report's ``emitted_vs_grounded`` family; the pooled rows summarise; the
    recall gaps are reported outside the family)."""
    return row["evaluator"] != "first" and row["setting"] in settings and row["gap"] in PLANNED_GAPS


def planned_gap_count(settings: Sequence[str], modes: Sequence[str]) -> int:
    """Rows of one abstention rule's planned-gap family in one run: settings x modes x the precision gap (the
    paper's audit: 4 settings x 2 modes = 8 per dataset, 16 over ASQA and QASPER adjusted together)."""
    return len(settings) * len(modes) * len(PLANNED_GAPS)


def holm_planned_gaps(tables: Sequence[list[dict[str, Any]]], settings: Sequence[Sequence[str]], runs) -> None:
    """Holm over the planned gaps of every table (one per run) together, one family per abstention rule; the
    other rows keep their raw p, an empty ``p_holm`` and a note.  ``runs``: the runs' names, for the note."""
    for way, _ in WAYS:
        idx = [
            (t, i)
            for t, rows in enumerate(tables)
            for i, r in enumerate(rows)
            if r["abstentions"] == way and is_planned_gap(r, settings[t])
        ]
        adj = holm([tables[t][i]["p_value"] for t, i in idx]) if idx else np.array([])
        for (t, i), p in zip(idx, adj):
            tables[t][i]["p_holm"] = None if not math.isfinite(p) else float(p)
            tables[t][i]["holm_family_size"] = len(idx)
        for t, rows in enumerate(tables):
            for r in rows:
                if r["abstentions"] == way and "p_holm" not in r:
                    r["p_holm"] = None
                    r["holm_family_size"] = None
                    why = "the run's own gap (the report's emitted_vs_grounded family)"
                    if r["evaluator"] != "first":
                        why = "pooled summary" if r["setting"] not in settings[t] else "a recall gap, reported"
                    r["note"] = r["note"] or f"{why}: not in the Holm family"


def gaps_holm_summary(rows: Sequence[Mapping[str, Any]], runs: Sequence[str]) -> dict[str, Any]:
    """The planned gaps' Holm family as one run's audit states it: its size per abstention rule and the runs."""
    sizes = {
        way: next((r["holm_family_size"] for r in rows if r["abstentions"] == way and r["planned"]), 0)
        for way, _ in WAYS
    }
    return {"family_size": sizes, "runs": list(runs), "scope": "runs" if len(runs) > 1 else "run"}


def cross_judge_family(items, settings, modes) -> int:
    """The largest Holm family of the cross-judge table: its rows of one abstention rule over every setting."""
    specs = [
        sp for group, its in _groups(items, settings) if group != POOLED for sp in _cross_columns(group, its, modes)[0]
    ]
    return max((sum(sp["abstentions"] == way for sp in specs) for way, _ in WAYS), default=0)


def cross_judge_table(items, settings, modes, clusters_of, seed, reps: Replicates) -> list[dict[str, Any]]:
    """Second - first judge per setting, mode, score and abstention rule; Holm over the rows of each rule
    (``reps``: sized for :func:`cross_judge_family`)."""
    rows = []
    for group, its in _groups(items, settings):
        specs, cols = _cross_columns(group, its, modes)
        res = _tests(cols, clusters_of(its), seed, reps)
        if res is not None:
            rows += [{**spec, **_row_stats(res, c)} for c, spec in enumerate(specs)]
    _holm_per_way(rows, settings)
    return rows


def _cross_columns(group: str, its: Sequence[AuditItem], modes: Sequence[str]):
    """``(specs, columns)``: per mode, score and abstention rule, the second - first differences of one group."""
    specs, cols = [], []
    # emitted premises are the unit texts: the same under both modes, so emitted rows are tested once
    plan = [(modes[0], m, "both (emitted)") for m in SCORES if m.startswith("emitted")]
    plan += [(mode, m, MODE_LABELS[mode]) for mode in modes for m in SCORES if m.startswith("grounded")]
    for mode, m, mode_label in plan:
        for way, suffix in WAYS:
            a = np.array([_v(it.first.get(m + suffix)) for it in its])
            b = np.array([_v(it.second[mode].get(m + suffix)) for it in its])
            cols.append(b - a)
            specs.append(
                {
                    "setting": group,
                    "mode": mode_label,
                    "abstentions": way,
                    "metric": m,
                    "mean_first": _mean(a.tolist())[0],
                    "mean_second": _mean(b.tolist())[0],
                }
            )
    return specs, cols


def _holm_per_way(rows: list[dict[str, Any]], settings: Sequence[str]) -> None:
    """One Holm family per abstention rule over every setting, mode and score (the pooled rows are a summary,
    not a further test: they stay out of the family and keep their raw p)."""
    for way, _ in WAYS:
        idx = [i for i, r in enumerate(rows) if r["abstentions"] == way and r["setting"] in settings]
        adj = holm([rows[i]["p_value"] for i in idx]) if idx else np.array([])
        for i, p in zip(idx, adj):
            rows[i]["p_holm"] = None if not math.isfinite(p) else float(p)
        for r in rows:
            if r["abstentions"] == way and r["setting"] not in settings:
                r["p_holm"] = None
                r["note"] = r["note"] or "pooled summary: not in the Holm family"
        for r in rows:
            if r["abstentions"] == way:
                r["holm_family_size"] = len(idx)


def _decisions(first: Sequence[Mapping], second: Sequence[Mapping], variant: str):
    """Per judged pair: (first label, second label) of the joint decision, and of each citation's precision.

    A joint label is None when that judge abstained on it; the citation labels of a sentence are None when
    either judge abstained on any decision of that sentence (the saved details mark abstentions per sentence).
    A sentence with no premise (no valid citation, or every grounded citation unresolvable) is no pair.
    """
    joint, prec = [], []
    for s1, s2 in zip(first, second):
        d1, d2 = s1.get(variant) or {}, s2.get(variant) or {}
        cites = s1.get("citations") or []
        if not cites or (variant == "grounded" and all(e == "missing" for e in s1.get("evidence") or [])):
            continue

        def label(d):
            if d.get("abstained") and not d.get("supported"):
                return None
            return int(bool(d.get("supported")))

        l1, l2 = label(d1), label(d2)
        joint.append((l1, l2))
        p1, p2 = d1.get("precise") or [], d2.get("precise") or []
        unsure = bool(d1.get("abstained") or d2.get("abstained"))
        for c in range(min(len(p1), len(p2))):
            # as in ALCE's analysis: a citation of a sentence whose joint decision failed is imprecise
            a = None if unsure else int(bool(p1[c]) and l1 == 1)
            b = None if unsure else int(bool(p2[c]) and l2 == 1)
            prec.append((a, b))
    return joint, prec


def agreement_table(items, settings, modes) -> list[dict[str, Any]]:
    """The two judges' agreement and kappa per group, premise and decision (joint support, citation precision)."""
    rows = []
    kinds = [("emitted", "emitted", "fixed" if "fixed" in modes else modes[0])]
    if "fixed" in modes:
        kinds.append(("grounded", "grounded", "fixed"))
    if "rerecover" in modes:
        kinds.append(("grounded (re-recovery: premises may differ)", "grounded", "rerecover"))
    for group, its in _groups(items, settings):
        for label, variant, mode in kinds:
            joint, prec = [], []
            for it in its:
                j, p = _decisions(it.first["sentences"], it.second[mode]["sentences"], variant)
                joint += j
                prec += p
            for unit, pairs in (("sentence support (joint decision)", joint), ("citation precision", prec)):
                ag = agreement([a for a, _ in pairs], [b for _, b in pairs])
                rows.append({"setting": group, "premise": label, "decision": unit, **ag})
    return rows


def _abstained_sentences(sentences: Sequence[Mapping], variant: str) -> int:
    """Sentences with an abstained decision in the ``variant`` gate (joint or a citation's own)."""
    return sum(1 for x in sentences if (x.get(variant) or {}).get("abstained"))


def abstentions_table(items, settings, modes) -> list[dict[str, Any]]:
    """Each evaluator's abstentions per group: sentences with an abstained decision, judge abstentions, records."""
    rows = []
    for group, its in _groups(items, settings):
        for label, mode in _evaluators(modes):
            vals = [_values(it, mode) for it in its]
            counts = [v.get("judge_abstentions") for v in vals]
            known = [int(c) for c in counts if c is not None]
            rows.append(
                {
                    "setting": group,
                    "evaluator": label,
                    "sentences_abstained_emitted": sum(_abstained_sentences(v["sentences"], "emitted") for v in vals),
                    "sentences_abstained_grounded": sum(_abstained_sentences(v["sentences"], "grounded") for v in vals),
                    # the first judge's count covers every attribution part the run scored (recovery, gate,
                    # verification); the second judge's only what the audit asks (recovery and the gate)
                    "judge_abstentions": sum(known) if known else None,
                    "records_with_abstentions": sum(c > 0 for c in known),
                    "records": len(its),
                }
            )
    return rows
