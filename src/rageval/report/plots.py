"""Frontier plots as files: each metric against the **achieved** compression ratio, and the Pareto figures.

Drawn only on request (``--figures png,svg``; :data:`FORMATS`): report.html draws the same figures itself from
their data (:mod:`rageval.report.page_figures`), so a report imports matplotlib only when asked for the files.

One line per compressor through its budgets (sorted by achieved ratio), each point
labelled with its nominal budget, so a compressor that ignores its budget shows up
as points piled at one ratio.  Emitted and grounded citation scores are drawn side
by side with a shared y axis.  Every point carries its 95% bootstrap interval as an
error bar on the metric and, where it varies, on the achieved ratio
(:mod:`rageval.report.frontier`); a metric constant across settings is listed, not
plotted, and a figure with an axis that does not vary (the achieved ratio the same in
every setting; :meth:`~rageval.report.result.Analysis.fixed_axis`) is not drawn.  The Pareto figures (``pareto_<x>__<y>``) mark the settings on the frontier
of each declared pair of axes.  Labels are placed so that they do not overlap
(:func:`place_labels`, a deterministic greedy search).  Matplotlib is imported lazily
and used without pyplot (no global state, Agg canvas); SVG ids are salted and no
dates are written, so the files are byte-for-byte reproducible.

:func:`render_figures` draws every figure of a report; the figures are independent,
so on Linux it hands them to worker processes forked from this one
(:mod:`rageval.report.figure_pool`), to the same bytes as a one-process drawing.
Where the labels and the legend go is :mod:`rageval.report.labels`.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rageval.cli.options import FIGURE_FORMATS, figure_formats
from rageval.diagnostics import DERIVED, contrasted_by_default
from rageval.io import write_bytes_atomic
from rageval.report.figure_pool import draw_figures
from rageval.report.labels import place_labels
from rageval.report.result import Analysis

__all__ = [
    "FORMATS",
    "check_formats",
    "frontier_groups",
    "render_figures",
    "render_frontiers",
    "render_pareto",
    "pareto_name",
    "render_sweep",
    "budget_label",
    "unplotted_metrics",
    "constant_metrics",
]


#: the figure files a report writes on request (``--figures png,svg``), in the order they are written
FORMATS = FIGURE_FORMATS
check_formats = figure_formats


def budget_label(budget: Any, compressor: str | None) -> str:
    if budget is None:
        return "full" if compressor == "identity" else "no budget"
    if isinstance(budget, float) and budget <= 1.0:
        return f"{budget:g}"
    if isinstance(budget, int) and not isinstance(budget, bool):
        return f"{budget} tok"
    return str(budget)


def _figure_name(gap: str) -> str:
    """``gap_precision`` -> ``citation_precision``: the figure that shows a derived gap's two sides."""
    return "citation_" + gap.removeprefix("gap_")


def frontier_groups(an: Analysis) -> list[tuple[str, list[str]]]:
    """``[(figure name, [metric per panel])]`` for the metrics the run has.

    The two sides of each derived gap (the catalog's ``DERIVED``: emitted and grounded
    precision, emitted and grounded recall) share a figure; every other metric with a
    catalog direction gets its own.  A key the catalog does not declare is not plotted.
    """
    names = an.metric_names
    groups: list[tuple[str, list[str]]] = []
    shown: set[str] = set()
    for gap, (minuend, subtrahend, _direction) in DERIVED.items():
        pair = [m for m in (minuend, subtrahend) if m in names]
        if pair:
            groups.append((_figure_name(gap), pair))
            shown.update(pair)
    for m in names:
        if m not in shown and contrasted_by_default(m):
            groups.append((m, [m]))
    if an.fixed_axis("achieved_ratio") is not None:
        return []  # the x-axis does not vary: no figure against it (the HTML says so)
    # a figure with no defined point, or of metrics constant across settings, says nothing: the HTML lists them
    constant = set(constant_metrics(an))
    groups = [(g, [m for m in ms if m not in constant]) for g, ms in groups]
    return [(g, ms) for g, ms in groups if ms and any(_points(an, m) for m in ms)]


