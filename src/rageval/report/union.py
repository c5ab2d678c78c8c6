"""Holm over the union of several runs' contrasts (``rageval report RUN_DIR RUN_DIR ...``).

The attribution–compression paper adjusted its planned contrasts of both
datasets as one family.  :func:`adjust_union` takes the analyses of several
runs (each already adjusted within its own run) and re-adjusts every row's
``p_holm`` over the union: one family over every row of every run
(``scope="suite"``), or one family per family name across the runs
(``scope="family"``).  Raw p-values, effects and intervals do not change.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rageval.report.load import RunError
from rageval.report.tables import resolution_lines
from rageval.stats.contrasts import HOLM_SCOPES
from rageval.stats.holm import holm_grouped
from rageval.stats.resolution import with_family_size

__all__ = ["adjust_union", "describe_holm", "union_family_size"]


def _scope(analyses: Sequence[dict[str, Any]], scope: str | None, names: Sequence[str]) -> str:
    if scope is not None:
        if scope not in HOLM_SCOPES:
            raise RunError(f"Holm scope {scope!r} is not one of {', '.join(HOLM_SCOPES)}")
        return scope
    declared = {n: an["holm"]["scope"] for n, an in zip(names, analyses)}
    if len(set(declared.values())) > 1:
        raise RunError(
            f"the runs declare different Holm scopes ({', '.join(f'{n}: {s}' for n, s in declared.items())}): "
            "choose one for the union with --holm suite or --holm family"
        )
    return next(iter(declared.values()), "suite")


def adjust_union(analyses: Sequence[dict[str, Any]], *, scope: str | None = None, names: Sequence[str] = ()) -> str:
    """Re-adjust ``p_holm`` of every contrast of ``analyses`` over their union (in place); return the scope.

    ``scope`` None: the scope the runs declare (they must agree).  ``names``: how the
    runs are named in each analysis's ``holm.runs`` (default: their suite names).
    """
    names = list(names) or [str(an["suite"].get("name")) for an in analyses]
    scope = _scope(analyses, scope, names)
    p, groups = [], []
    kept = [c for an in analyses for c in an["contrasts"] if c.get("in_holm_family", True)]
    for c in kept:
        p.append(c["p_value"])
        groups.append(c["family"] if scope == "family" else "all")
    adjusted = holm_grouped(p, groups)
    sizes = dict(Counter(groups))
    for c, v in zip(kept, adjusted):
        c["p_holm"] = float(v) if math.isfinite(v) else None
    m = max(sizes.values(), default=0)
    for an in analyses:
        holm = {**an["holm"], "scope": scope, "runs": names, "family_sizes": sizes}
        if "resolution" in holm:
            holm["resolution"] = with_family_size(holm["resolution"], m)
        an["holm"] = holm
    return scope


def union_family_size(counts: Sequence[tuple[str, dict[str, int]]], scope: str | None) -> int:
    """The largest Holm family of the union of runs whose ``(declared scope, rows per family)`` are ``counts``:
    every row (``suite``) or the rows of one family name summed over the runs (``family``)."""
    scope = scope or (counts[0][0] if counts else "suite")
    total: Counter[str] = Counter()
    for _declared, fams in counts:
        for f, n in fams.items():
            total[f if scope == "family" else "all"] += n
    return max(total.values(), default=0)


def describe_holm(holm: dict[str, Any]) -> list[str]:
    """Lines for the terminal: contrasts per family and the Holm scope."""
    fams = holm.get("families") or {}
    order = [f for f in holm.get("family_order") or [] if f in fams] + [
        f for f in fams if f not in (holm.get("family_order") or [])
    ]
    fams = {f: fams[f] for f in order}
    total = sum(fams.values())
    runs = holm.get("runs") or []
    lines = [f"contrasts: {total} in {len(fams)} famil{'y' if len(fams) == 1 else 'ies'}"]
    lines += [f"  {name}: {n}" for name, n in fams.items()]
    where = f" of {len(runs)} runs ({', '.join(runs)})" if len(runs) > 1 else ""
    sizes = holm.get("family_sizes") or {}
    if holm.get("scope") == "family":
        each = ", ".join(f"{k}: {v}" for k, v in sizes.items()) or "none"
        lines.append(f"Holm scope: family (adjusted within each family{where}; family sizes {each})")
    else:
        lines.append(f"Holm scope: suite (one family: all {sizes.get('all', total)} rows{where})")
    return lines + resolution_lines(holm, warning="WARNING: ")
