"""The figures report.html draws itself: each figure's data, embedded in the page as JSON, drawn as SVG by the
page's own script (``templates/figures.js``; no library, no request).

The same figures as the static files :mod:`rageval.report.plots` draws on request (``--figures png,svg``): the
Pareto figures of the declared pairs of axes, each metric against the achieved ratio (the two sides of a
derived gap in one figure) and the re-attribution threshold sweep.  Each point carries its setting, its values,
their 95% bootstrap intervals (:mod:`rageval.report.frontier`) and the number of cohort questions its mean rests
on, so the page shows the numbers on hover and lists them in a table under the figure (the figure's text
alternative).  Nothing here imports matplotlib: a report draws no figure file unless asked.

The data is escaped for a ``<script type="application/json">`` element (:func:`figures_json`: no ``<`` in it,
so a setting named ``</script>`` stays data).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rageval.report import tables as T
from rageval.report.plots import _interval, _pareto_pairs, _points, frontier_groups, pareto_name
from rageval.report.result import Analysis

__all__ = ["page_figures", "figures_json", "RATIO_LABEL", "MEAN_LABEL"]

RATIO_LABEL = "achieved ratio (context / retrieved tokens)"
MEAN_LABEL = "mean over the common cohort (95% CI)"
_ARROW = {"higher": "↑", "lower": "↓"}


def _num(x: Any) -> float | None:
    """A coordinate as the page reads it (6 decimals); None where undefined (never 0)."""
    if x is None or not math.isfinite(float(x)):
        return None
    return round(float(x), 6)


def _n(an: Analysis, setting: str, key: str) -> int | None:
    """The questions a setting's mean of ``key`` rests on (its interval's, else the summary's count)."""
    iv = (an.frontier.get("intervals") or {}).get(setting, {}).get(key) or {}
    if iv.get("n") is not None:
        return int(iv["n"])
    for row in an.summary:
        if row["setting"] == setting:
            st: Mapping[str, Any] = (row.get("metrics") or {}).get(key) or {}
            return st.get("n")
    return None


def _point(an: Analysis, setting: str, x: float, y: float, kx: str, ky: str, **extra: Any) -> dict[str, Any]:
    ivx, ivy = _interval(an, setting, kx), _interval(an, setting, ky)
    return {
        "s": setting,
        "x": _num(x),
        "y": _num(y),
        "xlo": _num(ivx[0]) if ivx and ivx[1] - ivx[0] > 1e-12 else None,
        "xhi": _num(ivx[1]) if ivx and ivx[1] - ivx[0] > 1e-12 else None,
        "ylo": _num(ivy[0]) if ivy else None,
        "yhi": _num(ivy[1]) if ivy else None,
        "n": _n(an, setting, ky),
        **extra,
    }


def _compressors(an: Analysis) -> list[str]:
    return list(dict.fromkeys((r.get("compressor") or r["setting"]) for r in an.summary))


def _logx(an: Analysis) -> bool:
    ratios = [r["achieved_ratio"] for r in an.summary if r["achieved_ratio"]]
    return bool(ratios) and min(ratios) > 0 and max(ratios) / min(ratios) > 20


def _ci(lo: Any, hi: Any) -> str:
    return "" if lo is None or hi is None else f"[{T.fmt(lo, 3)}, {T.fmt(hi, 3)}]"


def _cell(v: Any, lo: Any, hi: Any) -> str:
    ci = _ci(lo, hi)
    return T.fmt(v, 3, na="undefined") + (f" {ci}" if ci else "")


def _frontier_figure(an: Analysis, name: str, metrics: Sequence[str], comps: Sequence[str]) -> dict[str, Any]:
    panels = []
    rows = []
    for m in metrics:
        pts = _points(an, m)
        series: list[dict[str, Any]] = []
        for c in comps:
            if c not in pts:
                continue
            points = [_point(an, s, x, y, "achieved_ratio", m) for x, y, _l, s in pts[c]]
            series.append({"name": c, "c": comps.index(c) % 10, "line": True, "points": points})
            for p in points:
                lead = [m] if len(metrics) > 1 else []
                cells = [_cell(p["x"], p["xlo"], p["xhi"]), _cell(p["y"], p["ylo"], p["yhi"]), T.fmt(p["n"], na="")]
                rows.append([p["s"], *lead, *cells])
        panels.append({"key": m, "title": m, "series": series})
    head = ["setting", *(["metric"] if len(metrics) > 1 else []), "achieved ratio", "mean [95% CI]", "n"]
    return {
        "kind": "frontier",
        "name": f"frontier_{name}",
        "title": "frontier: " + ", ".join(metrics) + " vs achieved ratio (95% CI)",
        "x": {"key": "achieved_ratio", "label": RATIO_LABEL, "log": _logx(an)},
        "y_label": MEAN_LABEL,
        "panels": panels,
        "legend": [{"name": c, "c": comps.index(c) % 10} for c in comps if any(c in _points(an, m) for m in metrics)],
        "table": {"columns": head, "rows": rows},
        "wide": len(metrics) > 1,
    }


