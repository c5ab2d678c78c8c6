"""Benchmark: ``rageval report`` on the demo suite's run, first build and rebuild, as a user runs it.

    python bench/bench_report.py                      # the demo's 100 questions; about two minutes on 2 CPUs
    python bench/bench_report.py --repeats 5 --questions 40
    python bench/bench_report.py --baseline-src /tmp/old/src   # also an older rageval's report, same run

Runs the demo suite (without its report) into a temporary folder once, then times fresh
``python -m rageval report RUN --out DIR`` processes, interleaved, ``--repeats`` times each:

* ``first``:      a first build (empty DIR: statistics, tables, every figure, HTML), figures drawn by
  worker processes forked from the report's process (the default);
* ``first, 1 p``: the same with ``RAGEVAL_FIGURE_PROCESSES=1`` (every figure in the report's process);
* ``rebuild``:    the same DIR again (records and statistics unchanged: the figures are reused);
* ``baseline``:   with ``--baseline-src``, a first build by the rageval found there (``PYTHONPATH``),
  e.g. ``git archive <commit> src | tar -x -C /tmp/old``.

Prints the median wall and CPU (user + system, the workers included) seconds of each, the ratios
against the first build, the load average while it ran, and whether every output file is the same
bytes in all of them (``cache/plots.json`` records the plotting code's hash, so it may differ with
the baseline).  The report runs its small resampling products on one BLAS thread itself
(``rageval.stats.resample``); the suite run here is pinned too.  Runs against the installed
``rageval`` (editable or a wheel).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _threads import pin_blas_threads  # beside this script

from rageval.suite.load import load_suite
from rageval.suite.run import run_suite


def timed_report(run: Path, out: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``python -m rageval report`` process and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "rageval", "report", str(run), "--out", str(out)],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def outputs(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file() and not p.name.startswith(".")}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline-src", type=Path, default=None, help="a folder holding an older rageval package")
    args = ap.parse_args(argv)
    print(pin_blas_threads(1))
    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop("RAGEVAL_FIGURE_PROCESSES", None)
    variants = {
        "first": dict(env),
        "first, 1 p": dict(env, RAGEVAL_FIGURE_PROCESSES="1"),
        "rebuild": dict(env),
    }
    if args.baseline_src is not None:
        base = args.baseline_src.resolve()
        if not (base / "rageval" / "__init__.py").is_file():
            raise SystemExit(f"--baseline-src: no rageval package in {base}")
        variants["baseline"] = dict(env, PYTHONPATH=str(base))
    suite = load_suite("demo", **{"dataset.limit": args.questions})
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        t = time.perf_counter()
        run_suite(suite, run, progress=False, build_report=False)
        print(f"demo suite, {args.questions} questions, without its report: {time.perf_counter() - t:.1f} s")
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in variants}
        loads = []
        files: dict[str, dict[str, bytes]] = {}
        for _ in range(args.repeats):
            for name, venv in variants.items():
                out = Path(tmp) / name.replace(",", "").replace(" ", "_")
                if name != "rebuild":
                    shutil.rmtree(out, ignore_errors=True)
                elif not out.exists():
                    timed_report(run, out, venv)  # the build the rebuild reuses (untimed)
                times[name].append(timed_report(run, out, venv))
                loads.append(os.getloadavg()[0])
                files[name] = outputs(out)
    first = statistics.median(w for w, _ in times["first"])
    print(f"{'report':12s} {'wall s (median)':>16s} {'CPU s':>7s} {'wall / first':>13s}   walls")
    for name, ts in times.items():
        wall, cpu = statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts)
        print(f"{name:12s} {wall:16.2f} {cpu:7.2f} {wall / first:12.2f}x   {' '.join(f'{w:.2f}' for w, _ in ts)}")
    print(f"load average (1 min) while timing: {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    ref = files["first"]
    for name, got in files.items():
        differ = sorted(k for k in set(ref) | set(got) if ref.get(k) != got.get(k) and k != "plots.json")
        print(f"{name}: {'same bytes as first' if not differ else 'differs: ' + ', '.join(differ)}")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
