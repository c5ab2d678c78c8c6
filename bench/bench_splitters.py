"""Benchmark: sentence splitters against a hand-segmented sample of the shipped passages (boundary P/R/F1).

    .venv/bin/python bench/bench_splitters.py
    .venv/bin/python bench/bench_splitters.py --show-errors     # every boundary a candidate misses or adds

The sample is ``bench/data/sentence_gold.jsonl`` (how it was segmented: ``bench/data/README.md``): 160 passages of
the shipped HotpotQA and ASQA samples, 130 drawn at random (306 sentence boundaries inside them) and 30 drawn from the
passages where the two candidates split differently (115 boundaries).  A boundary is the end of a sentence that is
not the passage's last; a candidate's sentences are located in the passage in order, so a boundary is a character
offset and one is right only where the gold has one at the same offset.  Candidates:

* **NLTK English Punkt**: nltk's ``PunktSentenceTokenizer`` with NLTK's English ``punkt_tab`` parameters (what
  ``nltk.sent_tokenize(text)`` runs; ``rageval.text.segment.punkt_tokenizer``);
* **nupunkt**: ``nupunkt.sent_tokenize`` (its own implementation and its parameters, trained on legal text);
* **nltk Punkt, nupunkt's parameters**: the substitute ALCE mode used before (for reference).

Prints, for each candidate and subset, the boundaries found, right, missed and added, precision, recall and F1,
and the time to split the sample (median of the repeats), with the load average and the thread counts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from _results import row
from _threads import load_line, pin_blas_threads

GOLD = Path(__file__).resolve().parent / "data" / "sentence_gold.jsonl"


def boundaries(text: str, sentences: list[str]) -> set[int]:
    """The end offsets of ``sentences`` (located in ``text`` in order) but the last one's."""
    out, pos = set(), 0
    for s in sentences:
        s = s.strip()
        if not s:
            continue
        i = text.index(s, pos)
        pos = i + len(s)
        out.add(pos)
    out.discard(len(text.rstrip()))
    return out


def candidates() -> dict[str, Callable[[str], list[str]]]:
    import nupunkt
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    from rageval.text.segment import _nupunkt_params, punkt_tokenizer

    english, source = punkt_tokenizer()
    print(f"NLTK English Punkt: {source}")
    substitute = PunktSentenceTokenizer(_nupunkt_params())
    return {
        "NLTK English Punkt": english.tokenize,
        "nupunkt": nupunkt.sent_tokenize,
        "nltk Punkt, nupunkt's parameters": substitute.tokenize,
    }


def score(gold: list[dict], split: Callable[[str], list[str]], show: bool) -> dict[str, tuple[int, int, int]]:
    """Per subset (and ``all``): (gold boundaries, found, right)."""
    out: dict[str, list[int]] = {}
    for g in gold:
        want = boundaries(g["text"], g["sentences"])
        got = boundaries(g["text"], split(g["text"]))
        for key in (g["subset"], "all"):
            acc = out.setdefault(key, [0, 0, 0])
            acc[0] += len(want)
            acc[1] += len(got)
            acc[2] += len(want & got)
        if show:
            for p in sorted(want ^ got):
                kind = "missed" if p in want else "added "
                print(f"    {kind} {g['id']}: …{g['text'][max(0, p - 40) : p]}|{g['text'][p : p + 20]}…")
    return {k: (a, b, c) for k, (a, b, c) in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="timings: median of this many splits of the sample")
    ap.add_argument("--show-errors", action="store_true", help="print every boundary missed or added")
    args = ap.parse_args()
    print(load_line())
    print(pin_blas_threads(1))
    gold = [json.loads(x) for x in GOLD.read_text(encoding="utf-8").splitlines() if x.strip()]
    print(f"{GOLD.name}: {len(gold)} passages")
    for name, split in candidates().items():
        if args.show_errors:
            print(f"{name}:")
        res = score(gold, split, args.show_errors)
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            for g in gold:
                split(g["text"])
            times.append(time.perf_counter() - t0)
        secs = statistics.median(times)
        for subset in ("random", "disagreement", "all"):
            n_gold, n_found, right = res[subset]
            p, r = right / n_found if n_found else float("nan"), right / n_gold
            f1 = 2 * p * r / (p + r) if p + r else float("nan")
            print(
                f"{name:34s} {subset:12s} gold {n_gold:3d}  found {n_found:3d}  right {right:3d}  "
                f"missed {n_gold - right:3d}  added {n_found - right:3d}  P {p:.3f}  R {r:.3f}  F1 {f1:.3f}"
            )
            row(
                splitter=name,
                subset=subset,
                gold=n_gold,
                found=n_found,
                right=right,
                precision=round(p, 4),
                recall=round(r, 4),
                f1=round(f1, 4),
            )
        print(f"{name:34s} splits the {len(gold)} passages in {secs * 1000:.1f} ms (median of {args.repeats})")
    print(load_line())


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
