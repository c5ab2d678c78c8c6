"""Long evidence: what the opt-in windowed judge costs against truncation, in one run, no download.

    python bench/bench_windows.py                 # ~2 min on 2 idle cores
    python bench/bench_windows.py --max-length 256 --overlap 64

Pairs are ALCE's shipped ASQA demos: each answer sentence (citation markers removed) against (a) the
joint premise of the passages it cites, as ALCE's citation recall judges it, and (b) the joint premise
of all five passages of its question (long evidence: about 700 tokens).  The judge is a
DeBERTa-v3-xsmall-shaped NLI classifier built from a config (random weights: the timing and the token
counts are real, the probabilities are not), the tokenizer trained on the passages in under a second.
The same model is judged truncating at ``--max-length`` and windowed (``window={"overlap": N}``).

Prints: pairs over the window (truncated / windowed), windows per windowed pair, tokens read
(the count after truncation, ``verifier_tokens_<mode>_after_truncation``) windowed / truncating, time
windowed / truncating (CPU and wall, medians of ``--reps`` interleaved runs), and max |p_windowed - p_truncating| over the
pairs that fit (0 by definition: a pair that fits is judged exactly as without windows).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import time


def make_pairs() -> list[tuple[str, str, str]]:
    """``(kind, premise, claim)``: every answer sentence of the ASQA demos with its cited and its all-passage premise."""
    from bench_judges import load_demos  # beside this script

    from rageval.judges import format_premise
    from rageval.text import split_sentences

    out = []
    for demo in load_demos():
        docs = [(d["title"], d["text"]) for d in demo["docs"]]
        every = format_premise(docs)
        for sent in split_sentences(demo["answer"]):
            cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]", sent) if 1 <= int(n) <= len(docs)})
            claim = " ".join(re.sub(r"\s*\[\d+\]", "", sent).split())
            if not claim:
                continue
            if cited:
                out.append(("cited", format_premise([docs[i - 1] for i in cited]), claim))
            out.append(("all", every, claim))
    return out


def timed(judge, pairs) -> tuple[list[float], float, float]:
    """Probabilities, wall seconds and this process's CPU seconds of one fresh runner (no memo, no disk cache)."""
    from rageval.judges import JudgeRunner

    runner = JudgeRunner(judge)
    t0, c0 = time.perf_counter(), time.process_time()
    probs = runner([p for _, p, _ in pairs], [h for _, _, h in pairs])
    return probs, time.perf_counter() - t0, time.process_time() - c0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--overlap", type=int, default=128)
    ap.add_argument("--shape", default="xsmall", help="model shape (bench_judges.py SHAPES)")
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions (medians reported)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    args = ap.parse_args(argv)

    from _threads import pin_blas_threads  # beside this script

    print(pin_blas_threads(1))
    import torch
    from bench_judges import build_model, load_demos, tune_malloc

    from rageval.judges.hf import NLIJudge
    from rageval.judges.windowed import WindowedJudge

    print(f"mallopt: {tune_malloc()}")
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs")
    pairs = make_pairs()
    texts = [f"{d['title']} {d['text']}" for demo in load_demos() for d in demo["docs"]]
    model, tok = build_model(args.shape, texts)
    plain = NLIJudge.from_model(model, tok, max_length=args.max_length)
    windowed = WindowedJudge(plain, args.overlap)

    counts = {(p, h): plain.token_counts(p, h) for _, p, h in pairs}
    over = [(k, p, h) for k, p, h in pairs if counts[(p, h)][0] > args.max_length]
    by_kind = {k: sum(1 for kk, _, _ in pairs if kk == k) for k in ("cited", "all")}
    over_kind = {k: sum(1 for kk, _, _ in over if kk == k) for k in ("cited", "all")}
    plans = [windowed.plan(p, h) for _, p, h in pairs]
    n_win = sum(pl.windowed for pl in plans)
    windows = sum(len(pl.texts) for pl in plans if pl.windowed)
    read_trunc = sum(counts[(p, h)][1] for _, p, h in pairs)
    read_win = sum(pl.after for pl in plans)
    whole = sum(counts[(p, h)][0] for _, p, h in pairs)

    wall: dict[str, list[float]] = {"truncating": [], "windowed": []}
    cpu: dict[str, list[float]] = {"truncating": [], "windowed": []}
    probs: dict[str, list[float]] = {}
    for _ in range(max(1, args.reps)):
        for name, judge in (("truncating", plain), ("windowed", windowed)):
            with torch.inference_mode():
                pr, dt, dc = timed(judge, pairs)
            probs[name] = pr
            wall[name].append(dt)
            cpu[name].append(dc)
    w = {k: statistics.median(v) for k, v in wall.items()}
    c = {k: statistics.median(v) for k, v in cpu.items()}
    fit = [i for i, (_, p, h) in enumerate(pairs) if counts[(p, h)][0] <= args.max_length]
    dp_fit = max((abs(probs["windowed"][i] - probs["truncating"][i]) for i in fit), default=float("nan"))

    print(f"max_length {args.max_length}, overlap {args.overlap}, model shape {args.shape} (random weights)")
    print(
        f"pairs: {len(pairs)} ({by_kind['cited']} cited-passage premises, {by_kind['all']} all-passage premises); "
        f"over max_length: {len(over)} ({over_kind['cited']} cited, {over_kind['all']} all)"
    )
    print(
        f"windowed pairs: {n_win} (truncated instead, claim over half the window: {len(over) - n_win}); "
        f"windows per windowed pair: {windows / n_win if n_win else float('nan'):.2f}"
    )
    print(
        f"tokens: whole pairs {whole}; read truncating {read_trunc}; read windowed {read_win} "
        f"= {read_win / read_trunc:.2f}x truncating"
    )
    print(f"model inputs: truncating {len(pairs)}, windowed {len(pairs) - n_win + windows}")
    print(
        f"CPU time (median of {args.reps}, interleaved): truncating {c['truncating']:.2f} s, windowed "
        f"{c['windowed']:.2f} s = {c['windowed'] / c['truncating']:.2f}x truncating"
    )
    print(
        f"wall time (median of {args.reps}): truncating {w['truncating']:.2f} s, windowed {w['windowed']:.2f} s "
        f"= {w['windowed'] / w['truncating']:.2f}x truncating (load average {os.getloadavg()[0]:.1f})"
    )
    print(f"max |p_windowed - p_truncating| over the {len(fit)} pairs that fit: {dp_fit:.3g}")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
