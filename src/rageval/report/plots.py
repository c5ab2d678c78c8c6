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

:func:`render_figures` draws every figure of a report; the figures are independent,
so on Linux it hands them to worker processes forked from this one (matplotlib
already imported, the analysis inherited), one per available core up to the number
of figures, and collects what each wrote.  Each figure is the same function of the
analysis wherever it is drawn, so the files are the same bytes as a one-process
drawing (``processes=1``, the fallback elsewhere and in a process that runs other
threads, where forking is unsafe).
"""

from __future__ import annotations

import io
import os
import sys
import threading
from pathlib import Path
from typing import Any

from rageval.diagnostics import DERIVED, contrasted_by_default
from rageval.io import write_bytes_atomic

__all__ = [
    "frontier_groups",
    "render_figures",
    "figure_processes",
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
        label = ax.annotate(
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
        if arrow is not None:
            label.arrow_patch.set_connectionstyle(_leader_connection())


def _leader_connection() -> Any:
    """Matplotlib's straight connection (``arc3``), remembering its last clipped path.

    A leader line's path is clipped against its label's box by bisection (a point-in-box
    test per step), and a drawing asks for it twice: once for the legend's ``best``
    search, once to draw it.  Same endpoints, same box, same shrink: the same path, so
    the second request is answered from the first (each format is still computed).
    """
    from matplotlib.patches import ConnectionStyle

    class Arc3Once(ConnectionStyle.Arc3):
        def __init__(self) -> None:
            super().__init__(rad=0.0)
            self._last: tuple[Any, Any] | None = None

        def __call__(self, posA, posB, shrinkA=2.0, shrinkB=2.0, patchA=None, patchB=None):
            key = (tuple(map(float, posA)), tuple(map(float, posB)), float(shrinkA), float(shrinkB))
            key += tuple(_box(p) for p in (patchA, patchB))
            if self._last is None or self._last[0] != key:
                self._last = (key, super().__call__(posA, posB, shrinkA, shrinkB, patchA, patchB))
            return self._last[1]

    return Arc3Once()


def _box(patch: Any) -> tuple[Any, ...] | None:
    """What a clipping patch's point-in-patch test depends on (a label's box: a rectangle in pixels)."""
    if patch is None:
        return None
    geometry = (patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height())
    style = (float(patch.get_linewidth()), tuple(patch.get_edgecolor()))
    return (type(patch).__name__, *geometry, *style, patch.get_transform().get_matrix().tobytes())


#: (kind, name, panels or pair) per figure; "frontier" figures have one panel per metric
_Job = tuple[str, str, Any]
#: what forked workers inherit: the analysis, the output folder and the figures to draw
_WORK: tuple[dict[str, Any], Path, list[_Job]] | None = None
_MAX_PROCESSES = 8


def _jobs(an: dict[str, Any]) -> list[_Job]:
    jobs: list[_Job] = [("frontier", name, metrics) for name, metrics in frontier_groups(an)]
    jobs += [("pareto", pareto_name(pair), pair) for pair in _pareto_pairs(an)]
    if an.get("sweep"):
        jobs.append(("sweep", "reattribution_sweep", None))
    return jobs


def _draw_job(an: dict[str, Any], out_dir: Path, job: _Job) -> dict[str, Any]:
    kind, name, arg = job
    if kind == "frontier":
        return _draw_frontier(an, out_dir, name, arg)
    if kind == "pareto":
        return _draw_pareto(an, out_dir, arg)
    return _draw_sweep(an, out_dir)


def _draw_inherited(i: int) -> dict[str, Any]:
    """In a forked worker: draw figure ``i`` of the work the parent set before forking."""
    assert _WORK is not None, "figure workers are forked after the work is set"
    an, out_dir, jobs = _WORK
    return _draw_job(an, out_dir, jobs[i])


def _cost(job: _Job) -> float:
    """A figure's relative drawing time (panels; measured on the demo), to hand out the longest first."""
    kind, _name, arg = job
    return 1.0 * len(arg) if kind == "frontier" else 1.3 if kind == "pareto" else 0.8


def figure_processes(n_figures: int, processes: int | None = None) -> int:
    """How many processes :func:`render_figures` draws ``n_figures`` with (1: in this process).

    ``processes`` None: the environment variable ``RAGEVAL_FIGURE_PROCESSES`` where set
    (``1``: draw in this process), else one per core this process may use (at most 8)
    less the cores other processes are running on at that moment (:func:`_busy_cores`),
    at least one: on a machine whose cores are all taken, workers only add their
    start-up (5% slower at load 5.5 on 2 cores, ``bench/bench_report.py``), while on an
    idle one two workers took the demo's report from 4.8 s to 3.3 s.  Never more than
    the figures.  Forking needs Linux and a process without other threads (a thread
    holding a lock at the fork would leave the child's copy locked forever); tqdm's
    progress-bar monitor is the one thread allowed (:func:`_fork_safe`).
    """
    if processes is None and os.environ.get("RAGEVAL_FIGURE_PROCESSES", "").strip().isdigit():
        processes = int(os.environ["RAGEVAL_FIGURE_PROCESSES"])
    if processes is None:
        try:
            processes = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            processes = os.cpu_count() or 1
        processes = min(processes, _MAX_PROCESSES) - _busy_cores()
    n = max(1, min(int(processes), n_figures))
    if n > 1 and (not sys.platform.startswith("linux") or not _fork_safe()):
        return 1
    return n


