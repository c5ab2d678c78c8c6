"""QASPER -> :class:`~rageval.data.schema.Example` s, one per question.

Layouts: the original JSON (``{paper_id: {title, abstract, full_text
[{section_name, paragraphs}], qas}}``) and the hub's columnar layout.  The abstract
is a document of its own (id ``abstract``, title ``Abstract``, first), then the
paper's non-empty paragraphs (``d0, d1, …``, title = section name); gold evidence
strings are mapped to paragraph ids per annotator (``FLOAT SELECTED`` captions and
other strings that match no paragraph are kept as ``unmatched:<hash>`` ids, as the official scorer keeps
them, left out of ``gold_doc_ids`` and counted in ``meta``); per annotator, the official scorer's
reference string (``answers``) and the short answers of its str-EM
(``annotator_answers``).

>>> from rageval.data import load_examples, sample_path
>>> ex = load_examples("qasper", sample_path("qasper_intact"), limit=1)[0]
>>> [d.id for d in ex.documents][:3], ex.answers, ex.evidence
(['abstract', 'd0', 'd1'], ('412 questions', '412'), (('d2',), ('d2', 'unmatched:...')))
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping

from rageval.data.fields import LocatedRecord, dedupe, make_doc, marker_meta
from rageval.data.schema import Document, Example

__all__ = ["build", "unmatched_id", "UNMATCHED_PREFIX"]

#: the id of a gold evidence string that matches no paragraph (a ``FLOAT SELECTED`` caption, a truncated
#: paragraph): kept in the annotator's evidence, as QASPER's official scorer keeps it, where no cited unit
#: can ever name it (docs/datasets.md; ``evidence_f1(unmatched_gold="drop")`` leaves such ids out)
UNMATCHED_PREFIX = "unmatched:"


def unmatched_id(text: str) -> str:
    """``unmatched:<10 hex digits>``: a stable id for a gold evidence string that matches no paragraph.

    >>> unmatched_id("FLOAT SELECTED: Table 1") == unmatched_id("FLOAT SELECTED: Table 1 ")
    True
    """
    return UNMATCHED_PREFIX + hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:10]


def _sections_and_qas(r: LocatedRecord) -> tuple[list[tuple[str | None, list[str]]], list[Mapping]]:
    """(sections, qas) of a paper in either the original or the hub's columnar layout."""
    rec = r.rec
    ft = r.get(rec, "full_text", "a list of {section_name, paragraphs}", "full_text", types=(list, Mapping))
    sections: list[tuple[str | None, list[str]]] = []
    if isinstance(ft, Mapping):  # hub: {section_name: [...], paragraphs: [[...]]}
        names = r.get(ft, "section_name", "a list of section names", "full_text.section_name", types=(list,))
        paras = r.get(ft, "paragraphs", "a list of paragraph lists", "full_text.paragraphs", types=(list,))
        for i, (n, ps) in enumerate(zip(names, paras)):
            sections.append((n, r.str_list(ps, f"full_text.paragraphs[{i}]")))
    else:
        for i, s in enumerate(ft):
            name = r.get(s, "section_name", "the section name", f"full_text[{i}].section_name", optional=True)
            ps = r.get(s, "paragraphs", "a list of paragraph strings", f"full_text[{i}].paragraphs", types=(list,))
            sections.append((name, r.str_list(ps, f"full_text[{i}].paragraphs")))
    qas = r.get(rec, "qas", "a list of {question, question_id, answers}", "qas", types=(list, Mapping))
    if isinstance(qas, Mapping):  # hub: columnar
        qs = r.get(qas, "question", "a list of questions", "qas.question", types=(list,))
        ids = r.get(qas, "question_id", "a list of question ids", "qas.question_id", types=(list,))
        anss = r.get(qas, "answers", "a list of answer groups", "qas.answers", types=(list,))
        rows = []
        for i, (q, qid, group) in enumerate(zip(qs, ids, anss)):
            inner = r.get(group, "answer", "a list of answer objects", f"qas.answers[{i}].answer", types=(list,))
            rows.append({"question": q, "question_id": qid, "answers": [{"answer": a} for a in inner]})
        qas = rows
    return sections, qas


