"""Everything the report shows, computed from a loaded run (no I/O, no plotting).

:func:`analyze` returns plain dicts/lists (JSON-able) that the table, plot and HTML
writers render.  Means are question-weighted over the **common cohort**; undefined
values stay ``None`` with their counts beside them.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from rageval.report.contrasts import ContrastRow, metric_direction, parse_contrasts
from rageval.report.load import Run, RunError
from rageval.stats import common_cohort, holm, metric_table, metric_value, paired_tests, validity_analysis
from rageval.types import STATUSES

__all__ = ["analyze", "scalar_metric_names", "PREFERRED_ORDER", "GAPS"]

#: Column order of the tables: the headline metrics first, then the rest alphabetically.
PREFERRED_ORDER = (
    "answer_f1", "answer_em", "str_em", "str_hit", "answer_in_context", "retrieval_recall", "all_gold",
    "emitted_precision", "grounded_precision", "emitted_recall", "grounded_recall", "re_attributability",
    "unsupported_summary_checked", "unsupported_declared_span", "unsupported_recovered_source", "evidence_f1",
)

#: Derived per-question gaps: name -> (minuend, subtrahend).
GAPS = {
    "gap_precision": ("emitted_precision", "grounded_precision"),
    "gap_recall": ("emitted_recall", "grounded_recall"),
}


def _f(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def scalar_metric_names(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Metric names whose every value is a number, a bool or null, in table order."""
    names: dict[str, bool] = {}
    for r in records:
        for k, v in (r.get("metrics") or {}).items():
            try:
                metric_value(v)
                names.setdefault(k, True)
            except TypeError:
                names[k] = False
    keep = [k for k, ok in names.items() if ok]
    first = [m for m in PREFERRED_ORDER if m in keep]
    return first + sorted(m for m in keep if m not in first)


def _mean(v: np.ndarray) -> tuple[float | None, int, int]:
    ok = np.isfinite(v)
    n = int(ok.sum())
    return (float(v[ok].mean()) if n else None), n, int(v.size - n)


def _clusters(run: Run, qids: Sequence[str], key: str) -> list[Any]:
    found: dict[str, Any] = {}
    for r in run.records:
        c = (r.get("extra") or {}).get(key)
        if c is None:
            continue
        q = r["question_id"]
        if q in found and found[q] != c:
            raise RunError(
                f"question {q!r} has {key}={found[q]!r} in one record and {c!r} in another: "
                "records from different datasets mixed?"
            )
        found[q] = c
    missing = [q for q in qids if q not in found]
    if missing:
        raise RunError(
            f"suite.cluster_key is {key!r} but {len(missing)} cohort question(s) carry no extra.{key} "
            f"(first: {missing[0]!r}): set cluster_key to null or fill the cluster ids"
        )
    return [found[q] for q in qids]


def _sweep(run: Run, cohort_ids: set[str]) -> list[dict[str, Any]]:
    """Per setting x threshold: mean re-attribution rate and grounded precision over the cohort."""
    acc: dict[tuple[str, float], dict[str, list[float]]] = {}
    labels: dict[tuple[str, float], str] = {}
    for r in run.records:
        if r["question_id"] not in cohort_ids or r["status"] != "ok":
            continue
        sw = (r.get("extra") or {}).get("reattribution_sweep")
        if not isinstance(sw, Mapping):
            continue
        for t, vals in sw.items():
            try:
                tf = float(t)
            except (TypeError, ValueError):
                continue
            key = (r["setting"]["name"], tf)
            labels.setdefault(key, str(t))
            slot = acc.setdefault(key, {"rate": [], "grounded_precision": []})
            vals = vals if isinstance(vals, Mapping) else {}
            for k in ("rate", "grounded_precision"):
                try:
                    slot[k].append(metric_value(vals.get(k)))
                except TypeError:
                    slot[k].append(math.nan)
    order = {s: i for i, s in enumerate(run.setting_names)}
    rows = []
    for (s, tf), slot in sorted(acc.items(), key=lambda kv: (order.get(kv[0][0], 1e9), kv[0][1])):
        rate, n_rate, u_rate = _mean(np.array(slot["rate"], dtype=float))
        gp, n_gp, u_gp = _mean(np.array(slot["grounded_precision"], dtype=float))
        rows.append({
            "setting": s, "threshold": tf, "rate": rate, "rate_n": n_rate, "rate_n_undefined": u_rate,
            "grounded_precision": gp, "grounded_precision_n": n_gp, "grounded_precision_n_undefined": u_gp,
        })
    return rows


def _validity(run: Run, metric_names: Sequence[str]) -> dict[str, Any]:
    answer = "answer_f1" if "answer_f1" in metric_names else ("str_em" if "str_em" in metric_names else None)
    need = [m for m in (answer, "answer_in_context", "retrieval_recall") if m is not None]
    lacking = [m for m in ("answer_in_context", "retrieval_recall") if m not in metric_names]
    if answer is None:
        lacking.insert(0, "answer_f1")
    if lacking:
        return {"available": False, "answer_metric": answer,
                "note": f"not computed: the records carry no {', '.join(lacking)}"}
    f1, aic, rec, groups = [], [], [], []
    for r in run.records:
        if r["status"] != "ok":
            continue
        ms = r.get("metrics") or {}
        vals = []
        for m in need:
            try:
                vals.append(metric_value(ms.get(m)))
            except TypeError:
                vals.append(math.nan)
        f1.append(vals[0])
        aic.append(vals[1])
        rec.append(vals[2])
        groups.append(r["setting"]["name"])
    out = validity_analysis(f1, aic, rec, groups)
    order = {s: i for i, s in enumerate(run.setting_names)}
    out["by_group"] = dict(sorted(out["by_group"].items(), key=lambda kv: order.get(kv[0], 1e9)))
    out.update({"available": True, "answer_metric": answer, "note": None})
    return out


