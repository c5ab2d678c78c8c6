"""RAGBench (``rungalileo/ragbench``; CovidQA, ExpertQA and its other subsets) -> :class:`~rageval.data.schema.Example`.

One row of RAGBench as published (docs/datasets.md#ragbench; the fields pinned in
:data:`FIELDS` and in ``samples/ragbench/ragbench_fields.json``): the question, the
retrieved ``documents``, their sentences with RAGBench's keys (``documents_sentences``:
per document a list of ``[key, sentence]`` pairs, keys such as ``"0a"``, ``"1c"``), one
model's ``response`` and the annotator's labels of which sentences are *relevant* to the
question (``all_relevant_sentence_keys``) and which the response *utilized*
(``all_utilized_sentence_keys``).

The mapping onto rageval's schema:

* documents ``d0, d1, …`` in RAGBench's order; document ``i``'s sentences are the snippets
  ``d{i}.s{j}`` in the order of ``documents_sentences[i]`` (the sentences as RAGBench split
  them; its key of each snippet is kept in ``meta["sentence_keys"]``, snippet id -> key);
* gold evidence = the **relevance** annotation: ``supporting_facts`` are the snippets of
  ``all_relevant_sentence_keys``, ``gold_doc_ids`` the documents holding one (so gold
  coverage counts the documents with a relevant sentence); the **utilization** annotation
  is kept as snippet ids in ``meta["utilized_sentences"]``; a key that names no sentence
  is kept in ``meta["unmatched_sentence_keys"]``, not raised;
* no short gold answer exists: ``answers`` is empty, so answer-in-context and EM are
  undefined; ``reference`` holds the row's ``response`` — a model's answer (its model in
  ``meta["generation_model_name"]``), not a human one, with the annotator's verdict in
  ``meta["overall_supported"]``; answer F1 reads it (agreement with that response);
* ``meta["subset"]`` is the row's ``dataset_name``; the annotator's scores
  (``relevance_score``, ``utilization_score``, ``completeness_score``, ``adherence_score``)
  are kept in ``meta`` where the row has them.

>>> row = {"id": "q1", "question": "Who?", "documents": ["Title: A\\nPassage: Ann did it."],
...        "response": "Ann.", "dataset_name": "covidqa",
...        "documents_sentences": [[["0a", "Title: A"], ["0b", "Passage: Ann did it."]]],
...        "all_relevant_sentence_keys": ["0b"], "all_utilized_sentence_keys": ["0b"]}
>>> from rageval.data import examples_from_records
>>> ex = examples_from_records("ragbench", [row])[0]
>>> ex.supporting_facts, ex.gold_doc_ids, ex.reference, ex.answers
(('d0.s1',), ('d0',), ('Ann.',), ())
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rageval.data.fields import LocatedRecord, dedupe, make_doc, marker_meta
from rageval.data.schema import Example

__all__ = ["FIELDS", "REQUIRED", "build"]

#: RAGBench's fields as its dataset card declares them (``rungalileo/ragbench`` README, ``dataset_info``
#: features, the same for every subset), in the card's order; the committed reference
#: ``samples/ragbench/ragbench_fields.json`` holds the same list with its source.
FIELDS = (
    "id",
    "question",
    "documents",
    "response",
    "generation_model_name",
    "annotating_model_name",
    "dataset_name",
    "documents_sentences",
    "response_sentences",
    "sentence_support_information",
    "unsupported_response_sentence_keys",
    "overall_supported",
    "overall_supported_explanation",
    "relevance_explanation",
    "all_relevant_sentence_keys",
    "all_utilized_sentence_keys",
    "relevance_score",
    "utilization_score",
)

#: the fields the loader reads; the others are RAGBench's and are left alone
REQUIRED = (
    "id",
    "question",
    "documents",
    "response",
    "documents_sentences",
    "all_relevant_sentence_keys",
    "all_utilized_sentence_keys",
)

_KEPT_IN_META = (
    "generation_model_name",
    "annotating_model_name",
    "overall_supported",
    "relevance_score",
    "utilization_score",
    "completeness_score",
    "adherence_score",
)


def _sentences(r: LocatedRecord, docs_sents: Any, n_docs: int) -> list[list[tuple[str, str]]]:
    """``documents_sentences`` checked: per document, its ``[key, sentence]`` pairs."""
    path = "documents_sentences"
    if not isinstance(docs_sents, list):
        raise r.err(path, "a list (one per document) of [key, sentence] pairs", docs_sents)
    if len(docs_sents) != n_docs:
        raise r.err(path, f"one list of sentences per document ({n_docs} documents), not {len(docs_sents)}", docs_sents)
    out = []
    for i, doc in enumerate(docs_sents):
        if not isinstance(doc, list):
            raise r.err(f"{path}[{i}]", "a list of [key, sentence] pairs", doc)
        pairs = []
        for j, pair in enumerate(doc):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(isinstance(x, str) for x in pair):
                raise r.err(f"{path}[{i}][{j}]", "a [key, sentence] pair of two strings", pair)
            pairs.append((pair[0], pair[1]))
        out.append(pairs)
    return out


def build(r: LocatedRecord, dataset: str) -> Example:
    """The example of one RAGBench row (the module doc's mapping)."""
    rec = r.rec
    qid = r.get(rec, "id", "a string or integer id", "id", types=(str, int))
    question = r.get(rec, "question", "the question string", "question")
    documents = r.str_list(
        r.get(rec, "documents", "a list of document strings", "documents", types=(list,)), "documents"
    )
    response = r.get(rec, "response", "the response string", "response")
    sents = _sentences(
        r,
        r.get(rec, "documents_sentences", "the sentences of each document", "documents_sentences", types=()),
        len(documents),
    )
    relevant = r.str_list(
        r.get(rec, "all_relevant_sentence_keys", "a list of sentence keys", "all_relevant_sentence_keys", types=()),
        "all_relevant_sentence_keys",
    )
    utilized = r.str_list(
        r.get(rec, "all_utilized_sentence_keys", "a list of sentence keys", "all_utilized_sentence_keys", types=()),
        "all_utilized_sentence_keys",
    )
    markers: Counter = Counter()
    docs = []
    key_of: dict[str, str] = {}  # snippet id -> RAGBench's key
    id_of: dict[str, str] = {}  # RAGBench's key -> snippet id
    for i, pairs in enumerate(sents):
        doc = make_doc(f"d{i}", [text for _, text in pairs], None, tally=markers)
        docs.append(doc)
        for j, (key, _) in enumerate(pairs):
            sid = f"d{i}.s{j}"
            if any(s.id == sid for s in doc.snippets):  # an empty sentence is no snippet
                key_of[sid] = key
                id_of.setdefault(key, sid)
    unmatched = [k for k in dict.fromkeys([*relevant, *utilized]) if k not in id_of]
    facts = dedupe(id_of[k] for k in relevant if k in id_of)
    gold = dedupe(s.rsplit(".", 1)[0] for s in facts)
    meta: dict[str, Any] = {
        "layout": "ragbench",
        "subset": rec.get("dataset_name"),
        "sentence_keys": key_of,
        "utilized_sentences": list(dedupe(id_of[k] for k in utilized if k in id_of)),
        **{k: rec[k] for k in _KEPT_IN_META if k in rec and rec[k] is not None},
        **marker_meta(markers),
    }
    if unmatched:
        meta["unmatched_sentence_keys"] = unmatched
    return Example(
        id=str(qid),
        question=question,
        answers=(),
        reference=(response,) if response.strip() else (),
        gold_doc_ids=gold,
        supporting_facts=facts,
        documents=tuple(docs),
        answer_type=None,
        dataset=dataset,
        meta=meta,
    )
