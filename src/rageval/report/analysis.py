"""Everything the report shows, computed from a loaded run (no I/O, no plotting).

:func:`analyze` returns an :class:`~rageval.report.result.Analysis`, a frozen, typed value (JSON-shaped parts,
``report.json`` written by its ``to_json``) that the table, plot and HTML writers read and never change.  Means are question-weighted over the **common cohort**
(docs/design.md#common-cohort); undefined values stay ``None`` with their counts
beside them.  Which metrics have a direction, the column order and the derived
gaps come from the diagnostics catalog (:mod:`rageval.diagnostics.catalog`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from rageval.diagnostics import CATALOG, DERIVED
from rageval.diagnostics.structural import structural_marks
from rageval.io import printable
from rageval.limits import SETTINGS
from rageval.report.examples import marked_examples, reference_setting
from rageval.report.family import (
    constant_metrics,
    contrast_plan,
    family_contrasts,
    family_counts,
    holm_info,
    largest_family,
    setting_replicates,
)
from rageval.report.findings import with_findings
from rageval.report.frontier import frontier_analysis
from rageval.report.load import Run, RunError
from rageval.report.order import REPORT_ORDER
from rageval.report.result import (
    Abstentions,
    Analysis,
    CohortInfo,
    MetricStat,
    StructuralMark,
    SuiteInfo,
    SummaryRow,
    SweepRow,
    Validity,
)
from rageval.rundir.columns import MetricTable, RecordColumns
from rageval.stats import Cohort
from rageval.stats.contrasts import ContrastRow
from rageval.stats.resolution import AUTO
from rageval.stats.validity import validity_with_mediation
from rageval.token_counts import CONTEXT_METRICS
from rageval.types import STATUSES

__all__ = [
    "analyze",
    "check_settings",
    "holm_family_counts",
    "scalar_metric_names",
    "summarize",
    "REPORT_ORDER",
    "PREFERRED_ORDER",
    "GAPS",
    "ABSTENTIONS",
]


def _main_outputs(name: str) -> tuple[str, ...]:
    return tuple(o.key for o in CATALOG[name].outputs if o.direction != "none" and not o.view)


#: Column order of the tables: the main outputs of :data:`REPORT_ORDER`, from the catalog.
PREFERRED_ORDER: tuple[str, ...] = tuple(k for name in REPORT_ORDER for k in _main_outputs(name))

#: Derived per-question gaps (the catalog's ``DERIVED``): name -> (minuend, subtrahend).
GAPS: dict[str, tuple[str, str]] = {g: (a, b) for g, (a, b, _direction) in DERIVED.items()}

#: The record metric counting a question's judge abstentions (an output of the attribution diagnostics);
#: the summary reports its sum per setting (docs/design.md#abstentions).
ABSTENTIONS = "judge_abstentions"


def _f(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _in_table_order(names: Sequence[str]) -> list[str]:
    """:data:`PREFERRED_ORDER` first, then the rest alphabetically."""
    first = [m for m in PREFERRED_ORDER if m in names]
    return first + sorted(m for m in names if m not in first)


def scalar_metric_names(records: Iterable[Mapping[str, Any]] | RecordColumns) -> list[str]:
    """Metric names whose every value is a number, a bool or null, in table order (of records, or of their
    columns)."""
    cols = records if isinstance(records, RecordColumns) else RecordColumns.of(records)
    return _in_table_order([k for k, ok in cols.scalar.items() if ok])


def _mean(v: np.ndarray) -> tuple[float | None, int, int]:
    ok = np.isfinite(v)
    n = int(ok.sum())
    return (float(v[ok].mean()) if n else None), n, int(v.size - n)


def _setting_order(run: Run) -> dict[str, int]:
    return {s: i for i, s in enumerate(run.setting_names)}


# ---------------------------------------------------------------- the cohort and its metric table


@dataclass(frozen=True)
class _Table:
    """The common cohort and every metric aligned with its questions, per setting."""

    cohort: Cohort
    qids: list[str]
    settings: list[str]
    metric_names: list[str]
    values: MetricTable  # each array made on access from the columns
    columns: RecordColumns  # every record's (rageval.rundir.columns)
    pos: np.ndarray  # per record: its question's place in qids, -1 outside the cohort (RecordColumns.positions)

    def context(self, key: str) -> dict[str, np.ndarray]:
        """Per setting, a field of the ``ok`` records' context (``achieved_ratio``, ``achieved_tokens``) aligned
        with the cohort questions (NaN: none)."""
        col = self.columns.context_column(key)
        return {s: self.columns.aligned(col, self.qids, s, ok_only=True, pos=self.pos) for s in self.settings}


def _cohort_table(run: Run) -> _Table:
    settings = run.setting_names
    cols = run.columns
    cohort = cols.cohort(settings)
    qids = list(cohort.question_ids)
    pos = cols.positions(qids)  # once: the metric table, the context columns and the sweep read it
    metric_names = scalar_metric_names(cols)
    values = cols.metric_table(qids, settings, metric_names, ok_only=True, pos=pos)
    t = _Table(cohort, qids, settings, metric_names, values, cols, pos)
    for key in CONTEXT_METRICS:  # the context measures a contrast may name (not metric columns of the tables)
        if key not in metric_names:
            values.update({(s, key): v for s, v in t.context(key).items()})
    return t


def _resolve_seed(suite: Mapping[str, Any], seed: int | None) -> int:
    if seed is not None:
        return seed
    seed = suite.get("seed")
    return int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else 0


def _clusters(run: Run, qids: Sequence[str], key: str) -> list[Any]:
    found = run.clusters
    if run.cluster_conflict is not None:
        q, first, other = run.cluster_conflict
        raise RunError(
            f"question {q!r} has {key}={first!r} in one record and {other!r} in another: "
            "records from different datasets mixed?"
        )
    missing = [q for q in qids if q not in found]
    if missing:
        raise RunError(
            f"suite.cluster_key is {key!r} but {len(missing)} cohort question(s) carry no extra.{key} "
            f"(first: {missing[0]!r}): set cluster_key to null or fill the cluster ids"
        )
    return [found[q] for q in qids]


def _cohort_clusters(run: Run, qids: Sequence[str]) -> list[Any] | None:
    key = run.suite.get("cluster_key")
    return _clusters(run, qids, key) if key and qids else None


def _suite_info(suite: Mapping[str, Any]) -> SuiteInfo:
    return SuiteInfo(
        name=suite.get("name"),
        hash=suite.get("hash"),
        dataset=suite.get("dataset"),
        seed=suite.get("seed"),
        cluster_key=suite.get("cluster_key"),
    )


def _cohort_info(run: Run, t: _Table, clusters: list[Any] | None, n_rows_left_out: int = 0) -> CohortInfo:
    return {
        "n": len(t.qids),
        "n_questions": len(run.columns.question_ids),
        "n_clusters": len(set(clusters)) if clusters is not None else None,
        "counts": {s: dict(c) for s, c in t.cohort.counts.items()},
        # settings that did not run (every record unavailable): reported, left out of the cohort and the contrasts
        "left_out": [
            {
                "setting": s,
                "n_records": t.cohort.counts[s]["n_records"],
                "n_unavailable": t.cohort.counts[s]["n_failed"],
            }
            for s in t.cohort.left_out
        ],
        "n_contrast_rows_left_out": n_rows_left_out,
    }


# ---------------------------------------------------------------- summary


def _context_means(t: _Table) -> dict[str, tuple[float | None, float | None]]:
    """Per setting: mean achieved ratio and mean achieved tokens over the cohort."""
    ratio, tokens = t.context("achieved_ratio"), t.context("achieved_tokens")
    return {s: (_mean(ratio[s])[0], _mean(tokens[s])[0]) for s in t.settings}


def _status_counts(run: Run) -> dict[str, dict[str, int]]:
    counts = {s: {st: 0 for st in STATUSES} for s in run.setting_names}
    cols = run.columns
    _, s_idx, st_idx = cols.indexes()
    pairs, n = np.unique(s_idx * len(cols.statuses) + st_idx, return_counts=True)
    for key, k in zip(pairs.tolist(), n.tolist()):
        si, sti = divmod(key, len(cols.statuses))
        counts[cols.settings[si]][cols.statuses[sti]] += k
    return counts


def _present_gaps(metric_names: Sequence[str]) -> dict[str, tuple[str, str]]:
    return {g: pair for g, pair in GAPS.items() if pair[0] in metric_names and pair[1] in metric_names}


def _stat(values: np.ndarray) -> MetricStat:
    mean, n, u = _mean(values)
    return {"mean": mean, "n": n, "n_undefined": u}


def _metric_means(t: _Table, s: str, gaps: Mapping[str, tuple[str, str]]) -> dict[str, MetricStat]:
    out = {m: _stat(t.values[(s, m)]) for m in t.metric_names}
    out.update({g: _stat(t.values[(s, m1)] - t.values[(s, m2)]) for g, (m1, m2) in gaps.items()})
    return out


def _abstentions(t: _Table, s: str) -> Abstentions | None:
    """Judge abstentions of setting ``s`` over the cohort: their sum and the questions with any."""
    if ABSTENTIONS not in t.metric_names:
        return None
    v = t.values[(s, ABSTENTIONS)]
    ok = np.isfinite(v)
    return {
        "sum": int(v[ok].sum()) if ok.any() else None,
        "n_questions_with": int((v[ok] > 0).sum()),
        "n": int(ok.sum()),
    }


def _summary(run: Run, t: _Table, gaps: Mapping[str, tuple[str, str]]) -> list[SummaryRow]:
    ctx = _context_means(t)
    status = _status_counts(run)
    rows = []
    for sdef in run.settings:
        s = sdef["name"]
        c = t.cohort.counts[s]
        row: SummaryRow = {
            "setting": s,
            "compressor": sdef.get("compressor"),
            "budget": sdef.get("budget"),
            "n_records": c["n_records"],
            "n_ok": c["n_ok"],
            "n_failed": c["n_failed"],
            "n_missing": c["n_missing"],
            "n_cohort": c["n_cohort"],
            "n_excluded": c["n_excluded"],
            "status": dict(status[s]),
            "achieved_ratio": ctx[s][0],
            "achieved_tokens": ctx[s][1],
            "metrics": _metric_means(t, s, gaps),
            "left_out": s in t.cohort.left_out,
        }
        abst = _abstentions(t, s)
        rows.append(row if abst is None else {**row, "judge_abstentions": abst})
    return rows


# ---------------------------------------------------------------- contrasts


def _contrasts_note(declared: Any, rows: Sequence[ContrastRow]) -> str | None:
    if rows:
        return None
    if declared:
        return (
            "The suite declares contrasts, but they expand to no rows: no record carries a metric with a "
            "known direction (did every record fail?)."
        )
    return "The suite declares no contrasts (`contrasts:` in the suite YAML)."


# ---------------------------------------------------------------- validity and the threshold sweep


def _sweep_row(s: str, tf: float, rates: np.ndarray, precisions: np.ndarray) -> SweepRow:
    rate, n_rate, u_rate = _mean(rates)
    gp, n_gp, u_gp = _mean(precisions)
    return {
        "setting": s,
        "threshold": tf,
        "rate": rate,
        "rate_n": n_rate,
        "rate_n_undefined": u_rate,
        "grounded_precision": gp,
        "grounded_precision_n": n_gp,
        "grounded_precision_n_undefined": u_gp,
    }


def _sweep(run: Run, t: _Table) -> list[SweepRow]:
    """Per setting x threshold: mean re-attribution rate and grounded precision over the cohort."""
    in_cohort = t.pos >= 0  # per record
    order = _setting_order(run)
    rows: list[SweepRow] = []
    for (s, tf), (at, rate, gp) in sorted(
        run.sweeps.by_key.items(), key=lambda kv: (order.get(kv[0][0], 1e9), kv[0][1])
    ):
        keep = in_cohort[np.frombuffer(at, dtype=np.int64)]
        if keep.any():
            rows.append(_sweep_row(s, tf, np.frombuffer(rate)[keep], np.frombuffer(gp)[keep]))
    return rows


#: datasets whose answer metric is str-EM (ALCE's ASQA convention); every other dataset's is answer F1
STR_EM_DATASETS = frozenset({"asqa"})


def _answer_metric(metric_names: Sequence[str], dataset: Any = None) -> str | None:
    """The quality metric of the validity and mediation analyses, by the dataset's convention: ``str_em`` for
    ASQA (ALCE), else ``answer_f1`` (HotpotQA, MuSiQue, QASPER's official metric); the other when the records lack
    it."""
    name = dataset.get("name") if isinstance(dataset, Mapping) else dataset
    order = ("str_em", "answer_f1") if str(name).lower() in STR_EM_DATASETS else ("answer_f1", "str_em")
    return next((m for m in order if m in metric_names), None)


def _validity_lacking(answer: str | None, metric_names: Sequence[str]) -> list[str]:
    lacking = [m for m in ("answer_in_context", "retrieval_recall") if m not in metric_names]
    return (["answer_f1"] if answer is None else []) + lacking


def _row_clusters(run: Run, q_idx: np.ndarray) -> list[Any]:
    """Each row's resampling unit: its question, or its cluster (``suite.cluster_key``: a QASPER paper)."""
    qids = [run.columns.question_ids[i] for i in q_idx.tolist()]
    key = run.suite.get("cluster_key")
    if not key:
        return qids
    found = dict(zip(unique := list(dict.fromkeys(qids)), _clusters(run, unique, key), strict=True))
    return [found[q] for q in qids]


def _validity(run: Run, metric_names: Sequence[str], seed: int = 0, n_resamples: int = 10_000) -> Validity:
    answer = _answer_metric(metric_names, run.suite.get("dataset"))
    lacking = _validity_lacking(answer, metric_names)
    if lacking:
        return {
            "available": False,
            "answer_metric": answer,
            "note": f"not computed: the records carry no {', '.join(lacking)}",
        }
    cols = run.columns
    q_idx, s_idx, st_idx = cols.indexes()
    ok = st_idx == cols.status_code("ok")
    f1, aic, recall = (cols.column(m)[ok] for m in (str(answer), "answer_in_context", "retrieval_recall"))
    groups = [cols.settings[i] for i in s_idx[ok].tolist()]
    opts: dict[str, Any] = {"clusters": _row_clusters(run, q_idx[ok]), "seed": seed, "n_resamples": n_resamples}
    stats, med = validity_with_mediation(f1, aic, recall, groups, **opts)
    order = _setting_order(run)

    def in_order(by: Mapping[str, Any]) -> dict[str, Any]:
        return dict(sorted(by.items(), key=lambda kv: order.get(kv[0], 1e9)))

    return {
        "available": True,
        "answer_metric": answer,
        "note": None,
        "pooled": stats["pooled"],
        "by_group": in_order(stats["by_group"]),
        "mediation": {"pooled": med["pooled"], "by_group": in_order(med["by_group"])},
    }


# ---------------------------------------------------------------- everything


def _constant(t: _Table, rows: Sequence[ContrastRow]) -> list[str]:
    """The contrasted metrics identical in every setting on every cohort question (left out of the family)."""
    return constant_metrics(t, list(dict.fromkeys(r.metric_a for r in rows if r.metric_a == r.metric_b)))


def _reference_aic(run: Run, t: _Table) -> np.ndarray | None:
    """The reference setting's answer-in-context per cohort question (the examples' "left the context")."""
    ref = reference_setting(run.settings, run.setting_names)
    if ref is None:
        return None
    return t.values.get((ref, "answer_in_context"), np.full(len(t.qids), np.nan))


def holm_family_counts(run: Run) -> tuple[str, dict[str, int], tuple[str, ...]]:
    """``(declared Holm scope, rows per family name, the separate families)`` of the run's Holm family, the
    left-out rows not counted (what ``rageval report A B`` sums to size the union's replicates before any test)."""
    t = _cohort_table(run)
    plan, _ = contrast_plan(run, t)
    return plan.holm, family_counts(plan.rows, _constant(t, plan.rows), "family"), plan.separate


def summarize(run: Run) -> dict[str, Any]:
    """The summary of ``run`` alone — its cohort, metric names and the per-setting means and counts that
    :func:`analyze` reports under the same keys — without the statistics (no resampling)."""
    t = _cohort_table(run)
    gaps = _present_gaps(t.metric_names)
    return {
        "cohort": _cohort_info(run, t, None),
        "metric_names": t.metric_names,
        "gaps": {g: list(p) for g, p in gaps.items()},
        "summary": _summary(run, t, gaps),
    }


def check_settings(n: int, where: str) -> None:
    """Refuse a run of ``n`` settings over :data:`~rageval.limits.SETTINGS` (a :class:`RunError` naming ``where``),
    before its statistics are computed (``rageval score`` and ``suite`` ask before anything is scored): the
    frontier's dominance relations, each tested, grow with the square of the settings."""
    if n > SETTINGS.value():
        why = "the report's paired tests grow with the square of the settings"
        raise RunError(SETTINGS.refusal(where, f"{n:,} settings", why))


def analyze(
    run: Run,
    *,
    seed: int | None = None,
    n_resamples: int | str | None = None,
    family_size: int | None = None,
) -> Analysis:
    """Every number of the report of ``run`` (see the module doc), its findings included.

    ``n_resamples``: ``"auto"``, ``"paper"`` or a count (default: the suite's ``statistics.resamples``, else
    ``auto``); ``family_size``: the Holm family ``auto`` sizes the test for (default: the run's own largest).
    """
    check_settings(len(run.settings), printable(run.path))
    suite = run.suite
    seed = _resolve_seed(suite, seed)
    t = _cohort_table(run)
    gaps = _present_gaps(t.metric_names)
    plan, n_rows_left_out = contrast_plan(run, t)
    rows = plan.rows
    constant = _constant(t, rows)
    sizes = family_counts(rows, constant, plan.holm, plan.separate)
    m = family_size if family_size is not None else largest_family(sizes)
    reps = setting_replicates(run, n_resamples, m)
    clusters = _cohort_clusters(run, t.qids)
    contrasts, res = family_contrasts(
        t, rows, clusters, seed=seed, reps=reps, constant=constant, holm_scope=plan.holm, separate=plan.separate
    )
    frontier = frontier_analysis(
        run, t, clusters, seed=seed, n_resamples=reps.bootstrap, resamples=AUTO if reps.setting == AUTO else reps.test
    )
    an = Analysis(
        suite=_suite_info(suite),
        seed=seed,
        n_resamples=reps.bootstrap,
        n_test_resamples=reps.test,
        resamples=reps.setting,
        confidence=0.95,
        settings=tuple(run.settings),
        cohort=_cohort_info(run, t, clusters, n_rows_left_out),
        metric_names=tuple(t.metric_names),
        gaps=gaps,
        summary=tuple(_summary(run, t, gaps)),
        contrasts=tuple(contrasts),
        holm=holm_info(run, plan, constant, reps, res, m),
        contrasts_declared=suite.get("contrasts"),
        contrasts_note=_contrasts_note(suite.get("contrasts"), rows),
        validity=_validity(run, t.metric_names, seed, reps.bootstrap),
        sweep=tuple(_sweep(run, t)),
        frontier=frontier,
        examples=marked_examples(run.records, run.marks, run.columns, run.settings, t.qids, _reference_aic(run, t)),
        judge_stats=run.manifest.get("judge_stats") or {},
        notes=tuple(str(n) for n in run.manifest.get("notes") or []),  # the run's own notes (rageval score: inputs)
        # values fixed by construction (rageval.diagnostics.structural), marked in the tables and the findings
        structural=cast("dict[str, dict[str, StructuralMark]]", structural_marks(run.facts, [*t.metric_names, *gaps])),
        findings=(),
        manifest=run.manifest,
    )
    return with_findings(an)  # the findings read the numbers above: a step of their own
