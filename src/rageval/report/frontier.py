"""The Pareto frontier of a run, with intervals (docs/statistics.md#pareto-frontier).

For each pair of axes (default: achieved ratio x grounded precision and achieved
ratio x answer-in-context; ``frontier: {axes: [[x, y], ...]}`` in the suite), a
setting **dominates** another when its cohort mean is at least as good on both
axes and strictly better on one (the direction of each axis from the diagnostics
catalog; the achieved ratio and tokens: lower is better).  The **frontier** is the
settings no other setting dominates; two settings with identical means dominate
neither each other, so both can be on it.

Each dominance relation is checked with the paired tests: on every axis where
the two means differ, the paired sign-flip test of the per-question differences
(cluster-level where clustered), Holm-adjusted over every test of that pair of
axes.  A relation is *supported by the paired test* when each of those tests has
Holm p < alpha with the effect in the dominating direction; otherwise it holds
*by the means only*.

Each point is a setting's mean over the common cohort's questions defined on both axes, with the undefined
ones counted (``defined``); a setting with fewer than ``min_defined`` (default 0.5) of the cohort defined on
both axes is **sparse**: marked, and by default (``sparse: exclude``) kept out of the dominance relations, so
it is never on the frontier on few questions alone (``sparse: include`` ranks it as any other).

Every setting's mean on every plotted metric and on the achieved ratio also gets a
95% percentile bootstrap interval (the same engine, clusters resampled where
clustered).  A metric whose mean is the same in every setting (e.g. retrieval
recall under a fixed retriever) is listed as constant and not plotted.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from rageval.diagnostics import contrasted_by_default
from rageval.report.axes import AXIS_KEYS, DEFAULT_AXES, axis_direction
from rageval.report.result import Frontier
from rageval.rundir.columns import cell_matrix
from rageval.stats import paired_tests
from rageval.stats.holm import holm
from rageval.stats.resolution import replicates_for

__all__ = ["dominates", "pareto", "frontier_analysis", "axes_of", "sparse_rule", "CONSTANT_TOL", "MIN_DEFINED"]

#: means closer than this are one value (a metric constant across settings; a tie on an axis)
CONSTANT_TOL = 1e-12


def _sign(direction: str) -> float:
    if direction not in ("higher", "lower"):
        raise ValueError(f"an axis needs a direction (higher or lower is better), got {direction!r}")
    return 1.0 if direction == "higher" else -1.0


def dominates(a: Sequence[float], b: Sequence[float], directions: Sequence[str]) -> bool:
    """True when point ``a`` is at least as good as ``b`` on every axis and strictly better on one.

    >>> dominates((0.2, 0.8), (0.5, 0.8), ("lower", "higher")), dominates((0.2, 0.8), (0.2, 0.8), ("lower", "higher"))
    (True, False)
    """
    signs = [_sign(d) for d in directions]
    better = False
    for x, y, sgn in zip(a, b, signs):
        diff = sgn * (x - y)
        if diff < -CONSTANT_TOL:
            return False
        if diff > CONSTANT_TOL:
            better = True
    return better


def pareto(points: Mapping[str, Sequence[float]], directions: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """``(frontier, relations)``: the names no other point dominates (input order), and every
    ``(dominating, dominated)`` pair.

    >>> pareto({"a": (1.0, 0.9), "b": (0.5, 0.7), "c": (0.5, 0.6), "d": (0.5, 0.7)}, ("lower", "higher"))
    (['a', 'b', 'd'], [('b', 'c'), ('d', 'c')])
    """
    names = list(points)
    rel = [(s, t) for s in names for t in names if s != t and dominates(points[s], points[t], directions)]
    dominated = {t for _, t in rel}
    return [s for s in names if s not in dominated], rel


#: a setting with fewer than this share of the cohort's questions defined on both axes is marked sparse
MIN_DEFINED = 0.5


def axes_of(suite: Mapping[str, Any]) -> tuple[list[tuple[str, str]], float]:
    """The axes pairs and alpha a run's suite declares (``config.frontier``), else the defaults."""
    cfg = ((suite.get("config") or {}).get("frontier")) or {}
    axes = [tuple(a) for a in cfg.get("axes") or DEFAULT_AXES]
    return axes, float(cfg.get("alpha", 0.05))


def sparse_rule(suite: Mapping[str, Any]) -> tuple[float, str]:
    """``(min_defined, sparse)`` of the suite's ``frontier:`` (defaults 0.5 and ``exclude``)."""
    cfg = ((suite.get("config") or {}).get("frontier")) or {}
    return float(cfg.get("min_defined", MIN_DEFINED)), str(cfg.get("sparse", "exclude"))