def _reference(r: LocatedRecord, a: Mapping, where: str) -> tuple[str, str, tuple[str, ...]]:
    """One annotation: the official evaluator's reference string, its answer type, and the short
    answers of rageval's QASPER str-EM (all must appear; ``()`` when unanswerable)."""
    if a.get("unanswerable"):
        return "Unanswerable", "unanswerable", ()
    spans = a.get("extractive_spans") or []
    if spans:
        spans = r.str_list(spans, f"{where}.extractive_spans")
        return ", ".join(spans), "span", tuple(spans)
    if a.get("free_form_answer"):
        return a["free_form_answer"], "free_form", (a["free_form_answer"],)
    if a.get("yes_no") is True:
        return "Yes", "yes_no", ("Yes",)
    if a.get("yes_no") is False:
        return "No", "yes_no", ("No",)
    raise r.err(where, "an answer with unanswerable, extractive_spans, free_form_answer or yes_no set", dict(a))


def _abstract(r: LocatedRecord) -> str:
    abstract = r.get(r.rec, "abstract", "the abstract (a string)", "abstract", types=(str,), optional=True, default="")
    return abstract or ""


def build(r: LocatedRecord, dataset: str) -> list[Example]:
    """The examples of one QASPER paper (either layout of the module doc), one per question."""
    rec = r.rec
    paper_id = str(r.get(rec, "id", "the paper id", "id", types=(str, int)))
    sections, qas = _sections_and_qas(r)
    docs: list[Document] = []
    by_text: dict[str, str] = {}
    markers: Counter = Counter()
    abstract = _abstract(r)
    if abstract.strip():  # the paper scores abstract + full text: the abstract is a document of its own
        a = make_doc("abstract", abstract, "Abstract", tally=markers)
        by_text[abstract.strip()] = a.id
    for name, paras in sections:
        for p in paras:
            if not p.strip():
                continue
            d = make_doc(f"d{len(docs)}", p, name or None, tally=markers)
            docs.append(d)
            by_text.setdefault(p.strip(), d.id)
    if abstract.strip():
        docs.insert(0, a)
    out = []
    for i, qa in enumerate(qas):
        where = f"qas[{i}]"
        question = r.get(qa, "question", "the question string", f"{where}.question")
        qid = str(r.get(qa, "question_id", "the question id", f"{where}.question_id", types=(str, int)))
        refs, types, shorts, evidence, matched, unmatched, floats = [], [], [], [], [], 0, 0
        for j, ans in enumerate(r.get(qa, "answers", "a list of {answer: {...}}", f"{where}.answers", types=(list,))):
            a = r.get(ans, "answer", "an answer object", f"{where}.answers[{j}].answer", types=(Mapping,))
            ref, typ, short = _reference(r, a, f"{where}.answers[{j}].answer")
            refs.append(ref)
            types.append(typ)
            shorts.append(short)
            ev = r.str_list(a.get("evidence") or [], f"{where}.answers[{j}].answer.evidence")
            ids, gold_ids = [], []
            for e in ev:
                pid = by_text.get(e.strip())
                if pid is None:
                    if e.startswith("FLOAT SELECTED"):
                        floats += 1
                    else:
                        unmatched += 1
                    ids.append(unmatched_id(e))  # kept, as the official scorer keeps it: it lowers recall
                    continue
                ids.append(pid)
                gold_ids.append(pid)
            evidence.append(dedupe(ids))
            matched.append(dedupe(gold_ids))
        out.append(
            Example(
                id=qid,
                question=question,
                answers=dedupe(refs),
                evidence=tuple(evidence),
                gold_doc_ids=dedupe(p for e in matched for p in e),
                documents=tuple(docs),
                cluster_id=paper_id,
                answer_type=types[0] if types else None,
                dataset=dataset,
                annotator_answers=tuple(shorts),
                meta={
                    "layout": "qasper",
                    "paper_title": rec.get("title"),
                    "answer_types": types,
                    "unmatched_evidence": unmatched,
                    "float_evidence": floats,
                    **marker_meta(markers),
                },
            )
        )
    return out
