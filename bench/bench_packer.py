"""Benchmark: the submodular packer's lazy greedy vs plain greedy.

    python bench/bench_packer.py            # about 1-2 minutes on 2 shared CPU cores

Runs against the installed ``rageval`` (editable or from a wheel).  BLAS threads are pinned
(``--threads``, default 1; threadpoolctl from the ``bench`` extra) or reported as not pinned.

Candidates are real HotpotQA sentences (all paragraphs of the 100 shipped
questions, ~4k sentences); above that, perturbed near-copies (80% of the words,
shuffled) are added, which is the regime where facility location must saturate.
Documents are groups of 5 consecutive candidates; the question is a HotpotQA
question.  Costs are rageval ``regex`` tokens.

Timed per question, on the same problem for both algorithms:
* build  = tokenizing, IDF, tf-idf rows, singleton gains (shared by both);
* lazy   = cost-scaled lazy greedy (priority queue) + Lin-Bilmes fallback;
* plain  = cost-scaled greedy re-evaluating every remaining candidate each step
  + the same fallback.  Both give the same selection (checked here and in tests).
Speed-up is shown for selection alone and end to end (build + selection).
Plain greedy is capped at --plain-cap seconds per cell in the curve; a capped
cell's plain time is extrapolated (marked "~") from its measured cost per gain
evaluation times the number of evaluations it would make for the selection
(which equals lazy's: checked on every uncapped cell).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from functools import partial
from pathlib import Path

import numpy as np
from _threads import pin_blas_threads  # beside this script
from rageval.compressors.base import count_tokens
from rageval.compressors.submodular import build_problem, pack, plain_greedy

from rageval.data import sample_path
from rageval.text import get_tokenizer

SAMPLE = sample_path("hotpotqa")


def pool_and_questions():
    data = json.loads(Path(SAMPLE).read_text())
    sents, titles = [], []
    for ex in data:
        for title, ss in ex["context"]:
            for s in ss:
                if s.strip():
                    sents.append(s.strip())
                    titles.append(title)
    return sents, titles, [ex["question"] for ex in data]


def candidates(n, sents, titles, rng):
    idx = rng.permutation(len(sents))[: min(n, len(sents))]
    texts = [sents[i] for i in idx]
    tits = [titles[i] for i in idx]
    while len(texts) < n:
        k = int(rng.integers(len(sents)))
        words = sents[k].split()
        keep = [w for w in words if rng.random() < 0.8] or words
        rng.shuffle(keep)
        texts.append(" ".join(keep))
        tits.append(titles[k])
    return texts, tits


def problem(question, texts, tits, tok):
    costs = [max(1, c) for c in count_tokens(tok, texts)]
    docs = [f"d{i // 5}" for i in range(len(texts))]
    return build_problem(question, None, texts, costs, docs, titles=tits)


def plain_evaluations(p, budget, selected):
    """Gain evaluations plain greedy makes for this selection: every feasible remaining candidate, each step
    after the first (the first step's singleton gains are shared)."""
    costs = p.costs
    remaining = budget
    alive = costs <= remaining
    total = 0
    for step, i in enumerate(selected):
        if step:
            total += int(alive.sum())
        alive[i] = False
        remaining -= costs[i]
        alive &= costs <= remaining
    return total + (int(alive.sum()) if selected and alive.any() else 0)


def timed(fn):
    t = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description="lazy vs plain greedy for the submodular packer")
    ap.add_argument("--questions", type=int, default=9, help="questions averaged for the 1k@160 headline")
    ap.add_argument("--plain-cap", type=float, default=6.0, help="seconds per cell for plain greedy in the curve")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads, pinned with threadpoolctl")
    args = ap.parse_args(argv)
    print(pin_blas_threads(args.threads))
    rng = np.random.default_rng(args.seed)
    tok = get_tokenizer("regex")
    sents, titles, questions = pool_and_questions()
    t_all = time.perf_counter()

    print("== headline: 1,000 candidate sentences, budget 160 tokens ==")
    rows = []
    for q in range(args.questions):
        texts, tits = candidates(1000, sents, titles, rng)
        p, t_build = timed(partial(problem, questions[q], texts, tits, tok))
        lazy, t_lazy = timed(partial(pack, p, 160, lazy=True))
        plain, t_plain = timed(partial(pack, p, 160, lazy=False))
        if lazy.selected != plain.selected:
            raise SystemExit(f"lazy and plain greedy disagree on question {q}")
        rows.append((t_build, t_lazy, t_plain, lazy.evaluations, plain.evaluations, len(lazy.selected)))
    med = [statistics.median(r[k] for r in rows) for k in range(6)]
    best = min(r[0] + r[1] for r in rows) * 1000
    b, l, pl = med[0] * 1000, med[1] * 1000, med[2] * 1000
    print(
        f"median over {args.questions} questions: build {b:.1f} ms | lazy select {l:.2f} ms "
        f"({med[3]:.0f} gain evaluations) | plain select {pl:.1f} ms ({med[4]:.0f} evaluations) | "
        f"{med[5]:.0f} sentences chosen"
    )
    print(
        f"lazy end to end (build + select): median {b + l:.1f} ms, best {best:.1f} ms per question "
        f"(target <= 50 ms): {'OK' if b + l <= 50 else 'MISSED (median)'}"
    )
    print(
        f"speed-up: selection {pl / l:.1f}x, end to end {(b + pl) / (b + l):.1f}x (target >= 3x): "
        f"{'OK' if (b + pl) / (b + l) >= 3 else 'MISSED'}"
    )
    try:
        import os

        print(f"machine load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (timings scale with it)")
    except OSError:
        pass

    print(f"\n== curve (1 question per cell; plain greedy capped at {args.plain_cap:.0f} s per cell) ==")
    print(
        f"{'candidates':>10} {'budget':>6} {'build ms':>9} {'lazy ms':>8} {'plain ms':>10} "
        f"{'select x':>9} {'end-to-end x':>12} {'lazy evals':>10} {'plain evals':>11}"
    )
    for n in (1000, 5000, 10000):
        texts, tits = candidates(n, sents, titles, rng)
        p, t_build = timed(partial(problem, questions[n % len(questions)], texts, tits, tok))
        for budget in (160, 500, 2000):
            lazy, t_lazy = timed(partial(pack, p, budget, lazy=True))
            plain, t_plain = timed(partial(plain_greedy, p, budget, max_seconds=args.plain_cap))
            capped = plain.timed_out
            if not capped and plain.selected != lazy.selected and not lazy.fallback_used:
                raise SystemExit(f"lazy and plain greedy disagree at n={n}, budget={budget}")
            if capped:  # extrapolate from the measured cost per evaluation (marked ~)
                from rageval.compressors.submodular import lazy_greedy

                n_eval = plain_evaluations(p, budget, lazy_greedy(p, budget).selected)
                t_plain = t_plain / max(plain.evaluations, 1) * n_eval
                evals = f"~{n_eval}"
            else:
                evals = str(plain.evaluations)
            ge = "~" if capped else ""
            print(
                f"{n:>10} {budget:>6} {t_build * 1000:>9.0f} {t_lazy * 1000:>8.1f} "
                f"{ge + format(t_plain * 1000, '.0f'):>10} {ge + format(t_plain / t_lazy, '.0f') + 'x':>9} "
                f"{ge + format((t_build + t_plain) / (t_build + t_lazy), '.1f') + 'x':>12} "
                f"{lazy.evaluations:>10} {evals:>11}"
            )
    print(
        "~ = plain greedy stopped at the cap; its time is extrapolated from its measured cost per gain "
        "evaluation times the evaluations it would make for the (identical) selection."
    )
    print(f"\ntotal bench time {time.perf_counter() - t_all:.0f} s")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
