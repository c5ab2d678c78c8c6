"""Answer-level diagnostics: answer-in-context, str-EM (ALCE's for ASQA, rageval's for QASPER), answer F1/EM
(HotpotQA's, or QASPER's official scorer).

Pure functions of their arguments: no I/O, no model.  Definitions: docs/design.md#answer-in-context,
#string-exact-match, #answer-f1.  Each distinct text is normalized once per run (:func:`rageval.text.ids.normalized`,
a bounded memo); token F1/EM count integer token ids (:func:`rageval.text.ids.normalized_ids`); str-EM and
answer-in-context stay substring tests on the normalized strings, as their definitions are.

>>> answer_in_context(["Paris is the capital of France."], [["paris"]])["answer_in_context"]
1.0
>>> str_em(["It was Paris [1]."], [[["Paris"], ["Lyon"]]])["str_em"]
0.5
>>> answer_f1(["the Eiffel tower"], [["Eiffel Tower", "tower"]])["answer_f1"]
1.0
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from rageval.citations import alce_remove_citations
from rageval.diagnostics._common import (
    check_list,
    check_same_length,
    check_str,
    check_str_list,
    summarize,
)
from rageval.text import ids as text_ids
from rageval.text.ids import normalized
from rageval.text.normalize import remove_citations

__all__ = [
    "answer_in_context",
    "str_em",
    "answer_f1",
    "is_yes_no",
    "token_f1",
    "squad_token_f1",
    "contains_tokens",
    "UNANSWERABLE",
    "STR_EM_CONVENTIONS",
    "ANSWER_F1_CONVENTIONS",
]

_YES_NO = frozenset({"yes", "no"})
#: QASPER's reference string for an annotator who marked the question unanswerable (the official scorer's)
UNANSWERABLE = "Unanswerable"
_UNANSWERABLE_NORM = "unanswerable"
#: ``str_em(convention=...)``: ALCE's ASQA str-EM, or rageval's QASPER str-EM (docs/design.md#string-exact-match)
STR_EM_CONVENTIONS = ("asqa", "qasper")
#: ``answer_f1(convention=...)``: the HotpotQA script, or QASPER's official scorer (docs/design.md#answer-f1)
ANSWER_F1_CONVENTIONS = ("hotpotqa", "qasper")


def is_yes_no(answer: str) -> bool:
    """True when the normalized gold answer is ``yes`` or ``no``."""
    return normalized(answer) in _YES_NO


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


def _searchable(aliases: Sequence[str]) -> tuple[list[str], set[str]]:
    """The normalized aliases answer-in-context searches for, and the kinds of alias it dropped.

    Dropped: yes/no (``"yes_no"``: cannot be located in evidence), QASPER's ``Unanswerable`` marker
    (``"unanswerable"``: not an answer string) and aliases that normalize to nothing (``"empty"``).
    """
    kept, dropped = [], set()
    for a in aliases:
        g = normalized(a)
        if not g:
            dropped.add("empty")
        elif g in _YES_NO:
            dropped.add("yes_no")
        elif g == _UNANSWERABLE_NORM:
            dropped.add("unanswerable")
        else:
            kept.append(g)
    return kept, dropped


def _undefined_reason(dropped: set[str]) -> str:
    if "unanswerable" in dropped:
        return "unanswerable"
    if "yes_no" in dropped:
        return "yes_no"
    return "no_alias"


def _packed_tokens(units_norm: Sequence[str], separator_norm: str) -> str:
    """The normalized packed context: the normalized units in order with the normalized separator between
    them, a unit boundary always a token boundary (normalizing the joined text would glue ``Par|is`` into
    ``paris``)."""
    gap = f" {separator_norm} " if separator_norm else " "
    return gap.join(u for u in units_norm if u)


def answer_in_context(contexts: Sequence[Any], references: Sequence[Any], *, separator: str = "\n") -> dict[str, Any]:
    """1 if some normalized gold alias is a contiguous token subsequence of the packed context.

    ``contexts[q]`` is the packed context as the reader receives it, either one
    string or a list of unit strings (each as the prompt shows it, its title line
    first where the prompt shows titles, without its ``[k]`` label).
    ``answer_in_context`` (the packing paper's definition): the units are joined in
    order with ``separator`` between them, as the reader's prompt joins them (its
    template's ``unit_separator``), and a match may cross a unit boundary
    (``["Paris is the capital", "of France."]`` holds ``"capital of France"``); a
    unit boundary is always a token boundary, and a separator's own words (or a
    unit's title line) lie between the units as they do in the prompt.
    ``answer_in_context_unit``: a match must lie inside one unit.
    ``references[q]`` is a list of gold aliases, or for ASQA a list of qa_pairs'
    short-answer lists (the value is then the mean over qa_pairs).  Aliases that are
    yes/no, QASPER's ``Unanswerable`` marker or that normalize to nothing are not
    searched for; the other aliases of the same group still are.  A group with no
    alias left is left out; a question with no group left is undefined, and the
    result counts why under ``undefined_reasons`` (``unanswerable`` when an
    Unanswerable marker was dropped, else ``yes_no`` when a yes/no alias was, else
    ``no_alias``).

    >>> answer_in_context(["Paris is big."], [["yes", "Paris"]])["answer_in_context"]
    1.0
    >>> answer_in_context(["Paris is big."], [["Unanswerable"]])["undefined_reasons"]
    {'yes_no': 0, 'unanswerable': 1, 'no_alias': 0}
    >>> r = answer_in_context([["the capital", "of France"]], [["capital of France"]])
    >>> r["answer_in_context"], r["answer_in_context_unit"]
    (1.0, 0.0)
    """
    if not isinstance(separator, str):
        raise TypeError(f"answer_in_context: separator must be a string, got {type(separator).__name__}")
    contexts = check_list(contexts, "contexts")
    references = check_list(references, "references")
    check_same_length(contexts=contexts, references=references)
    separator_norm = normalized(separator)
    per_question: list[dict[str, Any]] = []
    reasons = {"yes_no": 0, "unanswerable": 0, "no_alias": 0}
    for q, (ctx, ref) in enumerate(zip(contexts, references)):
        units_norm = [normalized(u) for u in _as_units(ctx, q)]
        packed_norm = _packed_tokens(units_norm, separator_norm)
        unit_values, packed_values, dropped = [], [], set()
        for aliases in _alias_groups(ref, q):
            golds, gone = _searchable(aliases)
            dropped |= gone
            if not golds:
                continue
            unit_values.append(1.0 if any(contains_tokens(u, g) for g in golds for u in units_norm) else 0.0)
            packed_values.append(1.0 if any(contains_tokens(packed_norm, g) for g in golds) else 0.0)
        unit = sum(unit_values) / len(unit_values) if unit_values else None
        packed = sum(packed_values) / len(packed_values) if packed_values else None
        if packed is None:
            reasons[_undefined_reason(dropped)] += 1
        per_question.append({"answer_in_context": packed, "answer_in_context_unit": unit})
    out = summarize(per_question, "answer_in_context", extra=("answer_in_context_unit",))
    out["undefined_reasons"] = reasons
    return out


def _check_convention(value: Any, allowed: Sequence[str], fn: str) -> str:
    if value not in allowed:
        raise ValueError(f"{fn}: convention must be one of {', '.join(repr(c) for c in allowed)}, got {value!r}")
    return value


def _str_em_answer(pred: str, alce_compat: bool) -> str:
    if alce_compat:
        return normalized(alce_remove_citations(pred.strip().split("\n")[0]))
    return normalized(remove_citations(pred))


def _asqa_str_em(pred_norm: str, groups: list[list[str]], alce_compat: bool) -> float | None:
    pair_values = []
    for shorts in groups:
        golds = [normalized(s) for s in shorts]
        if not alce_compat:
            golds = [g for g in golds if g]
            if not golds:
                continue
        pair_values.append(1.0 if any(g in pred_norm for g in golds) else 0.0)
    return sum(pair_values) / len(pair_values) if pair_values else None


def _qasper_hit(pred_norm: str, gold_norm: str) -> bool:
    """A short answer is a substring of the answer (ALCE's test); yes/no must be a whole word."""
    if gold_norm in _YES_NO:
        return contains_tokens(pred_norm, gold_norm)
    return gold_norm in pred_norm


def _qasper_str_em(pred_norm: str, annotators: list[list[str]]) -> float | None:
    hits = []
    for shorts in annotators:
        golds = [g for g in (normalized(s) for s in shorts) if g]
        if not golds or golds == [_UNANSWERABLE_NORM]:
            continue  # the annotator marked the question unanswerable (or gave nothing to look for)
        hits.append(1.0 if all(_qasper_hit(pred_norm, g) for g in golds) else 0.0)
    return max(hits) if hits else None


def str_em(
    predictions: Sequence[str], references: Sequence[Any], *, alce_compat: bool = False, convention: str = "asqa"
) -> dict[str, Any]:
    """String exact match: ALCE's str-EM for ASQA (default) or rageval's str-EM for QASPER; and ``str_hit``.

    Both sides are normalized (SQuAD/ALCE) and the answer's citations removed.

    ``convention="asqa"`` (ALCE's ``compute_str_em``): ``references[q]`` lists the
    qa_pairs' short answers; ``str_em`` is the mean over qa_pairs of "some short answer
    is a substring of the answer", ``str_hit`` is 1 when every pair matched.
    ``alce_compat=True`` also keeps only the answer's first line and counts an empty
    normalized short answer as present, exactly as ALCE's ``eval.py`` does; by default
    such short answers are skipped (a pair with none left is left out).

    ``convention="qasper"``: ``references[q]`` lists one entry per annotator, the short
    answers that **all** must appear (the extractive spans, else the yes/no word, else
    the free-form answer); an empty entry, or ``["Unanswerable"]``, is an annotator who
    marked the question unanswerable and is left out.  A short answer must be a
    substring of the answer, a ``yes``/``no`` a whole word of it.  ``str_em`` = max
    over annotators of that hit (0 or 1) = ``str_hit``.  ``alce_compat`` changes only
    how the answer is read (first line, ALCE's citation removal).

    A question with no scorable qa_pair (annotator) is undefined.  An empty answer scores 0.

    >>> str_em(["Yes, 412 questions [1]."], [[["412", "questions"], []]], convention="qasper")["str_em"]
    1.0
    """
    predictions = check_list(predictions, "predictions")
    references = check_list(references, "references")
    check_same_length(predictions=predictions, references=references)
    _check_convention(convention, STR_EM_CONVENTIONS, "str_em")
    per_question: list[dict[str, Any]] = []
    for q, (pred, ref) in enumerate(zip(predictions, references)):
        pred_norm = _str_em_answer(check_str(pred, "predictions", q), alce_compat)
        if convention == "qasper":
            em = _qasper_str_em(pred_norm, _annotator_groups(ref, q))
            hit = em
        else:
            em = _asqa_str_em(pred_norm, _alias_groups(ref, q), alce_compat)
            hit = None if em is None else (1.0 if em == 1.0 else 0.0)
        per_question.append({"str_em": em, "str_hit": hit})
    return summarize(per_question, "str_em", extra=("str_hit",))


def _annotator_groups(ref: Any, q: int) -> list[list[str]]:
    """QASPER str-EM references of one question: one list of short answers per annotator."""
    if isinstance(ref, (str, bytes)) or not isinstance(ref, Sequence) or any(isinstance(x, str) for x in ref):
        raise TypeError(
            f"references[{q}] must list one entry per annotator, each a list of short answers "
            f"(list[list[str]]; [] for an annotator who marked the question unanswerable); got {ref!r:.80}"
        )
    return [check_str_list(x, f"references[{q}]", j) for j, x in enumerate(ref)]


def _overlap(pt: tuple[int, ...], gt: tuple[int, ...]) -> int:
    """Tokens two id sequences share, counted with multiplicity (``sum((Counter(a) & Counter(b)).values())``)."""
    if not pt or not gt:
        return 0
    return sum((Counter(pt) & Counter(gt)).values())


def _squad_f1_ids(pt: tuple[int, ...], gt: tuple[int, ...]) -> float:
    same = _overlap(pt, gt)
    if same == 0:
        return 0.0
    prec, rec = same / len(pt), same / len(gt)
    return 2 * prec * rec / (prec + rec)


def squad_token_f1(prediction: str, gold: str) -> float:
    """SQuAD v1.1's token F1 on normalized tokens, as QASPER's official scorer (``token_f1_score``) computes it.

    No yes/no special case: ``"Yes, it does"`` against ``"Yes"`` is 0.5.

    >>> squad_token_f1("Yes, it does", "Yes")
    0.5
    """
    with text_ids.session():
        return _squad_f1_ids(text_ids.normalized_ids(prediction), text_ids.normalized_ids(gold))


_SPECIAL = ("yes", "no", "noanswer")


def _hotpot_f1_ids(prediction: str, gold: str) -> tuple[float, float, float]:
    p, g = normalized(prediction), normalized(gold)
    if (p in _SPECIAL or g in _SPECIAL) and p != g:
        return 0.0, 0.0, 0.0
    pt, gt = text_ids.normalized_ids(prediction), text_ids.normalized_ids(gold)
    same = _overlap(pt, gt)
    if same == 0:
        return 0.0, 0.0, 0.0
    prec, rec = same / len(pt), same / len(gt)
    return 2 * prec * rec / (prec + rec), prec, rec


def token_f1(prediction: str, gold: str) -> tuple[float, float, float]:
    """Official HotpotQA ``f1_score``: (f1, precision, recall) on normalized tokens, yes/no/noanswer exact."""
    with text_ids.session():
        return _hotpot_f1_ids(prediction, gold)


def answer_f1(predictions: Sequence[str], references: Sequence[Any], *, convention: str = "hotpotqa") -> dict[str, Any]:
    """Token F1 and exact match, max over gold aliases (citations removed first).

    ``convention="hotpotqa"`` (default) follows the official HotpotQA script: a
    yes/no/noanswer prediction or gold scores 0 unless both normalize to the same word.
    ``convention="qasper"`` follows QASPER's official scorer: ``references[q]`` holds one
    reference string per annotator (extractive spans joined with ``", "``, the free-form
    answer, ``"Yes"``/``"No"``, ``"Unanswerable"``), each compared as a string with
    SQuAD's token F1 (no yes/no special case), max over annotators.  Aliases that
    normalize to nothing are skipped; a question with none left is undefined.
    """
    predictions = check_list(predictions, "predictions")
    references = check_list(references, "references")
    check_same_length(predictions=predictions, references=references)
    _check_convention(convention, ANSWER_F1_CONVENTIONS, "answer_f1")
    per_question: list[dict[str, Any]] = []
    with text_ids.session():
        for q, (pred, ref) in enumerate(zip(predictions, references)):
            pred = remove_citations(check_str(pred, "predictions", q))
            aliases = [a for a in check_str_list(ref, "references", q) if normalized(a)]
            if not aliases:
                per_question.append({"answer_f1": None, "answer_em": None})
                continue
            if convention == "qasper":
                pt = text_ids.normalized_ids(pred)
                f1 = max(_squad_f1_ids(pt, text_ids.normalized_ids(a)) for a in aliases)
            else:
                f1 = max(_hotpot_f1_ids(pred, a)[0] for a in aliases)
            pred_norm = normalized(pred)
            em = max(1.0 if pred_norm == normalized(a) else 0.0 for a in aliases)
            per_question.append({"answer_f1": f1, "answer_em": em})
    return summarize(per_question, "answer_f1", extra=("answer_em",))


# ----------------------------------------------------------------------------------------------
# scorers: the catalog's recipes for building these functions' inputs from scored records


def score_answer_in_context(inputs, options) -> dict[str, Any]:
    """answer_in_context over the units as the reader's template showed them, joined in order by its
    ``unit_separator`` (``answer_in_context_unit``: inside one unit)."""
    out: list[Any] = []
    for sep in dict.fromkeys(x.unit_separator for x in inputs):  # one call per separator, in input order
        idx = [i for i, x in enumerate(inputs) if x.unit_separator == sep]
        r = answer_in_context(
            [list(inputs[i].shown) for i in idx], [inputs[i].gold.aliases for i in idx], separator=sep
        )
        out.append((idx, r))
    if len(out) == 1:
        return out[0][1]
    per_question: list[Any] = [None] * len(inputs)
    reasons = {"yes_no": 0, "unanswerable": 0, "no_alias": 0}
    for idx, r in out:
        for i, pq in zip(idx, r["per_question"]):
            per_question[i] = pq
        for k, v in r["undefined_reasons"].items():
            reasons[k] += v
    merged = summarize(per_question, "answer_in_context", extra=("answer_in_context_unit",))
    merged["undefined_reasons"] = reasons
    return merged


def _split_score(inputs, is_qasper, score, primary: str, extra: tuple[str, ...]) -> dict[str, Any]:
    """Score the QASPER questions and the others each with their convention, per_question in input order."""
    per_question: list[Any] = [None] * len(inputs)
    for flag in (False, True):
        idx = [i for i, x in enumerate(inputs) if is_qasper(x) == flag]
        if idx:
            for i, pq in zip(idx, score([inputs[i] for i in idx], flag)["per_question"]):
                per_question[i] = pq
    return summarize(per_question, primary, extra=extra)


def _is_qasper(x) -> bool:
    """A QASPER question: its gold carries per-annotator short answers (``Gold.annotator_answers``)."""
    return bool(x.gold.annotator_answers)


def score_str_em(inputs, options) -> dict[str, Any]:
    """ASQA questions with ALCE's str-EM over their qa_pairs; QASPER questions with rageval's, per annotator."""

    def score(batch, qasper: bool) -> dict[str, Any]:
        refs = [[list(p) for p in (x.gold.annotator_answers if qasper else x.gold.qa_pairs)] for x in batch]
        return str_em(
            [x.answer for x in batch],
            refs,
            alce_compat=options.alce_compat,
            convention="qasper" if qasper else "asqa",
        )

    return _split_score(inputs, _is_qasper, score, "str_em", ("str_hit",))


def score_answer_f1(inputs, options) -> dict[str, Any]:
    """QASPER questions with QASPER's official scorer, the others with HotpotQA's."""

    def score(batch, qasper: bool) -> dict[str, Any]:
        return answer_f1(
            [x.answer for x in batch],
            [x.gold.f1_aliases for x in batch],
            convention="qasper" if qasper else "hotpotqa",
        )

    return _split_score(inputs, _is_qasper, score, "answer_f1", ("answer_em",))
