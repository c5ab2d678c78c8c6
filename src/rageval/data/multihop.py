"""HotpotQA and 2WikiMultiHopQA (the same shape) -> :class:`~rageval.data.schema.Example`.

Layouts: HotpotQA's original (``_id, answer, supporting_facts [[title, i]],
context [[title, [sentences]]]``), the hub's (``context {title, sentences}``) and
FlashRAG's (``golden_answers, metadata {context, supporting_facts}``);
2WikiMultiHopQA's original (as HotpotQA, plus ``evidences``) and FlashRAG's
(``metadata.context {title, content}``).  The candidate paragraphs are the
documents ``d0, d1, …`` in the dataset's order; a supporting fact is a sentence id
``{doc_id}.s{i}``, and one that points past the last sentence (or at no paragraph)
is kept in ``meta["unmatched_supporting_facts"]``, not raised.

>>> from rageval.data import load_examples, sample_path
>>> ex = load_examples("hotpotqa", sample_path("hotpotqa"), limit=1)[0]
>>> ex.answers, ex.gold_doc_ids, ex.supporting_facts
(('a spirit',), ('d9', 'd5'), ('d9.s3', 'd5.s0'))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from rageval.data.fields import LocatedRecord, answer_type, dedupe, make_doc, marker_meta
from rageval.data.schema import Document, Example

__all__ = ["build"]


def _context_pairs(r: LocatedRecord, ctx: Any, path: str) -> list[tuple[str, list[str]]]:
    """``[[title, [sentences]]]`` or ``{title: [...], sentences|content: [[...]]}``."""
    expected = "a list of [title, [sentences]] pairs or {title: [...], sentences: [[...]]}"
    if isinstance(ctx, Mapping):
        titles = r.get(ctx, "title", "a list of titles", f"{path}.title", types=(list,))
        key = "sentences" if "sentences" in ctx else "content"
        sents = r.get(
            ctx, key, "a list of sentence lists (key 'sentences' or 'content')", f"{path}.sentences", types=(list,)
        )
        if len(titles) != len(sents):
            raise r.err(path, f"as many titles as sentence lists, got {len(titles)} titles and {len(sents)} lists")
        pairs = list(zip(titles, sents))
    elif isinstance(ctx, list):
        pairs = []
        for i, p in enumerate(ctx):
            if not isinstance(p, (list, tuple)) or len(p) != 2:
                raise r.err(f"{path}[{i}]", "a [title, [sentences]] pair", p)
            pairs.append((p[0], p[1]))
    else:
        raise r.err(path, expected, ctx)
    out = []
    for i, (title, sents) in enumerate(pairs):
        if not isinstance(title, str):
            raise r.err(f"{path}[{i}].title", "a string", title)
        if isinstance(sents, str):
            sents = [sents]
        out.append((title, r.str_list(sents, f"{path}[{i}].sentences")))
    return out


def _supporting_pairs(r: LocatedRecord, sf: Any, path: str) -> list[tuple[str, int]]:
    if isinstance(sf, Mapping):
        titles = r.get(sf, "title", "a list of titles", f"{path}.title", types=(list,))
        ids = r.get(sf, "sent_id", "a list of sentence indices", f"{path}.sent_id", types=(list,))
        if len(titles) != len(ids):
            raise r.err(path, f"as many titles as sent_ids, got {len(titles)} and {len(ids)}")
        pairs = list(zip(titles, ids))
    elif isinstance(sf, list):
        pairs = []
        for i, p in enumerate(sf):
            if not isinstance(p, (list, tuple)) or len(p) != 2:
                raise r.err(f"{path}[{i}]", "a [title, sentence_index] pair", p)
            pairs.append((p[0], p[1]))
    else:
        raise r.err(path, "a list of [title, sentence_index] pairs or {title: [...], sent_id: [...]}", sf)
    for i, (t, s) in enumerate(pairs):
        if not isinstance(t, str):
            raise r.err(f"{path}[{i}].title", "a string", t)
        if isinstance(s, bool) or not isinstance(s, int):
            raise r.err(f"{path}[{i}].sent_id", "an integer sentence index", s)
    return pairs


def build(r: LocatedRecord, dataset: str) -> Example:
    """The example of one HotpotQA or 2WikiMultiHopQA record (any layout of the module doc)."""
    rec = r.rec
    if "golden_answers" in rec:  # FlashRAG
        layout = "flashrag"
        qid = r.get(rec, "id", "a string or integer id", "id", types=(str, int))
        answers = r.str_list(
            r.get(rec, "golden_answers", "a list of gold answers", "golden_answers", types=(list,)), "golden_answers"
        )
        meta_src = r.get(
            rec, "metadata", "an object with 'context' and 'supporting_facts'", "metadata", types=(Mapping,)
        )
        ctx = r.get(meta_src, "context", "the candidate paragraphs", "metadata.context", types=())
        ctx_path, sf_path = "metadata.context", "metadata.supporting_facts"
        sf = r.get(meta_src, "supporting_facts", "the supporting facts", sf_path, types=(), optional=True, default=[])
        extra = {k: meta_src[k] for k in ("type", "level", "evidences") if k in meta_src}
    else:
        layout = "original"
        key = "_id" if "_id" in rec else "id"
        qid = r.get(rec, key, "a string id ('_id' or 'id')", "_id", types=(str, int))
        ans = r.get(rec, "answer", "the gold answer string", "answer")
        answers = [ans]
        ctx = r.get(rec, "context", "the candidate paragraphs", "context", types=())
        ctx_path, sf_path = "context", "supporting_facts"
        sf = r.get(rec, "supporting_facts", "the supporting facts", sf_path, types=(), optional=True, default=[])
        extra = {k: rec[k] for k in ("type", "level", "evidences") if k in rec}
    question = r.get(rec, "question", "the question string", "question")
    pairs = _context_pairs(r, ctx, ctx_path)
    markers: Counter = Counter()
    docs = tuple(
        make_doc(f"d{i}", sents, title, source_key=title, tally=markers) for i, (title, sents) in enumerate(pairs)
    )
    by_title: dict[str, Document] = {}
    for doc in docs:
        by_title.setdefault(doc.title or "", doc)
    gold: list[str] = []
    facts: list[str] = []
    unmatched: list[list[Any]] = []
    for title, sent in _supporting_pairs(r, sf, sf_path):
        d = by_title.get(title)
        if d is None:
            unmatched.append([title, sent])
            continue
        gold.append(d.id)
        sid = f"{d.id}.s{sent}"
        if any(s.id == sid for s in d.snippets):
            facts.append(sid)
        else:
            unmatched.append([title, sent])
    meta: dict[str, Any] = {"layout": layout, **extra, **marker_meta(markers)}
    if unmatched:
        meta["unmatched_supporting_facts"] = unmatched
    answers = list(dedupe(answers))
    return Example(
        id=str(qid),
        question=question,
        answers=tuple(answers),
        gold_doc_ids=dedupe(gold),
        supporting_facts=dedupe(facts),
        documents=docs,
        answer_type=answer_type(answers),
        dataset=dataset,
        meta=meta,
    )
