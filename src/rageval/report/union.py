"""Holm over the union of several runs' contrasts (``rageval report RUN_DIR RUN_DIR ...``).

The attribution–compression paper adjusted its planned contrasts of both
datasets as one family.  :func:`adjust_union` takes the analyses of several
runs (each already adjusted within its own run) and returns them with every
row's ``p_holm`` re-adjusted over the union: one family over every row of every run
(``scope="suite"``), or one family per family name across the runs
(``scope="family"``).  Raw p-values, effects and intervals do not change.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rageval.report.findings import with_findings
from rageval.report.load import RunError
from rageval.report.result import Analysis, ContrastEntry, HolmInfo
from rageval.report.tables import resolution_lines
from rageval.stats.contrasts import HOLM_SCOPES, holm_group
from rageval.stats.holm import holm_grouped
from rageval.stats.resolution import with_family_size

__all__ = ["adjust_union", "describe_holm", "union_family_size"]


def _scope(analyses: Sequence[Analysis], scope: str | None, names: Sequence[str]) -> str:
    if scope is not None:
        if scope not in HOLM_SCOPES:
            raise RunError(f"Holm scope {scope!r} is not one of {', '.join(HOLM_SCOPES)}")
        return scope
    declared = {n: an.holm["scope"] for n, an in zip(names, analyses)}
    if len(set(declared.values())) > 1:
        raise RunError(
            f"the runs declare different Holm scopes ({', '.join(f'{n}: {s}' for n, s in declared.items())}): "
            "choose one for the union with --holm suite or --holm family"
        )
    return next(iter(declared.values()), "suite")


def adjust_union(
    analyses: Sequence[Analysis], *, scope: str | None = None, names: Sequence[str] = ()
) -> list[Analysis]:
    """``analyses`` with ``p_holm`` of every contrast re-adjusted over their union, their ``holm`` stating the
    union and their findings read again (new values: the given ones do not change).

    ``scope`` None: the scope the runs declare (they must agree).  ``names``: how the
    runs are named in each analysis's ``holm.runs`` (default: their suite names).
    """
    names = list(names) or [str(an.suite.get("name")) for an in analyses]
    scope = _scope(analyses, scope, names)
    kept = [
        (i, j) for i, an in enumerate(analyses) for j, c in enumerate(an.contrasts) if c.get("in_holm_family", True)
    ]
    p = [analyses[i].contrasts[j]["p_value"] for i, j in kept]
    separate = {f for an in analyses for f in an.holm.get("separate") or []}  # each its own family, by name
    groups = [holm_group(analyses[i].contrasts[j]["family"], scope, tuple(separate)) for i, j in kept]
    adjusted = {ij: float(v) if math.isfinite(v) else None for ij, v in zip(kept, holm_grouped(p, groups))}
    sizes = dict(Counter(groups))
    m = max(sizes.values(), default=0)
    out = []
    for i, an in enumerate(analyses):
        contrasts = tuple(
            _with_p_holm(c, adjusted[(i, j)]) if (i, j) in adjusted else c for j, c in enumerate(an.contrasts)
        )
        res = with_family_size(dict(an.holm["resolution"]), m)
        holm: HolmInfo = {**an.holm, "scope": scope, "runs": names, "family_sizes": sizes, "resolution": res}
        out.append(with_findings(dataclasses.replace(an, contrasts=contrasts, holm=holm)))
    return out


def _with_p_holm(c: ContrastEntry, p_holm: float | None) -> ContrastEntry:
    return {**c, "p_holm": p_holm}


def union_family_size(counts: Sequence[tuple[Any, ...]], scope: str | None) -> int:
    """The largest Holm family of the union of runs whose ``(declared scope, rows per family[, separate
    families])`` are ``counts``: every row (``suite``) or the rows of one family name summed over the runs
    (``family``); a separate family's rows summed by its name under either scope."""
    scope = scope or (counts[0][0] if counts else "suite")
    separate = tuple(f for c in counts for f in (c[2] if len(c) > 2 else ()))
    total: Counter[str] = Counter()
    for c in counts:
        for f, n in c[1].items():
            total[holm_group(f, scope, separate)] += n
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
    if len(fams) == 1:  # its one count is the total: named on the line, not repeated below it
        lines = [f"contrasts: {total} in 1 family ({next(iter(fams))})"]
    else:
        lines = [f"contrasts: {total} in {len(fams)} families"]
        lines += [f"  {name}: {n}" for name, n in fams.items()]
    where = f" of {len(runs)} runs ({', '.join(runs)})" if len(runs) > 1 else ""
    sizes = holm.get("family_sizes") or {}
    if holm.get("scope") == "family":
        each = ", ".join(f"{k}: {v}" for k, v in sizes.items()) or "none"
        lines.append(f"Holm scope: family (adjusted within each family{where}; family sizes {each})")
    else:
        alone = "".join(f"; {k}: {v} rows adjusted on its own" for k, v in sizes.items() if k != "all")
        lines.append(f"Holm scope: suite (one family: all {sizes.get('all', total)} rows{where}{alone})")
    return lines + resolution_lines(holm, warning="WARNING: ")