def analyze(run: Run, *, seed: int | None = None, n_resamples: int = 10_000) -> dict[str, Any]:
    suite = run.suite
    if seed is None:
        seed = suite.get("seed")
        seed = int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else 0
    settings = run.setting_names
    cohort = common_cohort(run.records, settings)
    qids = list(cohort.question_ids)
    metric_names = scalar_metric_names(run.records)
    cohort_recs = [r for r in run.records if r["status"] == "ok"]
    table = metric_table(cohort_recs, qids, settings, metric_names)

    # -- achieved ratio / tokens per setting over the cohort
    pos = {q: i for i, q in enumerate(qids)}
    ratio = {s: np.full(len(qids), np.nan) for s in settings}
    tokens = {s: np.full(len(qids), np.nan) for s in settings}
    for r in cohort_recs:
        i = pos.get(r["question_id"])
        ctx = r.get("context") or {}
        if i is None:
            continue
        try:
            ratio[r["setting"]["name"]][i] = metric_value(ctx.get("achieved_ratio"))
            tokens[r["setting"]["name"]][i] = metric_value(ctx.get("achieved_tokens"))
        except TypeError:
            pass

    status_counts = {s: {st: 0 for st in STATUSES} for s in settings}
    for r in run.records:
        status_counts[r["setting"]["name"]][r["status"]] += 1

    gaps = {g: pair for g, pair in GAPS.items() if pair[0] in metric_names and pair[1] in metric_names}
    summary = []
    for sdef in run.settings:
        s = sdef["name"]
        row: dict[str, Any] = {
            "setting": s, "compressor": sdef.get("compressor"), "budget": sdef.get("budget"),
            **{k: v for k, v in cohort.counts[s].items()},
            "status": dict(status_counts[s]),
            "achieved_ratio": _mean(ratio[s])[0], "achieved_tokens": _mean(tokens[s])[0],
            "metrics": {},
        }
        for m in metric_names:
            mean, n, u = _mean(table[(s, m)])
            row["metrics"][m] = {"mean": mean, "n": n, "n_undefined": u}
        for g, (m1, m2) in gaps.items():
            mean, n, u = _mean(table[(s, m1)] - table[(s, m2)])
            row["metrics"][g] = {"mean": mean, "n": n, "n_undefined": u}
        summary.append(row)

    # -- contrasts: one family, one engine call, Holm over every declared row
    rows: list[ContrastRow] = parse_contrasts(suite.get("contrasts"), settings, metric_names=metric_names)
    cluster_key = suite.get("cluster_key")
    clusters = _clusters(run, qids, cluster_key) if cluster_key and qids else None
    contrasts: list[dict[str, Any]] = []
    if rows:
        A = np.column_stack([table[(r.a, r.metric_a)] for r in rows]) if qids else np.zeros((0, len(rows)))
        Bm = np.column_stack([table[(r.b, r.metric_b)] for r in rows]) if qids else np.zeros((0, len(rows)))
        D = A - Bm
        res = paired_tests(D, clusters=clusters, n_resamples=n_resamples, seed=seed)
        p_holm = holm(res.p_value)
        both = np.isfinite(D)
        for c, r in enumerate(rows):
            out = res.row(c)
            ok = both[:, c]
            contrasts.append({
                "contrast": r.label, "kind": r.kind, "a": r.a, "b": r.b,
                "metric_a": r.metric_a, "metric_b": r.metric_b, "metric": r.metric,
                "direction": metric_direction(r.metric_a) if r.kind == "pair" else "none",
                "mean_a": _f(A[ok, c].mean()) if ok.any() else None,
                "mean_b": _f(Bm[ok, c].mean()) if ok.any() else None,
                "effect": out["estimate"], "ci_low": out["ci_low"], "ci_high": out["ci_high"],
                "p_value": out["p_value"], "p_holm": _f(p_holm[c]),
                "n": out["n"], "n_dropped": out["n_dropped"],
                "n_clusters": out["n_blocks"] if clusters is not None else None,
                "note": out["reason"] or (
                    f"{out['n_empty_replicates']} of {n_resamples} bootstrap replicates held no defined pair "
                    "and were left out of the interval" if out["n_empty_replicates"] and out["ci_low"] is not None
                    else None),
            })

    return {
        "suite": {k: suite.get(k) for k in ("name", "hash", "dataset", "seed", "cluster_key")},
        "seed": seed,
        "n_resamples": n_resamples,
        "confidence": 0.95,
        "settings": run.settings,
        "cohort": {"n": len(qids), "n_questions": len({r["question_id"] for r in run.records}),
                   "n_clusters": len(set(clusters)) if clusters is not None else None,
                   "counts": {s: dict(c) for s, c in cohort.counts.items()}},
        "metric_names": metric_names,
        "gaps": {g: list(p) for g, p in gaps.items()},
        "summary": summary,
        "contrasts": contrasts,
        "contrasts_declared": suite.get("contrasts"),
        "contrasts_note": (
            "The suite declares contrasts, but they expand to no rows: no record carries a metric with a "
            "known direction (did every record fail?)."
            if suite.get("contrasts") and not rows else
            "The suite declares no contrasts (`contrasts:` in the suite YAML)." if not rows else None
        ),
        "validity": _validity(run, metric_names),
        "sweep": _sweep(run, set(qids)),
        "judge_stats": run.manifest.get("judge_stats") or {},
        "manifest": run.manifest,
    }
