"""Where a figure's point labels and legend go (:mod:`rageval.report.plots` draws the figures).

:func:`place_labels` annotates points so that no two labels overlap and none covers
a point or the legend (a deterministic greedy search; a label moved away from its point gets a
thin leader line); a label with no free spot is left out (the legend's colour and the explorer still name the
point), never drawn over another: the same analysis gives the same pixels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["place_labels"]

#: a label's positions around its point, in points at ring 1 (``dx == -1``: left of the point, its width away)
_OFFSETS = ((4, 4), (4, -11), (-1, 4), (-1, -11), (4, -3), (-1, -3), (-0.5, 9), (-0.5, -16))
#: the distances tried, as multiples of the offsets
_RINGS = (1.0, 2.2, 3.6, 5.2)

_Box = tuple[float, float, float, float]


def place_labels(ax, renderer, items, *, fontsize: float = 7) -> int:
    """Annotate ``items = [(x, y, text, color)]`` so that no two labels overlap (and none covers a point or
    the axes' legend); return how many were left out.

    Deterministic greedy search: for each label (in the given order) try eight positions
    around its point at growing distances and keep the first whose box overlaps no label
    placed so far, no other point, not the legend and stays inside the axes; a label with no such
    position is left out.  A label moved away from its point gets a thin leader line.
    """
    if not items:
        return 0
    scale = ax.figure.dpi / 72.0
    axbox = ax.get_window_extent(renderer)
    pts = [ax.transData.transform((x, y)) for x, y, _, _ in items]
    r = 3.0 * scale
    obstacles = [(px - r, py - r, px + r, py + r) for px, py in pts]
    legend = ax.get_legend()
    if legend is not None:
        lb = legend.get_window_extent(renderer)
        obstacles.append((lb.x0, lb.y0, lb.x1, lb.y1))  # index len(items): never a label's own point
    placed: list[_Box] = []
    left_out = 0
    pad = 1.5 * scale  # keep a small gap between labels, so two never read as one

    for i, ((x, y, text, color), (px, py)) in enumerate(zip(items, pts)):
        probe = ax.text(0, 0, text, fontsize=fontsize)
        bb = probe.get_window_extent(renderer)
        probe.remove()
        w, h = bb.width, bb.height

        def cost(box: _Box, i: int = i, w: float = w, h: float = h) -> float:
            total = sum(_overlap(box, b, pad) for b in placed)
            total += sum(_overlap(box, o, pad) for j, o in enumerate(obstacles) if j != i)
            outside = box[0] < axbox.x0 or box[2] > axbox.x1 or box[1] < axbox.y0 or box[3] > axbox.y1
            return total + ((w * h) if outside else 0.0)

        ox, oy, box, ring = _best_spot(px, py, w, h, scale, cost)
        if cost(box) > 0:  # no free spot: left out rather than drawn over another label, a point or the legend
            left_out += 1
            continue
        placed.append(box)
        _annotate(ax, (x, y), text, color, (ox / scale, oy / scale), far=ring > 1, fontsize=fontsize)
    return left_out


def _overlap(a: _Box, b: _Box, pad: float) -> float:
    """The area two boxes share, each grown by ``pad`` (0 when they are apart)."""
    w = min(a[2], b[2]) - max(a[0], b[0]) + pad
    h = min(a[3], b[3]) - max(a[1], b[1]) + pad
    return w * h if w > 0 and h > 0 else 0.0


def _best_spot(
    px: float, py: float, w: float, h: float, scale: float, cost: Callable[[_Box], float]
) -> tuple[float, float, _Box, float]:
    """``(dx, dy, box, ring)`` in pixels: the first free position around ``(px, py)``, else the least covered."""
    best = None
    for ring in _RINGS:
        for dx, dy in _OFFSETS:
            ox = (dx * ring if dx > 0 else (-w / scale - 4 * ring if dx == -1 else -w / scale / 2)) * scale
            oy = dy * ring * scale
            box = (px + ox, py + oy, px + ox + w, py + oy + h)
            c = cost(box)
            if best is None or c < best[0]:
                best = (c, ox, oy, box, ring)
            if c == 0:
                break
        if best is not None and best[0] == 0:
            break
    assert best is not None  # _OFFSETS is not empty
    return best[1], best[2], best[3], best[4]


def _annotate(ax, xy, text: str, color: Any, offset: tuple[float, float], *, far: bool, fontsize: float) -> None:
    """One label at ``offset`` points from its point; ``far``: moved away, with a leader line."""
    arrow = dict(arrowstyle="-", lw=0.4, color=color, alpha=0.6) if far else None
    ax.annotate(
        text,
        xy,
        textcoords="offset points",
        xytext=offset,
        fontsize=fontsize,
        color=color,
        ha="left",
        va="bottom",
        arrowprops=arrow,
    )