def constant_metrics(an: Analysis) -> list[str]:
    """Metrics with a direction whose mean is the same in every setting (listed, not plotted)."""
    return [m for m in an.frontier.get("constant", []) if contrasted_by_default(m)]


def unplotted_metrics(an: Analysis) -> list[str]:
    """Metrics with a direction but no defined (ratio, mean) point in any setting."""
    return [m for m in an.metric_names if contrasted_by_default(m) and not _points(an, m)]


def _points(an: Analysis, metric: str) -> dict[str, list[tuple[float, float, str, str]]]:
    by_comp: dict[str, list[tuple[float, float, str, str]]] = {}
    for row in an.summary:
        x, y = row["achieved_ratio"], row["metrics"][metric]["mean"]
        if x is None or y is None:
            continue
        comp = row.get("compressor") or row["setting"]
        by_comp.setdefault(comp, []).append((x, y, budget_label(row.get("budget"), comp), row["setting"]))
    return {c: sorted(pts) for c, pts in by_comp.items()}


def _interval(an: Analysis, setting: str, key: str) -> tuple[float, float] | None:
    iv = (an.frontier.get("intervals") or {}).get(setting, {}).get(key)
    if not iv or iv.get("ci_low") is None or iv.get("ci_high") is None:
        return None
    return iv["ci_low"], iv["ci_high"]


def _errorbars(ax, an, pts, key_y, color, key_x="achieved_ratio") -> None:
    """95% bootstrap intervals as error bars: on y always, on x where the interval has a width.

    One ``errorbar`` call per kind of point of a line (with a y interval, an x interval or
    both) instead of one per point: the same bars and caps in the same colour, drawn to
    the same PNG pixels on the demo, with far fewer artists to build and draw.
    """
    groups: dict[tuple[bool, bool], list[tuple[float, float, Any, Any]]] = {}
    for x, y, _lab, setting in pts:
        ivy = _interval(an, setting, key_y)
        ivx = _interval(an, setting, key_x)
        # a bootstrap bound can sit a rounding error on the wrong side of the mean (a constant metric):
        # clamp at 0, since matplotlib rejects negative error bars
        yerr = (max(0.0, y - ivy[0]), max(0.0, ivy[1] - y)) if ivy else None
        xerr = (max(0.0, x - ivx[0]), max(0.0, ivx[1] - x)) if ivx and ivx[1] - ivx[0] > 1e-12 else None
        if yerr is None and xerr is None:
            continue
        groups.setdefault((yerr is not None, xerr is not None), []).append((x, y, yerr, xerr))
    for (has_y, has_x), group in groups.items():
        xs, ys, yerrs, xerrs = zip(*group)
        ax.errorbar(
            list(xs),
            list(ys),
            yerr=[[e[0] for e in yerrs], [e[1] for e in yerrs]] if has_y else None,
            xerr=[[e[0] for e in xerrs], [e[1] for e in xerrs]] if has_x else None,
            fmt="none",
            ecolor=color,
            elinewidth=0.8,
            capsize=2,
            alpha=0.7,
        )


#: (kind, name, panels or pair) per figure; "frontier" figures have one panel per metric
_Job = tuple[str, str, Any]


def _jobs(an: Analysis) -> list[_Job]:
    jobs: list[_Job] = [("frontier", name, metrics) for name, metrics in frontier_groups(an)]
    jobs += [("pareto", pareto_name(pair), pair) for pair in _pareto_pairs(an)]
    if an.sweep:
        jobs.append(("sweep", "reattribution_sweep", None))
    return jobs


def _draw_job(an: Analysis, out_dir: Path, formats: Sequence[str], job: _Job) -> dict[str, Any]:
    kind, name, arg = job
    if kind == "frontier":
        return _draw_frontier(an, out_dir, name, arg, formats)
    if kind == "pareto":
        return _draw_pareto(an, out_dir, arg, formats)
    return _draw_sweep(an, out_dir, formats)


