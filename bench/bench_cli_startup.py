"""CLI start-up time: `rageval --help` and `rageval metrics` vs a bare `python -c pass`.

Run: .venv/bin/python bench/bench_cli_startup.py [--repeat 10]
Target: `rageval --help` <= 0.5 s.  Prints the median wall time of each command and its
ratio to the bare interpreter start in the same run, plus `import evaluate` for scale.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def _time(cmd: list[str], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    from _results import row
    from _threads import load_line, pin_blas_threads  # beside this script

    print(load_line())
    print(pin_blas_threads(None), "(the timed commands do no BLAS work)")
    py = sys.executable
    base = _time([py, "-c", "pass"], args.repeat)
    rows = [
        ("python -c pass (baseline)", base),
        ("rageval --help", _time([py, "-m", "rageval.cli", "--help"], args.repeat)),
        ("rageval metrics", _time([py, "-m", "rageval.cli", "metrics"], args.repeat)),
        ("python -c 'import evaluate' (for scale)", _time([py, "-c", "import evaluate"], max(2, args.repeat // 5))),
    ]
    print(f"{'command':<45} {'median s':>9} {'x baseline':>11}")
    for name, t in rows:
        print(f"{name:<45} {t:>9.3f} {t / base:>11.1f}")
        row(timed=name, median_s=round(t, 3), x_baseline=round(t / base, 1))
    helptime = rows[1][1]
    print(f"\nrageval --help: {helptime:.3f} s (target <= 0.5 s: {'met' if helptime <= 0.5 else 'NOT met'})")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
