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

And on the long answers of the 100 shipped ASQA questions (each annotator's against
the other's, and against the next question's: ALCE's ``compute_rouge`` shape):

3. ROUGE-Lsum: ``rouge_lsum`` on token ids (``rageval.text.ids``, ``rageval.text.lcs``,
   the kernel it picks) against ``rouge-score``'s ``RougeScorer`` as rageval called it
   before, both from the same sentences (split once, outside the timing) and from cold
   memos; the F-measures are checked equal.

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
    rouge_rows(args.repeats)


def rouge_rows(repeats: int) -> None:
    """ROUGE-Lsum on ids against rouge_score on the shipped ASQA long answers (item 3 of the module doc)."""
    from rouge_score import rouge_scorer

    from rageval.diagnostics.alce import _lsum_text, answer_text, rouge_lsum
    from rageval.text import ids

    rows = load_examples("asqa", sample_path("asqa"))
    longs = [list(ex.meta["long_answers"]) for ex in rows if ex.meta.get("long_answers")]
    answers, refs = [], []
    for i, two in enumerate(longs):
        for k, text in enumerate(two):
            answers.append(text)
            refs.append([two[1 - k] if len(two) > 1 else two[0], longs[(i + 1) % len(longs)][0]])
    answers = [answer_text(a, alce_compat=False) for a in answers]  # rouge_lsum reads an answer without its [k]
    for t in answers + [r for rs in refs for r in rs]:
        _lsum_text(t)  # the sentences split once for both sides (Punkt is not what is compared)
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)

    def before() -> list[float]:
        return [
            max(scorer.score(_lsum_text(r), _lsum_text(a))["rougeLsum"].fmeasure for r in rs)
            for a, rs in zip(answers, refs)
        ]

    def now() -> list[float]:
        ids.clear()
        return [q["rouge_lsum"] for q in rouge_lsum(answers, refs)["per_question"]]

    assert before() == now(), "rouge_lsum differs from rouge_score"
    b = _median_time(before, repeats)
    a = _median_time(now, repeats)
    print(
        f"ROUGE-Lsum, {len(answers)} ASQA long answers against 2 references each: {b:.3f} s with rouge-score, "
        f"{a:.3f} s on token ids: {b / a:.2f}x (same F-measures; memos emptied before each repeat)"
    )
    row(
        what=f"ROUGE-Lsum, {len(answers)} answers x 2 references",
        before_s=round(b, 4),
        now_s=round(a, 4),
        speed_up=round(b / a, 2),
    )


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
