"""Benchmark: answer normalization and the lexical judge, against the code before they were sped up.

    .venv/bin/python bench/bench_text.py            # the shipped HotpotQA sample, 3 repeats
    .venv/bin/python bench/bench_text.py --repeats 5

On the passages of the 100 shipped HotpotQA questions (every paragraph of each
question's pool, split into sentences):

1. ``normalize_answer`` (lowercase, punctuation, articles, whitespace) with
   ``str.translate`` against the per-character generator it replaced; the outputs
   are checked equal on every text;
2. the lexical judge on the gate's shape of work: each question's sentences as
   claims against each of its paragraphs, asked in 6 calls (the attribution gate
   and the re-attribution sweep ask the same pairs again), with the content tokens
   memoized across calls against the per-call premise cache it replaced; the
   probabilities are checked equal.

Prints the load average and the thread counts beside every ratio (medians of the
repeats, each timed with ``time.perf_counter`` in this process).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import string
import time

from _results import row
from _threads import pin_blas_threads

from rageval.data import load_examples, sample_path
from rageval.judges.lexical import STOPWORDS, LexicalJudge, clear_memo
from rageval.text import split_sentences
from rageval.text.normalize import normalize_answer

_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_before(s: str) -> str:
    """``normalize_answer`` as it was: punctuation dropped by a generator over the characters."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def _stem(tok: str) -> str:
    return tok[:-1] if len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss") else tok


def predict_before(premises: list[str], hypotheses: list[str]) -> list[float]:
    """``LexicalJudge.predict`` as it was: premises cached within one call only, the old normalization."""

    def content(text: str) -> set[str]:
        return {_stem(t) for t in normalize_before(text).split() if t not in STOPWORDS}

    out, cache = [], {}
    for p, h in zip(premises, hypotheses):
        if p not in cache:
            cache[p] = content(p)
        hyp = content(h)
        out.append(len(hyp & cache[p]) / len(hyp) if hyp else 0.0)
    return out


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; {pin_blas_threads(1)}; one Python thread")

    examples = load_examples("hotpotqa", sample_path("hotpotqa"))
    paragraphs = [p.text for ex in examples for p in ex.documents]
    sentences = [s for text in paragraphs for s in split_sentences(text)]
    texts = paragraphs + sentences
    assert [normalize_before(t) for t in texts] == [normalize_answer(t) for t in texts]
    before = _median_time(lambda: [normalize_before(t) for t in texts], args.repeats)
    after = _median_time(lambda: [normalize_answer(t) for t in texts], args.repeats)
    print(
        f"normalize_answer on {len(texts):,} texts: {before * 1e3:.1f} ms before, {after * 1e3:.1f} ms now: "
        f"{before / after:.2f}x (same outputs)"
    )
    row(
        what=f"normalize_answer, {len(texts):,} texts",
        before_s=round(before, 4),
        now_s=round(after, 4),
        speed_up=round(before / after, 2),
    )

    premises, hypotheses = [], []
    for ex in examples:
        claims = [s for p in ex.documents[:2] for s in split_sentences(p.text)]
        for p in ex.documents:
            premises += [p.text] * len(claims)
            hypotheses += claims
    judge = LexicalJudge()
    assert predict_before(premises, hypotheses) == judge.predict(premises, hypotheses)

    def six_calls(predict):
        for _ in range(6):
            predict(premises, hypotheses)

    def fresh_memo():
        clear_memo()
        six_calls(judge.predict)

    before = _median_time(lambda: six_calls(predict_before), args.repeats)
    after = _median_time(fresh_memo, args.repeats)
    print(
        f"lexical judge, {len(premises):,} pairs asked 6 times: {before:.2f} s before, {after:.2f} s now: "
        f"{before / after:.2f}x (same probabilities; memo emptied before each repeat)"
    )
    row(
        what=f"lexical judge, {len(premises):,} pairs x 6",
        before_s=round(before, 3),
        now_s=round(after, 3),
        speed_up=round(before / after, 2),
    )


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