def _cost(job: _Job) -> float:
    """A figure's relative drawing time (panels; measured on the demo), to hand out the longest first."""
    kind, _name, arg = job
    return 1.0 * len(arg) if kind == "frontier" else 1.3 if kind == "pareto" else 0.8


def render_figures(
    an: Analysis, out_dir: str | Path, *, processes: int | None = None, formats: Sequence[str] = FORMATS
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], dict[str, Any] | None]:
    """Every figure of a report as files: ``(frontiers, pareto, sweep)`` as :func:`render_frontiers`,
    :func:`render_pareto` and :func:`render_sweep` return them, with the same files.

    ``formats``: ``png``, ``svg`` or both (the figure's ``png`` / ``svg`` path is None for a format not
    written).  The figures are drawn in ``processes`` forked worker processes (default and limits:
    :func:`rageval.report.figure_pool.figure_processes`); each writes its own files.  The report page draws
    its own figures (:mod:`rageval.report.page_figures`): these files are written only on request
    (``--figures png,svg``).
    """
    formats = check_formats(formats)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = _jobs(an)
    draw = functools.partial(_draw_job, an, out_dir, formats)
    drawn = draw_figures(draw, jobs, cost=_cost, processes=processes)
    by_kind: dict[str, dict[str, dict[str, Any]]] = {"frontier": {}, "pareto": {}, "sweep": {}}
    for (kind, name, _arg), result in zip(jobs, drawn):
        by_kind[kind][name] = result
    return by_kind["frontier"], by_kind["pareto"], by_kind["sweep"].get("reattribution_sweep")


def _frontier_style(an: Analysis) -> tuple[list[str], dict[str, Any], bool]:
    """The compressors in summary order, a colour per compressor, and whether the ratio axis is logarithmic."""
    import matplotlib

    comps = list(dict.fromkeys((r.get("compressor") or r["setting"]) for r in an.summary))
    palette = matplotlib.colormaps["tab10"]
    color = {c: palette(i % 10) for i, c in enumerate(comps)}
    ratios = [r["achieved_ratio"] for r in an.summary if r["achieved_ratio"]]
    logx = bool(ratios) and min(ratios) > 0 and max(ratios) / min(ratios) > 20
    return comps, color, logx