def _defined(vals, settings, x: str, y: str) -> dict[str, dict[str, Any]]:
    """Per setting: the cohort questions defined on both axes, the undefined ones and the defined share."""
    out = {}
    for s in settings:
        both = np.isfinite(vals[(s, x)]) & np.isfinite(vals[(s, y)])
        n, total = int(both.sum()), int(both.size)
        out[s] = {"n": n, "n_undefined": total - n, "share": (n / total) if total else None}
    return out


class _Values(Mapping[tuple[str, str], np.ndarray]):
    """Per (setting, key) the cohort's values: the context axes held, a metric's made from the table when asked
    for (the table holds no copy: neither does this, so the intervals' matrix is the one copy held)."""

    def __init__(self, t: Any, keys: Sequence[str]) -> None:
        self._t = t
        self._order = [(s, k) for k in keys for s in t.settings]
        self._held = {(s, k): v for k in keys if k in AXIS_KEYS for s, v in t.context(k).items()}

    def __getitem__(self, key: tuple[str, str]) -> np.ndarray:
        held = self._held.get(key)
        if held is not None:
            return held
        if key not in self._order:
            raise KeyError(key)
        out: np.ndarray = self._t.values[key]
        return out

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


def _values(t: Any, keys: Sequence[str]) -> Mapping[tuple[str, str], np.ndarray]:
    return _Values(t, keys)


