"""Frontier plots: each metric against the **achieved** compression ratio, and the Pareto figures.

One line per compressor through its budgets (sorted by achieved ratio), each point
labelled with its nominal budget, so a compressor that ignores its budget shows up
as points piled at one ratio.  Emitted and grounded citation scores are drawn side
by side with a shared y axis.  Every point carries its 95% bootstrap interval as an
error bar on the metric and, where it varies, on the achieved ratio
(:mod:`rageval.report.frontier`); a metric constant across settings is listed, not
plotted.  The Pareto figures (``pareto_<x>__<y>``) mark the settings on the frontier
of each declared pair of axes.  Labels are placed so that they do not overlap
(:func:`place_labels`, a deterministic greedy search).  Matplotlib is imported lazily
and used without pyplot (no global state, Agg canvas); SVG ids are salted and no
dates are written, so the files are byte-for-byte reproducible.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rageval.diagnostics import DERIVED, contrasted_by_default
from rageval.io import write_bytes_atomic

__all__ = [
    "frontier_groups",
    "render_frontiers",
    "render_pareto",
    "pareto_name",
    "render_sweep",
    "budget_label",
    "unplotted_metrics",
    "constant_metrics",
    "place_labels",
]


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


def frontier_groups(an: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """``[(figure name, [metric per panel])]`` for the metrics the run has.

    The two sides of each derived gap (the catalog's ``DERIVED``: emitted and grounded
    precision, emitted and grounded recall) share a figure; every other metric with a
    catalog direction gets its own.  A key the catalog does not declare is not plotted.
    """
    names = an["metric_names"]
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
    # a figure with no defined point, or of metrics constant across settings, says nothing: the HTML lists them
    constant = set(constant_metrics(an))
    groups = [(g, [m for m in ms if m not in constant]) for g, ms in groups]
    return [(g, ms) for g, ms in groups if ms and any(_points(an, m) for m in ms)]


def constant_metrics(an: dict[str, Any]) -> list[str]:
    """Metrics with a direction whose mean is the same in every setting (listed, not plotted)."""
    return [m for m in (an.get("frontier") or {}).get("constant", []) if contrasted_by_default(m)]


def unplotted_metrics(an: dict[str, Any]) -> list[str]:
    """Metrics with a direction but no defined (ratio, mean) point in any setting."""
    return [m for m in an["metric_names"] if contrasted_by_default(m) and not _points(an, m)]


def _points(an: dict[str, Any], metric: str) -> dict[str, list[tuple[float, float, str, str]]]:
    by_comp: dict[str, list[tuple[float, float, str, str]]] = {}
    for row in an["summary"]:
        x, y = row["achieved_ratio"], row["metrics"][metric]["mean"]
        if x is None or y is None:
            continue
        comp = row.get("compressor") or row["setting"]
        by_comp.setdefault(comp, []).append((x, y, budget_label(row.get("budget"), comp), row["setting"]))
    return {c: sorted(pts) for c, pts in by_comp.items()}


def _interval(an: dict[str, Any], setting: str, key: str) -> tuple[float, float] | None:
    iv = ((an.get("frontier") or {}).get("intervals") or {}).get(setting, {}).get(key)
    if not iv or iv.get("ci_low") is None or iv.get("ci_high") is None:
        return None
    return iv["ci_low"], iv["ci_high"]


def _errorbars(ax, an, pts, key_y, color, key_x="achieved_ratio") -> None:
    """95% bootstrap intervals as error bars: on y always, on x where the interval has a width."""
    for x, y, _lab, setting in pts:
        ivy = _interval(an, setting, key_y)
        ivx = _interval(an, setting, key_x)
        # a bootstrap bound can sit a rounding error on the wrong side of the mean (a constant metric):
        # clamp at 0, since matplotlib rejects negative error bars
        yerr = [[max(0.0, y - ivy[0])], [max(0.0, ivy[1] - y)]] if ivy else None
        xerr = [[max(0.0, x - ivx[0])], [max(0.0, ivx[1] - x)]] if ivx and ivx[1] - ivx[0] > 1e-12 else None
        if yerr is None and xerr is None:
            continue
        ax.errorbar([x], [y], yerr=yerr, xerr=xerr, fmt="none", ecolor=color, elinewidth=0.8, capsize=2, alpha=0.7)


_OFFSETS = ((4, 4), (4, -11), (-1, 4), (-1, -11), (4, -3), (-1, -3), (-0.5, 9), (-0.5, -16))


def place_labels(ax, renderer, items, *, fontsize: float = 7) -> None:
    """Annotate ``items = [(x, y, text, color)]`` so that no two labels overlap (and none covers a point).

    Deterministic greedy search: for each label (in the given order) try eight positions
    around its point at growing distances and keep the first whose box overlaps no label
    placed so far, no other point and stays inside the axes; failing that, the position
    with the least overlap.  A label moved away from its point gets a thin leader line.
    """
    if not items:
        return
    fig = ax.figure
    scale = fig.dpi / 72.0
    axbox = ax.get_window_extent(renderer)
    pts = [ax.transData.transform((x, y)) for x, y, _, _ in items]
    r = 3.0 * scale
    obstacles = [(px - r, py - r, px + r, py + r) for px, py in pts]
    placed: list[tuple[float, float, float, float]] = []

    pad = 1.5 * scale  # keep a small gap between labels, so two never read as one

    def overlap(a, b) -> float:
        w = min(a[2], b[2]) - max(a[0], b[0]) + pad
        h = min(a[3], b[3]) - max(a[1], b[1]) + pad
        return w * h if w > 0 and h > 0 else 0.0

    for i, ((x, y, text, color), (px, py)) in enumerate(zip(items, pts)):
        probe = ax.text(0, 0, text, fontsize=fontsize)
        bb = probe.get_window_extent(renderer)
        probe.remove()
        w, h = bb.width, bb.height
        best = None
        for ring in (1.0, 2.2, 3.6):
            for dx, dy in _OFFSETS:
                ox = (dx * ring if dx > 0 else (-w / scale - 4 * ring if dx == -1 else -w / scale / 2)) * scale
                oy = dy * ring * scale
                box = (px + ox, py + oy, px + ox + w, py + oy + h)
                cost = sum(overlap(box, b) for b in placed)
                cost += sum(overlap(box, o) for j, o in enumerate(obstacles) if j != i)
                outside = box[0] < axbox.x0 or box[2] > axbox.x1 or box[1] < axbox.y0 or box[3] > axbox.y1
                cost += (w * h) if outside else 0.0
                if best is None or cost < best[0]:
                    best = (cost, ox, oy, box, ring)
                if cost == 0:
                    break
            if best is not None and best[0] == 0:
                break
        assert best is not None  # _OFFSETS is not empty
        _, ox, oy, box, ring = best
        placed.append(box)
        arrow = dict(arrowstyle="-", lw=0.4, color=color, alpha=0.6) if ring > 1 else None
        ax.annotate(
            text,
            (x, y),
            textcoords="offset points",
            xytext=(ox / scale, oy / scale),
            fontsize=fontsize,
            color=color,
            ha="left",
            va="bottom",
            arrowprops=arrow,
        )


def render_frontiers(an: dict[str, Any], out_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Write ``frontier_<name>.png`` and ``.svg`` per group; return ``{name: {png, svg, png_bytes, metrics}}``."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    comps = list(dict.fromkeys((r.get("compressor") or r["setting"]) for r in an["summary"]))
    palette = matplotlib.colormaps["tab10"]
    color = {c: palette(i % 10) for i, c in enumerate(comps)}
    ratios = [r["achieved_ratio"] for r in an["summary"] if r["achieved_ratio"]]
    logx = bool(ratios) and min(ratios) > 0 and max(ratios) / min(ratios) > 20
    written: dict[str, dict[str, Any]] = {}
    with matplotlib.rc_context({"svg.hashsalt": "rageval-frontier", "svg.fonttype": "none", "font.size": 9}):
        for name, metrics in frontier_groups(an):
            fig = Figure(figsize=(4.6 * len(metrics), 3.6), dpi=100)
            canvas = FigureCanvasAgg(fig)
            axes = fig.subplots(1, len(metrics), sharey=True, squeeze=False)[0]
            w = 4.6 * len(metrics)  # fixed margins: tight_layout costs more than all the drawing
            fig.subplots_adjust(left=0.65 / w, right=1 - 0.15 / w, bottom=0.13, top=0.92, wspace=0.08)
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
            if handles:
                axes[-1].legend(handles, labels, fontsize=7, loc="best", frameon=False)
            for ax, m in zip(axes, metrics):  # labels last: the limits and the legend are final
                pts = _points(an, m)
                ax.set_xlim(ax.get_xlim())
                ax.set_ylim(ax.get_ylim())
                items = [(x, y, lab, color[c]) for c in comps for x, y, lab, _s in pts.get(c, [])]
                place_labels(ax, renderer, items)
            png, svg = out_dir / f"frontier_{name}.png", out_dir / f"frontier_{name}.svg"
            buf = io.BytesIO()
            fig.savefig(buf, format="png", metadata={"Software": None})
            _save_figure(fig, buf, png, svg)
            written[name] = {"png": png, "svg": svg, "png_bytes": buf.getvalue(), "metrics": metrics}
    return written


def pareto_name(pair: dict[str, Any]) -> str:
    return f"{pair['x']}__{pair['y']}"


def render_pareto(an: dict[str, Any], out_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Write ``pareto_<x>__<y>.png`` / ``.svg`` per computed pair of axes: every setting with its 95% intervals,
    the frontier marked and joined; return ``{name: {png, svg, png_bytes, pair}}``."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    pairs = [p for p in (an.get("frontier") or {}).get("pairs", []) if not p.get("note") and p.get("points")]
    if not pairs:
        return {}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = {r["setting"]: r for r in an["summary"]}
    comps = list(dict.fromkeys((r.get("compressor") or r["setting"]) for r in an["summary"]))
    palette = matplotlib.colormaps["tab10"]
    color = {c: palette(i % 10) for i, c in enumerate(comps)}
    written: dict[str, dict[str, Any]] = {}
    with matplotlib.rc_context({"svg.hashsalt": "rageval-pareto", "svg.fonttype": "none", "font.size": 9}):
        for pair in pairs:
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
                comp = (rows.get(s) or {}).get("compressor") or s
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
            png, svg = out_dir / f"pareto_{name}.png", out_dir / f"pareto_{name}.svg"
            buf = io.BytesIO()
            fig.savefig(buf, format="png", metadata={"Software": None})
            _save_figure(fig, buf, png, svg)
            written[name] = {"png": png, "svg": svg, "png_bytes": buf.getvalue(), "pair": pair}
    return written


def _save_figure(fig: Any, buf: io.BytesIO, png: Path, svg: Path) -> None:
    """The PNG (rendered into ``buf``) and the SVG of ``fig``, each written atomically (:mod:`rageval.io`)."""
    write_bytes_atomic(png, buf.getvalue())
    svg_buf = io.BytesIO()
    fig.savefig(svg_buf, format="svg", metadata={"Date": None, "Creator": None})
    write_bytes_atomic(svg, svg_buf.getvalue())


def render_sweep(an: dict[str, Any], out_dir: str | Path) -> dict[str, Any] | None:
    """The re-attribution threshold sweep (rate and grounded precision per setting), or None without data."""
    rows = an.get("sweep") or []
    if not rows:
        return None
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    out_dir = Path(out_dir)
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
        png, svg = out_dir / "reattribution_sweep.png", out_dir / "reattribution_sweep.svg"
        buf = io.BytesIO()
        fig.savefig(buf, format="png", metadata={"Software": None})
        _save_figure(fig, buf, png, svg)
    return {"png": png, "svg": svg, "png_bytes": buf.getvalue()}
