"""Gold-document coverage of a packed context (docs/design.md#gold-coverage).

The fraction of gold documents with at least one unit of the context that
*declares* one of their sentences.  It looks only at declared provenance
(``source_ids``), never at unit text, so it measures what the packer put in, as
the compressor claims it.  It is kept next to answer-in-context so the claim that
covering more gold documents is the wrong target under a budget can be checked
(docs/design.md#decision-coverage-and-recall).

Per question the value is:

* ``|{g in gold : some unit declares a sentence of g}| / |gold|``;
* ``None`` (undefined) when the question has no gold documents, or when its
  context has units but none of them declares provenance (coverage cannot be
  read off a context that declares nothing; e.g. abstractive, token pruning);
* 0.0 for an empty context (it covers nothing).

A source id maps to its document through ``doc_of`` (one mapping per question,
``source id -> document id``); without it, the document id is the part of the
source id before its last ``.`` (``"d3.s2" -> "d3"``), the convention of
:func:`rageval.data.passage_to_snippets`.

>>> units = [[{"text": "x", "source_ids": ["d0.s1"]}, {"text": "y", "source_ids": ["d4.s0", "d4.s1"]}]]
>>> r = gold_coverage(units, [["d0", "d2"]])
>>> r["gold_coverage"], r["per_question"][0]["gold_covered"]
(0.5, ['d0'])
>>> gold_coverage([[{"text": "summary", "source_ids": None}]], [["d0"]])["gold_coverage"] is None
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rageval.diagnostics._attribution_inputs import _unit
from rageval.diagnostics._common import check_list, check_same_length, check_str_list, summarize

__all__ = ["gold_coverage", "declared_ids"]


def _doc_of_id(source_id: str) -> str:
    return source_id.rsplit(".", 1)[0] if "." in source_id else source_id


def declared_ids(units: Any, q: int) -> tuple[list[str], bool, int]:
    """(declared ids, whether any unit declares provenance, number of units) of one question's context."""
    if isinstance(units, (str, bytes, Mapping)) or not isinstance(units, Sequence):
        raise TypeError(
            f"units[{q}] must be a list of units ({{text, source_ids}} dicts or Unit objects), "
            f"got {type(units).__name__}"
        )
    ids: list[str] = []
    any_declared = False
    for k, u in enumerate(units):
        if isinstance(u, Mapping):
            _unit(u, q, k)  # the unit shape every module takes: text, source_ids, title; nothing else
        sids = u.get("source_ids") if isinstance(u, Mapping) else getattr(u, "source_ids", "missing")
        if sids == "missing":
            raise TypeError(f"units[{q}][{k}] must be a dict with 'source_ids' or a Unit, got {type(u).__name__}")
        if sids is None:
            continue
        sids = check_str_list(sids, f"units[{q}][{k}].source_ids", q)
        if not sids:
            raise ValueError(f"units[{q}][{k}].source_ids=[] is ambiguous: use None for 'declares no provenance'")
        any_declared = True
        ids.extend(sids)
    return ids, any_declared, len(units)


def gold_coverage(
    units: Sequence[Any],
    references: Sequence[Sequence[str]],
    *,
    doc_of: Sequence[Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """Fraction of gold documents with at least one unit declaring one of their sentences (see module doc).

    ``units[q]``: the context's units (dicts with ``source_ids`` or
    :class:`~rageval.types.Unit`); ``references[q]``: gold document ids;
    ``doc_of[q]`` (optional): source id -> document id.  Per question also
    returns ``gold_covered`` (the covered gold ids, in reference order).
    """
    units = check_list(units, "units")
    references = check_list(references, "references")
    check_same_length(units=units, references=references)
    if doc_of is not None:
        doc_of = check_list(doc_of, "doc_of")
        check_same_length(units=units, doc_of=doc_of)
    per_question: list[dict[str, Any]] = []
    for q, (ctx, gold) in enumerate(zip(units, references)):
        gold = list(dict.fromkeys(check_str_list(gold, "references", q)))
        ids, any_declared, n_units = declared_ids(ctx, q)
        if not gold or (n_units and not any_declared):
            per_question.append({"gold_coverage": None, "gold_covered": None})
            continue
        mapping = _doc_mapping(doc_of[q], q) if doc_of is not None else None
        docs = {(mapping.get(i, _doc_of_id(i)) if mapping is not None else _doc_of_id(i)) for i in ids}
        covered = [g for g in gold if g in docs]
        per_question.append({"gold_coverage": len(covered) / len(gold), "gold_covered": covered})
    return summarize(per_question, "gold_coverage")


def _doc_mapping(mapping: Any, q: int) -> Mapping[str, str] | None:
    """``doc_of[q]``: None, or a mapping source id -> document id (both strings)."""
    if mapping is None:
        return None
    if not isinstance(mapping, Mapping):
        raise TypeError(
            f"doc_of[{q}] must be a mapping source id -> document id (or None), got {type(mapping).__name__}: "
            f"{mapping!r:.80}"
        )
    for sid, doc in mapping.items():
        if not isinstance(sid, str) or not isinstance(doc, str):
            raise TypeError(f"doc_of[{q}] must map strings to strings, got {sid!r:.40} -> {doc!r:.40}")
    return mapping


def score_gold_coverage(inputs, options) -> dict[str, Any]:
    """The catalog's scorer: declared units against gold documents, source ids mapped to their documents.

    An input of plain contexts, each its own source (``self_sourced``: the units' provenance names no real
    document), is undefined, not 0."""
    return gold_coverage(
        [x.unit_dicts() for x in inputs],
        [[] if x.self_sourced else list(x.gold.gold_doc_ids) for x in inputs],
        doc_of=[x.doc_of() for x in inputs],
    )
