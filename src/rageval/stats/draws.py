"""The bootstrap counts of one drawing shared by the analyses that resample the same units with one seed
(docs/statistics.md#validity-with-intervals, #gain-decomposition).

A replicate of :func:`~rageval.stats.resample.paired_tests`' bootstrap draws ``k`` units with replacement from
``np.random.default_rng(seed)`` (chunks of 1,000 replicates: :func:`~rageval.stats.resample._counts`), so every
analysis of the same ``k`` units and seed draws the same counts: a contrast family's gain decompositions, the
validity and mediation intervals of each setting and pooled.  :func:`replicate_rows` draws them once for all of
them and gives each the rows it would compute alone: the same numbers, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from rageval.stats.resample import _CHUNK, _blas_threads, _counts

__all__ = ["RowRequest", "replicate_rows"]


def _count_blocks(rng: np.random.Generator, n_resamples: int, k: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(first replicate, counts)`` row blocks of the ``n_resamples`` x ``k`` bootstrap counts, chunk by chunk
    (:func:`_counts`): the draws the bootstrap of :func:`paired_tests` makes for ``k`` units."""
    for start in range(0, n_resamples, _CHUNK):
        for lo, W in _counts(rng, min(_CHUNK, n_resamples - start), k):
            yield start + lo, W


#: cells (float64) the requests computed on one drawing of the counts hold at once (:func:`replicate_rows`)
_SHARED_CELLS = 2**22

#: a request of :func:`replicate_rows`: ``(units k, width, cells held while waiting, f)``, ``f(W)`` the rows of a
#: row block ``W`` of the counts (float32, blocks x ``k``)
RowRequest = tuple[int, int, int, Callable[[np.ndarray], np.ndarray]]


def replicate_rows(
    requests: Sequence[RowRequest], n_resamples: int, seed: int | np.random.Generator | None
) -> Iterator[tuple[int, np.ndarray]]:
    """``(request index, its n_resamples x width rows)`` of each request, as each is complete: the rows ``f(W)``
    of every row block ``W`` of the bootstrap counts of its ``k`` units, drawn from ``np.random.default_rng(seed)``
    afresh (the draws :func:`paired_tests` makes for ``k`` units with that seed).

    Requests of the same ``k`` are computed on one drawing of those counts: each gets the counts it would draw
    alone, drawn once (the analyses of one cohort — a family's gain decompositions, the validity and mediation
    intervals of every setting — resample the same units with the same seed).  At most ``_SHARED_CELLS`` cells
    (the requests' rows and what each holds while it waits) are computed on one drawing; more requests of that
    ``k`` draw the counts again.  A generator ``seed`` is drawn from in the requests' order, and ``None`` gives
    each request fresh draws (as separate calls would).
    """
    B = int(n_resamples)
    if seed is None or isinstance(seed, np.random.Generator):
        for j, (k, width, _, f) in enumerate(requests):
            rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng()
            yield j, _rows_of(rng, B, k, width, [f])[0]
        return
    by_k: dict[int, list[int]] = {}
    for j, (k, *_) in enumerate(requests):
        by_k.setdefault(k, []).append(j)
    for k, idx in by_k.items():
        batch: list[int] = []
        cells = 0
        for at in [*idx, None]:
            need = 0 if at is None else B * requests[at][1] + requests[at][2]
            if batch and (at is None or cells + need > _SHARED_CELLS):
                width = sum(requests[i][1] for i in batch)
                rows = _rows_of(np.random.default_rng(seed), B, k, width, [requests[i][3] for i in batch])
                yield from zip(batch, rows)
                batch, cells = [], 0
            if at is not None:
                batch.append(at)
                cells += need


def _rows_of(
    rng: np.random.Generator, B: int, k: int, width: int, fs: Sequence[Callable[[np.ndarray], np.ndarray]]
) -> list[np.ndarray]:
    """The rows of each of ``fs`` over the ``B`` x ``k`` counts drawn from ``rng`` (``width``: their widths'
    sum, for the BLAS threads: one for products of ordinary size)."""
    out: list[np.ndarray | None] = [None] * len(fs)
    with _blas_threads(min(B, _CHUNK) * k * width):
        for first, W in _count_blocks(rng, B, k):
            for i, f in enumerate(fs):
                part = f(W)
                if out[i] is None:
                    out[i] = np.empty((B, *part.shape[1:]), dtype=part.dtype)
                out[i][first : first + W.shape[0]] = part  # type: ignore[index]
    return out  # type: ignore[return-value]
