"""Calibrate a judge against human support labels (WiCE format): ``rageval calibrate``.

Each WiCE row has a ``claim``, the ``evidence`` sentences of the cited page and
a human ``label``.  Label mapping
(docs/design.md#decision-calibration-labels): ``supported`` = 1,
``not_supported`` = 0; ``partially_supported`` is reported as its own row and,
in a second figure, counted as not supported.

The premise is built from the evidence sentences (``--premise``):

* ``bm25`` (default): the top ``k`` (5) evidence sentences retrieved with the
  claim as the BM25 query (:class:`rageval.bm25.BM25Index` with the ``recovery``
  parameters, as re-attribution does), in page order,
  joined with ``"\\n"`` — it fits a 512-token judge;
* ``full``: every evidence sentence joined with ``"\\n"`` (long pages; model
  judges truncate, the count is reported).

Figures: accuracy and balanced accuracy of ``probability >= threshold``, and
AUROC of the probability (ties count one half).  ``calibrate()`` is the pure
function; the judge is built as a run's is (:func:`rageval.calibrate.judge.judge_runner`); the command is
:mod:`rageval.calibrate.cli`.

>>> rows = [{"claim": "Paris is in France.", "evidence": ["Paris is in France."], "label": "supported"},
...         {"claim": "Lyon is in Spain.", "evidence": ["Paris is in France."], "label": "not_supported"}]
>>> r = calibrate(rows, judge="lexical")
>>> r["binary"]["accuracy"], r["binary"]["auroc"]
(1.0, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from rageval.bm25 import PARAMS, BM25Index
from rageval.calibrate.judge import judge_runner
from rageval.infiles import InputFileError, iter_json_lines, read_text
from rageval.scoring import DEFAULT_JUDGE, DEFAULT_THRESHOLD

__all__ = ["calibrate", "load_wice", "auroc", "format_report", "LABELS"]

LABELS = {"supported": 1, "not_supported": 0, "partially_supported": None}


def load_wice(path: str | None = None) -> list[dict[str, Any]]:
    """WiCE rows from ``path``, or the shipped claim-level dev sample (349 claims)."""
    if path is None:
        text = (resources.files("rageval.data") / "samples" / "human" / "wice_claim_dev.jsonl").read_text("utf-8")
        where = "rageval.data/samples/human/wice_claim_dev.jsonl"
    else:
        text = read_text(path, what="the calibrate --data file")
        where = path
    rows = []
    for lineno, row in iter_json_lines(text, where, where=lambda s, n: f"{s}:{n}"):
        if not isinstance(row, dict):
            raise InputFileError(f"{where}:{lineno}: expected a JSON object (a WiCE row), got {type(row).__name__}")
        for key in ("claim", "evidence", "label"):
            if key not in row:
                raise ValueError(f"{where}:{lineno}: WiCE row has no {key!r}")
        if row["label"] not in LABELS:
            raise ValueError(f"{where}:{lineno}: label {row['label']!r} is not one of {sorted(LABELS)}")
        rows.append(row)
    return rows


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Area under the ROC curve (Mann–Whitney, ties count 1/2); None without both classes.

    >>> auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    0.75
    """
    pos = [s for s, y in zip(scores, labels) if y == 1]
    neg = [s for s, y in zip(scores, labels) if y == 0]
    if not pos or not neg:
        return None
    import numpy as np

    allv = np.asarray(list(pos) + list(neg), dtype=float)
    from scipy.stats import rankdata

    ranks = rankdata(allv)
    r_pos = ranks[: len(pos)].sum()
    return float((r_pos - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def _binary(probs: Sequence[float], labels: Sequence[int], threshold: float) -> dict[str, Any]:
    pred = [p >= threshold for p in probs]
    n = len(labels)
    correct = sum(int(pr) == y for pr, y in zip(pred, labels))
    pos = [pr for pr, y in zip(pred, labels) if y == 1]
    neg = [pr for pr, y in zip(pred, labels) if y == 0]
    tpr = sum(pos) / len(pos) if pos else None
    tnr = sum(1 for x in neg if not x) / len(neg) if neg else None
    bal = (tpr + tnr) / 2 if tpr is not None and tnr is not None else None
    return {
        "n": n,
        "n_positive": len(pos),
        "accuracy": correct / n if n else None,
        "balanced_accuracy": bal,
        "true_positive_rate": tpr,
        "true_negative_rate": tnr,
        "auroc": auroc(probs, labels),
    }


def _premise(row: dict, mode: str, k: int) -> str:
    ev = [s for s in row["evidence"] if isinstance(s, str) and s.strip()]
    if mode == "full" or len(ev) <= k:
        return "\n".join(ev)
    top = BM25Index(ev, PARAMS["recovery"]).top(row["claim"], k)
    if not top:
        top = list(range(min(k, len(ev))))
    return "\n".join(ev[i] for i in sorted(top))


def calibrate(
    rows: Sequence[dict],
    *,
    judge: Any = DEFAULT_JUDGE,
    threshold: float = DEFAULT_THRESHOLD,
    premise: str = "bm25",
    k: int = 5,
    cache_dir: Any = None,
    dtype: Any = None,
    max_length: int | None = 512,
    judge_params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Score ``judge`` on WiCE-format rows; see the module doc for the figures.

    ``judge_params``: the judge's own options (``openai``: model, base_url, ...), as a suite's ``judge.params``.
    """
    if premise not in ("bm25", "full"):
        raise ValueError(f"premise must be 'bm25' or 'full', got {premise!r}")
    runner = judge_runner(
        judge, threshold=threshold, cache_dir=cache_dir, dtype=dtype, max_length=max_length, judge_params=judge_params
    )
    prem = [_premise(r, premise, k) for r in rows]
    hyp = [r["claim"] for r in rows]
    all_probs = runner(prem, hyp)
    # abstentions (NaN: no clean decision) are left out of every figure and counted
    kept = [i for i, p in enumerate(all_probs) if not math.isnan(p)]
    out = {
        "judge": runner.id,
        "threshold": threshold,
        "premise": premise if premise == "full" else f"bm25 top-{k}",
        "n_rows": len(rows),
        "n_abstained": len(rows) - len(kept),
        **_figures([all_probs[i] for i in kept], [rows[i]["label"] for i in kept], threshold),
        "judge_stats": {k_: v for k_, v in runner.stats().items() if k_ in _JUDGE_STATS},
    }
    return out


#: the judge's counters a calibration reports
_JUDGE_STATS = ("executed", "requested", "truncated", "abstained", "off_label", "prompt_overflow")


def _figures(probs: Sequence[float], labels: Sequence[str], threshold: float) -> dict[str, Any]:
    """``binary`` (supported vs not_supported), ``partially_supported`` and ``partial_as_not_supported``
    of the decided rows' probabilities and human labels."""
    sup_nsup = [(p, y) for p, lab in zip(probs, labels) if (y := LABELS[lab]) is not None]
    partial = [p for p, lab in zip(probs, labels) if lab == "partially_supported"]
    strict = [(p, 1 if lab == "supported" else 0) for p, lab in zip(probs, labels)]
    return {
        "binary": _binary([p for p, _ in sup_nsup], [y for _, y in sup_nsup], threshold),
        "partially_supported": _partial(partial, threshold),
        "partial_as_not_supported": _binary([p for p, _ in strict], [y for _, y in strict], threshold),
    }


def _partial(probs: Sequence[float], threshold: float) -> dict[str, Any]:
    """The partially supported rows: how many, the share judged supported, their mean probability."""
    return {
        "n": len(probs),
        "predicted_supported": (sum(p >= threshold for p in probs) / len(probs)) if probs else None,
        "mean_probability": (sum(probs) / len(probs)) if probs else None,
    }


def _fmt(v: Any) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def format_report(r: dict[str, Any]) -> str:
    b, s, p = r["binary"], r["partial_as_not_supported"], r["partially_supported"]
    lines = [
        f"judge: {r['judge']}   threshold: {r['threshold']}   premise: {r['premise']}   rows: {r['n_rows']}",
        "",
        "| figure | n | accuracy | balanced accuracy | AUROC |",
        "|---|---|---|---|---|",
        f"| supported vs not_supported | {b['n']} | {_fmt(b['accuracy'])} | {_fmt(b['balanced_accuracy'])} | {_fmt(b['auroc'])} |",
        (
            f"| partially_supported counted as not supported | {s['n']} | {_fmt(s['accuracy'])} | "
            f"{_fmt(s['balanced_accuracy'])} | {_fmt(s['auroc'])} |"
        ),
        "",
        (
            f"partially_supported: n={p['n']}, judged supported {_fmt(p['predicted_supported'])}, "
            f"mean probability {_fmt(p['mean_probability'])}"
        ),
    ]
    if r.get("n_abstained"):
        lines.append(f"abstentions (no clean decision; left out of every figure above): {r['n_abstained']}")
    if r["judge_stats"].get("truncated"):
        lines.append(f"truncated pairs: {r['judge_stats']['truncated']}")
    return "\n".join(lines)
