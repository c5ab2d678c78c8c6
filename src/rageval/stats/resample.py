"""Paired bootstrap CIs and sign-flip randomization tests for a whole contrast family.

One engine does every contrast at once (docs/design.md#paired-bootstrap,
#sign-flip-test).  The input is a question x
contrast matrix ``D`` of paired differences (``NaN`` where the pair is undefined:
either side's metric was undefined).  Questions are grouped into *blocks*: one
block per question, or one per cluster (QASPER paper) for the cluster bootstrap.

* Block sums ``X[k, c]`` (sum of the defined differences of block ``k``) and block
  counts ``N[k, c]`` (number of defined pairs) are computed once.
* **Bootstrap**: a replicate resamples the ``K`` blocks with replacement; its counts
  form a row of the replicate x block count matrix ``W``.  Every contrast's
  replicate mean is then ``(W @ X) / (W @ N)``: two matrix products for the whole
  family.  The estimate stays *question-weighted* (a cluster of 8 questions weighs
  8 times a cluster of 1), and undefined pairs drop out of every replicate.
  The interval is the percentile interval of the replicate means.
* **Sign-flip test**: under H0 (no difference) each block's differences are
  exchangeable in sign.  A replicate draws a sign per block (cluster-level flips
  where clustered); its statistic is ``|S @ X|``, compared with the observed
  ``|sum X|``.  Two-sided; add-one p-value ``(1 + #{T_b >= T_obs}) / (B + 1)``.  When
  ``2**K <= B`` every sign vector is enumerated (in chunks) and the p-value is exact.
  The test may draw more replicates than the bootstrap (``n_test_resamples``: the
  ``auto`` setting sizes it for the Holm family, rageval.stats.resolution); its
  first chunks are the same draws whatever its count.

Everything is drawn from ``np.random.default_rng(seed)`` in fixed-size chunks, so
a seed fixes every number regardless of the size of the family.  Memory stays
bounded: a chunk holds 1,000 replicates, and the bootstrap's replicate means (needed
whole for the percentiles) are kept for at most ``_MAX_CELLS`` replicate x contrast
cells at once; a larger family is done in column blocks that draw the same
resamples again (the same replicates as one block, up to the float32 rounding of
a product of another shape, ~1e-7 relative; a family that fits one block, every
family of today's suites, takes the one-block path unchanged).  Within a chunk, the
draws are made, counted and multiplied in row blocks, so the intermediates of a chunk are bounded whatever the
number of questions (or clusters), and so are those of every consumer of the counts (:mod:`rageval.stats.gain`,
:mod:`rageval.stats.moments`: a float64 copy of a row block, never of the chunk).  A chunk that fits
``_MAX_DRAW_CELLS`` cells (``1000 * K``: up to 4,194 questions, every shipped suite and test fixture) is one
block, drawn as before (one uint16 draw) and giving the same bits.  A larger chunk draws uint32 row blocks of
at most ``_BLOCK_CELLS`` cells, whose stream does not depend on how it is split: a seed gives the same counts
whatever the block size (the products of blocks of another shape may round differently, ~1e-7 relative).  Above
65,535 blocks these are the values of the int64 draws of before; from 4,195 to 65,535 blocks they replace the
chunk's one uint16 draw of before (whose stream would move with the split: numpy's bounded uint16 draws share
a 32-bit word between two draws within one call), so the intervals there, and the p-values drawn after them
from the same generator, differ from those of earlier versions as two valid Monte-Carlo runs do.  The sign
bits are the same bytes as one draw at any size (blocks of whole 32-bit words).  A row block holds about 30 MB
of intermediates (the draws, the counts counted a million cells at a time, a consumer's float64 copy), a chunk
drawn whole about 60 MB; per question and contrast the engine keeps the differences, their mask and float32
copies (about 25 bytes), never a float64 count matrix, nor a copy of the differences' absolute values.

The products of a family of ordinary size (the demo: 1,000 x 100 x 252 per chunk) run on one BLAS thread
(threadpoolctl): a second thread saves nothing at that size, and on a loaded 2-core machine waiting for it made
the report's statistics take 2.7 s of wall time instead of 1.0 s.  Larger products keep the BLAS's own
threading.  The thread count does not change the numbers (each entry is one dot product, computed the same way
on any thread).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rageval.stats.rowsum import abs_column_sums

__all__ = ["PairedResults", "paired_tests", "percentile_columns"]

#: Replicates drawn per chunk: bounds memory (chunk x blocks floats) and fixes the
#: random stream independently of the family size.
_CHUNK = 1000

#: multiply-adds per chunk's product up to which one BLAS thread does it (a few ms of one core)
ONE_THREAD_WORK = 10**8

#: bootstrap replicate means held at once (float64: 256 MiB); more contrasts are done in column blocks
_MAX_CELLS = 2**25
#: replicate x block cells of a chunk drawn as one block (up to 4,194 questions or clusters: one uint16 draw)
_MAX_DRAW_CELLS = 2**22

#: replicate x block cells of a row block, over more questions or clusters (uint32 draws 4 MiB, float32 counts
#: 4 MiB, float64 sign bits 8 MiB)
_BLOCK_CELLS = 2**20


def _blas_threads(work: int) -> contextlib.AbstractContextManager[Any]:
    """One BLAS thread for products of at most ``ONE_THREAD_WORK`` multiply-adds (else the BLAS's own threads).

    The BLAS libraries are looked up at each call (a few milliseconds): one loaded after an earlier call (scipy's
    own OpenBLAS, torch's) is limited too.
    """
    if work > ONE_THREAD_WORK:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency; without it the BLAS keeps its threads
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


@dataclass(frozen=True)
class PairedResults:
    """Results for a family of ``C`` paired contrasts (arrays of length ``C``).

    ``estimate`` is the mean of the defined paired differences; ``ci_low``/``ci_high``
    the percentile bootstrap interval; ``p_value`` the two-sided sign-flip p-value.
    Undefined entries are ``NaN`` and ``reason`` says why (``None`` when defined).
    ``n`` counts the defined pairs, ``n_dropped`` the cohort questions dropped because
    either side was undefined, ``n_blocks`` the resampling units (questions or
    clusters) holding at least one defined pair.
    """

    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    p_value: np.ndarray
    n: np.ndarray
    n_dropped: np.ndarray
    n_blocks: np.ndarray
    n_resamples: int
    exact_p: bool
    confidence: float
    clustered: bool
    reason: tuple[str | None, ...] = field(default=())
    #: bootstrap replicates whose resample held no defined pair (excluded from the CI)
    n_empty_replicates: np.ndarray | None = None
    #: sign-flip replicates (``n_resamples`` unless the test drew its own count); 2**K when exact
    n_test_resamples: int = 0
    #: resampling units (questions or clusters) of the family
    n_units: int = 0

    @property
    def p_method(self) -> str:
        """How the p-values were computed: ``"exact"`` (every sign vector) or ``"monte-carlo"`` (add-one)."""
        return "exact" if self.exact_p else "monte-carlo"

    def row(self, c: int) -> dict[str, Any]:
        def f(x: float) -> float | None:
            return None if not np.isfinite(x) else float(x)

        return {
            "estimate": f(self.estimate[c]),
            "ci_low": f(self.ci_low[c]),
            "ci_high": f(self.ci_high[c]),
            "p_value": f(self.p_value[c]),
            "n": int(self.n[c]),
            "n_dropped": int(self.n_dropped[c]),
            "n_blocks": int(self.n_blocks[c]),
            "reason": self.reason[c] if self.reason else None,
            "n_empty_replicates": int(self.n_empty_replicates[c]) if self.n_empty_replicates is not None else 0,
        }


def _factorize(clusters: Sequence[Any]) -> tuple[np.ndarray, int]:
    labels: dict[Any, int] = {}
    codes = np.empty(len(clusters), dtype=np.intp)
    for i, c in enumerate(clusters):
        if c is None:
            raise ValueError(f"clusters[{i}] is None: every question needs a cluster id when clustering")
        codes[i] = labels.setdefault(c, len(labels))
    return codes, len(labels)


def percentile_columns(
    values: np.ndarray, qs: Sequence[float], *, inplace: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise percentiles (numpy's 'linear' method) ignoring NaN.

    Returns ``(out[len(qs), C], n_valid[C])``; a column with no finite value gives NaN.  ``inplace``: each column
    of ``values`` is sorted where it is (replicates read no more: no sorted copy of them is made).
    """
    n_valid = np.isfinite(values).sum(axis=0)
    s = values if inplace else np.sort(values, axis=0)  # NaN sorts last
    if inplace:
        s.sort(axis=0)
    C = values.shape[1]
    out = np.full((len(qs), C), np.nan)
    cols = np.arange(C)
    ok = n_valid > 0
    for i, q in enumerate(qs):
        pos = (q / 100.0) * (n_valid - 1).clip(min=0)
        lo = np.floor(pos).astype(np.intp)
        hi = np.minimum(lo + 1, (n_valid - 1).clip(min=0))
        frac = pos - lo
        v_lo = s[lo.clip(min=0), cols]
        v_hi = s[hi.clip(min=0), cols]
        out[i] = np.where(ok, v_lo + (v_hi - v_lo) * frac, np.nan)
    return out, n_valid


def _counts(rng: np.random.Generator, b: int, k: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(first row, counts)`` blocks of a b x k float32 matrix: how often each of k blocks is drawn in each of b
    resamples of size k.

    Up to 4,194 blocks (a whole chunk, ``_CHUNK * k``, fits ``_MAX_DRAW_CELLS`` cells) the chunk is one block:
    its uint16 draws made at once, 2 bytes a cell, as before.  Over more blocks every chunk (the last, shorter one
    too) is drawn and counted in row blocks of at most ``_BLOCK_CELLS`` cells, as uint32 draws: their stream
    does not depend on how it is split (numpy's bounded uint16 draws share a 32-bit word between two draws
    within one call, so splitting them would move the stream), so a seed gives the same counts whatever the
    block size, and they are the values the int64 draws of before gave above 65,535 blocks.  From 4,195 to
    65,535 blocks these draws replace the chunk's one uint16 draw of before: other resamples, as valid, for the
    same seed.  Counts are small integers, exact in float32; float32 halves the cost of the products, and their
    rounding (~1e-7 relative on a replicate mean) is far below the Monte-Carlo error of a percentile (~1e-3).
    """
    if _CHUNK * k <= _MAX_DRAW_CELLS and k <= 65535:
        yield 0, _bincount_rows(rng.integers(0, k, size=(b, k), dtype=np.uint16), k)
        return
    rows = max(1, _BLOCK_CELLS // k)
    for lo in range(0, b, rows):
        yield lo, _bincount_rows(rng.integers(0, k, size=(min(rows, b - lo), k), dtype=np.uint32), k)


#: draws counted by one bincount (its int64 indexes and counts: 16 MiB)
_COUNT_CELLS = 2**20


def _bincount_rows(drawn: np.ndarray, k: int) -> np.ndarray:
    """Per row of ``drawn`` (indexes in ``[0, k)``), how often each index occurs (float32), counted
    ``_COUNT_CELLS`` draws at a time (whole rows; counts are integers: the same matrix however they are split)."""
    r = drawn.shape[0]
    out = np.empty((r, k), dtype=np.float32)
    step = max(1, _COUNT_CELLS // max(k, 1))
    for lo in range(0, r, step):
        part = drawn[lo : lo + step]
        m = part.shape[0]
        idx = part.astype(np.intp)
        idx += (np.arange(m, dtype=np.intp) * k)[:, None]
        out[lo : lo + m] = np.bincount(idx.ravel(), minlength=m * k).reshape(m, k)
    return out


def _sign_bits(rng: np.random.Generator, b: int, k: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(first row, bits)`` blocks of a b x k float64 matrix of fair coin flips in {0, 1} (sign = 2 * bit - 1),
    8 flips per random byte, drawn and unpacked at once for a chunk of at most ``_MAX_DRAW_CELLS`` cells, else in
    row blocks of at most ``_BLOCK_CELLS`` cells (a multiple of 4 rows: numpy hands out the bytes of 32-bit words,
    and a block of whole words leaves none unused, so the blocks' bytes are those of one draw of the whole chunk,
    whatever the block size)."""
    rows = b if b * k <= _MAX_DRAW_CELLS else max(4, _BLOCK_CELLS // k // 4 * 4)
    for lo in range(0, b, rows):
        raw = rng.integers(0, 256, size=(min(rows, b - lo), (k + 7) // 8), dtype=np.uint8)
        yield lo, np.unpackbits(raw, axis=1, count=k).astype(np.float64)


def _all_signs(k: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Sign vectors ``start..stop`` (default: all ``2**k``) of the enumeration, one per row."""
    rows = np.arange(start, 2**k if stop is None else stop, dtype=np.int64)
    bits = (rows[:, None] >> np.arange(k)[None, :]) & 1
    return 2.0 * bits - 1.0


def _check_options(n_resamples: Any, confidence: float) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")


def _as_matrix(diffs: np.ndarray | Sequence[float]) -> np.ndarray:
    """``diffs`` as a float64 questions x contrasts matrix (a 1-D input is one contrast)."""
    D = np.asarray(diffs, dtype=np.float64)
    if D.ndim == 1:
        D = D[:, None]
    if D.ndim != 2:
        raise ValueError(f"diffs must be 1-D or 2-D (questions x contrasts), got shape {D.shape}")
    return D


def _blocks(D0: np.ndarray, M: np.ndarray, clusters: Sequence[Any] | None) -> tuple[np.ndarray, ...]:
    """``(X, N, sizes)``: per block (a question, or a cluster) and contrast the sum of the defined differences
    (``D0``: 0 where undefined) and their count (a question's: ``M`` itself, 1 byte a cell; every use of it is
    elementwise, where True is 1.0 exactly), and each block's questions (float32)."""
    n, C = D0.shape
    if clusters is None:
        return D0, M, np.ones(n).astype(np.float32)
    if len(clusters) != n:
        raise ValueError(f"clusters has {len(clusters)} entries but diffs has {n} questions")
    codes, K = _factorize(list(clusters))
    X = np.zeros((K, C))
    N = np.zeros((K, C))
    np.add.at(X, codes, D0)
    np.add.at(N, codes, M.astype(np.float64))
    return X, N, np.bincount(codes, minlength=K).astype(np.float32)


def _bootstrap_ci(
    rng: np.random.Generator,
    X: np.ndarray,
    N: np.ndarray,
    sizes: np.ndarray,
    B: int,
    qs: Sequence[float],
    estimate: np.ndarray,
    constant: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(percentiles[len(qs), C], n_valid[C])`` of the bootstrap replicate means, in column blocks of at most
    ``_MAX_CELLS`` replicate x contrast cells; each block draws the same resamples (the generator is rewound),
    and the generator ends where one block would have left it."""
    C = X.shape[1]
    width = max(1, _MAX_CELLS // max(B, 1))
    if C <= width:
        return percentile_columns(_bootstrap_means(rng, X, N, sizes, B, estimate, constant), qs, inplace=True)
    out = np.empty((len(qs), C))
    n_valid = np.empty(C, dtype=np.int64)
    state = rng.bit_generator.state
    for lo in range(0, C, width):
        rng.bit_generator.state = state
        hi = min(C, lo + width)
        means = _bootstrap_means(rng, X[:, lo:hi], N[:, lo:hi], sizes, B, estimate[lo:hi], constant[lo:hi])
        out[:, lo:hi], n_valid[lo:hi] = percentile_columns(means, qs, inplace=True)
    return out, n_valid


def _bootstrap_means(
    rng: np.random.Generator,
    X: np.ndarray,
    N: np.ndarray,
    sizes: np.ndarray,
    B: int,
    estimate: np.ndarray,
    constant: np.ndarray,
) -> np.ndarray:
    """``B`` x contrasts: each replicate's mean of the defined differences over ``K`` blocks drawn with replacement
    (``estimate``: each column's mean of its defined differences; ``constant``: whether they are all equal, when
    every replicate's mean is the estimate)."""
    K, C = X.shape
    reps = np.empty((B, C), order="F")  # by column: each is sorted for its percentiles
    if K == 0:
        reps.fill(np.nan)
        return reps
    centre = np.where(constant, estimate, _centres(X, N, estimate))
    X32 = X.astype(np.float32)  # X itself where the centre is 0 (every ordinary column)
    for c in np.flatnonzero(centre):  # a column at a time: no questions x contrasts float64 temporaries
        X32[:, c] = X[:, c] - N[:, c] * centre[c]
    # columns without an undefined pair share one denominator: the resampled question count
    partial = np.flatnonzero(~(N == sizes[:, None]).all(axis=0))
    N32 = N[:, partial].astype(np.float32)
    for start in range(0, B, _CHUNK):
        b = min(_CHUNK, B - start)
        for lo, W in _counts(rng, b, K):
            den = np.repeat((W @ sizes)[:, None], C, axis=1)
            if partial.size:
                den[:, partial] = W @ N32
            with np.errstate(invalid="ignore", divide="ignore"):
                reps[start + lo : start + lo + W.shape[0]] = (W @ X32).astype(np.float64) / den
    centred = centre != 0
    if centred.any():  # a replicate's mean of centred differences, plus the centre (other columns untouched)
        reps[:, centred] += centre[centred]
    if constant.any():  # every defined difference the same: each replicate's mean is that value (its estimate)
        reps[:, constant] = np.where(np.isnan(reps[:, constant]), np.nan, centre[constant])
    return reps


#: a column is centred when its block means spread over less than this fraction of their magnitude
_CENTRE_BELOW = 2.0**-10


def _centres(X: np.ndarray, N: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """Per column, the value its differences are centred on before the float32 products.

    The centre is 0 (not centred) for a column whose block means spread over at least ``_CENTRE_BELOW`` of their
    largest magnitude — every column of an ordinary metric's differences: float32's rounding, ~6e-8 of the
    magnitude, is far below the spread, and those columns' products are those of before — else the column's
    estimate (the mean of its defined differences).  A replicate mean is
    ``(W @ X) / (W @ N) = c + (W @ (X - N c)) / (W @ N)`` for any ``c``; float32 then rounds ``X - N c``, whose
    size is the spread, not the magnitude.  (A column of equal differences is :func:`_bootstrap_means`' own case:
    every replicate is its estimate, so constant differences of 16,777,217 give [16777217, 16777217].)
    """
    C = X.shape[1]
    centre = np.zeros(C)
    for c in range(C):  # a column at a time: no questions x contrasts temporaries
        defined = N[:, c] > 0
        if not defined.any():
            continue
        m = X[defined, c] / N[defined, c]
        top = float(np.abs(m).max())
        spread = float(m.max() - m.min())
        if top > 0 and spread < _CENTRE_BELOW * top:
            centre[c] = estimate[c]
    return centre


def _constant(D: np.ndarray, M: np.ndarray, n_def: np.ndarray) -> np.ndarray:
    """Per column: whether its defined differences are all equal (exactly, as given)."""
    low = D.min(axis=0, where=M, initial=np.inf)
    high = D.max(axis=0, where=M, initial=-np.inf)
    return (n_def > 0) & (low == high)


def _sign_flip_p(rng: np.random.Generator, X: np.ndarray, B: int) -> tuple[np.ndarray, bool]:
    """``(p-values, exact)``: the two-sided sign-flip test of each column's block sums (every sign vector when
    ``2**K <= B``, else ``B`` random ones with the add-one p-value)."""
    K, C = X.shape
    total = X.sum(axis=0)
    obs = np.abs(total)
    tol = 1e-9 * abs_column_sums(X)  # no copy of X
    exact = K > 0 and 2**K <= B
    ge = np.zeros(C, dtype=np.int64)
    if exact:
        for start in range(0, 2**K, _CHUNK):
            S = _all_signs(K, start, min(2**K, start + _CHUNK))
            ge += (np.abs(S @ X) >= obs - tol).sum(axis=0)
        return ge / 2.0**K, True
    for start in range(0, B, _CHUNK):
        b = min(_CHUNK, B - start)
        for _, bits in _sign_bits(rng, b, K):  # S @ X = (2 bits - 1) @ X = 2 (bits @ X) - total
            ge += (np.abs(2.0 * (bits @ X) - total) >= obs - tol).sum(axis=0)
    return (1.0 + ge) / (B + 1.0), False


def _reasons(n_def: np.ndarray, k_def: np.ndarray, min_blocks: int, unit: str) -> list[str | None]:
    """Per contrast: why its interval and test are undefined, or None."""
    reason: list[str | None] = []
    for c in range(len(n_def)):
        if n_def[c] == 0:
            reason.append("no defined pair")
        elif k_def[c] < min_blocks:
            reason.append(f"fewer than {min_blocks} {unit} with a defined pair: no interval or test")
        else:
            reason.append(None)
    return reason


def paired_tests(
    diffs: np.ndarray | Sequence[float],
    *,
    clusters: Sequence[Any] | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None = None,
    min_blocks: int = 2,
    n_test_resamples: int | None = None,
) -> PairedResults:
    """Paired bootstrap CI and sign-flip p-value for every column of ``diffs``.

    ``diffs`` is ``(n_questions, n_contrasts)`` (or 1-D for one contrast) of paired
    differences, ``NaN`` where undefined.  ``clusters`` (length ``n_questions``)
    switches to the cluster bootstrap and cluster-level sign flips.  A contrast with
    fewer than ``min_blocks`` questions (clusters) holding a defined pair gets its
    estimate but an undefined interval and p-value (no honest interval exists);
    one with no defined pair is undefined throughout.  ``n_test_resamples`` (default:
    ``n_resamples``) is the sign-flip test's own replicate count.

    >>> r = paired_tests([0.5, 1.0, 0.0, 1.0, 0.5, 1.0], n_resamples=2000, seed=0)
    >>> round(float(r.estimate[0]), 3), r.exact_p, round(float(r.p_value[0]), 4)
    (0.667, True, 0.0625)
    >>> r = paired_tests([[0.5, float("nan")]], seed=0)
    >>> r.reason
    ('fewer than 2 questions with a defined pair: no interval or test', 'no defined pair')
    """
    _check_options(n_resamples, confidence)
    B_test = n_resamples if n_test_resamples is None else n_test_resamples
    _check_options(B_test, confidence)
    D = _as_matrix(diffs)
    n, C = D.shape
    M = np.isfinite(D)
    X, N, sizes = _blocks(D if M.all() else np.where(M, D, 0.0), M, clusters)  # D itself when all defined
    K = X.shape[0]
    n_def = M.sum(axis=0)
    k_def = (N > 0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.where(n_def > 0, X.sum(axis=0) / np.maximum(n_def, 1), np.nan)

    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    B = int(n_resamples)
    alpha = 1.0 - confidence

    # --- bootstrap: W (B x K counts) @ X and @ N, chunked (one BLAS thread for a family of ordinary size)
    with _blas_threads(min(B, _CHUNK) * K * C):
        qs = [100 * alpha / 2, 100 * (1 - alpha / 2)]
        (ci_low, ci_high), n_valid = _bootstrap_ci(rng, X, N, sizes, B, qs, estimate, _constant(D, M, n_def))

    # --- sign-flip test (float64: ties between |T_b| and |T_obs| must be exact up to rounding)
    B_test = int(B_test)
    with _blas_threads(min(B_test, _CHUNK) * K * C):
        p, exact = _sign_flip_p(rng, X, B_test)

    unit = "clusters" if clusters is not None else "questions"
    reason = _reasons(n_def, k_def, min_blocks, unit)
    bad = np.array([r is not None for r in reason], dtype=bool)
    ci_low = np.where(bad, np.nan, ci_low)
    ci_high = np.where(bad, np.nan, ci_high)
    p = np.where(bad, np.nan, p)
    return PairedResults(
        estimate=estimate,
        ci_low=ci_low,
        ci_high=ci_high,
        p_value=p,
        n=n_def.astype(np.int64),
        n_dropped=(n - n_def).astype(np.int64),
        n_blocks=k_def.astype(np.int64),
        n_resamples=B,
        exact_p=bool(exact),
        confidence=confidence,
        clustered=clusters is not None,
        reason=tuple(reason),
        n_empty_replicates=(B - n_valid).astype(np.int64),
        n_test_resamples=2**K if exact else B_test,
        n_units=K,
    )
