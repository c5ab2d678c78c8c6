"""The contrast family of an analysed run: its rows' tests, which rows enter Holm, the replicates and the floor.

A metric identical in every setting on every cohort question (``retrieval_recall``
and ``all_gold`` when every setting compresses one retriever's passages) gives
contrasts whose paired differences are all zero: their sign-flip p is 1 whatever
the replicates, so they are **left out of the Holm family** (kept in the tables with
their raw p, ``p_holm`` empty and a note), and listed.  Leaving them out is valid:
the test of such a row rejects with probability 0, and the rows are known before
any p is seen.  The family size ``m`` then sizes the test's replicates under
``auto`` (:mod:`rageval.stats.resolution`), and its floor ``m / (B + 1)`` is reported
(docs/statistics.md#resolution).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rageval.diagnostics import contrasted_by_default, direction_of
from rageval.diagnostics.catalog import output_owner, spec
from rageval.report.contrast_tables import ALPHA
from rageval.report.result import ContrastEntry, HolmInfo
from rageval.rundir.columns import cell_matrix
from rageval.stats import gain_decompositions, paired_tests
from rageval.stats.contrasts import ContrastPlan, ContrastRow, expand_plan, holm_group
from rageval.stats.holm import holm_grouped
from rageval.stats.resolution import AUTO, Replicates, parse_resamples, replicates_for, resolution
from rageval.token_counts import CONTEXT_METRICS

__all__ = [
    "LEFT_OUT_NOTE",
    "constant_metrics",
    "contrast_direction",
    "contrast_plan",
    "family_counts",
    "family_contrasts",
    "GAIN_KEY",
    "gain_applies",
    "holm_info",
    "largest_family",
    "resamples_setting",
]

#: the note of a contrast row left out of the Holm family
LEFT_OUT_NOTE = "left out of the Holm family: the metric is identical in every setting on every cohort question"


def _f(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def resamples_setting(suite: Mapping[str, Any], given: int | str | None) -> int | str:
    """The replicate setting: ``given`` (an option), else the suite's ``statistics.resamples``, else ``auto``."""
    if given is not None:
        return parse_resamples(given)
    stats = (suite.get("config") or {}).get("statistics") or {}
    return parse_resamples(stats.get("resamples", AUTO))


def constant_metrics(t: Any, metrics: Sequence[str]) -> list[str]:
    """The ``metrics`` identical (undefined where undefined) in every setting of the table on every cohort question
    and defined on one at least (a metric undefined throughout keeps its rows in the family, ranked as p = 1)."""
    if len(t.settings) < 2 or not t.qids:
        return []
    out = []
    for m in metrics:
        first = t.values[(t.settings[0], m)]
        if np.isfinite(first).any() and all(
            np.array_equal(first, t.values[(s, m)], equal_nan=True) for s in t.settings[1:]
        ):
            out.append(m)
    return out


def contrast_direction(metric: str) -> str:
    """A contrasted metric's direction: the catalog's, or a context measure's (``achieved_tokens``,
    ``achieved_ratio``: lower is cheaper, :data:`~rageval.token_counts.CONTEXT_METRICS`)."""
    return CONTEXT_METRICS.get(metric) or direction_of(metric)


def contrast_plan(run: Any, t: Any) -> tuple[ContrastPlan, int]:
    """The suite's contrast plan over the cohort table's settings and the metrics the records carry (their context's
    ``achieved_tokens`` and ``achieved_ratio`` too, contrasted only where named), without the rows that touch a
    left-out (wholly unavailable) setting; and how many rows were left out."""
    refs = [s for s in run.settings if s["name"] in t.settings]
    names = [*t.metric_names, *(m for m in CONTEXT_METRICS if m not in t.metric_names)]
    plan = expand_plan(run.suite.get("contrasts"), refs, metric_names=names, contrasted=contrasted_by_default)
    gone = set(t.cohort.left_out)
    kept = tuple(r for r in plan.rows if not gone.intersection(r.settings))
    return dataclasses.replace(plan, rows=kept), len(plan.rows) - len(kept)


