"""Benchmark: a whole contrast family's bootstrap CIs and sign-flip p-values vs SciPy.

    .venv/bin/python bench/bench_stats.py            # 148 contrasts x 10,000 replicates x 976 questions

Times rageval.stats.paired_tests (percentile bootstrap CIs *and* sign-flip p-values for
every contrast, one call), then scipy.stats.bootstrap on the same data for a few
contrasts (bootstrap only, vectorized, percentile) and extrapolates it to the family.
Prints both, the ratio, and checks the intervals agree within Monte-Carlo error.
Targets: ours <= 2 s, >= 10x scipy.stats.bootstrap.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _threads import load_line, pin_blas_threads  # beside this script
from scipy import stats as sps

from rageval.stats import paired_tests


def family(n: int, c: int, seed: int) -> np.ndarray:
    """Question x contrast paired differences shaped like metric contrasts: bounded, ~5% undefined."""
    rng = np.random.default_rng(seed)
    base = rng.random((n, 1))
    a = np.clip(base + rng.normal(0, 0.25, (n, c)), 0, 1)
    b = np.clip(base + rng.normal(0.02, 0.25, (n, c)), 0, 1)
    d = a - b
    d[rng.random((n, c)) < 0.05] = np.nan
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=976)
    ap.add_argument("--contrasts", type=int, default=148)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--clusters", type=int, default=271, help="clusters for the extra cluster-bootstrap line (0: skip)")
    ap.add_argument("--scipy-contrasts", type=int, default=3, help="contrasts timed with SciPy, then extrapolated")
    ap.add_argument("--repeats", type=int, default=3, help="best of N for rageval's timing")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads, pinned with threadpoolctl")
    args = ap.parse_args()
    print(load_line())
    print(pin_blas_threads(args.threads))

    D = family(args.questions, args.contrasts, args.seed)
    paired_tests(D[:50, :2], n_resamples=100, seed=0)  # import/BLAS warm-up, not timed

    ours = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        res = paired_tests(D, n_resamples=args.resamples, seed=args.seed)
        ours.append(time.perf_counter() - t)
    t_ours = min(ours)

    k = max(1, min(args.scipy_contrasts, args.contrasts))
    t = time.perf_counter()
    ref = []
    for c in range(k):
        d = D[:, c][np.isfinite(D[:, c])]
        ref.append(
            sps.bootstrap(
                (d,),
                np.mean,
                n_resamples=args.resamples,
                method="percentile",
                vectorized=True,
                random_state=args.seed + c,
            ).confidence_interval
        )
    t_scipy = (time.perf_counter() - t) / k * args.contrasts

    t = time.perf_counter()
    d0 = D[:, 0][np.isfinite(D[:, 0])]
    sps.permutation_test(
        (d0 / 2, -d0 / 2),
        lambda x, y, axis=-1: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=args.resamples,
        random_state=args.seed,
    )
    t_perm = (time.perf_counter() - t) * args.contrasts

    # agreement: interval endpoints within ~6 Monte-Carlo standard errors
    worst = 0.0
    for c in range(k):
        d = D[:, c][np.isfinite(D[:, c])]
        se = d.std(ddof=1) / np.sqrt(d.size)
        worst = max(worst, abs(res.ci_low[c] - ref[c].low) / se, abs(res.ci_high[c] - ref[c].high) / se)

    line = f"{args.contrasts} contrasts x {args.resamples:,} replicates x {args.questions} questions"
    print(f"family: {line}")
    print(
        f"rageval.stats.paired_tests (bootstrap CIs + sign-flip p, all contrasts): {t_ours:.3f} s "
        f"(best of {args.repeats}: {', '.join(f'{x:.3f}' for x in ours)})"
    )
    print(f"scipy.stats.bootstrap, same CIs only, extrapolated from {k} contrasts: {t_scipy:.2f} s")
    print(f"scipy.stats.permutation_test, same p-values only, extrapolated from 1 contrast: {t_perm:.2f} s")
    print(
        f"speed-up vs scipy.stats.bootstrap: {t_scipy / t_ours:.1f}x "
        f"(vs bootstrap + permutation_test: {(t_scipy + t_perm) / t_ours:.1f}x)"
    )
    print(f"CI agreement with SciPy: worst endpoint gap {worst:.3f} SE(mean) over {k} contrasts")
    if args.clusters:
        cl = np.random.default_rng(args.seed).integers(0, args.clusters, args.questions)
        t = time.perf_counter()
        paired_tests(D, clusters=cl, n_resamples=args.resamples, seed=args.seed)
        print(f"cluster bootstrap + cluster-level flips ({args.clusters} clusters): {time.perf_counter() - t:.3f} s")
    ok_time, ok_ratio = t_ours <= 2.0, t_scipy / t_ours >= 10.0
    print(
        f"targets: <= 2 s {'PASS' if ok_time else 'FAIL'}; >= 10x scipy.stats.bootstrap "
        f"{'PASS' if ok_ratio else 'FAIL'}"
    )


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
