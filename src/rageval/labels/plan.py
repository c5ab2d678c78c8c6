"""``rageval label RUN --plan --width W --labels FILE``: how many questions to label for a PPI++ interval of
half-width ``W`` (:func:`rageval.stats.ppi.plan_labels`), from the labels so far or a pilot's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rageval.labels.correct import _clusters, _num, _side
from rageval.labels.errors import LabelError

__all__ = ["plan_rows", "plan_more"]


def plan_rows(
    run_dir: str | Path, labels_file: str | Path, width: float, *, metric: str | None = None
) -> list[dict[str, Any]]:
    """Per setting and judge-based metric (or ``metric`` alone): the labelled questions so far and the total
    :func:`~rageval.stats.ppi.plan_labels` gives (None where it cannot be reached: ``why``)."""
    from rageval.labels.apply import human_values
    from rageval.labels.export import cohort_questions, run_records
    from rageval.labels.pairs import PPI_METRICS
    from rageval.stats.ppi import plan_labels

    if not width > 0:
        raise LabelError(f"--width must be a positive half-width, got {width}")
    run = run_records(run_dir)
    human = human_values(run_dir, labels_file, run=run)
    cohort = cohort_questions(run)
    judge = {q: {s: dict(r.metrics or {}) for s, r in recs.items()} for q, recs in run.by_question.items()}
    clusters = None
    key = run.manifest.suite.cluster_key
    if key:
        clusters = {q: (next(iter(recs.values())).extra or {}).get(key) for q, recs in run.by_question.items()}
    metrics = [metric] if metric else list(PPI_METRICS)
    if metric and metric not in PPI_METRICS:
        raise LabelError(f"--metric {metric!r} is not a judge-based metric a label corrects ({', '.join(PPI_METRICS)})")
    labelled = set(human.values)
    rows = []
    for s in run.settings:
        for m in metrics:

            def pick(per, s=s, m=m):
                return _num((per.get(s) or {}).get(m))

            ql, y, yh, qu, yu, _ = _side(cohort, labelled, judge, human.values, pick)
            if not ql:
                continue
            row: dict[str, Any] = {"setting": s, "metric": m, "n_labelled": len(ql), "total": None, "why": None}
            try:
                row["total"] = plan_labels(
                    y,
                    yh,
                    yu,
                    half_width=width,
                    clusters_labelled=_clusters(ql, clusters),
                    clusters_unlabelled=_clusters(qu, clusters),
                )
            except ValueError as err:
                row["why"] = str(err)
            rows.append(row)
    if not rows:
        raise LabelError(f"{labels_file}: no labelled question in the run's cohort yet: label a pilot sample first")
    return rows


def plan_more(run_dir: str | Path, labels_file: str | Path, width: float, *, metric: str | None = None) -> list[str]:
    """The planning lines: the most questions any mean needs, then one line per metric (its widest setting and how
    many settings cannot reach the width), or with ``metric`` one line per setting of it.

    >>> rows = [{"setting": "a", "metric": "m", "n_labelled": 10, "total": 40, "why": None},
    ...         {"setting": "b", "metric": "m", "n_labelled": 10, "total": 90, "why": None},
    ...         {"setting": "c", "metric": "m", "n_labelled": 10, "total": None, "why": "no variance"}]
    >>> print("\\n".join(_lines(rows, 0.1, by_setting=False)))
    label 80 more questions (90 in all) for a 95% CI half-width of 0.1 on every mean that can reach it
      m: 10 labelled, 90 needed (80 more), widest of 3 settings: b; 1 cannot reach it (--metric m says why)
    (--metric NAME lists each setting of one metric)
    >>> print("\\n".join(_lines(rows, 0.1, by_setting=True)))
    label 80 more questions (90 in all) for a 95% CI half-width of 0.1 on every mean that can reach it
      a m: 10 labelled, 40 needed (30 more)
      b m: 10 labelled, 90 needed (80 more)
      c m: 10 labelled; no variance
    """
    return _lines(plan_rows(run_dir, labels_file, width, metric=metric), width, by_setting=metric is not None)


def _lines(rows: list[dict[str, Any]], width: float, *, by_setting: bool) -> list[str]:
    lines = [_headline(rows, width)]
    if by_setting:
        lines += [_setting_line(r) for r in rows]
        return lines
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    lines += [_metric_line(m, [r for r in rows if r["metric"] == m]) for m in metrics]
    if len({r["setting"] for r in rows}) > 1:
        lines.append("(--metric NAME lists each setting of one metric)")
    return lines


def _headline(rows: list[dict[str, Any]], width: float) -> str:
    reach = [r for r in rows if r["total"] is not None]
    if not reach:
        return f"no mean can reach a 95% CI half-width of {width:g} with more labels (below: why)"
    worst = max(reach, key=lambda r: r["total"])
    more = max(0, worst["total"] - worst["n_labelled"])
    which = "every mean below" if len(reach) == len(rows) else "every mean that can reach it"
    return f"label {more} more questions ({worst['total']} in all) for a 95% CI half-width of {width:g} on {which}"


def _setting_line(r: dict[str, Any]) -> str:
    if r["total"] is None:
        return f"  {r['setting']} {r['metric']}: {r['n_labelled']} labelled; {r['why']}"
    more = max(0, r["total"] - r["n_labelled"])
    return f"  {r['setting']} {r['metric']}: {r['n_labelled']} labelled, {r['total']} needed ({more} more)"


def _metric_line(m: str, of: list[dict[str, Any]]) -> str:
    ok = [r for r in of if r["total"] is not None]
    out = len(of) - len(ok)
    line = f"  {m}: {max(r['n_labelled'] for r in of)} labelled"
    if ok:
        w = max(ok, key=lambda r: r["total"])
        which = f"widest of {len(of)} settings" if len(of) > 1 else "its one setting"
        line += f", {w['total']} needed ({max(0, w['total'] - w['n_labelled'])} more), {which}: {w['setting']}"
    if out:
        line += f"{';' if ok else ':'} {out} cannot reach it (--metric {m} says why)"
    return line
