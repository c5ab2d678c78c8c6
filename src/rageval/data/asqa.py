"""ASQA -> :class:`~rageval.data.schema.Example`: the ``din0s/asqa`` layout and ALCE's eval layout.

* ``din0s/asqa`` (``ambiguous_question, sample_id, qa_pairs, annotations``): no
  candidate documents; the annotators' passages (``qa_pairs[].context``,
  ``annotations[].knowledge[].content``) form a corpus
  (:func:`rageval.data.asqa_corpus.load_corpus`) to retrieve from with BM25, and a
  question's own passages are its gold documents (ids
  :func:`~rageval.data.asqa_corpus.corpus_doc_id`).
* ALCE's eval layout (``question, qa_pairs, docs [{title, text}]``, also the
  ``{"demos": [...]}`` prompt file): ``docs`` are the candidates, in rank order.

>>> from rageval.data import load_examples, sample_path
>>> ex = load_examples("asqa", sample_path("alce_asqa_demos"), limit=1)[0]
>>> ex.meta["layout"], [d.id for d in ex.documents][:3]
('alce', ['d0', 'd1', 'd2'])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from rageval.data.asqa_corpus import annotator_passages, corpus_doc_id
from rageval.data.fields import LocatedRecord, dedupe, make_doc, marker_meta
from rageval.data.schema import Example

__all__ = ["build"]


def _din0s(r: LocatedRecord, dataset: str) -> Example:
    rec = r.rec
    qid = r.get(rec, "sample_id", "the sample id", "sample_id", types=(str, int))
    question = r.get(rec, "ambiguous_question", "the ambiguous question string", "ambiguous_question")
    pairs, qa_questions = [], []
    for i, qa in enumerate(r.get(rec, "qa_pairs", "a list of {question, short_answers}", "qa_pairs", types=(list,))):
        sa = r.get(qa, "short_answers", "a list of short answers", f"qa_pairs[{i}].short_answers", types=(list,))
        pairs.append(tuple(r.str_list(sa, f"qa_pairs[{i}].short_answers")))
        qa_questions.append(qa.get("question"))
    long_answers = [a.get("long_answer") for a in rec.get("annotations") or [] if isinstance(a, Mapping)]
    markers: Counter = Counter()
    gold = dedupe(corpus_doc_id(t) for t, _ in annotator_passages(r, markers))
    return Example(
        id=str(qid),
        question=question,
        answers=dedupe(a for p in pairs for a in p),
        qa_pairs=tuple(pairs),
        gold_doc_ids=gold,
        documents=(),
        answer_type="long_form",
        dataset=dataset,
        meta={"layout": "din0s", "qa_questions": qa_questions, "long_answers": long_answers, **marker_meta(markers)},
    )


def _alce(r: LocatedRecord, dataset: str) -> Example:
    rec = r.rec
    question = r.get(rec, "question", "the question string", "question")
    qid = rec.get("sample_id", rec.get("id", f"alce-{r.index}"))
    docs = []
    markers: Counter = Counter()
    for i, d in enumerate(r.get(rec, "docs", "a list of {title, text}", "docs", types=(list,))):
        text = r.get(d, "text", "the passage text", f"docs[{i}].text")
        title = r.get(d, "title", "the passage title", f"docs[{i}].title", optional=True)
        key = d.get("id")
        source_key = str(key) if key is not None else None
        docs.append(make_doc(f"d{i}", text, title, source_key=source_key, footnotes=True, tally=markers))
    pairs = []
    for i, qa in enumerate(
        r.get(rec, "qa_pairs", "a list of {short_answers}", "qa_pairs", types=(list,), optional=True, default=[])
    ):
        sa = r.get(qa, "short_answers", "a list of short answers", f"qa_pairs[{i}].short_answers", types=(list,))
        pairs.append(tuple(r.str_list(sa, f"qa_pairs[{i}].short_answers")))
    meta: dict[str, Any] = {"layout": "alce", **marker_meta(markers)}
    if isinstance(rec.get("answer"), str):
        meta["long_answers"] = [rec["answer"]]
    return Example(
        id=str(qid),
        question=question,
        answers=dedupe(a for p in pairs for a in p),
        qa_pairs=tuple(pairs),
        documents=tuple(docs),
        answer_type="long_form",
        dataset=dataset,
        meta=meta,
    )


def build(r: LocatedRecord, dataset: str) -> Example:
    """The example of one ASQA record, in either layout of the module doc."""
    if "ambiguous_question" in r.rec:
        return _din0s(r, dataset)
    if "docs" in r.rec:
        return _alce(r, dataset)
    raise r.err(
        "ambiguous_question",
        "an ASQA record: the din0s/asqa layout (ambiguous_question, qa_pairs, annotations) "
        "or ALCE's eval layout (question, qa_pairs, docs)",
    )
