"""Benchmark: how time and memory grow with the number of records — ``rageval score`` and the report.

    .venv/bin/python bench/bench_stream.py                          # 10,000 and 100,000 records
    .venv/bin/python bench/bench_stream.py --sizes 10000 100000 1000000

For each size: a generated generic-layout file (written line by line, never held: the generator of
``bench/bench_score.py``, 5 contexts per question, a cited two-sentence answer, short gold answers; each
question answered by ``--systems`` systems, 2 by default, so the report compares two settings: n records are
n / 2 questions x 2 settings, and the statistics resample n / 2 questions), then, each
in a fresh process, ``rageval score FILE --out DIR --no-progress --no-report`` (records, cache and the closing
headline table), the score step alone (``score_files(..., build_report=False)`` in-process into another
directory: records and cache, no headline table), ``rageval report DIR`` (statistics, tables, figures,
HTML) and ``rageval rescore DIR`` (every record scored again from the run's records, into
``DIR/rescore-lexical/``, and that run's report).  Printed per size and step: wall time, CPU time and the
child's peak RSS (``os.wait4``), then between
consecutive sizes the exponents of a power-law fit ``t ∝ n^k`` (1.00: linear) and the peak RSS each extra
record added.  After each report: its settings x questions, the contrasts and the replicates its statistics
drew (``report.json``: ``n_resamples`` for the bootstrap, ``n_test_resamples`` for the sign-flip test;
``auto``, as a user's run).  The load average and the thread variables are printed first, since the machine
may be shared.  ``--steps`` runs some of the steps only; ``--no-records-file`` scores without ``records.jsonl``
(the record store alone: the report and ``rescore`` read it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from itertools import pairwise
from pathlib import Path

from bench_score import _run, make_file  # one generator and one child-process timer (the folder beside this one)

THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
STEPS = ("score", "score_files", "report", "rescore")
SCORE_FILES = (
    "import sys; from rageval.score import score_files; score_files([sys.argv[1]], sys.argv[2], build_report=False)"
)


def _bytes(folder: Path) -> int:
    """The bytes of the files under ``folder`` (0: none)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--systems", type=int, default=2, help="systems (settings) answering each question")
    ap.add_argument("--keep", type=Path, default=None, help="keep the files and run directories here")
    ap.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS), help="the steps to run (default: all)")
    ap.add_argument(
        "--no-records-file", action="store_true", help="score with --no-records-file (the record store alone)"
    )
    args = ap.parse_args()
    os.environ.update(THREADS)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; threads: {THREADS}")
    rows: dict[str, list[tuple[int, dict]]] = {step: [] for step in args.steps}
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        for n in sorted(args.sizes):
            data, out = root / f"in{n}.jsonl", root / f"run{n}"
            make_file(data, n, systems=args.systems)
            rageval = [sys.executable, "-m", "rageval.cli"]
            steps = {
                "score": rageval
                + ["score", str(data), "--out", str(out), "--no-progress", "--no-report"]
                + ["--no-records-file"] * args.no_records_file,
                "score_files": [sys.executable, "-c", SCORE_FILES, str(data), str(root / f"files{n}")],
                "report": rageval + ["report", str(out)],
                "rescore": rageval + ["rescore", str(out)],  # into out/rescore-lexical/, its report included
            }
            for step in args.steps:
                load = os.getloadavg()[0]
                r = _run(steps[step])
                rows[step].append((n, r))
                print(
                    f"{step:11s} {n:>9,} records: wall {r['wall']:8.1f} s  CPU {r['cpu']:8.1f} s  "
                    f"peak RSS {r['maxrss_mb']:8.0f} MB ({1024 * r['maxrss_mb'] / n:6.1f} KB per record)  "
                    f"load before {load:.1f}",
                    flush=True,
                )
            if out.is_dir():  # the run directory's bytes on disk (the score step's; the report's files if run)
                disk, store, size = _bytes(out), _bytes(out / "cache" / "store"), data.stat().st_size
                records = out / "records.jsonl"
                records_mb = f"{records.stat().st_size / 1e6:,.1f} MB" if records.is_file() else "not written"
                print(
                    f"disk   {n:>9,} records: run directory {disk / 1e6:,.1f} MB = {disk / size:.1f}x the input's "
                    f"{size / 1e6:,.1f} MB (records.jsonl {records_mb}, judge cache "
                    f"{_bytes(out / 'cache' / 'judge') / 1e6:,.1f} MB); record store {store / n:,.0f} bytes per record",
                    flush=True,
                )
            if "report" not in args.steps:
                continue
            rep = json.loads((out / "report.json").read_text())  # after the report step
            print(
                f"report {n:>9,} records: {len(rep['settings'])} settings x {rep['cohort']['n_questions']:,} "
                f"questions (cohort {rep['cohort']['n']:,}), {len(rep['contrasts'])} contrast rows, "
                f"{rep['n_resamples']:,} bootstrap and {rep['n_test_resamples']:,} sign-flip replicates",
                flush=True,
            )
    for step, got in rows.items():
        for (n0, a), (n1, b) in pairwise(got):
            k_cpu = math.log(b["cpu"] / a["cpu"]) / math.log(n1 / n0)
            k_rss = math.log(b["maxrss_mb"] / a["maxrss_mb"]) / math.log(n1 / n0)
            extra = (b["maxrss_mb"] - a["maxrss_mb"]) * 2**20 / (n1 - n0)
            print(
                f"{step:11s} {n0:,} -> {n1:,}: CPU time ~ n^{k_cpu:.2f}, peak RSS ~ n^{k_rss:.2f} "
                f"({extra:,.0f} bytes per extra record)"
            )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
