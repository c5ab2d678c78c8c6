"""Benchmark: the demo suite with an fsync per part of the record store against rename-only parts.

    .venv/bin/python bench/bench_durability.py            # 2 fresh runs of each, alternated
    .venv/bin/python bench/bench_durability.py --runs 3

Each run is a fresh ``rageval suite demo`` into a new folder (records, statistics,
report), in this process through :func:`rageval.suite.run.run_suite`; the two
modes alternate so a change in the machine's load hits both.  "fsync" is the
engine's record cache with ``durable=True`` (the default: an ``fsync`` per part
of the record store before its rename; a part when a batch is done, at most
about once a second), "rename" is ``durable=False`` (the rename alone: still atomic for a
killed process; after a power loss a part may be empty, and a rerun moves it to
quarantine and recomputes its records).  Before the record store, the suite's
cache was a file per record, and an fsync each cost 15% of the demo's wall time.  ``records.jsonl`` is checked to be the same
bytes in every run.  Prints the load average and the thread counts.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from _threads import pin_blas_threads

import rageval.run.cache as record_cache
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite


def _one(out: Path, durable: bool) -> float:
    real = record_cache.RecordCache.__init__

    def forced(self, out_dir, *, durable_=durable, **_):
        real(self, out_dir, durable=durable_)

    record_cache.RecordCache.__init__ = forced  # type: ignore[method-assign]
    try:
        t = time.perf_counter()
        run_suite(load_suite("demo"), out, progress=False)
        return time.perf_counter() - t
    finally:
        record_cache.RecordCache.__init__ = real  # type: ignore[method-assign]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; {pin_blas_threads(1)}")
    times: dict[str, list[float]] = {"fsync": [], "rename": []}
    records: set[bytes] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            for mode in ("fsync", "rename"):
                out = Path(tmp) / f"{mode}-{i}"
                times[mode].append(_one(out, durable=mode == "fsync"))
                records.add((out / "records.jsonl").read_bytes())
                n = sum(1 for _ in (out / "cache" / "store").glob("part-*.arrow"))
                print(
                    f"  run {i + 1} {mode:6s} {times[mode][-1]:.1f} s ({n:,} part after the fold), load "
                    f"{os.getloadavg()[0]:.2f}"
                )
    a, b = statistics.median(times["fsync"]), statistics.median(times["rename"])
    print(
        f"median wall: fsync per part {a:.1f} s, rename only {b:.1f} s: {a / b:.2f}x; "
        f"records.jsonl identical in every run: {len(records) == 1}"
    )


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
