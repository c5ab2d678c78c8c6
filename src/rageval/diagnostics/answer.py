"""Answer-level diagnostics: answer-in-context, ALCE str-EM, HotpotQA answer F1/EM.

Pure functions: no I/O, no globals, no model.

>>> answer_in_context(["Paris is the capital of France."], [["paris"]])["answer_in_context"]
1.0
>>> str_em(["It was Paris [1]."], [[["Paris"], ["Lyon"]]])["str_em"]
0.5
>>> answer_f1(["the Eiffel tower"], [["Eiffel Tower", "tower"]])["answer_f1"]
1.0
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from rageval.citations import alce_remove_citations
from rageval.diagnostics._common import (
    check_list,
    check_same_length,
    check_str,
    check_str_list,
    summarize,
)
from rageval.text.normalize import normalize_answer, remove_citations

__all__ = ["answer_in_context", "str_em", "answer_f1", "is_yes_no", "token_f1", "contains_tokens"]

_YES_NO = frozenset({"yes", "no"})


def is_yes_no(answer: str) -> bool:
    """True when the normalized gold answer is ``yes`` or ``no``."""
    return normalize_answer(answer) in _YES_NO


def contains_tokens(haystack_norm: str, needle_norm: str) -> bool:
    """``needle`` is a contiguous token subsequence of ``haystack`` (both normalized).

    >>> contains_tokens("party in paris", "art")
    False
    >>> contains_tokens("party in paris", "in paris")
    True
    """
    if not needle_norm:
        return False
    return f" {needle_norm} " in f" {haystack_norm} "


def _as_units(context: Any, q: int) -> list[str]:
    if isinstance(context, str):
        return [context]
    return check_str_list(context, "contexts", q)


def _alias_groups(ref: Any, q: int) -> list[list[str]]:
    """Per question: a list of alias lists (one per ASQA qa_pair; one group otherwise)."""
    if isinstance(ref, (str, bytes)) or not isinstance(ref, Sequence):
        raise TypeError(
            f"references[{q}] must be a list of gold aliases (list[str]) or, for ASQA, "
            f"a list of qa_pairs' short answers (list[list[str]]); got {type(ref).__name__}: {ref!r:.80}"
        )
    if ref and all(isinstance(x, str) for x in ref):
        return [list(ref)]
    if all(not isinstance(x, str) for x in ref):
        return [check_str_list(x, f"references[{q}]", j) for j, x in enumerate(ref)]
    raise TypeError(f"references[{q}] mixes strings and lists: give list[str] (aliases) or list[list[str]] (qa_pairs)")


def answer_in_context(contexts: Sequence[Any], references: Sequence[Any]) -> dict[str, Any]:
    """1 if some normalized gold alias is a contiguous token subsequence of one unit of the context.

    ``contexts[q]`` is the packed context as the reader receives it, either one
    string or a list of unit strings (a match must lie inside one unit).
    ``references[q]`` is a list of gold aliases, or for ASQA a list of qa_pairs'
    short-answer lists (the value is then the mean over qa_pairs).  Undefined:
    a yes/no gold answer, no gold aliases, or aliases that normalize to nothing.
    """
    contexts = check_list(contexts, "contexts")
    references = check_list(references, "references")
    check_same_length(contexts=contexts, references=references)
    per_question = []
    for q, (ctx, ref) in enumerate(zip(contexts, references)):
        units_norm = [normalize_answer(u) for u in _as_units(ctx, q)]
        pair_values = []
        for aliases in _alias_groups(ref, q):
            if any(is_yes_no(a) for a in aliases):
                continue
            golds = [g for g in (normalize_answer(a) for a in aliases) if g]
            if not golds:
                continue
            hit = any(contains_tokens(u, g) for g in golds for u in units_norm)
            pair_values.append(1.0 if hit else 0.0)
        value = sum(pair_values) / len(pair_values) if pair_values else None
        per_question.append({"answer_in_context": value})
    return summarize(per_question, "answer_in_context")


def str_em(predictions: Sequence[str], references: Sequence[Any], *, alce_compat: bool = False) -> dict[str, Any]:
    """ALCE's str-EM: mean over qa_pairs of "a short answer is a substring of the answer"; ``str_hit`` = all pairs.

    Both sides are normalized (SQuAD/ALCE) and the answer's citations removed.
    ``alce_compat=True`` also keeps only the answer's first line and counts an
    empty normalized short answer as present, exactly as ALCE's ``eval.py`` does;
    by default such short answers are skipped (a pair with none left is left out).
    A question with no scorable qa_pair is undefined.  An empty answer scores 0.
    """
    predictions = check_list(predictions, "predictions")
    references = check_list(references, "references")
    check_same_length(predictions=predictions, references=references)
    per_question = []
    for q, (pred, ref) in enumerate(zip(predictions, references)):
        pred = check_str(pred, "predictions", q)
        if alce_compat:
            pred_norm = normalize_answer(alce_remove_citations(pred.strip().split("\n")[0]))
        else:
            pred_norm = normalize_answer(remove_citations(pred))
        groups = _alias_groups(ref, q)
        pair_values = []
        for shorts in groups:
            golds = [normalize_answer(s) for s in shorts]
            if not alce_compat:
                golds = [g for g in golds if g]
                if not golds:
                    continue
            pair_values.append(1.0 if any(g in pred_norm for g in golds) else 0.0)
        if pair_values:
            em = sum(pair_values) / len(pair_values)
            per_question.append({"str_em": em, "str_hit": 1.0 if em == 1.0 else 0.0})
        else:
            per_question.append({"str_em": None, "str_hit": None})
    return summarize(per_question, "str_em", extra=("str_hit",))


def token_f1(prediction: str, gold: str) -> tuple[float, float, float]:
    """Official HotpotQA ``f1_score``: (f1, precision, recall) on normalized tokens, yes/no/noanswer exact."""
    p, g = normalize_answer(prediction), normalize_answer(gold)
    special = ("yes", "no", "noanswer")
    if (p in special or g in special) and p != g:
        return 0.0, 0.0, 0.0
    pt, gt = p.split(), g.split()
    same = sum((Counter(pt) & Counter(gt)).values())
    if same == 0:
        return 0.0, 0.0, 0.0
    prec, rec = same / len(pt), same / len(gt)
    return 2 * prec * rec / (prec + rec), prec, rec


def answer_f1(predictions: Sequence[str], references: Sequence[Any]) -> dict[str, Any]:
    """HotpotQA/SQuAD token F1 and exact match, max over gold aliases (citations removed first).

    Yes/no follows the official HotpotQA script: a yes/no/noanswer prediction or
    gold scores 0 unless both normalize to the same word.  Aliases that normalize
    to nothing are skipped; a question with none left is undefined.
    """
    predictions = check_list(predictions, "predictions")
    references = check_list(references, "references")
    check_same_length(predictions=predictions, references=references)
    per_question = []
    for q, (pred, ref) in enumerate(zip(predictions, references)):
        pred = remove_citations(check_str(pred, "predictions", q))
        aliases = [a for a in check_str_list(ref, "references", q) if normalize_answer(a)]
        if not aliases:
            per_question.append({"answer_f1": None, "answer_em": None})
            continue
        f1 = max(token_f1(pred, a)[0] for a in aliases)
        em = max(1.0 if normalize_answer(pred) == normalize_answer(a) else 0.0 for a in aliases)
        per_question.append({"answer_f1": f1, "answer_em": em})
    return summarize(per_question, "answer_f1", extra=("answer_em",))


# ----------------------------------------------------------------------------------------------
# scorers: the catalog's recipes for building these functions' inputs from scored records


def score_answer_in_context(inputs, options) -> dict[str, Any]:
    """answer_in_context over the units as the reader's template showed them."""
    return answer_in_context([list(x.shown) for x in inputs], [x.gold.aliases for x in inputs])


def score_str_em(inputs, options) -> dict[str, Any]:
    return str_em(
        [x.answer for x in inputs],
        [[list(p) for p in x.gold.qa_pairs] for x in inputs],
        alce_compat=options.alce_compat,
    )


def score_answer_f1(inputs, options) -> dict[str, Any]:
    return answer_f1([x.answer for x in inputs], [list(x.gold.answers) for x in inputs])
