"""The families of a contrast plan (``contrasts.families`` and ``contrasts.separate``) and its Holm scope, as
:func:`rageval.stats.contrasts.expand_plan` reads them (the format: that module's doc)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from rageval.registry import did_you_mean

__all__ = [
    "DEFAULT_FAMILY",
    "HOLM_SCOPES",
    "INTERACTIONS",
    "ITEM_KEYS",
    "HolmScope",
    "holm_group",
    "interaction_settings",
    "parse_families",
]

#: the keys of one item of a family
ITEM_KEYS = {"a", "b", "vs", "settings", "metrics", "gap", "pairs", "compressors", "budgets", "interaction"}
#: the family of the plan's ``interactions:`` (contrasts of contrasts), adjusted on its own like a separate family
INTERACTIONS = "interactions"
_PLAN_KEYS = {"families", "holm", "separate", INTERACTIONS}
#: ``holm: suite`` adjusts over every row of the plan, ``holm: family`` within each family
HOLM_SCOPES = ("suite", "family")
#: the family of a plan written as a plain list of items
DEFAULT_FAMILY = "contrasts"
HolmScope = Literal["suite", "family"]


def holm_group(family: str, scope: str, separate: Sequence[str] = ()) -> str:
    """The Holm family of a row of ``family``: ``"all"`` under ``scope="suite"``, its own family under
    ``"family"`` or when the plan declares it ``separate``."""
    return family if scope == "family" or family in separate else "all"


def _hint(name: str, known: Sequence[Any]) -> str:
    known = [str(k) for k in known]
    return did_you_mean(str(name), known, cutoff=0.5) or f" Known: {', '.join(known) if known else '(none)'}."


def parse_families(spec: Any) -> tuple[dict[str, list[Any]], str, HolmScope, dict[str, list[Any]]]:
    """``({family: [items]}, where prefix, holm scope, {separate family: [items]})`` of a spec in either form."""
    if isinstance(spec, Mapping) and (set(spec) & _PLAN_KEYS) and not (set(spec) & ITEM_KEYS):
        unknown = [k for k in spec if k not in _PLAN_KEYS]
        if unknown:
            raise ValueError(f"Unknown key {unknown[0]!r} in contrasts.{_hint(str(unknown[0]), sorted(_PLAN_KEYS))}")
        holm = spec.get("holm", "suite")
        if holm not in HOLM_SCOPES:
            raise ValueError(f"contrasts.holm must be 'suite' (one family over every row) or 'family', got {holm!r}")
        alone = INTERACTIONS in spec and "families" not in spec  # a plan of interactions only
        families = {} if alone else _named_families(spec.get("families"))
        separate = _named_families(spec["separate"], "contrasts.separate") if "separate" in spec else {}
        if INTERACTIONS in spec:
            for key, fams in (("contrasts.families", families), ("contrasts.separate", separate)):
                if INTERACTIONS in fams:
                    raise ValueError(
                        f"{key}.{INTERACTIONS}: the name is the family of contrasts.interactions; give another name"
                    )
            separate[INTERACTIONS] = _interaction_items(spec[INTERACTIONS])
        for name in separate:
            if name in families:
                raise ValueError(f"contrasts.separate.{name}: a family of that name is in contrasts.families")
            if name == "all":
                raise ValueError("contrasts.separate: 'all' names the suite-wide Holm family; give another name")
        return families, "contrasts.families.{family}", holm, separate
    items = spec if isinstance(spec, (list, tuple)) else [spec]
    return {DEFAULT_FAMILY: list(items)}, "contrasts", "suite", {}


def _named_families(fams: Any, key: str = "contrasts.families") -> dict[str, list[Any]]:
    """``contrasts.families`` (a list of one-key mappings, or a mapping) as ``{family: [items]}``, checked
    (``key``: where it is written, ``contrasts.separate`` takes the same form)."""
    pairs = list(fams.items()) if isinstance(fams, Mapping) else []
    if isinstance(fams, (list, tuple)):  # a list of one-key mappings keeps its order through JSON
        for i, f in enumerate(fams):
            if not isinstance(f, Mapping) or len(f) != 1:
                raise ValueError(
                    f"{key}[{i}] must be one mapping 'name: items', e.g. - vs_identity: [{{vs: identity}}]"
                )
            pairs.append(next(iter(f.items())))
        if len({n for n, _ in pairs}) != len(pairs):
            raise ValueError(f"{key} names a family twice: give each family one entry")
    if not pairs:
        raise ValueError(
            f"{key} must map family names to items, e.g. {{vs_identity: [{{vs: identity}}]}} "
            "(or list them, - vs_identity: [...], to keep their order in the report)"
        )
    out = {}
    for name, items in pairs:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{key}: a family name must be a non-empty string, got {name!r}")
        if items is None or (isinstance(items, (list, tuple)) and not items):
            raise ValueError(f"{key}.{name} declares no item")
        out[name] = list(items) if isinstance(items, (list, tuple)) else [items]
    return out


def _interaction_items(value: Any) -> list[Any]:
    """``contrasts.interactions`` as items: ``[[A, B], [C, D]]`` is ``{interaction: [[A, B], [C, D]]}``."""
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(
            "contrasts.interactions must list interactions, e.g. "
            "[[[submodular@160, focused@160], [submodular@96, focused@96]]] or [{interaction: [[A, B], [C, D]]}]"
        )
    out = []
    for i, item in enumerate(value):
        if isinstance(item, (list, tuple)):
            item = {"interaction": item}
        if not isinstance(item, Mapping) or "interaction" not in item:
            raise ValueError(
                f"contrasts.interactions[{i}] must be an interaction: [[A, B], [C, D]] or "
                f"{{interaction: [[A, B], [C, D]], metrics: [...]}}, got {item!r}"
            )
        out.append(item)
    return out


def interaction_settings(item: Mapping[str, Any], where: str, setting: Callable[[Any, str], str]) -> tuple[str, ...]:
    """``(A, B, C, D)`` of an interaction item ``{interaction: [[A, B], [C, D]], metrics: ...}``, each checked by
    ``setting(value, where)``; two pairs of two different settings, not the same pair twice."""
    extra = [k for k in item if k not in ("interaction", "metrics")]
    if extra:
        raise ValueError(
            f"{where}: an 'interaction' item takes [[A, B], [C, D]] and optional 'metrics', not {extra[0]!r}"
        )
    value = item["interaction"]
    pairs = isinstance(value, (list, tuple)) and len(value) == 2
    if not (pairs and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value)):
        raise ValueError(
            f"{where}.interaction must be two pairs of settings [[A, B], [C, D]] (tested: (A - B) - (C - D)), "
            f"e.g. [[submodular@160, focused@160], [submodular@96, focused@96]]; got {value!r}"
        )
    (a, b), (c, d) = (
        [setting(s, f"{where}.interaction[{j}][{k}]") for k, s in enumerate(p)] for j, p in enumerate(value)
    )
    for j, (x, y) in enumerate(((a, b), (c, d))):
        if x == y:
            raise ValueError(f"{where}.interaction[{j}] compares {x!r} with itself: pick two different settings")
    if (a, b) == (c, d):
        raise ValueError(f"{where}.interaction names the pair ({a}, {b}) twice: give two different pairs")
    return a, b, c, d
