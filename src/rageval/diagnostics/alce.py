"""ALCE's answer metrics beyond str-EM: QAMPARI precision/recall/F1, ROUGE-Lsum and length, ELI5 claims recall.

Each is rageval's own implementation of the definition in ALCE's ``eval.py``
(``compute_qampari_f1``, ``compute_rouge``, ``compute_len``, ``compute_claims``);
docs/design.md#alce-answer-metrics.  Pure functions of their arguments: no I/O; ROUGE-Lsum is
``rouge-score``'s, computed on token ids (:mod:`rageval.text.ids`, :mod:`rageval.text.lcs`: bounded memos of the
run's texts), claims recall uses the judge it is given.  Values are fractions in [0, 1] (ALCE reports x100);
undefined is None.

>>> r = qampari_f1(["Ann, Bob, Carl."], [[["Ann", "Anne"], ["Dora"]]])
>>> r["qampari_precision"], r["qampari_recall"], r["qampari_recall_top5"]
(0.3333333333333333, 0.5, 0.5)
>>> claims_recall(["Paris is the capital of France."], [["Paris is the capital.", "Berlin is big."]])["claims_recall"]
0.5
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from rageval.citations import alce_remove_citations
from rageval.diagnostics._common import check_list, check_same_length, check_str, check_str_list, summarize
from rageval.scoring import DEFAULT_JUDGE, DEFAULT_THRESHOLD
from rageval.text import ids as text_ids
from rageval.text.lcs import rouge_f, summary_hits_batch
from rageval.text.normalize import normalize_answer, remove_citations
from rageval.text.segment import nltk_sent_tokenize

__all__ = [
    "qampari_f1",
    "rouge_lsum",
    "claims_recall",
    "check_claims_inputs",
    "answer_text",
    "score_qampari_f1",
    "score_rouge_lsum",
    "score_claims_recall",
]

_QAMPARI_KEYS = (
    "qampari_precision",
    "qampari_recall",
    "qampari_recall_top5",
    "qampari_f1_top5",
    "qampari_num_preds",
)
_CLAIMS_KEYS = ("claims_recall_excl_abstain", "claims_abstentions")
#: ALCE's top-5 recall: a list answer is complete with five of its gold answers
TOP = 5


def answer_text(prediction: str, *, alce_compat: bool) -> str:
    """The answer as ALCE's non-citation metrics read it: citations removed; with ``alce_compat`` exactly ALCE's
    eval.py (the first line of the stripped output, ALCE's ``remove_citations``).

    >>> answer_text("Ann [1], Bob [2][3].\\nMore.", alce_compat=True)
    'Ann, Bob.'
    """
    if alce_compat:
        return alce_remove_citations(prediction.strip().split("\n")[0])
    return remove_citations(prediction)


def _f1(p: float, r: float) -> float:
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def _qampari_one(text: str, answers: list[list[str]]) -> dict[str, Any]:
    preds = [normalize_answer(x.strip()) for x in text.rstrip().rstrip(".").rstrip(",").split(",")]
    preds = [p for p in preds if p]
    groups = [[normalize_answer(a) for a in aliases] for aliases in answers]
    flat = {a for g in groups for a in g}
    found = set(preds)
    hits = sum(any(a in found for a in g) for g in groups)
    precision = sum(p in flat for p in preds) / len(preds) if preds else 0.0
    recall = hits / len(groups)
    top5 = min(TOP, hits) / min(TOP, len(groups))
    return {
        "qampari_precision": precision,
        "qampari_recall": recall,
        "qampari_recall_top5": top5,
        "qampari_f1": _f1(precision, recall),
        "qampari_f1_top5": _f1(precision, top5),
        "qampari_num_preds": len(preds),
    }


def qampari_f1(predictions: Sequence[str], references: Sequence[Any], *, alce_compat: bool = False) -> dict[str, Any]:
    """ALCE's QAMPARI list scores: precision, recall, recall-top-5, F1 and F1-top-5 of the predicted list.

    The answer (citations removed; ``alce_compat``: its first line, ALCE's citation removal) is split on
    ``,`` after trailing ``.`` and ``,`` are stripped; each piece is normalized (SQuAD/ALCE) and empty pieces
    dropped: the predicted list.  ``references[q]`` lists the gold answers, each as its aliases.  Precision =
    predicted items equal to some alias of some gold answer / predicted items (0 for an empty list); recall =
    gold answers with an alias among the predictions / gold answers; recall-top-5 = min(5, found) / min(5,
    gold answers); F1 of precision with each recall (0 when both are 0).  ``qampari_num_preds``: the list's
    length.  A question without gold answers is undefined.

    >>> r = qampari_f1(["p, q, r, s, t, u"], [[[x] for x in "pqrstuvw"]])
    >>> r["qampari_recall"], r["qampari_recall_top5"], r["qampari_f1_top5"]
    (0.75, 1.0, 1.0)
    """
    predictions = check_list(predictions, "predictions")
    references = check_list(references, "references")
    check_same_length(predictions=predictions, references=references)
    per_question: list[dict[str, Any]] = []
    for q, (pred, ref) in enumerate(zip(predictions, references)):
        text = answer_text(check_str(pred, "predictions", q), alce_compat=alce_compat)
        if isinstance(ref, (str, bytes)) or not isinstance(ref, Sequence):
            raise TypeError(f"references[{q}] must list the gold answers, each a list of aliases; got {ref!r:.80}")
        answers = [check_str_list(a, f"references[{q}]", j) for j, a in enumerate(ref)]
        if not answers:
            per_question.append({"qampari_f1": None, **dict.fromkeys(_QAMPARI_KEYS)})
            continue
        per_question.append(_qampari_one(text, answers))
    return summarize(per_question, "qampari_f1", extra=_QAMPARI_KEYS)


#: the texts whose ROUGE-Lsum input (sentences, one per line) :func:`rouge_lsum` keeps between calls (a bounded LRU)
LSUM_MEMO_SIZE = 16_384


@functools.lru_cache(maxsize=LSUM_MEMO_SIZE)
def _lsum_text(text: str) -> str:
    """ALCE's ROUGE-Lsum input: lowercased, one nltk sentence per line (memoized: a gold long answer comes back for
    every setting; at most :data:`LSUM_MEMO_SIZE` texts are kept)."""
    return "\n".join(nltk_sent_tokenize(text.lower()))


def rouge_lsum(predictions: Sequence[str], references: Sequence[Any], *, alce_compat: bool = False) -> dict[str, Any]:
    """ROUGE-Lsum F-measure against the long references (the best one), and the answer's length in words.

    As ALCE's ``compute_rouge``: the answer (citations removed; ``alce_compat``: its first line, ALCE's
    citation removal) and each reference are lowercased and split into sentences with nltk's Punkt, one per
    line; ``rouge-score``'s ``rougeLsum`` with its Porter stemmer scores each reference and the best F-measure
    counts.  ``references[q]``: a string or a list of strings (ASQA: its two annotators' long answers); a
    question without a non-blank reference has ROUGE-Lsum undefined.  ``answer_length`` (ALCE's
    ``compute_len``): the answer's whitespace-separated words, defined for every question.

    Computed as ``rouge-score`` computes it, on token ids (:func:`rageval.text.ids.rouge_lines`: each distinct
    text tokenized and stemmed once per run) with its summary-level LCS (:mod:`rageval.text.lcs`: numba when the
    ``fast`` extra is installed and the batch is large, else Python); the tests compare the values with
    ``rouge-score``'s own.
    """
    predictions = check_list(predictions, "predictions")
    references = check_list(references, "references")
    check_same_length(predictions=predictions, references=references)
    lengths: list[int] = []
    wanted: list[list[tuple[int, int]]] = []  # per question: its (reference, answer) pairs of document indexes
    with text_ids.session():
        docs: list[tuple[tuple[int, ...], ...]] = []
        index: dict[int, int] = {}  # id() of a memoized document -> its place in docs (docs keeps it alive)

        def doc(text: str) -> int:
            lines = text_ids.rouge_lines(_lsum_text(text))
            k = index.get(id(lines))
            if k is None:
                k = index[id(lines)] = len(docs)
                docs.append(lines)
            return k

        for q, (pred, ref) in enumerate(zip(predictions, references)):
            text = answer_text(check_str(pred, "predictions", q), alce_compat=alce_compat)
            refs = [ref] if isinstance(ref, str) else check_str_list(ref, "references", q)
            refs = [r for r in refs if r.strip()]
            lengths.append(len(text.split()))
            hyp = doc(text)
            wanted.append([(doc(r), hyp) for r in refs])
        pairs = [p for ps in wanted for p in ps]
        hits = iter(summary_hits_batch(docs, pairs, text_ids.vocab_size()))
        sizes = [sum(map(len, d)) for d in docs]
    per_question: list[dict[str, Any]] = []
    for length, ps in zip(lengths, wanted):
        # rouge_score's F-measure of each reference, the first best one (max keeps the first of equals)
        value = max((rouge_f(next(hits), sizes[r], sizes[h]) for r, h in ps), default=None)
        per_question.append({"rouge_lsum": value, "answer_length": length})
    return summarize(per_question, "rouge_lsum", extra=("answer_length",))


def check_claims_inputs(predictions: Any, references: Any) -> tuple[list[str], list[list[str]]]:
    """The answers and each question's claims, checked (errors name the field and the question)."""
    predictions = check_list(predictions, "predictions")
    references = check_list(references, "references")
    check_same_length(predictions=predictions, references=references)
    preds = [check_str(p, "predictions", q) for q, p in enumerate(predictions)]
    return preds, [check_str_list(c, "references", q) for q, c in enumerate(references)]


def claims_recall(
    predictions: Sequence[str],
    references: Sequence[Any],
    *,
    judge: Any = DEFAULT_JUDGE,
    threshold: float = DEFAULT_THRESHOLD,
    alce_compat: bool = False,
) -> dict[str, Any]:
    """ELI5's claims recall (ALCE's ``--claims_nli``): the share of a question's gold claims the answer entails.

    Premise: the answer with its citations removed (``alce_compat``: its first line, ALCE's removal); each
    claim of ``references[q]`` a hypothesis; entailed when the judge's probability is at least ``threshold``.
    A claim the judge abstains on (NaN) is not entailed and is counted in ``claims_abstentions`` (per
    question; the aggregate is their mean, ``claims_abstentions_total`` their sum), and
    ``claims_recall_excl_abstain`` leaves it out.  A question without claims is undefined.
    """
    from rageval.judges import get_judge

    preds, claims = check_claims_inputs(predictions, references)
    runner = get_judge(judge)
    premises = [answer_text(p, alce_compat=alce_compat) for p in preds]
    pairs = [(q, premises[q], c) for q, cs in enumerate(claims) for c in cs]
    decided = runner.decide([p for _, p, _ in pairs], [h for _, _, h in pairs], threshold=threshold) if pairs else []
    per_q: list[list[bool | None]] = [[] for _ in preds]
    for (q, _, _), d in zip(pairs, decided):
        per_q[q].append(d)
    per_question: list[dict[str, Any]] = []
    for ds in per_q:
        if not ds:
            per_question.append({"claims_recall": None, "claims_recall_excl_abstain": None, "claims_abstentions": None})
            continue
        judged = [d for d in ds if d is not None]
        per_question.append(
            {
                "claims_recall": sum(bool(d) for d in ds) / len(ds),
                "claims_recall_excl_abstain": sum(judged) / len(judged) if judged else None,
                "claims_abstentions": len(ds) - len(judged),
            }
        )
    out = summarize(per_question, "claims_recall", extra=_CLAIMS_KEYS)
    out["claims_abstentions_total"] = sum(q["claims_abstentions"] or 0 for q in per_question)
    return out


# ----------------------------------------------------------------------------------------------
# scorers: the catalog's recipes for building these functions' inputs from scored records


def _only(inputs, has, score, primary: str, extra: Sequence[str]) -> dict[str, Any]:
    """Score the inputs ``has`` accepts; the others are undefined (their gold is absent)."""
    per_question: list[Any] = [{primary: None, **dict.fromkeys(extra)} for _ in inputs]
    idx = [i for i, x in enumerate(inputs) if has(x)]
    if idx:
        for i, pq in zip(idx, score([inputs[i] for i in idx])["per_question"]):
            per_question[i] = pq
    return summarize(per_question, primary, extra=extra)


def score_qampari_f1(inputs, options) -> dict[str, Any]:
    """QAMPARI scores of the list questions (gold ``answer_lists``); undefined elsewhere."""

    def score(batch):
        refs = [[list(a) for a in x.gold.answer_lists] for x in batch]
        return qampari_f1([x.answer for x in batch], refs, alce_compat=options.alce_compat)

    return _only(inputs, lambda x: bool(x.gold.answer_lists), score, "qampari_f1", _QAMPARI_KEYS)


def score_rouge_lsum(inputs, options) -> dict[str, Any]:
    """ROUGE-Lsum against the long references (undefined without one) and every answer's length."""
    refs = [list(x.gold.reference) for x in inputs]
    return rouge_lsum([x.answer for x in inputs], refs, alce_compat=options.alce_compat)


def score_claims_recall(inputs, options, judge) -> dict[str, Any]:
    """Claims recall of the questions with gold claims, through the run's judge and threshold."""

    def score(batch):
        return claims_recall(
            [x.answer for x in batch],
            [list(x.gold.claims) for x in batch],
            judge=judge,
            threshold=options.attribution.threshold,
            alce_compat=options.alce_compat,
        )

    return _only(inputs, lambda x: bool(x.gold.claims), score, "claims_recall", _CLAIMS_KEYS)
