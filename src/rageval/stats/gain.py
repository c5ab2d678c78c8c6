"""The gain decomposition of a paired contrast by answer-in-context (docs/statistics.md#gain-decomposition).

The packing paper reads a gain (packer − heuristic on answer quality) as coming mostly from questions where the
packer newly placed a gold answer in the context.  For a contrast ``A − B`` on a quality metric ``q`` over its
``n`` paired questions (both sides' ``q`` defined), with ``d_i = q_A,i − q_B,i`` and the per-question
answer-in-context indicators ``a_i`` (under A) and ``b_i`` (under B), every paired question falls into exactly
one group:

* ``new``: ``a_i = 1, b_i = 0`` (A newly has the answer in its context);
* ``lost``: ``a_i = 0, b_i = 1`` (the reverse);
* ``both``: ``a_i = b_i = 1``; ``neither``: ``a_i = b_i = 0``;
* ``undefined``: answer-in-context undefined (NaN) on either side.

A group's **contribution** is ``sum_{i in g} d_i / n``, so the five contributions sum to the mean difference
``mean(d)`` (exactly, up to floating-point rounding); its **share** is ``contribution / mean(d)`` (None when the
mean difference is 0).  The intervals are percentile bootstrap intervals over paired questions, or over clusters
when ``clusters`` is given: a replicate draws the resampling units with replacement (the draws of
:func:`rageval.stats.resample.paired_tests` for the same units and seed) and computes every contribution on the
same resample, the denominator being the resample's paired questions.  A decomposition by an observed
post-treatment variable, not a causal attribution: answer-in-context is itself an outcome of the setting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from rageval.stats.draws import _SHARED_CELLS, RowRequest, replicate_rows
from rageval.stats.resample import _blocks, _check_options, percentile_columns

__all__ = ["GAIN_GROUPS", "GainDecomposition", "gain_decomposition", "gain_decompositions"]

#: the groups, in the order of every array of :class:`GainDecomposition`
GAIN_GROUPS = ("new", "lost", "both", "neither", "undefined")


@dataclass(frozen=True)
class GainDecomposition:
    """A contrast's mean difference split by answer-in-context (arrays in :data:`GAIN_GROUPS` order).

    ``n``: paired questions (both sides' quality defined); ``n_dropped``: the others; ``effect``: ``mean(d)``
    (NaN without a paired question); ``counts``: paired questions per group; ``contribution``: each group's
    ``sum(d) / n``; ``ci_low``/``ci_high``: its percentile bootstrap interval (NaN with fewer than
    ``min_blocks`` resampling units holding a paired question: ``reason`` says so); ``share``:
    ``contribution / effect`` (NaN when the effect is 0 or undefined).
    """

    n: int
    n_dropped: int
    effect: float
    counts: np.ndarray
    contribution: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    share: np.ndarray
    n_resamples: int
    confidence: float
    clustered: bool
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain values (None where undefined): ``{n, n_dropped, effect, reason, groups: {group: {n,
        contribution, ci_low, ci_high, share}}}``."""

        def f(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {
            "n": self.n,
            "n_dropped": self.n_dropped,
            "effect": f(self.effect),
            "reason": self.reason,
            "groups": {
                g: {
                    "n": int(self.counts[k]),
                    "contribution": f(self.contribution[k]),
                    "ci_low": f(self.ci_low[k]),
                    "ci_high": f(self.ci_high[k]),
                    "share": f(self.share[k]),
                }
                for k, g in enumerate(GAIN_GROUPS)
            },
        }


def _indicator(x: np.ndarray, name: str) -> np.ndarray:
    finite = np.isfinite(x)
    bad = finite & (x != 0) & (x != 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] = {float(x[i]):g}: answer-in-context must be 1, 0 or undefined (NaN)")
    return x


def gain_decomposition(
    q_a: npt.ArrayLike,
    q_b: npt.ArrayLike,
    aic_a: npt.ArrayLike,
    aic_b: npt.ArrayLike,
    *,
    clusters: Sequence[Any] | None = None,
    seed: int | np.random.Generator | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    min_blocks: int = 2,
) -> GainDecomposition:
    """Split ``mean(q_a − q_b)`` over the paired questions into the answer-in-context groups (module doc).

    ``q_a``, ``q_b``: the quality metric per question under A and B (NaN: undefined; such a question is no pair);
    ``aic_a``, ``aic_b``: answer-in-context under A and B (1, 0 or NaN); ``clusters``: a cluster id per question
    for the cluster bootstrap.  ``seed`` fixes the intervals.

    >>> g = gain_decomposition([1, 1, 0, 1], [0, 1, 0, 0], [1, 1, 0, 0], [0, 1, 0, 0], seed=0, n_resamples=200)
    >>> g.effect, g.counts.tolist(), [float(c) for c in g.contribution], [float(s) for s in g.share]
    (0.5, [1, 0, 1, 2, 0], [0.25, 0.0, 0.0, 0.25, 0.0], [0.5, 0.0, 0.0, 0.5, 0.0])
    """
    (g,) = gain_decompositions(
        [(q_a, q_b, aic_a, aic_b)], clusters=clusters, seed=seed, n_resamples=n_resamples, confidence=confidence,
        min_blocks=min_blocks,
    )  # fmt: skip
    return g


def gain_decompositions(
    sides: Sequence[tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike, npt.ArrayLike]],
    *,
    clusters: Sequence[Any] | None = None,
    seed: int | np.random.Generator | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    min_blocks: int = 2,
) -> list[GainDecomposition]:
    """:func:`gain_decomposition` of each ``(q_a, q_b, aic_a, aic_b)`` of ``sides`` (the contrasts of one cohort:
    the same questions and ``clusters``), their intervals computed together: each draws the replicates it would
    draw alone, and those of the same units are drawn once (:func:`~rageval.stats.draws.replicate_rows`)."""
    _check_options(n_resamples, confidence)
    B = int(n_resamples)
    qs = [100 * (1.0 - confidence) / 2, 100 * (1 - (1.0 - confidence) / 2)]
    out: list[GainDecomposition | None] = []
    waiting: list[tuple[int, GainDecomposition]] = []
    requests: list[RowRequest] = []

    def intervals() -> None:  # the waiting ones' intervals, on one drawing of the counts
        for i, reps in replicate_rows(requests, B, seed):
            j, g = waiting[i]
            (lo_, hi_), _ = percentile_columns(reps, qs, inplace=True)
            out[j] = replace(g, ci_low=lo_, ci_high=hi_)
        waiting.clear()
        requests.clear()

    cells = 0
    for q_a, q_b, aic_a, aic_b in sides:
        g, X, n_per_block = _decomposition(q_a, q_b, aic_a, aic_b, clusters, B, confidence, min_blocks)
        if X is None or n_per_block is None:
            out.append(g)
            continue
        need = X.size + B * X.shape[1]
        if requests and cells + need > _SHARED_CELLS:  # bounded memory: the ones waiting first
            intervals()
            cells = 0
        waiting.append((len(out), g))
        out.append(None)
        requests.append((X.shape[0], X.shape[1], X.size, _replicate_means(X, n_per_block)))
        cells += need
    intervals()
    return out  # type: ignore[return-value]


def _decomposition(
    q_a: npt.ArrayLike,
    q_b: npt.ArrayLike,
    aic_a: npt.ArrayLike,
    aic_b: npt.ArrayLike,
    clusters: Sequence[Any] | None,
    B: int,
    confidence: float,
    min_blocks: int,
) -> tuple[GainDecomposition, np.ndarray | None, np.ndarray | None]:
    """``(the decomposition, its block sums X, each block's paired questions)``: X None when it has no interval
    (the decomposition is whole), else its interval is still NaN."""
    qa, qb, aa, ab = (np.asarray(v, dtype=np.float64).ravel() for v in (q_a, q_b, aic_a, aic_b))
    if not (qa.shape == qb.shape == aa.shape == ab.shape):
        raise ValueError(
            f"q_a, q_b, aic_a and aic_b must have the same length, got {qa.size}, {qb.size}, {aa.size}, {ab.size}"
        )
    aa, ab = _indicator(aa, "aic_a"), _indicator(ab, "aic_b")
    d = qa - qb
    paired = np.isfinite(d)
    defined = np.isfinite(aa) & np.isfinite(ab)
    member = np.column_stack(
        [
            defined & (aa == 1) & (ab == 0),
            defined & (aa == 0) & (ab == 1),
            defined & (aa == 1) & (ab == 1),
            defined & (aa == 0) & (ab == 0),
            ~defined,
        ]
    )
    n = int(paired.sum())
    G = len(GAIN_GROUPS)
    counts = (member & paired[:, None]).sum(axis=0).astype(np.int64)
    d0 = np.where(paired, d, 0.0)
    parts = np.where(member, d0[:, None], 0.0)  # each paired question's difference in its group's column
    nan = np.full(G, np.nan)
    if n == 0:
        return GainDecomposition(
            0, int(d.size), float("nan"), counts, nan, nan, nan, nan, B, confidence, clusters is not None,
            "no paired question",
        ), None, None  # fmt: skip
    contribution = parts.sum(axis=0) / n
    effect = float(d0.sum() / n)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = contribution / effect if effect != 0 else nan.copy()
    M = np.repeat(paired[:, None], G, axis=1)
    X, N, _ = _blocks(parts, M, clusters)
    k_def = int((N[:, 0] > 0).sum())
    unit = "clusters" if clusters is not None else "questions"
    reason = f"fewer than {min_blocks} {unit} with a paired question: no interval" if k_def < min_blocks else None
    g = GainDecomposition(
        n, int(d.size - n), effect, counts, contribution, nan, nan, share, B, confidence, clusters is not None,
        reason,
    )  # fmt: skip
    if reason is not None:
        return g, None, None
    return g, X, N[:, 0].astype(np.float64)  # N is the bool mask itself without clusters


def _replicate_means(X: np.ndarray, n_per_block: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    return lambda W: _block_means(W, X, n_per_block)


def _block_means(W: np.ndarray, X: np.ndarray, n_per_block: np.ndarray) -> np.ndarray:
    """Each replicate's contributions for a row block of counts ``W``: its float64 copy (a row block, never the
    chunk) lives only here, not while the next block is drawn."""
    W64 = W.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = (W64 @ X) / (W64 @ n_per_block)[:, None]
    return out