#: the per-question indicator the gain decomposition splits a contrast by (rageval.stats.gain)
GAIN_KEY = "answer_in_context"


def gain_applies(row: ContrastRow) -> bool:
    """A pair row on one answer-quality metric: an output with a direction of a diagnostic of the ``answer``
    family, other than answer-in-context itself (and its views)."""
    m = row.metric_a
    if row.kind != "pair" or m != row.metric_b or m.startswith(GAIN_KEY) or direction_of(m) == "none":
        return False
    owner = output_owner(m)
    return owner is not None and spec(owner).family == "answer"


def _gain_sides(t: Any, r: ContrastRow, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any, Any] | None:
    """The row's gain decomposition's arguments ``(q_a, q_b, aic_a, aic_b)``, None where it does not apply, the
    run carries no answer-in-context or answer-in-context is not 1/0 per question."""
    if not gain_applies(r) or (r.a, GAIN_KEY) not in t.values or (r.b, GAIN_KEY) not in t.values:
        return None
    aic = np.concatenate([t.values[(r.a, GAIN_KEY)], t.values[(r.b, GAIN_KEY)]])
    if not np.isin(aic[np.isfinite(aic)], (0.0, 1.0)).all():
        return None  # not an indicator (ASQA: the share of the question's qa_pairs found): no groups
    return a, b, t.values[(r.a, GAIN_KEY)], t.values[(r.b, GAIN_KEY)]


def _in_family(rows: Sequence[ContrastRow], constant: Sequence[str]) -> list[bool]:
    gone = set(constant)
    return [not (r.metric_a == r.metric_b and r.metric_a in gone) for r in rows]


def family_counts(
    rows: Sequence[ContrastRow], constant: Sequence[str], scope: str, separate: Sequence[str] = ()
) -> dict[str, int]:
    """Rows in each Holm family (``"all"`` under ``scope="suite"``, a ``separate`` family on its own), the
    left-out rows not counted."""
    keep = _in_family(rows, constant)
    return dict(Counter(holm_group(r.family, scope, separate) for r, k in zip(rows, keep) if k))


def largest_family(sizes: Mapping[str, int]) -> int:
    return max(sizes.values(), default=0)


def _matrix(t: Any, cells: Sequence[tuple[str, str]]) -> np.ndarray:
    """Questions x ``(setting, metric)`` cells of the cohort table."""
    return cell_matrix(t.values, cells, len(t.qids))


def _replicate_note(out: Mapping[str, Any], n_resamples: int) -> str | None:
    if out["reason"]:
        return out["reason"]
    if out["n_empty_replicates"] and out["ci_low"] is not None:
        return (
            f"{out['n_empty_replicates']} of {n_resamples} bootstrap replicates held no defined pair "
            "and were left out of the interval"
        )
    return None


def _side_mean(x: np.ndarray, ok: np.ndarray) -> float | None:
    return _f(x[ok].mean()) if ok.any() else None


def _contrast_entry(
    r: ContrastRow, out: Mapping[str, Any], sides: tuple, p_holm: Any, res: Any, kept: bool
) -> ContrastEntry:
    a, b, ok = sides
    return {
        "contrast": r.label,
        "family": r.family,
        "kind": r.kind,
        "a": r.side_a,
        "b": r.side_b,
        "metric_a": r.metric_a,
        "metric_b": r.metric_b,
        "metric": r.metric,
        "direction": contrast_direction(r.metric_a) if r.kind == "pair" else "none",
        "mean_a": _side_mean(a, ok),
        "mean_b": _side_mean(b, ok),
        "effect": out["estimate"],
        "ci_low": out["ci_low"],
        "ci_high": out["ci_high"],
        "p_value": out["p_value"],
        "p_holm": _f(p_holm) if kept else None,
        "p_method": res.p_method,
        "p_resamples": res.n_test_resamples,
        "in_holm_family": kept,
        "n": out["n"],
        "n_dropped": out["n_dropped"],
        "n_clusters": out["n_blocks"] if res.clustered else None,
        "note": "; ".join(n for n in (_replicate_note(out, res.n_resamples), None if kept else LEFT_OUT_NOTE) if n)
        or None,
    }


