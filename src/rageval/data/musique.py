"""MuSiQue -> :class:`~rageval.data.schema.Example`.

The 20-paragraph layout (``paragraphs [{idx, title, paragraph_text,
is_supporting}]``, ``answer_aliases``, ``answerable``) and FlashRAG-style rows
(``golden_answers``, ``metadata.paragraphs``).  The paragraphs are the documents
``d0 … d19``; the supporting ones are the gold documents; ``answerable: false``
makes the answer type ``unanswerable``.

>>> from rageval.data import load_examples, sample_path
>>> ex = load_examples("musique", sample_path("musique"), limit=1)[0]
>>> len(ex.documents), ex.gold_doc_ids
(20, ('d6', 'd10'))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from rageval.data.fields import LocatedRecord, answer_type, dedupe, make_doc, marker_meta
from rageval.data.schema import Example

__all__ = ["build"]


def build(r: LocatedRecord, dataset: str) -> Example:
    """The example of one MuSiQue record (either layout of the module doc)."""
    rec = r.rec
    if "golden_answers" in rec:  # FlashRAG-style rows
        meta_src = r.get(rec, "metadata", "an object with 'paragraphs'", "metadata", types=(Mapping,))
        answers = r.str_list(
            r.get(rec, "golden_answers", "a list of gold answers", "golden_answers", types=(list,)), "golden_answers"
        )
        paras_path = "metadata.paragraphs"
        answerable = meta_src.get("answerable", True)
    else:
        meta_src = rec
        ans = r.get(rec, "answer", "the gold answer string", "answer")
        aliases = r.get(
            rec,
            "answer_aliases",
            "a list of answer aliases",
            "answer_aliases",
            types=(list,),
            optional=True,
            default=[],
        )
        answers = [ans, *r.str_list(aliases, "answer_aliases")]
        paras_path = "paragraphs"
        answerable = rec.get("answerable", True)
    qid = r.get(rec, "id", "a string id", "id", types=(str, int))
    question = r.get(rec, "question", "the question string", "question")
    paras = r.get(
        meta_src, "paragraphs", "a list of {idx, title, paragraph_text, is_supporting}", paras_path, types=(list,)
    )
    docs, gold = [], []
    markers: Counter = Counter()
    for i, p in enumerate(paras):
        where = f"{paras_path}[{i}]"
        text = r.get(p, "paragraph_text", "the paragraph text", f"{where}.paragraph_text")
        title = r.get(p, "title", "the paragraph title", f"{where}.title", optional=True)
        idx = p.get("idx", i)
        d = make_doc(f"d{i}", text, title, source_key=str(idx), tally=markers)
        docs.append(d)
        if p.get("is_supporting", False):
            gold.append(d.id)
    answers = list(dedupe(answers))
    meta: dict[str, Any] = {
        "layout": "flashrag" if "golden_answers" in rec else "original",
        "answerable": answerable,
        **marker_meta(markers),
    }
    if "question_decomposition" in meta_src:
        meta["question_decomposition"] = meta_src["question_decomposition"]
    return Example(
        id=str(qid),
        question=question,
        answers=tuple(answers),
        gold_doc_ids=tuple(gold),
        documents=tuple(docs),
        answer_type="unanswerable" if answerable is False else answer_type(answers),
        dataset=dataset,
        meta=meta,
    )