def _pareto_figure(an: Analysis, pair: Mapping[str, Any], comps: Sequence[str]) -> dict[str, Any]:
    comp_of = {r["setting"]: (r.get("compressor") or r["setting"]) for r in an.summary}
    x, y = pair["x"], pair["y"]
    front = set(pair["frontier"])
    by: dict[str, list[dict[str, Any]]] = {}
    rows = []
    for s, (px, py) in pair["points"].items():
        p = _point(an, s, px, py, x, y, front=s in front)
        by.setdefault(comp_of.get(s, s), []).append(p)
        rows.append(
            [
                s,
                _cell(p["x"], p["xlo"], p["xhi"]),
                _cell(p["y"], p["ylo"], p["yhi"]),
                T.fmt(p["n"], na=""),
                "yes" if s in front else "no",
            ]
        )
    order = [c for c in comps if c in by] + [c for c in by if c not in comps]
    series = [
        {"name": c, "c": (comps.index(c) if c in comps else 7) % 10, "line": False, "points": by[c]} for c in order
    ]
    line = [[_num(a), _num(b)] for a, b in sorted(tuple(pair["points"][s]) for s in pair["frontier"])]
    n_rel, n_sup = len(pair["relations"]), pair["n_supported"]
    dx, dy = pair["directions"]
    return {
        "kind": "pareto",
        "name": f"pareto_{pareto_name(pair)}",
        "title": f"Pareto frontier: {y} vs {x} (95% CI)",
        "subtitle": f"{len(pair['frontier'])} on the frontier (ringed); {n_rel} dominance relations, {n_sup} supported "
        f"by the paired test (Holm, α={pair['alpha']:g})",
        "x": {"key": x, "label": f"{x} {_ARROW.get(dx, '')} (95% CI)".replace("  ", " "), "log": False},
        "y_label": f"{y} {_ARROW.get(dy, '')} (95% CI)".replace("  ", " "),
        "panels": [{"key": y, "title": "", "series": series, "frontier": line}],
        "legend": [{"name": sr["name"], "c": sr["c"]} for sr in series],
        "table": {"columns": ["setting", x + " [95% CI]", y + " [95% CI]", "n", "on the frontier"], "rows": rows},
        "wide": False,
    }


def _sweep_figure(an: Analysis) -> dict[str, Any]:
    rows_in: Sequence[Mapping[str, Any]] = an.sweep
    settings = list(dict.fromkeys(r["setting"] for r in rows_in))
    panels = []
    for key, title in (("rate", "re-attributable rate"), ("grounded_precision", "grounded precision")):
        series = []
        for i, s in enumerate(settings):
            pts = [
                {
                    "s": s,
                    "x": _num(r["threshold"]),
                    "y": _num(r[key]),
                    "xlo": None,
                    "xhi": None,
                    "ylo": None,
                    "yhi": None,
                    "n": r.get(f"{key}_n"),
                }
                for r in rows_in
                if r["setting"] == s and r[key] is not None
            ]
            if pts:
                series.append({"name": s, "c": i % 10, "line": True, "points": pts})
        panels.append({"key": key, "title": title, "series": series})
    rows = [
        [
            r["setting"],
            f"{r['threshold']:g}",
            T.fmt(r["rate"], 3, na="undefined"),
            T.fmt(r["grounded_precision"], 3, na="undefined"),
            T.fmt(r.get("rate_n"), na=""),
        ]
        for r in rows_in
    ]
    return {
        "kind": "sweep",
        "name": "reattribution_sweep",
        "title": "re-attribution threshold sweep",
        "x": {"key": "threshold", "label": "entailment threshold", "log": False},
        "y_label": "",
        "panels": panels,
        "legend": [{"name": s, "c": i % 10} for i, s in enumerate(settings)],
        "table": {"columns": ["setting", "threshold", "re-attributable rate", "grounded precision", "n"], "rows": rows},
        "wide": True,
    }


def page_figures(an: Analysis) -> dict[str, Any]:
    """``{"frontier": {name: figure}, "pareto": {name: figure}, "sweep": figure or None}``: every figure the page
    draws, in the order :mod:`rageval.report.plots` draws the same figures as files.  A figure: its ``kind``,
    file ``name``, ``title``, x axis (``key``, ``label``, ``log``), ``y_label``, ``panels`` (each a metric
    ``key`` and ``title`` and its ``series``: a name, a colour index and points ``{s, x, y, xlo, xhi, ylo, yhi,
    n}``), ``legend`` and the ``table`` of its numbers."""
    comps = _compressors(an)
    frontier = {name: _frontier_figure(an, name, metrics, comps) for name, metrics in frontier_groups(an)}
    pareto = {pareto_name(p): _pareto_figure(an, p, comps) for p in _pareto_pairs(an)}
    return {"frontier": frontier, "pareto": pareto, "sweep": _sweep_figure(an) if an.sweep else None}


def figures_json(figures: Sequence[Mapping[str, Any]]) -> str:
    """The figures' data (no tables: the page writes those) as JSON safe inside ``<script
    type="application/json">``: no ``<`` in the text, so no ``</script>`` or ``<!--`` ends or changes the
    element; the page reads it with ``JSON.parse``."""
    data = [{k: v for k, v in f.items() if k != "table"} for f in figures]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False).replace(
        "<", "\\u003c"
    )