def family_contrasts(
    t: Any,
    rows: Sequence[ContrastRow],
    clusters: list[Any] | None,
    *,
    seed: int,
    reps: Replicates,
    constant: Sequence[str],
    holm_scope: str = "suite",
    separate: Sequence[str] = (),
) -> tuple[list[ContrastEntry], Any]:
    """Every row in one engine call; Holm over every row of the family (``holm_scope="suite"``) or within each
    family (``"family"``), a ``separate`` family on its own, the left-out rows not counted
    (docs/design.md#holm-adjustment).  Returns the rows and
    the engine's results (None without rows)."""
    if not rows:
        return [], None
    A = _matrix(t, [(r.a, r.metric_a) for r in rows])
    B = _matrix(t, [(r.b, r.metric_b) for r in rows])
    inter = [c for c, r in enumerate(rows) if r.kind == "interaction"]
    if inter:  # the sides are the two pairs' differences: a - b and c - d, each question's (NaN where undefined)
        C = _matrix(t, [(str(rows[c].c), rows[c].metric_a) for c in inter])
        Dd = _matrix(t, [(str(rows[c].d), rows[c].metric_b) for c in inter])
        A[:, inter], B[:, inter] = A[:, inter] - B[:, inter], C - Dd
    D = A - B
    res = paired_tests(D, clusters=clusters, n_resamples=reps.bootstrap, n_test_resamples=reps.test, seed=seed)
    keep = np.array(_in_family(rows, constant), dtype=bool)
    p_holm = np.full(len(rows), np.nan)
    idx = np.flatnonzero(keep)
    if idx.size:
        groups = [holm_group(rows[int(i)].family, holm_scope, separate) for i in idx]
        p_holm[idx] = holm_grouped(res.p_value[idx], groups if len(set(groups)) > 1 else None)
    both = np.isfinite(D)
    # the gain decompositions (GainDecomposition.as_dict) of the rows they apply to, computed together
    sides = {c: g for c, r in enumerate(rows) if t.qids and (g := _gain_sides(t, r, A[:, c], B[:, c])) is not None}
    found = gain_decompositions(list(sides.values()), clusters=clusters, seed=seed, n_resamples=reps.bootstrap)
    gains = {c: g.as_dict() for c, g in zip(sides, found, strict=True)}
    entries = []
    for c, r in enumerate(rows):
        entry = _contrast_entry(r, res.row(c), (A[:, c], B[:, c], both[:, c]), p_holm[c], res, bool(keep[c]))
        entries.append({**entry, "gain": gains[c]} if c in gains else entry)
    return entries, res


def holm_info(run: Any, plan: ContrastPlan, constant: Sequence[str], reps: Replicates, res: Any, m: int) -> HolmInfo:
    """The Holm scope, the size of the family each row is adjusted in (one run; see report.union), the rows left
    out of it and the family's resolution (method, B, floor)."""
    counts = plan.counts()
    sizes = family_counts(plan.rows, constant, plan.holm, plan.separate)
    left = [r for r, k in zip(plan.rows, _in_family(plan.rows, constant)) if not k]
    exact = bool(res is not None and res.exact_p)
    if res is not None:
        reps = dataclasses.replace(reps, test=int(res.n_test_resamples))  # 2**K when enumerated
    info: HolmInfo = {
        "scope": plan.holm,
        "runs": [run.suite.get("name")],
        "family_sizes": sizes,
        "families": counts,
        "family_order": list(counts),  # report.json sorts keys: the plan's order, kept
        "left_out": {"metrics": sorted({r.metric_a for r in left}), "n_rows": len(left)},
        "resolution": resolution(
            m, reps, exact=exact, n_blocks=int(res.n_units) if res is not None else 0, alpha=ALPHA
        ),
    }
    if plan.separate:  # the families adjusted on their own, outside the suite-wide family
        return {**info, "separate": list(plan.separate)}
    return info


def setting_replicates(run: Any, given: int | str | None, m: int) -> Replicates:
    """The replicates of a family of ``m`` under the run's setting (``given`` first)."""
    return replicates_for(resamples_setting(run.suite, given), m, ALPHA)
