"""The ASQA corpus: every annotator passage of a ``din0s/asqa`` file, the pool BM25 retrieves from.

A question's own passages would leak its answer; retrieving from the pool of all
questions' passages does not hand it over.  Passage ids are ``w`` + a hash of the
text (:func:`corpus_doc_id`), so they are stable whatever subset is loaded, and
they are the ids of ``Example.gold_doc_ids`` (:mod:`rageval.data.asqa`).

>>> from rageval.data import sample_path
>>> corpus = load_corpus("asqa", sample_path("asqa"))
>>> len(corpus), corpus[0].id == corpus_doc_id(corpus[0].text)
(414, True)
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from rageval.data.fields import LocatedRecord, clean_source, make_doc
from rageval.data.files import read_records
from rageval.data.hub import hub_records
from rageval.data.registry import canonical_dataset
from rageval.data.schema import Document

__all__ = ["annotator_passages", "corpus_doc_id", "load_corpus"]

_NO_CONTEXT = "No context provided"


def corpus_doc_id(text: str) -> str:
    """Stable id of an ASQA corpus passage: ``w`` + the first 10 hex digits of sha1(text)."""
    return "w" + hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:10]


def annotator_passages(r: LocatedRecord, tally: Counter | None = None) -> list[tuple[str, str | None]]:
    """The annotators' passages of one din0s/asqa record: (text, title) in record order.

    Each text is cleaned (:func:`~rageval.data.fields.clean_source` with ``footnotes=True``: Wikipedia's
    footnote markers removed) before it is stripped, so a passage's id (:func:`corpus_doc_id`) is the hash of
    the text the reader sees; what was changed is added to ``tally``.
    """
    rec = r.rec
    out: list[tuple[str, str | None]] = []

    def add(text: str, title: str | None) -> None:
        text, counts = clean_source(text, footnotes=True)
        if tally is not None:
            tally.update(counts)
        out.append((text.strip(), title))

    for i, qa in enumerate(
        r.get(rec, "qa_pairs", "a list of {question, short_answers, context, wikipage}", "qa_pairs", types=(list,))
    ):
        ctx = r.get(
            qa, "context", "the qa_pair's passage (a string)", f"qa_pairs[{i}].context", optional=True, default=""
        )
        if ctx and ctx.strip() and ctx.strip() != _NO_CONTEXT:
            add(ctx, qa.get("wikipage"))
    for j, ann in enumerate(
        r.get(
            rec,
            "annotations",
            "a list of {long_answer, knowledge}",
            "annotations",
            types=(list,),
            optional=True,
            default=[],
        )
    ):
        know = r.get(
            ann,
            "knowledge",
            "a list of {content, wikipage}",
            f"annotations[{j}].knowledge",
            types=(list,),
            optional=True,
            default=[],
        )
        for k, kn in enumerate(know):
            content = r.get(
                kn, "content", "the passage text", f"annotations[{j}].knowledge[{k}].content", optional=True, default=""
            )
            if content and content.strip():
                add(content, kn.get("wikipage"))
    return out


def load_corpus(
    name: str,
    path: str | Path | None = None,
    *,
    hub_id: str | None = None,
    hub_config: str | None = None,
    split: str | None = None,
) -> list[Document]:
    """A retrieval corpus built from a whole dataset file.

    ASQA (``din0s/asqa`` layout): every annotator passage of every question
    (``qa_pairs[].context`` and ``annotations[].knowledge[].content``), deduplicated
    by text, ids :func:`corpus_doc_id` — the same ids as ``Example.gold_doc_ids``.
    A question's own passages would leak its answer; retrieving from the pool of
    all questions' passages with BM25 does not hand it over.

    Only this layout has a corpus: the other datasets ship each question's own
    candidates (distractor paragraphs, ALCE docs, the paper), whose gold ids live in
    that per-question id space; pooling them under new ids would make
    ``retrieval_recall`` silently wrong, so it is refused with the fix.
    """
    ds = canonical_dataset(name)
    if (path is None) == (hub_id is None):
        raise ValueError(f"load_corpus({name!r}) needs exactly one of path= or hub_id=")
    if path is not None:
        records, source = read_records(Path(path)), str(path)
    else:
        records, source = hub_records(hub_id, hub_config, split, ds)  # type: ignore[arg-type]
    if not (ds == "asqa" and records and isinstance(records[0], Mapping) and "ambiguous_question" in records[0]):
        raise ValueError(
            f"{source}: a retrieval corpus is built only for ASQA in the din0s/asqa layout; {ds} "
            f"({'ALCE layout' if ds == 'asqa' else 'its own layout'}) ships each question's candidates: retrieve "
            "over them (retrieval method 'given', or 'bm25' without a corpus)"
        )
    docs: dict[str, Document] = {}
    for i, rec in enumerate(records):
        for text, title in annotator_passages(LocatedRecord(rec, source, i)):
            did = corpus_doc_id(text)
            if did not in docs:
                docs[did] = make_doc(did, text, title)
    return list(docs.values())
