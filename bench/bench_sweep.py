"""Benchmark: the re-attribution threshold sweep, scored once vs the engine run once per threshold.

    python bench/bench_sweep.py                 # the demo suite's 100 questions; about a minute on 2 CPUs
    python bench/bench_sweep.py --questions 40

Runs the demo suite's settings (without the report) on the shipped HotpotQA questions into a
temporary folder, turns its ok records into scoring inputs (as ``rageval rescore`` does) and times,
per path, the sweep over the six recovery thresholds 0.3-0.8 for every record that has a unit
without declared provenance:

* ``once``:   :func:`rageval.diagnostics.attribution.sweep.record_sweeps` (candidates ranked and judged once, each
  threshold applied, the gate re-run only where the recovered ids changed);
* ``slow``:   the engine once per threshold (what the sweep did before), with the same judge memo.

As in a suite run, each path gets a fresh lexical judge runner on which the record's main scoring
has already run (untimed), so both see the same judge memo.  Prints the best of ``--repeats``
interleaved runs of each, their ratio, the BM25 indexes built and the judge requests, and checks
that both give the same values.  Runs against the installed ``rageval`` (editable or a wheel).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _threads import load_line, pin_blas_threads  # beside this script

from rageval import bm25
from rageval.diagnostics.attribution import attribution_scores_batch
from rageval.diagnostics.attribution.engine import DEFAULT_SWEEP as SWEEP_THRESHOLDS
from rageval.diagnostics.attribution.engine import PARTS
from rageval.diagnostics.attribution.sweep import record_sweeps
from rageval.diagnostics.dispatch import _engine_rows
from rageval.diagnostics.inputs import ScoringInput, ScoringOptions
from rageval.judges import get_judge
from rageval.readers import PromptTemplate
from rageval.suite.load import load_suite
from rageval.suite.plan import scoring_options
from rageval.suite.run import run_suite
from rageval.types import Record


def slow_sweep(inputs, options, judge):
    idx = [i for i, x in enumerate(inputs) if any(u.source_ids is None for u in x.units)]
    out = {i: {} for i in idx}
    for t in SWEEP_THRESHOLDS:
        opts = options.attribution.model_copy(update={"recovery_threshold": t})
        rows = attribution_scores_batch(
            [inputs[i].answer for i in idx],
            [inputs[i].unit_dicts() for i in idx],
            [inputs[i].source_dicts() for i in idx],
            judge=judge,
            options=opts,
            parts=("grounded", "re_attributability"),
            details=False,
        )
        for i, r in zip(idx, rows):
            out[i][f"{t:.1f}"] = {
                "rate": r.get("re_attributability"),
                "grounded_precision": r.get("grounded_precision"),
            }
    return out


def fast_sweep(inputs, options, judge):
    extras: list[dict] = [{} for _ in inputs]
    for i, extra in record_sweeps(inputs, options, judge).items():
        extras[i].update(extra)
    return {i: e["reattribution_sweep"] for i, e in enumerate(extras) if "reattribution_sweep" in e}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads, pinned with threadpoolctl")
    args = ap.parse_args(argv)
    print(load_line())
    print(pin_blas_threads(args.threads))
    suite = load_suite("demo", **{"dataset.limit": args.questions})
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        run_suite(suite, Path(tmp) / "run", progress=False, build_report=False)
        print(f"demo suite on {args.questions} questions (records only): {time.perf_counter() - t:.1f} s")
        lines = (Path(tmp) / "run" / "records.jsonl").read_text().splitlines()
    records = [Record.from_dict(json.loads(line)) for line in lines]
    template = PromptTemplate.coerce(suite.reader.template)
    inputs = [ScoringInput.from_record(r, template.evidence_text) for r in records if r.status == "ok"]
    options: ScoringOptions = scoring_options(suite)
    parts = PARTS  # the demo scores every attribution part
    n_sweep = sum(any(u.source_ids is None for u in x.units) for x in inputs)
    print(f"{len(inputs)} ok records, {n_sweep} with a unit without declared provenance (swept)")

    built = []
    real_init = bm25.BM25Index.__init__

    def counting_init(self, *a, **kw):
        built.append(1)
        real_init(self, *a, **kw)

    bm25.BM25Index.__init__ = counting_init  # type: ignore[method-assign]
    best = {"once": float("inf"), "slow": float("inf")}
    stats = {}
    results = {}
    for _ in range(args.repeats):
        for name, fn in (("once", fast_sweep), ("slow", slow_sweep)):
            runner = get_judge("lexical")
            _engine_rows(inputs, parts, options, runner)  # the record's main scoring, untimed
            before = runner.stats()["requested"]
            built.clear()
            t = time.perf_counter()
            results[name] = fn(inputs, options, runner)
            best[name] = min(best[name], time.perf_counter() - t)
            stats[name] = (len(built), runner.stats()["requested"] - before)
    bm25.BM25Index.__init__ = real_init  # type: ignore[method-assign]
    same = results["once"] == results["slow"]
    print(f"{'path':<6} {'best s':>8} {'BM25 indexes':>13} {'judge requests':>15}")
    for name in ("once", "slow"):
        print(f"{name:<6} {best[name]:>8.2f} {stats[name][0]:>13} {stats[name][1]:>15}")
    print(f"slow / once = {best['slow'] / best['once']:.1f}x; same values: {same}")
    if not same:
        raise SystemExit("the two paths disagree")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
