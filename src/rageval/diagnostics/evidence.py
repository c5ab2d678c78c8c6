"""Evidence-F1 (QASPER conventions): do the cited units declare the gold evidence paragraphs?

::

    evidence_f1(predictions, units, sources, *, references, paragraph_of=None,
                max_citations=DEFAULT_MAX_CITATIONS, alce_compat=False)

Per question: the predicted set is the paragraphs of the *declared* source ids
of every validly cited unit (units without provenance contribute nothing), the
citations read exactly as the citation gate reads them (the same parse and the
same cap, :meth:`AttributionOptions.parse`);
``references[q]`` is one list of gold evidence paragraph ids per annotator.
Set-F1 against each annotator, max over annotators (official QASPER
``paragraph_f1_score``: both empty = 1, one empty = 0).  Undefined (None,
counted) for a question whose context declares no provenance at all, or that
has no annotator.  No judge is involved.

``paragraph_of`` maps a source id to its paragraph id: one dict for all
questions or one per question; by default a source's ``paragraph_id`` (or
``doc_id``) field, else its id up to the last ``.s`` (``p3.s2`` -> ``p3``).
``max_citations`` defaults to 3, the cap of every attribution score and of a
suite (``None`` keeps every citation); before version 2.0.0 the module's
default was no cap, so the module and a suite disagreed.

>>> units = [[{"text": "a", "source_ids": ["p1.s0"]}, {"text": "b", "source_ids": ["p2.s0"]}]]
>>> sources = [[{"id": "p1.s0", "text": "a"}, {"id": "p2.s0", "text": "b"}]]
>>> evidence_f1(["A [1]."], units, sources, references=[[["p1"], ["p1", "p2"]]])["evidence_f1"]
1.0
>>> four = [[{"text": f"u{i}", "source_ids": [f"p{i}.s0"]} for i in range(4)]]
>>> src = [[{"id": f"p{i}.s0", "text": f"u{i}"} for i in range(4)]]
>>> gold = [[["p0", "p1", "p2", "p3"]]]
>>> round(evidence_f1(["A [1][2][3][4]."], four, src, references=gold)["evidence_f1"], 4)  # cap 3: p0-p2
0.8571
>>> evidence_f1(["A [1][2][3][4]."], four, src, references=gold, max_citations=None)["evidence_f1"]
1.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rageval.diagnostics._attribution_inputs import prepare_inputs
from rageval.diagnostics._common import check_list, check_same_length, check_str_list, summarize
from rageval.diagnostics.attribution.options import AttributionOptions
from rageval.scoring import DEFAULT_MAX_CITATIONS

__all__ = ["evidence_f1", "paragraph_f1", "UNMATCHED_GOLD"]

#: ``evidence_f1(unmatched_gold=...)``: gold strings that matched no paragraph counted (QASPER's scorer) or dropped
UNMATCHED_GOLD = ("count", "drop")
_UNMATCHED = "unmatched:"  # rageval.data.qasper.UNMATCHED_PREFIX (diagnostics do not import the loaders)


def paragraph_f1(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """QASPER's ``paragraph_f1_score``.

    >>> paragraph_f1([], []), paragraph_f1(["p1"], []), paragraph_f1(["p1", "p2"], ["p1"])
    (1.0, 0.0, 0.6666666666666666)
    """
    if not gold and not predicted:
        return 1.0
    same = len(set(gold) & set(predicted))
    if same == 0:
        return 0.0
    p = same / len(set(predicted))
    r = same / len(set(gold))
    return 2 * p * r / (p + r)


def _default_paragraph(raw_source: Mapping | None, sid: str) -> str:
    if raw_source is not None:
        for key in ("paragraph_id", "doc_id"):
            v = raw_source.get(key)
            if isinstance(v, str) and v:
                return v
    head, sep, tail = sid.rpartition(".s")
    return head if sep and tail.isdigit() else sid


def _cited_paragraphs(q, ans, paragraph_of, sources) -> list[str]:
    """The paragraphs of the declared source ids of every validly cited unit of one question, in order."""
    mapping = paragraph_of if isinstance(paragraph_of, Mapping) or paragraph_of is None else paragraph_of[q.index]
    raw_sources = {s.get("id"): s for s in sources[q.index]} if mapping is None else {}
    paras: list[str] = []
    for s in ans.sentences:
        for c in s.citations:
            for sid in q.units[c - 1].source_ids or ():
                if mapping is not None:
                    if sid not in mapping:
                        raise ValueError(f"paragraph_of has no paragraph for source id {sid!r} (question {q.index})")
                    paras.append(mapping[sid])
                else:
                    paras.append(_default_paragraph(raw_sources.get(sid), sid))
    return list(dict.fromkeys(paras))


def evidence_f1(
    predictions,
    units,
    sources,
    *,
    references,
    paragraph_of: Any = None,
    max_citations: int | None = DEFAULT_MAX_CITATIONS,
    alce_compat: bool = False,
    unmatched_gold: str = "count",
) -> dict[str, Any]:
    """QASPER evidence-F1 of the cited units' declared paragraphs (see module doc).

    ``unmatched_gold``: a gold id ``unmatched:...`` (a gold evidence string that matched no paragraph of the
    loaded paper) is ``"count"``-ed, as QASPER's official scorer keeps every gold string (default; it lowers
    recall, since no unit can cite it), or ``"drop"``-ped from the annotator's gold (rageval before 2.1.0).

    >>> kw = dict(units=[[{"text": "x", "source_ids": ["p1.s0"]}]], sources=[[{"id": "p1.s0", "text": "x"}]])
    >>> [evidence_f1(["x [1]."], references=[[["p1", "unmatched:ab"]]], unmatched_gold=u, **kw)["evidence_f1"]
    ...  for u in ("count", "drop")]
    [0.6666666666666666, 1.0]
    """
    if unmatched_gold not in UNMATCHED_GOLD:
        raise ValueError(
            f"evidence_f1: unmatched_gold must be one of {', '.join(UNMATCHED_GOLD)}, got {unmatched_gold!r}"
        )
    opts = AttributionOptions.build(max_citations=max_citations, alce_compat=alce_compat)
    questions = prepare_inputs(predictions, units, sources)
    references = check_list(references, "references")
    check_same_length(predictions=questions, references=references)
    if paragraph_of is not None and not isinstance(paragraph_of, Mapping):
        paragraph_of = check_list(paragraph_of, "paragraph_of")
        check_same_length(predictions=questions, paragraph_of=paragraph_of)
    per_q: list[dict[str, Any]] = []
    for q, ref in zip(questions, references):
        if isinstance(ref, (str, bytes)) or not isinstance(ref, Sequence):
            raise TypeError(f"references[{q.index}] must be a list of annotators' evidence lists (list[list[str]])")
        annotators = [check_str_list(a, f"references[{q.index}]", j) for j, a in enumerate(ref)]
        if unmatched_gold == "drop":
            annotators = [[g for g in a if not g.startswith(_UNMATCHED)] for a in annotators]
        if not q.declares_any() or not annotators:
            per_q.append({"evidence_f1": None, "predicted_paragraphs": None})
            continue
        paras = _cited_paragraphs(q, opts.parse(q.prediction, len(q.units)), paragraph_of, sources)
        per_q.append({"evidence_f1": max(paragraph_f1(paras, a) for a in annotators), "predicted_paragraphs": paras})
    return summarize(per_q, "evidence_f1")


def score_evidence_f1(inputs, options) -> dict[str, Any]:
    """The catalog's scorer: cited units' declared paragraphs against each annotator's evidence."""
    return evidence_f1(
        [x.answer for x in inputs],
        [x.unit_dicts() for x in inputs],
        [[{"id": s.id, "text": s.text} for s in x.sources] for x in inputs],
        paragraph_of=[x.doc_of() for x in inputs],
        references=[[list(a) for a in x.gold.evidence] for x in inputs],
        max_citations=options.max_citations,
        alce_compat=options.alce_compat,
    )
