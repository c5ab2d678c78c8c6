"""Premises: the text a judge reads for each citation (docs/design.md#premises).

An *item* is ``(pool key, title, text, document)``; a citation's *group* is a
list of items.  A group is written as follows:

* a **unit** item (``document`` None) as ``"Title: {title}\\n{text}"`` (or the
  bare text when there is no title), its text verbatim;
* **source snippets** grouped by document (in the order given, which is source
  order), each document as its title once (``"Title: {title}\\n"``, when it
  has one) followed by its snippets' texts joined exactly as a unit joins them
  (:func:`rageval.types.join_texts`);

and the written groups of a premise are joined with ``"\\n"``, in citation
order.  So a unit whose text is the join of its declared snippets (one
document, same title) has a grounded premise byte-identical to its emitted
premise, and so does a claim citing several such units (overlapping or not).

* **emitted**: a cited unit's group is the unit text the reader saw (one item).
* **grounded**: the unit's declared source snippets (in source order, each id
  once within the unit), else the snippets recovered by re-attribution, else
  nothing (``missing``).  A claim's grounded pool is its citations' groups in
  citation order, **repeats kept**: two cited units that share a source id each
  bring its snippet, as the paper's grounded citation scoring concatenates the
  cited units' source spans.  Only verification de-duplicates
  (``pool(..., dedupe=True)``: a later group keeps only its new snippets), as
  the paper's recovered-source verification removes repeated source ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rageval.diagnostics._attribution_inputs import PreparedQuestion
from rageval.types import join_texts

if TYPE_CHECKING:  # pragma: no cover
    from rageval.diagnostics.attribution.recovery import Recovery

__all__ = [
    "Item",
    "Group",
    "write_group",
    "fmt",
    "pool",
    "unit_items",
    "source_items",
    "grounded_items",
    "declared_items",
    "cited_units",
]

Item = tuple  # (pool key, title, text, document or None for a unit)
Group = list  # one citation's items


def write_group(items: Sequence[Item]) -> str:
    """One citation's premise text (see the module doc)."""
    if len(items) == 1 and items[0][3] is None:  # one unit (every emitted citation): its text as written below
        _, title, text, _ = items[0]
        return f"Title: {title}\n{text}" if title is not None else text
    parts: list[str] = []
    docs: dict[tuple, list[str]] = {}
    order: list[tuple] = []  # ("unit", title, text) or ("doc", (document, title))
    for _, title, text, doc in items:
        if doc is None:
            order.append(("unit", title, text))
            continue
        key = (doc, title)
        if key not in docs:
            docs[key] = []
            order.append(("doc", key))
        docs[key].append(text)
    for entry in order:
        if entry[0] == "unit":
            _, title, text = entry
        else:
            (doc, title), text = entry[1], join_texts(docs[entry[1]])
        parts.append(f"Title: {title}\n{text}" if title is not None else text)
    return "\n".join(parts)


def fmt(groups: Sequence[Sequence[Item]]) -> str:
    """The premise text of citation ``groups``: each written by :func:`write_group`, joined with ``"\\n"``."""
    return "\n".join(write_group(g) for g in groups)


def pool(groups: Sequence[Sequence[Item] | None], dedupe: bool = False) -> list[list[Item]]:
    """The non-empty citation groups in citation order, repeats kept (the citation gate's pools);
    ``dedupe`` keeps each pool key once, first group wins (the verification modes' pools)."""
    out: list[list[Item]] = []
    seen = set()
    for g in groups:
        if g is None:
            continue
        kept = []
        for it in g:
            if dedupe:
                if it[0] in seen:
                    continue
                seen.add(it[0])
            kept.append(it)
        if kept:
            out.append(kept)
    return out


def unit_items(q: PreparedQuestion, k: int) -> list[Item]:
    u = q.units[k]
    return [(("unit", k), u.title, u.text, None)]


def source_items(q: PreparedQuestion, ids: Sequence[str]) -> list[Item]:
    """The snippets ``ids`` in source order (their order in the question's sources), ids once."""
    ordered = sorted(dict.fromkeys(ids), key=q.position.__getitem__)
    return [(sid, q.by_id[sid].title, q.by_id[sid].text, q.by_id[sid].doc) for sid in ordered]


def grounded_items(q: PreparedQuestion, k: int, rec: dict[tuple[int, int], Recovery]) -> tuple[list[Item] | None, str]:
    """The grounded premise items of unit ``k`` and their evidence status (declared / recovered / missing)."""
    u = q.units[k]
    if u.source_ids is not None:
        return source_items(q, u.source_ids), "declared"
    r = rec.get((q.index, k))
    if r is not None and r.recovered:
        return source_items(q, r.recovered), "recovered"
    return None, "missing"


def declared_items(q: PreparedQuestion, k: int) -> list[Item] | None:
    """The declared snippets of unit ``k`` (None when it declares nothing)."""
    u = q.units[k]
    return None if u.source_ids is None else source_items(q, u.source_ids)


def cited_units(ans) -> list[int]:
    """0-based indices of the units a parsed answer cites validly."""
    return sorted({c - 1 for s in ans.sentences for c in s.citations})