def render_frontiers(an: Analysis, out_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Write ``frontier_<name>.png`` and ``.svg`` per group; return ``{name: {png, svg, png_bytes, metrics}}``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return {name: _draw_frontier(an, out_dir, name, metrics, FORMATS) for name, metrics in frontier_groups(an)}


#: inches right of a frontier figure's panels for its legend
_LEGEND_IN = 1.1


def _draw_frontier(
    an: Analysis, out_dir: Path, name: str, metrics: list[str], formats: Sequence[str]
) -> dict[str, Any]:
    """One frontier figure (a panel per metric), written as PNG and SVG."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    comps, color, logx = _frontier_style(an)
    with matplotlib.rc_context({"svg.hashsalt": "rageval-frontier", "svg.fonttype": "none", "font.size": 9}):
        w = 4.6 * len(metrics) + _LEGEND_IN  # fixed margins: tight_layout costs more than all the drawing
        fig = Figure(figsize=(w, 3.6), dpi=100)
        canvas = FigureCanvasAgg(fig)
        axes = fig.subplots(1, len(metrics), sharey=True, squeeze=False)[0]
        fig.subplots_adjust(left=0.65 / w, right=1 - (0.15 + _LEGEND_IN) / w, bottom=0.13, top=0.92, wspace=0.08)
        renderer = canvas.get_renderer()
        for ax, m in zip(axes, metrics):
            pts = _points(an, m)
            for comp in comps:
                if comp not in pts:
                    continue
                xs, ys, _labels, _settings = zip(*pts[comp])
                ax.plot(xs, ys, marker="o", ms=4, lw=1.2, color=color[comp], label=comp)
                _errorbars(ax, an, pts[comp], m, color[comp])
            if not pts:
                ax.text(
                    0.5,
                    0.5,
                    "undefined in every setting",
                    ha="center",
                    va="center",
                    transform=ax.transAxes,
                    color="0.4",
                )
            if logx:
                ax.set_xscale("log")
            ax.margins(x=0.1, y=0.1)
            ax.set_xlabel("achieved ratio (context / retrieved tokens)")
            ax.set_title(m)
            ax.grid(True, alpha=0.3)
        axes[0].set_ylabel("mean over the common cohort (95% CI)")
        handles, labels = axes[0].get_legend_handles_labels()
        if handles:  # beside the panels, never over the data
            fig.legend(handles, labels, fontsize=7, loc="center right", frameon=False)
        for ax, m in zip(axes, metrics):  # labels last: the limits and the legend are final
            pts = _points(an, m)
            ax.set_xlim(ax.get_xlim())
            ax.set_ylim(ax.get_ylim())
            items = [(x, y, lab, color[c]) for c in comps for x, y, lab, _s in pts.get(c, [])]
            place_labels(ax, renderer, items)
        png, svg, png_bytes = _save_figure(fig, out_dir / f"frontier_{name}", formats)
    return {"png": png, "svg": svg, "png_bytes": png_bytes, "metrics": metrics}


def pareto_name(pair: Mapping[str, Any]) -> str:
    return f"{pair['x']}__{pair['y']}"


def _pareto_pairs(an: Analysis) -> list[Mapping[str, Any]]:
    """The computed pairs of axes with a point to draw and no axis that does not vary (:meth:`Analysis.fixed_axes`)."""
    return [
        p
        for p in an.frontier.get("pairs", [])
        if not p.get("note") and p.get("points") and not an.fixed_axes([p["x"], p["y"]])
    ]


def render_pareto(an: Analysis, out_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Write ``pareto_<x>__<y>.png`` / ``.svg`` per computed pair of axes: every setting with its 95% intervals,
    the frontier marked and joined; return ``{name: {png, svg, png_bytes, pair}}``."""
    pairs = _pareto_pairs(an)
    if not pairs:
        return {}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return {pareto_name(pair): _draw_pareto(an, out_dir, pair, FORMATS) for pair in pairs}


def _draw_pareto(an: Analysis, out_dir: Path, pair: Mapping[str, Any], formats: Sequence[str]) -> dict[str, Any]:
    """One Pareto figure: every setting with its intervals, the frontier ringed and joined, as PNG and SVG."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = {r["setting"]: r for r in an.summary}
    _comps, color, _logx = _frontier_style(an)
    with matplotlib.rc_context({"svg.hashsalt": "rageval-pareto", "svg.fonttype": "none", "font.size": 9}):
        x, y = pair["x"], pair["y"]
        fig = Figure(figsize=(6.4, 4.6), dpi=100)
        canvas = FigureCanvasAgg(fig)
        ax = fig.subplots()
        fig.subplots_adjust(left=0.11, right=0.97, bottom=0.11, top=0.87)
        renderer = canvas.get_renderer()
        front = set(pair["frontier"])
        items = []
        seen_comp: set[str] = set()
        for s, (px, py) in pair["points"].items():
            row = rows.get(s)
            comp = (row["compressor"] if row else None) or s
            c = color.get(comp, "0.3")
            on = s in front
            ax.plot(
                [px],
                [py],
                marker="o",
                ms=7 if on else 5,
                mec="black" if on else c,
                mew=1.2 if on else 0.5,
                color=c,
                alpha=1.0 if on else 0.55,
                ls="none",
                label=comp if comp not in seen_comp else None,
            )
            seen_comp.add(comp)
            _errorbars(ax, an, [(px, py, "", s)], y, c, key_x=x)
            items.append((px, py, s, c))
        fpts = sorted((pair["points"][s][0], pair["points"][s][1]) for s in pair["frontier"])
        if len(fpts) > 1:
            fx, fy = zip(*fpts)
            ax.plot(fx, fy, ls="--", lw=1.0, color="black", alpha=0.6, label="frontier")
        ax.margins(x=0.12, y=0.12)
        arrow = {"higher": "↑", "lower": "↓"}
        ax.set_xlabel(f"{x} {arrow.get(pair['directions'][0], '')} (95% CI)")
        ax.set_ylabel(f"{y} {arrow.get(pair['directions'][1], '')} (95% CI)")
        n_rel, n_sup = len(pair["relations"]), pair["n_supported"]
        ax.set_title(
            f"Pareto frontier: {y} vs {x}\n{len(pair['frontier'])} on the frontier (ringed); {n_rel} dominance "
            f"relations, {n_sup} supported by the paired test (Holm, α={pair['alpha']:g})",
            fontsize=8,
        )
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="best", frameon=False)
        ax.set_xlim(ax.get_xlim())
        ax.set_ylim(ax.get_ylim())
        place_labels(ax, renderer, items, fontsize=6.5)
        name = pareto_name(pair)
        png, svg, png_bytes = _save_figure(fig, out_dir / f"pareto_{name}", formats)
    return {"png": png, "svg": svg, "png_bytes": png_bytes, "pair": pair}


def _save_figure(fig: Any, stem: Path, formats: Sequence[str]) -> tuple[Path | None, Path | None, bytes | None]:
    """``fig`` as ``<stem>.png`` and/or ``<stem>.svg`` (``formats``), each written atomically
    (:mod:`rageval.io`); return ``(png path, svg path, PNG bytes)``, None for a format not written."""
    png = svg = png_bytes = None
    if "png" in formats:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", metadata={"Software": None})
        png, png_bytes = stem.with_name(stem.name + ".png"), buf.getvalue()
        write_bytes_atomic(png, png_bytes)
    if "svg" in formats:
        svg_buf = io.BytesIO()
        fig.savefig(svg_buf, format="svg", metadata={"Date": None, "Creator": None})
        svg = stem.with_name(stem.name + ".svg")
        write_bytes_atomic(svg, svg_buf.getvalue())
    return png, svg, png_bytes


def render_sweep(an: Analysis, out_dir: str | Path) -> dict[str, Any] | None:
    """The re-attribution threshold sweep (rate and grounded precision per setting), or None without data."""
    if not an.sweep:
        return None
    return _draw_sweep(an, Path(out_dir), FORMATS)


def _draw_sweep(an: Analysis, out_dir: Path, formats: Sequence[str]) -> dict[str, Any]:
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows: Sequence[Mapping[str, Any]] = an.sweep
    settings = list(dict.fromkeys(r["setting"] for r in rows))
    palette = matplotlib.colormaps["tab10"]
    with matplotlib.rc_context({"svg.hashsalt": "rageval-sweep", "svg.fonttype": "none", "font.size": 9}):
        fig = Figure(figsize=(9.2, 3.6), dpi=100)
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, 2, sharex=True, squeeze=False)[0]
        for ax, key, title in (
            (axes[0], "rate", "re-attributable rate"),
            (axes[1], "grounded_precision", "grounded precision"),
        ):
            for i, s in enumerate(settings):
                pts = [(r["threshold"], r[key]) for r in rows if r["setting"] == s and r[key] is not None]
                if pts:
                    xs, ys = zip(*pts)
                    ax.plot(xs, ys, marker="o", ms=4, lw=1.2, color=palette(i % 10), label=s)
            ax.set_xlabel("entailment threshold")
            ax.set_title(title)
            ax.grid(True, alpha=0.3)
        handles, labels = axes[0].get_legend_handles_labels()
        if handles:
            axes[1].legend(handles, labels, fontsize=7, frameon=False)
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.13, top=0.92, wspace=0.15)
        png, svg, png_bytes = _save_figure(fig, out_dir / "reattribution_sweep", formats)
    return {"png": png, "svg": svg, "png_bytes": png_bytes}
