"""A suite run with and without ``--ray``: wall time of each, Ray's fixed and per-question costs, and whether
the outputs are the same bytes.

    python bench/bench_ray.py                      # the demo suite at 20 and 100 questions, 3 runs of each
    python bench/bench_ray.py --limits 10 40 --repeat 2
    python bench/bench_ray.py --suite my.yaml --ray auto

Each run is ``rageval suite SUITE --out DIR --no-progress --limit N [--ray [ADDRESS]]`` in a fresh process and a
fresh output directory (nothing cached: every record computed, the report built), the kinds alternated so that a
change of load on the machine falls on both; ``--ray`` alone starts (and stops) a local Ray instance each time,
as a user's run would.  From the medians at two sizes, ``t(n) = fixed + n · per_question`` for each kind: Ray's
fixed cost is the difference of the fixed parts, and its per-question cost the difference of the slopes.  The
``--ray`` runs' ``run_stats.json`` give Ray's own start-up (``ray.init``) and the judge actors' start, measured
inside the run.  BLAS/OpenMP pools are pinned to one thread in every process (driver and Ray workers) through
the environment; the load average is printed beside every run.  Needs Ray for the ``--ray`` runs
(``pip install 'rageval[ray]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _same_outputs(a: Path, b: Path) -> tuple[int, list[str]]:
    """Files compared and those that differ (run_stats.json left out; report.html without its run counters)."""
    from rageval.report.html import RUN_COUNTERS_BEGIN, RUN_COUNTERS_END

    def content(p: Path) -> bytes:
        data = p.read_bytes()
        if p.name == "report.html":
            text = data.decode()
            i, j = text.index(RUN_COUNTERS_BEGIN), text.index(RUN_COUNTERS_END)
            data = (text[:i] + text[j:]).encode()
        return data

    names = sorted(
        p.relative_to(a).as_posix()
        for p in a.rglob("*")
        if p.is_file() and p.name != "run_stats.json" and "cache/judge" not in p.relative_to(a).as_posix()
    )
    differ = [n for n in names if not (b / n).is_file() or content(a / n) != content(b / n)]
    return len(names), differ


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="demo", help="suite file or shipped suite name (default: demo)")
    ap.add_argument("--limits", type=int, nargs=2, default=[20, 100], help="the two sizes (default: 20 100)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each kind and size (default 3)")
    ap.add_argument("--ray", default="", metavar="ADDRESS", help="--ray's address (default: a local instance)")
    args = ap.parse_args()
    small, large = sorted(args.limits)
    if small == large:
        ap.error("--limits: two different sizes")

    env = {**os.environ, **THREADS}
    times: dict[tuple[str, int], list[float]] = {}
    inside: dict[str, list[float]] = {"init_seconds": [], "actor_seconds": []}
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        for i in range(args.repeat):
            for limit in (small, large):
                for kind in ("single", "ray"):
                    out = Path(tmp) / f"{kind}{limit}-{i}"
                    cmd = [sys.executable, "-m", "rageval.cli", "suite", args.suite, "--out", str(out)]
                    cmd += ["--no-progress", "--limit", str(limit)]
                    if kind == "ray":
                        cmd += [f"--ray={args.ray}"] if args.ray else ["--ray"]
                    load = os.getloadavg()[0]
                    loads.append(load)
                    t0 = time.perf_counter()
                    res = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True)
                    dt = time.perf_counter() - t0
                    if res.returncode != 0:
                        sys.exit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr[-3000:]}")
                    times.setdefault((kind, limit), []).append(dt)
                    if kind == "ray":
                        ray_stats = json.loads((out / "run_stats.json").read_text()).get("ray", {})
                        for k, values in inside.items():
                            values.append(float(ray_stats.get(k, float("nan"))))
                    print(f"{kind:6s} {limit:4d} questions, run {i + 1}: {dt:6.1f} s  (load before: {load:.1f})")
        n, differ = _same_outputs(Path(tmp) / f"single{large}-0", Path(tmp) / f"ray{large}-0")
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"threads: {', '.join(f'{k}={v}' for k, v in THREADS.items())}; CPUs here: {os.cpu_count()}")
    print(f"load average before the runs: {min(loads):.1f} to {max(loads):.1f}")
    fit = {}
    for kind in ("single", "ray"):
        per_q = (med[(kind, large)] - med[(kind, small)]) / (large - small)
        fit[kind] = (med[(kind, small)] - small * per_q, per_q)
        print(
            f"{kind:6s}: median {med[(kind, small)]:.1f} s at {small}, {med[(kind, large)]:.1f} s at {large} "
            f"questions; fixed {fit[kind][0]:.1f} s + {1000 * per_q:.0f} ms per question"
        )
    print(
        f"--ray's fixed cost: {fit['ray'][0] - fit['single'][0]:+.1f} s; per question: "
        f"{1000 * (fit['ray'][1] - fit['single'][1]):+.0f} ms; --ray / single = "
        f"{med[('ray', small)] / med[('single', small)]:.2f}x at {small}, "
        f"{med[('ray', large)] / med[('single', large)]:.2f}x at {large} questions"
    )
    print(
        "inside the --ray runs (run_stats.json): ray.init "
        + ", ".join(f"{x:.1f}" for x in inside["init_seconds"])
        + " s; judge actors started "
        + ", ".join(f"{x:.1f}" for x in inside["actor_seconds"])
        + " s"
    )
    print(
        f"outputs of the first {large}-question runs: {n} files compared, "
        + ("all the same bytes" if not differ else f"{len(differ)} differ: {', '.join(differ[:10])}")
    )


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