def _busy_cores() -> int:
    """Processes other than this one running right now (Linux ``/proc/loadavg``; 0 where unreadable).

    The instantaneous count, not the 1-minute load average: that average still holds the
    work this process did just before (a suite's records), which would leave an idle
    machine's second core unused.
    """
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            running = int(fh.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 0
    return max(0, running - 1)  # this process is one of them


def _fork_safe() -> bool:
    """No thread but this one, or only tqdm's monitor (it sleeps on an event and checks progress bars every
    10 s; the figure workers never touch tqdm, so no lock it may hold at the fork is one they need)."""
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    return all(type(t).__name__ == "TMonitor" and t.daemon for t in others)


def _run_jobs(an: dict[str, Any], out_dir: Path, jobs: list[_Job], processes: int | None) -> list[dict[str, Any]]:
    n = figure_processes(len(jobs), processes)
    if n <= 1:
        return [_draw_job(an, out_dir, job) for job in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from importlib import import_module

    for module in ("matplotlib.figure", "matplotlib.backends.backend_agg"):
        import_module(module)  # imported once here, inherited by every worker

    global _WORK
    _WORK = (an, out_dir, jobs)
    try:
        order = sorted(range(len(jobs)), key=lambda i: -_cost(jobs[i]))  # longest first: the last to finish is short
        from rageval.run.lock import child_of_lock_holder

        with ProcessPoolExecutor(
            max_workers=n,
            mp_context=multiprocessing.get_context("fork"),
            initializer=child_of_lock_holder,
            initargs=(os.getpid(),),
        ) as pool:
            drawn = dict(zip(order, pool.map(_draw_inherited, order)))
    finally:
        _WORK = None
    return [drawn[i] for i in range(len(jobs))]


def render_figures(
    an: dict[str, Any], out_dir: str | Path, *, processes: int | None = None
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], dict[str, Any] | None]:
    """Every figure of a report: ``(frontiers, pareto, sweep)`` as :func:`render_frontiers`,
    :func:`render_pareto` and :func:`render_sweep` return them, with the same files.

    The figures are drawn in ``processes`` forked worker processes (default and limits:
    :func:`figure_processes`); each writes its own PNG and SVG.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = _jobs(an)
    drawn = _run_jobs(an, out_dir, jobs, processes)
    by_kind: dict[str, dict[str, dict[str, Any]]] = {"frontier": {}, "pareto": {}, "sweep": {}}
    for (kind, name, _arg), result in zip(jobs, drawn):
        by_kind[kind][name] = result
    return by_kind["frontier"], by_kind["pareto"], by_kind["sweep"].get("reattribution_sweep")


def _frontier_style(an: dict[str, Any]) -> tuple[list[str], dict[str, Any], bool]:
    """The compressors in summary order, a colour per compressor, and whether the ratio axis is logarithmic."""
    import matplotlib

    comps = list(dict.fromkeys((r.get("compressor") or r["setting"]) for r in an["summary"]))
    palette = matplotlib.colormaps["tab10"]
    color = {c: palette(i % 10) for i, c in enumerate(comps)}
    ratios = [r["achieved_ratio"] for r in an["summary"] if r["achieved_ratio"]]
    logx = bool(ratios) and min(ratios) > 0 and max(ratios) / min(ratios) > 20
    return comps, color, logx


def render_frontiers(an: dict[str, Any], out_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Write ``frontier_<name>.png`` and ``.svg`` per group; return ``{name: {png, svg, png_bytes, metrics}}``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return {name: _draw_frontier(an, out_dir, name, metrics) for name, metrics in frontier_groups(an)}


def _draw_frontier(an: dict[str, Any], out_dir: Path, name: str, metrics: list[str]) -> dict[str, Any]:
    """One frontier figure (a panel per metric), written as PNG and SVG."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    comps, color, logx = _frontier_style(an)
    with matplotlib.rc_context({"svg.hashsalt": "rageval-frontier", "svg.fonttype": "none", "font.size": 9}):
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
            _best_once(axes[-1].legend(handles, labels, fontsize=7, loc="best", frameon=False))
        for ax, m in zip(axes, metrics):  # labels last: the limits and the legend are final
            pts = _points(an, m)
            ax.set_xlim(ax.get_xlim())
            ax.set_ylim(ax.get_ylim())
            items = [(x, y, lab, color[c]) for c in comps for x, y, lab, _s in pts.get(c, [])]
            place_labels(ax, renderer, items)
        png, svg = out_dir / f"frontier_{name}.png", out_dir / f"frontier_{name}.svg"
        png_bytes = _save_figure(fig, png, svg)
    return {"png": png, "svg": svg, "png_bytes": png_bytes, "metrics": metrics}


def pareto_name(pair: dict[str, Any]) -> str:
    return f"{pair['x']}__{pair['y']}"


def _pareto_pairs(an: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in (an.get("frontier") or {}).get("pairs", []) if not p.get("note") and p.get("points")]


def render_pareto(an: dict[str, Any], out_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Write ``pareto_<x>__<y>.png`` / ``.svg`` per computed pair of axes: every setting with its 95% intervals,
    the frontier marked and joined; return ``{name: {png, svg, png_bytes, pair}}``."""
    pairs = _pareto_pairs(an)
    if not pairs:
        return {}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return {pareto_name(pair): _draw_pareto(an, out_dir, pair) for pair in pairs}


def _draw_pareto(an: dict[str, Any], out_dir: Path, pair: dict[str, Any]) -> dict[str, Any]:
    """One Pareto figure: every setting with its intervals, the frontier ringed and joined, as PNG and SVG."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = {r["setting"]: r for r in an["summary"]}
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
        _best_once(ax.legend(fontsize=7, loc="best", frameon=False))
        ax.set_xlim(ax.get_xlim())
        ax.set_ylim(ax.get_ylim())
        place_labels(ax, renderer, items, fontsize=6.5)
        name = pareto_name(pair)
        png, svg = out_dir / f"pareto_{name}.png", out_dir / f"pareto_{name}.svg"
        png_bytes = _save_figure(fig, png, svg)
    return {"png": png, "svg": svg, "png_bytes": png_bytes, "pair": pair}


def _best_once(legend: Any) -> None:
    """Search ``loc="best"`` once per figure instead of at each layout pass of each format.

    Matplotlib's search scores nine candidate boxes against every artist of the axes,
    the leader lines of the labels included (a large part of a figure's cost), and a
    legend runs it twice per drawing (its size, then its drawing) with nothing changed
    in between, once for the PNG and again for the SVG.  Here the first search (the
    PNG's) picks the location; later layout passes place the legend at that location
    (the corner or side matplotlib would use for that code), so the SVG's legend sits
    where the PNG's does.  Without the private methods (another matplotlib) the legend
    is left as it is.
    """
    find = getattr(legend, "_find_best_position", None)
    anchored = getattr(legend, "_get_anchored_bbox", None)
    codes = getattr(legend, "codes", None)
    if find is None or anchored is None or not isinstance(codes, dict):
        return
    from matplotlib.transforms import Bbox

    chosen: list[int] = []

    def place(code: int, width: float, height: float, renderer: Any) -> tuple[float, float]:
        return anchored(code, Bbox.from_bounds(0, 0, width, height), legend.get_bbox_to_anchor(), renderer)

    def best(width: float, height: float, renderer: Any) -> Any:
        if chosen:
            return place(chosen[0], width, height, renderer)
        found = find(width, height, renderer)
        at = tuple(map(float, found))
        code = next(
            (c for c in range(1, len(codes)) if tuple(map(float, place(c, width, height, renderer))) == at), None
        )
        if code is not None:
            chosen.append(code)
        return found

    legend._find_best_position = best


def _save_figure(fig: Any, png: Path, svg: Path) -> bytes:
    """The PNG and the SVG of ``fig``, each written atomically (:mod:`rageval.io`); return the PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    write_bytes_atomic(png, buf.getvalue())
    svg_buf = io.BytesIO()
    fig.savefig(svg_buf, format="svg", metadata={"Date": None, "Creator": None})
    write_bytes_atomic(svg, svg_buf.getvalue())
    return buf.getvalue()


def render_sweep(an: dict[str, Any], out_dir: str | Path) -> dict[str, Any] | None:
    """The re-attribution threshold sweep (rate and grounded precision per setting), or None without data."""
    if not an.get("sweep"):
        return None
    return _draw_sweep(an, Path(out_dir))


def _draw_sweep(an: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = an["sweep"]
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
            _best_once(axes[1].legend(handles, labels, fontsize=7, frameon=False))
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.13, top=0.92, wspace=0.15)
        png, svg = out_dir / "reattribution_sweep.png", out_dir / "reattribution_sweep.svg"
        png_bytes = _save_figure(fig, png, svg)
    return {"png": png, "svg": svg, "png_bytes": png_bytes}
