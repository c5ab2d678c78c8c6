"""Which grounding rule produced an emitted − grounded gap (docs/design.md#claim-support), read off the run's
recorded scoring options: the report names it beside every gap it shows.

The citation gaps (``gap_precision``, ``gap_recall``) always ground a unit without declared provenance in the
snippets re-attribution recovers one by one (``single``); claim support's gap (``gap_claim_support``) follows the
run's ``grounding`` option: ``single`` (the default) or ``union`` (the unit's top-``k`` recovery candidates
together).

>>> gap_grounding({"scoring": {"attribution": {"grounding": "union", "k": 5}}}, "gap_claim_support")
'grounding `union`: a unit without provenance in its top-5 recovery candidates together'
>>> gap_grounding({"scoring": {"attribution": {}}}, "gap_claim_support")
'grounding `single`: a unit without provenance in the snippets recovered one by one'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rageval.scoring import DEFAULT_GROUNDING, DEFAULT_RECOVERY_K

__all__ = ["gap_grounding", "gaps_grounding_note", "run_grounding"]

#: the gaps whose grounded side follows the run's ``grounding`` option (the others: always ``single``)
FOLLOWS_OPTION = ("gap_claim_support",)


def run_grounding(manifest: Mapping[str, Any] | None) -> tuple[str, int]:
    """``(grounding mode, k)`` the run recorded (its defaults when it records none)."""
    attribution = (((manifest or {}).get("scoring") or {}).get("attribution")) or {}
    return str(attribution.get("grounding") or DEFAULT_GROUNDING), int(attribution.get("k") or DEFAULT_RECOVERY_K)


def _backticks(name: str) -> str:
    return f"`{name}`"


def gap_grounding(manifest: Mapping[str, Any] | None, gap: str, code: Callable[[str], str] = _backticks) -> str:
    """The grounding rule behind ``gap``'s grounded side, in words (``code`` writes a name: Markdown's backticks,
    or the bare name for the HTML page)."""
    mode, k = run_grounding(manifest) if gap in FOLLOWS_OPTION else ("single", DEFAULT_RECOVERY_K)
    if mode == "union":
        return f"grounding {code('union')}: a unit without provenance in its top-{k} recovery candidates together"
    return f"grounding {code('single')}: a unit without provenance in the snippets recovered one by one"


def gaps_grounding_note(
    manifest: Mapping[str, Any] | None, gaps: Iterable[str], code: Callable[[str], str] = _backticks
) -> str:
    """One sentence naming the grounding rule of each gap shown (empty when none is shown)."""
    by_rule: dict[str, list[str]] = {}
    for g in gaps:
        by_rule.setdefault(gap_grounding(manifest, g, code), []).append(code(g))
    if not by_rule:
        return ""
    return "Grounded side: " + "; ".join(f"{', '.join(gs)}: {rule}" for rule, gs in by_rule.items()) + "."