def _f(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _intervals(vals, settings, keys, clusters, seed, n_resamples) -> dict[str, dict[str, dict[str, Any]]]:
    cells = [(s, k) for s in settings for k in keys]
    out: dict[str, dict[str, dict[str, Any]]] = {s: {} for s in settings}
    n = len(next(iter(vals.values()), []))
    if not cells or not n:
        for s, k in cells:
            out[s][k] = {"mean": None, "ci_low": None, "ci_high": None, "n": 0}
        return out
    X = cell_matrix(vals, cells, n)
    # the intervals only: the engine's sign-flip test (drawn after the bootstrap, so its count changes no interval)
    # is not read here, and one replicate of it is drawn instead of n_resamples
    res = paired_tests(X, clusters=clusters, n_resamples=n_resamples, seed=seed, n_test_resamples=1)
    for c, (s, k) in enumerate(cells):
        row = res.row(c)
        out[s][k] = {"mean": row["estimate"], "ci_low": row["ci_low"], "ci_high": row["ci_high"], "n": row["n"]}
    return out


def _constant(intervals, settings, keys) -> list[str]:
    out = []
    for k in keys:
        means = [intervals[s][k]["mean"] for s in settings if intervals[s][k]["mean"] is not None]
        if len(means) >= 2 and max(means) - min(means) <= CONSTANT_TOL:
            out.append(k)
    return out


def _ranked(points, defined, min_defined: float, sparse_mode: str):
    """``(sparse, ranked)``: the settings with less than ``min_defined`` of the cohort defined on both axes, and
    the points the frontier ranks.  A sparse setting's means rest on few questions: by default (``exclude``) it
    is marked and kept out of the dominance relations, so it can neither form the frontier alone nor push
    settings measured on the cohort off it; ``include`` ranks it as any other."""
    sparse = [s for s in points if (defined[s]["share"] or 0.0) < min_defined]
    ranked = {s: p for s, p in points.items() if sparse_mode == "include" or s not in sparse}
    return sparse, ranked


def _pair(x, y, vals, intervals, settings, clusters, seed, resamples, alpha, rule=(MIN_DEFINED, "exclude")):
    dirs = (axis_direction(x), axis_direction(y))
    points = {
        s: (intervals[s][x]["mean"], intervals[s][y]["mean"])
        for s in settings
        if intervals[s][x]["mean"] is not None and intervals[s][y]["mean"] is not None
    }
    undefined = [s for s in settings if s not in points]
    defined = _defined(vals, settings, x, y)
    min_defined, sparse_mode = rule
    sparse, ranked = _ranked(points, defined, min_defined, sparse_mode)
    front, rel = pareto(ranked, dirs)
    tests, cols = _relation_tests(rel, (x, y), vals, intervals)
    p_raw = np.array([])
    res = None
    if cols:
        reps = replicates_for(resamples, len(cols), alpha)  # the relations' tests are their own Holm family
        res = paired_tests(
            np.column_stack(cols), clusters=clusters, n_resamples=reps.bootstrap, n_test_resamples=reps.test, seed=seed
        )
        p_raw = res.p_value
    p_adj = holm(p_raw) if cols else np.array([])
    by_relation: list[list[tuple[int, str]]] = [[] for _ in rel]  # each relation's tests, in test order
    for j, (ri, axis) in enumerate(tests):
        by_relation[ri].append((j, axis))
    relations = []
    for i, (s, u) in enumerate(rel):
        axes = [_axis_test(res, j, axis, p_adj[j], alpha) for j, axis in by_relation[i]]
        supported = bool(axes) and all(a["significant"] for a in axes)
        relations.append(
            {"dominating": s, "dominated": u, "axes": axes, "support": "paired test" if supported else "means only"}
        )
    return {
        "x": x,
        "y": y,
        "directions": list(dirs),
        "alpha": alpha,
        "points": {s: list(p) for s, p in points.items()},
        "frontier": front,
        "dominated": [s for s in ranked if s not in front],
        "undefined": undefined,
        "defined": defined,
        "min_defined": min_defined,
        "sparse": sparse,
        "sparse_mode": sparse_mode,
        "relations": relations,
        "n_tests": len(cols),
        "n_supported": sum(r["support"] == "paired test" for r in relations),
        "note": None,
    }


def _relation_tests(rel, axes, vals, intervals) -> tuple[list[tuple[int, str]], list[np.ndarray]]:
    """``(tests, columns)``: per dominance relation, each axis where the two means differ (relation index, axis)
    and the per-question differences to test there."""
    tests = []
    cols = []
    for i, (s, u) in enumerate(rel):
        for axis in axes:
            if abs(intervals[s][axis]["mean"] - intervals[u][axis]["mean"]) > CONSTANT_TOL:
                tests.append((i, axis))
                cols.append(vals[(s, axis)] - vals[(u, axis)])
    return tests, cols


def _axis_test(res: Any, j: int, axis: str, p_adj: float, alpha: float) -> dict[str, Any]:
    """Test ``j`` of a relation on ``axis``: the effect and interval, raw and Holm p, and whether it is significant
    in the dominating direction."""
    assert res is not None  # a test exists, so the engine ran
    row = res.row(j)
    good = row["estimate"] is not None and _sign(axis_direction(axis)) * row["estimate"] > 0
    return {
        "axis": axis,
        "effect": row["estimate"],
        "ci_low": row["ci_low"],
        "ci_high": row["ci_high"],
        "p_value": row["p_value"],
        "p_holm": _f(p_adj),
        "p_method": res.p_method,
        "p_resamples": res.n_test_resamples,
        "n": row["n"],
        "significant": bool(good and _f(p_adj) is not None and p_adj < alpha),
    }


def frontier_analysis(
    run: Any, t: Any, clusters: list[Any] | None, *, seed: int, n_resamples: int, resamples: int | str | None = None
) -> Frontier:
    """Intervals of every plotted metric and the achieved ratio per setting, the constant metrics, and for
    each declared pair of axes the frontier and its dominance relations (see the module doc).

    ``n_resamples``: the intervals' bootstrap replicates; ``resamples``: the relations' tests' setting
    (``"auto"``, or a count; default ``n_resamples``)."""
    resamples = n_resamples if resamples is None else resamples
    axes, alpha = axes_of(run.suite)
    plotted = [m for m in t.metric_names if contrasted_by_default(m)]
    wanted = list(dict.fromkeys(["achieved_ratio", *plotted, *(k for pair in axes for k in pair)]))
    keys = [k for k in wanted if k in AXIS_KEYS or k in t.metric_names]
    vals = _values(t, keys)
    intervals = _intervals(vals, t.settings, keys, clusters, seed, n_resamples)
    constant = _constant(intervals, t.settings, [k for k in keys if k not in AXIS_KEYS])
    pairs = []
    for x, y in axes:
        missing = [k for k in (x, y) if k not in keys]
        if missing:
            pairs.append(
                {
                    "x": x,
                    "y": y,
                    "alpha": alpha,
                    "frontier": [],
                    "relations": [],
                    "note": f"not computed: the records carry no {', '.join(missing)}",
                }
            )
            continue
        pairs.append(_pair(x, y, vals, intervals, t.settings, clusters, seed, resamples, alpha, sparse_rule(run.suite)))
    return {"intervals": intervals, "constant": constant, "pairs": pairs, "alpha": alpha}
