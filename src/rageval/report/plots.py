"""Frontier plots: each metric against the **achieved** compression ratio.

One line per compressor through its budgets (sorted by achieved ratio), each point
labelled with its nominal budget, so a compressor that ignores its budget shows up
as points piled at one ratio.  Emitted and grounded citation scores are drawn side
by side with a shared y axis.  Matplotlib is imported lazily and used without
pyplot (no global state, Agg canvas); SVG ids are salted and no dates are written,
so the files are byte-for-byte reproducible.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rageval.diagnostics import DERIVED, contrasted_by_default, direction_of

__all__ = ["frontier_groups", "render_frontiers", "render_sweep", "budget_label", "unplotted_metrics"]


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
    # a figure with no defined point says nothing: the HTML lists those metrics instead
    return [(g, ms) for g, ms in groups if any(_points(an, m) for m in ms)]


def unplotted_metrics(an: dict[str, Any]) -> list[str]:
    """Metrics with a direction but no defined (ratio, mean) point in any setting."""
    return [m for m in an["metric_names"] if contrasted_by_default(m) and not _points(an, m)]


def _points(an: dict[str, Any], metric: str) -> dict[str, list[tuple[float, float, str]]]:
    by_comp: dict[str, list[tuple[float, float, str]]] = {}
    for row in an["summary"]:
        x, y = row["achieved_ratio"], row["metrics"][metric]["mean"]
        if x is None or y is None:
            continue
        comp = row.get("compressor") or row["setting"]
        by_comp.setdefault(comp, []).append((x, y, budget_label(row.get("budget"), comp)))
    return {c: sorted(pts) for c, pts in by_comp.items()}


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
            FigureCanvasAgg(fig)
            axes = fig.subplots(1, len(metrics), sharey=True, squeeze=False)[0]
            for ax, m in zip(axes, metrics):
                pts = _points(an, m)
                for comp in comps:
                    if comp not in pts:
                        continue
                    xs, ys, labels = zip(*pts[comp])
                    ax.plot(xs, ys, marker="o", ms=4, lw=1.2, color=color[comp], label=comp)
                    for x, y, lab in pts[comp]:
                        ax.annotate(
                            lab, (x, y), textcoords="offset points", xytext=(3, 4), fontsize=7, color=color[comp]
                        )
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
            axes[0].set_ylabel("mean over the common cohort")
            handles, labels = axes[0].get_legend_handles_labels()
            if handles:
                axes[-1].legend(handles, labels, fontsize=7, loc="best", frameon=False)
            w = 4.6 * len(metrics)  # fixed margins: tight_layout costs more than all the drawing
            fig.subplots_adjust(left=0.65 / w, right=1 - 0.15 / w, bottom=0.13, top=0.92, wspace=0.08)
            png, svg = out_dir / f"frontier_{name}.png", out_dir / f"frontier_{name}.svg"
            buf = io.BytesIO()
            fig.savefig(buf, format="png", metadata={"Software": None})
            png.write_bytes(buf.getvalue())
            fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
            written[name] = {"png": png, "svg": svg, "png_bytes": buf.getvalue(), "metrics": metrics}
    return written


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
        png.write_bytes(buf.getvalue())
        fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    return {"png": png, "svg": svg, "png_bytes": buf.getvalue()}
