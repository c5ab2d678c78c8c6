"""BLAS threads for the benchmarks: pinned with threadpoolctl (the ``bench`` extra), else reported.

Two BLAS threads on a loaded 2-core machine made one selection take anywhere from 2.3 s to 46.7 s, so every
benchmark pins the BLAS (and OpenMP) thread pools before timing, or says plainly that it could not.  Imported by
the scripts beside it (``python bench/<script>.py`` puts this folder on ``sys.path``), from a checkout or with
rageval installed from a wheel alike.
"""

from __future__ import annotations

import os

__all__ = ["load_line", "pin_blas_threads"]

_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pin_blas_threads(n: int | None = 1) -> str:
    """Limit every BLAS/OpenMP pool to ``n`` threads (None: leave them) and return one line saying what is in force."""
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        env = ", ".join(f"{k}={os.environ[k]}" for k in _ENV if k in os.environ) or "no thread variables set"
        return f"BLAS threads NOT pinned (pip install threadpoolctl, or rageval[bench]); {env}"
    if n is not None:
        threadpool_limits(n)
    pools = ", ".join(f"{p['internal_api']} {p['num_threads']}" for p in threadpool_info()) or "no BLAS pool loaded"
    return f"BLAS threads: {pools}" + (f" (pinned to {n})" if n is not None else " (not pinned)")


def load_line() -> str:
    """The load averages (1, 5, 15 minutes) and the CPU count, for a benchmark's first and last lines."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min) on {os.cpu_count()} CPUs"
