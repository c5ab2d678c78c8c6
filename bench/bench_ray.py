"""A suite run with and without ``--ray``: wall time of each, the ratio, and whether the outputs are the same bytes.

    python bench/bench_ray.py                      # the demo suite (100 questions x 17 settings), 3 runs each
    python bench/bench_ray.py --limit 20 --repeat 2
    python bench/bench_ray.py --suite my.yaml --ray auto

Each run is ``rageval suite SUITE --out DIR --no-progress [--ray [ADDRESS]]`` in a fresh process and a fresh
output directory (nothing cached: every record computed, the report built), the two kinds alternated so that a
change of load on the machine falls on both; ``--ray`` alone starts (and stops) a local Ray instance each time,
as a user's run would.  BLAS/OpenMP pools are pinned to one thread in every process (driver and Ray workers) through
the environment.  Needs Ray for the ``--ray`` runs (``pip install 'rageval[ray]'``).
"""

from __future__ import annotations

import argparse
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
    ap.add_argument("--limit", type=int, default=None, help="first N questions (default: the suite's)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each kind (default 3)")
    ap.add_argument("--ray", default="", metavar="ADDRESS", help="--ray's address (default: a local instance)")
    args = ap.parse_args()

    env = {**os.environ, **THREADS}
    times: dict[str, list[float]] = {"single": [], "ray": []}
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        for i in range(args.repeat):
            for kind in ("single", "ray"):
                out = Path(tmp) / f"{kind}{i}"
                cmd = [sys.executable, "-m", "rageval.cli", "suite", args.suite, "--out", str(out), "--no-progress"]
                if args.limit:
                    cmd += ["--limit", str(args.limit)]
                if kind == "ray":
                    cmd += [f"--ray={args.ray}"] if args.ray else ["--ray"]
                load = os.getloadavg()[0]
                t0 = time.perf_counter()
                res = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True)
                dt = time.perf_counter() - t0
                if res.returncode != 0:
                    sys.exit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr[-3000:]}")
                times[kind].append(dt)
                print(f"{kind:6s} run {i + 1}: {dt:6.1f} s  (load average before: {load:.1f})", flush=True)
        n, differ = _same_outputs(Path(tmp) / "single0", Path(tmp) / "ray0")
    single, ray = statistics.median(times["single"]), statistics.median(times["ray"])
    print(f"threads: {', '.join(f'{k}={v}' for k, v in THREADS.items())}; CPUs here: {os.cpu_count()}")
    print(f"median single process: {single:.1f} s; median --ray: {ray:.1f} s; --ray / single = {ray / single:.2f}x")
    print(
        f"outputs of the first runs: {n} files compared, "
        + ("all the same bytes" if not differ else f"{len(differ)} differ: {', '.join(differ[:10])}")
    )


if __name__ == "__main__":
    main()
