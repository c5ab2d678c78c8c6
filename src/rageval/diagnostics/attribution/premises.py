"""Premises of the citation gate: the text a judge reads for each citation.

An *item* is ``(pool key, title, text)``.  A premise is its items formatted
``"Title: {title}\\n{text}"`` (or the bare text when there is no title) and
joined with ``"\\n"`` (docs/design.md#premises).

* **emitted**: a cited unit's premise is the unit text the reader saw (one item).
* **grounded**: the unit's declared source snippets, else the snippets recovered
  by re-attribution, else nothing (``missing``); in grounded pools a source id
  appears once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from rageval.diagnostics._attribution_inputs import PreparedQuestion

if TYPE_CHECKING:  # pragma: no cover
    from rageval.diagnostics.attribution.recovery import Recovery

__all__ = ["Item", "fmt", "pool", "unit_items", "source_items", "grounded_items", "cited_units"]

Item = tuple  # (pool key, title, text)


def fmt(items: Sequence[Item]) -> str:
    """The premise text of ``items``."""
    return "\n".join(f"Title: {t}\n{x}" if t is not None else x for _, t, x in items)


def pool(groups: Sequence[Sequence[Item] | None], dedupe: bool) -> list[Item]:
    """Concatenate citation groups in citation order; ``dedupe`` keeps each pool key once."""
    out: list[Item] = []
    seen = set()
    for g in groups:
        if g is None:
            continue
        for it in g:
            if dedupe:
                if it[0] in seen:
                    continue
                seen.add(it[0])
            out.append(it)
    return out


def unit_items(q: PreparedQuestion, k: int) -> list[Item]:
    u = q.units[k]
    return [(("unit", k), u.title, u.text)]


def source_items(q: PreparedQuestion, ids: Sequence[str]) -> list[Item]:
    return [(sid, q.by_id[sid].title, q.by_id[sid].text) for sid in ids]


def grounded_items(
    q: PreparedQuestion, k: int, rec: "dict[tuple[int, int], Recovery]"
) -> tuple[list[Item] | None, str]:
    """The grounded premise items of unit ``k`` and their evidence status (declared / recovered / missing)."""
    u = q.units[k]
    if u.source_ids is not None:
        return source_items(q, u.source_ids), "declared"
    r = rec.get((q.index, k))
    if r is not None and r.recovered:
        return source_items(q, r.recovered), "recovered"
    return None, "missing"


def cited_units(ans) -> list[int]:
    """0-based indices of the units a parsed answer cites validly."""
    return sorted({c - 1 for s in ans.sentences for c in s.citations})
