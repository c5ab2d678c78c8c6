"""Fit the strict lexical judge's constants on the shipped WiCE dev sample and print out-of-fold figures.

    python scripts/fit_strict_judge.py [--folds 10] [--seed 0] [--premise bm25|full]

Rows: the 349 claim-level WiCE dev rows (``rageval.calibrate.load_wice``), premises as ``rageval calibrate``
builds them (BM25 top-5 by default).  Label: ``supported`` = 1, ``not_supported`` and ``partially_supported`` = 0
(partial support counted as unsupported).  Model: ``p = sigmoid(b0 + b_cov * cov + b_pairs * pairs + b_ent * entities)``, a
logistic regression with both classes weighted equally (so that 0.5 is the balanced decision point) and a small
L2 penalty on the slopes, fitted by Newton's method on the rows no refusal rule fires on
(:mod:`rageval.judges.strict`; a refused row's probability is capped below 0.5 whatever the fit).

Out-of-fold: the rows are shuffled once (``numpy.random.default_rng(seed)``) and cut into ``folds`` folds,
stratified by label; each fold is scored with constants fitted on the others, and balanced accuracy at 0.5 and
AUROC are computed over all out-of-fold probabilities, beside the ``lexical`` judge's (no fitted constant) and
the shipped constants' in-sample figures.  The last lines print the constants fitted on every row: the values
to copy into ``src/rageval/judges/strict.py``.  Deterministic: no other randomness.
"""

from __future__ import annotations

import argparse

import numpy as np

from rageval.calibrate.core import LABELS, _binary, _premise, load_wice
from rageval.judges.lexical import LexicalJudge
from rageval.judges.strict import B0, B_COV, B_ENT, B_PAIRS, features, probability

L2 = 0.1


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2, iters: int = 100) -> np.ndarray:
    """Class-balanced, L2-penalized (slopes only) logistic regression by Newton's method: [b0, b1, ...]."""
    X = np.column_stack([np.ones(len(x)), x])
    n_pos, n_neg = y.sum(), len(y) - y.sum()
    w = np.where(y == 1, len(y) / (2 * max(n_pos, 1)), len(y) / (2 * max(n_neg, 1)))
    beta = np.zeros(X.shape[1])
    pen = np.full(X.shape[1], l2)
    pen[0] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(X @ beta)))
        grad = X.T @ (w * (p - y)) + pen * beta
        hess = (X * (w * p * (1 - p))[:, None]).T @ X + np.diag(pen)
        step = np.linalg.solve(hess + 1e-9 * np.eye(len(beta)), grad)
        beta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return beta


def _probs(feats, beta) -> list[float]:
    return [probability(f, *beta) for f in feats]


def _row(name: str, probs, labels) -> str:
    b = _binary(probs, labels, 0.5)
    return f"{name:<34} {b['n']:>4} {b['accuracy']:.3f} {b['balanced_accuracy']:.3f} {b['auroc']:.3f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--premise", default="bm25", choices=("bm25", "full"))
    args = ap.parse_args(argv)

    rows = load_wice()
    prem = [_premise(r, args.premise, 5) for r in rows]
    hyp = [r["claim"] for r in rows]
    y = np.array([1 if r["label"] == "supported" else 0 for r in rows])
    feats = [features(p, h) for p, h in zip(prem, hyp)]
    x = np.array([[f.cov, f.pairs, f.entities] for f in feats])
    ok = np.array([not f.refused for f in feats])

    rng = np.random.default_rng(args.seed)
    fold = np.empty(len(rows), dtype=int)
    for label in (0, 1):
        idx = rng.permutation(np.flatnonzero(y == label))
        fold[idx] = np.arange(len(idx)) % args.folds
    oof = np.empty(len(rows))
    for k in range(args.folds):
        train = (fold != k) & ok
        beta = fit(x[train], y[train])
        test = np.flatnonzero(fold == k)
        oof[test] = _probs([feats[i] for i in test], beta)

    lex = LexicalJudge().predict(prem, hyp)
    shipped = _probs(feats, (B0, B_COV, B_PAIRS, B_ENT))
    labels = list(y)
    sup_not = [i for i, r in enumerate(rows) if LABELS[r["label"]] is not None]

    print(f"WiCE dev, premise {args.premise}, {args.folds}-fold stratified (seed {args.seed}), threshold 0.5")
    print(
        f"refusals: {int((~ok).sum())} of {len(rows)} rows (abstention {sum(f.abstention for f in feats)}, "
        f"number {sum(f.number for f in feats)}, entity {sum(f.entity for f in feats)}, "
        f"polarity {sum(f.polarity for f in feats)}); refused by label: "
        + ", ".join(f"{lab} {sum(1 for f, r in zip(feats, rows) if f.refused and r['label'] == lab)}" for lab in LABELS)
    )
    print(f"{'partial as not supported':<34} {'n':>4} acc   bal.  AUROC")
    print(_row("lexical (no fitted constant)", lex, labels))
    print(_row("lexical-strict, out-of-fold", list(oof), labels))
    print(_row("lexical-strict, shipped constants", shipped, labels))
    print(f"{'supported vs not_supported':<34} {'n':>4} acc   bal.  AUROC")
    for name, probs in (
        ("lexical (no fitted constant)", lex),
        ("lexical-strict, out-of-fold", list(oof)),
        ("lexical-strict, shipped constants", shipped),
    ):
        print(_row(name, [probs[i] for i in sup_not], [labels[i] for i in sup_not]))
    beta = fit(x[ok], y[ok])
    print(
        f"fitted on every unrefused row: B0 = {beta[0]:.4f}  B_COV = {beta[1]:.4f}  B_PAIRS = {beta[2]:.4f}  "
        f"B_ENT = {beta[3]:.4f}"
    )


if __name__ == "__main__":
    main()
