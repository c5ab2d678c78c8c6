"""The contrast plan of a suite: which paired comparisons are tested, in which families, and the Holm scope.

Format (the ``contrasts:`` field of a suite YAML).  A list of items is one family
named ``contrasts``; a mapping with ``families:`` names several, and ``holm:``
says over what Holm adjusts::

    contrasts:
      holm: suite                  # suite (default): one Holm family over every row; family: Holm within each
      families:                    # a list keeps the families' order in the report (a mapping works too)
        - vs_identity:             # each compressor against identity at every budget
            - {vs: identity}
        - emitted_vs_grounded:     # within each setting, for precision and recall
            - {gap: [[emitted_precision, grounded_precision], [emitted_recall, grounded_recall]]}
        - same_budget:             # compressors against each other at the same nominal budget
            - {pairs: same_budget}
        - budget_steps:            # within each compressor, each budget against the next looser one
            - {pairs: budget_steps}

``separate:`` (beside ``families:``, in the same form) declares families that are **not** part of the
suite-wide Holm family: each is adjusted on its own, under either scope (and across runs, with the
families of the same name), e.g. a secondary answer metric kept out of a paper's planned family::

    contrasts:
      holm: suite
      families: [{vs_identity: [{vs: identity, metrics: [str_em]}]}]
      separate: [{answer_f1: [{vs: identity, metrics: [answer_f1]}]}]

The items (a single item may stand alone as a family)::

      # every other setting against a reference: effect = setting - reference
      - every setting vs identity                 # metrics: the default set
      - {vs: identity, metrics: [answer_f1, grounded_precision]}
      - {vs: identity, settings: [extractive@0.25, abstractive@0.25], metrics: answer_f1}
      - {vs: identity, compressors: [extractive], budgets: [0.25]}
      # one pair: effect = a - b
      - {a: extractive@0.25, b: identity, metrics: [answer_f1]}
      - extractive@0.25 vs identity               # the same, default metrics
      # a within-setting gap between two metrics: effect = first - second
      - {gap: [emitted_precision, grounded_precision], settings: [abstractive@0.25]}
      - {gap: [emitted_precision, grounded_precision]}   # every setting
      - {gap: [[emitted_precision, grounded_precision], [emitted_recall, grounded_recall]]}  # both gaps
      # families of pairs built from the settings' compressor and nominal budget
      - {pairs: same_budget}     # every two settings of different compressors with the same budget:
                                 # effect = the one earlier in the suite - the later one
      - {pairs: budget_steps}    # within a compressor, budgets sorted from loose to tight: effect =
                                 # tighter - the next looser (what one more step of compression costs)

**Interactions** (``interactions: [[[A, B], [C, D]], ...]`` beside ``families:``, or alone): ``(A - B) - (C - D)``
per question, in the family ``interactions``, adjusted on its own (docs/statistics.md#interactions).

``settings``, ``compressors`` and ``budgets`` restrict which settings an item
uses (``vs``, ``gap`` and ``pairs`` items).  Each (pair or gap) x metric is one
**row**.  ``metrics`` is a name or a list; omitted, it is the default set: every
metric the records carry whose direction the diagnostics catalog declares
(higher or lower is better, :func:`rageval.diagnostics.direction_of`), in that
order, except secondary views such as ``*_excl_abstain`` (shown in the summary
beside their main metric; name them to contrast them); a key the catalog does
not declare has no direction, whatever its name.  Unknown settings, compressors,
budgets and metrics, unknown keys, self-contrasts, items that expand to no pair
and rows declared twice (in any family) are errors that name the item and the
fix.  The suite loader expands the plan (:func:`expand_plan`), so ``rageval
validate`` reports them before anything runs.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import rageval.stats.families as _families
from rageval.registry import did_you_mean
from rageval.stats.families import DEFAULT_FAMILY, HOLM_SCOPES, ITEM_KEYS, HolmScope, holm_group, parse_families

__all__ = [
    "ContrastRow",
    "ContrastPlan",
    "SettingRef",
    "parse_contrasts",
    "expand_plan",
    "HOLM_SCOPES",
    "DEFAULT_FAMILY",
    "holm_group",
]

_PAIR_KINDS = ("same_budget", "budget_steps")
_SHORTHAND = re.compile(r"^\s*(.+?)\s+vs\.?\s+(.+?)\s*$")


@dataclass(frozen=True)
class ContrastRow:
    """One row of the plan: ``mean(metric_a @ a) - mean(metric_b @ b)`` over paired questions."""

    a: str
    b: str
    metric_a: str
    metric_b: str
    kind: str  # "pair" | "gap" | "interaction"
    item: int  # index of the declaring item in its family
    family: str = DEFAULT_FAMILY
    #: an interaction's second pair: the row is ``(a - b) - (c - d)`` on ``metric_a`` per question
    c: str | None = None
    d: str | None = None

    @property
    def metric(self) -> str:
        return self.metric_a if self.metric_a == self.metric_b else f"{self.metric_a} - {self.metric_b}"

    @property
    def settings(self) -> tuple[str, ...]:
        """Every setting the row reads (two, or four for an interaction)."""
        return (self.a, self.b) if self.c is None or self.d is None else (self.a, self.b, self.c, self.d)

    @property
    def side_a(self) -> str:  # the sides as the tables name them: an interaction's are its two pairs
        return self.a if self.kind != "interaction" else f"{self.a} - {self.b}"

    @property
    def side_b(self) -> str:
        return self.b if self.kind != "interaction" else f"{self.c} - {self.d}"

    @property
    def label(self) -> str:
        if self.kind == "gap":
            return f"{self.a}: {self.metric_a} - {self.metric_b}"
        if self.kind == "interaction":
            return f"({self.side_a}) - ({self.side_b}): {self.metric_a}"
        return f"{self.a} - {self.b}: {self.metric_a}"

    @property
    def key(self) -> tuple[str, ...]:
        if self.kind == "interaction":
            return (self.a, self.b, str(self.c), str(self.d), self.metric_a, self.metric_b)
        return (self.a, self.b, self.metric_a, self.metric_b)


@dataclass(frozen=True)
class ContrastPlan:
    """The expanded plan: its rows (families in declaration order), the Holm scope and the family names."""

    rows: tuple[ContrastRow, ...]
    holm: HolmScope = "suite"
    families: tuple[str, ...] = ()
    #: the families declared under ``separate:`` (also in ``families``): each its own Holm family
    separate: tuple[str, ...] = ()

    def holm_group(self, family: str) -> str:
        """The Holm family a row of ``family`` is adjusted in (:func:`holm_group`)."""
        return holm_group(family, self.holm, self.separate)

    def counts(self) -> dict[str, int]:
        """Rows per family, in declaration order (a family may hold no row when no metric applies)."""
        out = {f: 0 for f in self.families}
        for r in self.rows:
            out[r.family] = out.get(r.family, 0) + 1
        return out


@dataclass(frozen=True)
class SettingRef:
    """A setting as the plan sees it: its name, compressor, nominal budget and own retrieval (pairs stay within one)."""

    name: str
    compressor: str | None = None
    budget: Any = None
    retrieval: tuple[tuple[str, Any], ...] = ()


def _hint(name: str, known: Sequence[Any]) -> str:
    known = [str(k) for k in known]
    return did_you_mean(str(name), known, cutoff=0.5) or f" Known: {', '.join(known) if known else '(none)'}."


def _parse_budget(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _ref(s: Any) -> SettingRef:
    if isinstance(s, SettingRef):
        return s
    if isinstance(s, str):  # "<compressor>@<budget>" or a bare compressor name
        comp, sep, budget = s.rpartition("@")
        return SettingRef(s, comp, _parse_budget(budget)) if sep and comp else SettingRef(s, s, None)
    if isinstance(s, Mapping):
        own = tuple(sorted((s.get("retrieval") or {}).items()))  # a setting's own retrieval (a suite's settings)
        return SettingRef(str(s["name"]), s.get("compressor"), s.get("budget"), own)
    if isinstance(s, (tuple, list)) and s:
        return SettingRef(str(s[0]), s[1] if len(s) > 1 else None, s[2] if len(s) > 2 else None)
    raise TypeError(f"a setting must be a name, a mapping {{name, compressor, budget}} or a tuple, got {s!r}")


def _budget_key(b: Any) -> tuple[str, float] | None:
    """Budgets compare as (kind, value): a fraction (float) never equals a token count (int)."""
    if b is None or isinstance(b, bool) or not isinstance(b, (int, float)):
        return None
    return ("fraction" if isinstance(b, float) else "tokens", float(b))


def _setting(value: Any, where: str, setting_names: Sequence[str]) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a setting name (a string), got {value!r}")
    if value not in setting_names:
        raise ValueError(f"Unknown setting {value!r} in {where}.{_hint(value, setting_names)}")
    return value


def _check_metric(m: Any, where: str, metric_names: Sequence[str] | None, known: Sequence[str] | None) -> str:
    if not isinstance(m, str):
        raise ValueError(f"{where} must be a metric name (a string), got {m!r}")
    if metric_names is not None and m not in metric_names:
        raise ValueError(f"Unknown metric {m!r} in {where}: no record carries it.{_hint(m, metric_names)}")
    if metric_names is None and known is not None and m not in known:
        raise ValueError(f"Unknown metric {m!r} in {where}: no diagnostic writes it.{_hint(m, known)}")
    return m


def _metrics(
    value: Any,
    where: str,
    metric_names: Sequence[str] | None,
    default: Sequence[str] | None,
    known: Sequence[str] | None = None,
) -> list[str]:
    if value is None:
        if default is None:
            raise ValueError(
                f"{where} names no metrics and no default set is known here: add 'metrics: [...]' to the item"
            )
        return list(default)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"{where} must be a metric name or a non-empty list of them, got {value!r}")
    return [_check_metric(m, f"{where}[{i}]", metric_names, known) for i, m in enumerate(value)]


def _settings_list(value: Any, where: str, setting_names: Sequence[str]) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"{where} must be a setting name or a non-empty list of them, got {value!r}")
    return [_setting(s, f"{where}[{i}]", setting_names) for i, s in enumerate(value)]


def _selected(item: Mapping[str, Any], where: str, refs: Sequence[SettingRef]) -> list[SettingRef]:
    """The settings an item may use: all, narrowed by ``settings``, ``compressors`` and ``budgets``."""
    names = [r.name for r in refs]
    out = list(refs)
    if "settings" in item:
        keep = set(_settings_list(item["settings"], f"{where}.settings", names))
        out = [r for r in out if r.name in keep]
    if "compressors" in item:
        comps = _compressors(item["compressors"], where, refs)
        out = [r for r in out if r.compressor in comps]
    if "budgets" in item:
        keys = _budget_keys(item["budgets"], where, refs)
        out = [r for r in out if _budget_key(r.budget) in keys]
    return out


def _compressors(value: Any, where: str, refs: Sequence[SettingRef]) -> Sequence[Any]:
    """An item's ``compressors`` (a name or a list), each one some setting uses."""
    comps = [value] if isinstance(value, str) else value
    known = list(dict.fromkeys(r.compressor for r in refs if r.compressor is not None))
    if not isinstance(comps, (list, tuple)) or not comps:
        raise ValueError(f"{where}.compressors must be a compressor name or a non-empty list of them")
    for i, c in enumerate(comps):
        if c not in known:
            raise ValueError(
                f"Unknown compressor {c!r} in {where}.compressors[{i}]: no setting uses it.{_hint(c, known)}"
            )
    return comps


def _budget_keys(value: Any, where: str, refs: Sequence[SettingRef]) -> set[tuple[str, float]]:
    """The keys (:func:`_budget_key`) of an item's ``budgets`` (one or a list), each one some setting has."""
    budgets = value if isinstance(value, (list, tuple)) else [value]
    known_b = list(dict.fromkeys(r.budget for r in refs if _budget_key(r.budget) is not None))
    keys = set()
    for i, b in enumerate(budgets):
        k = _budget_key(b)
        if k is None or k not in {_budget_key(x) for x in known_b}:
            raise ValueError(f"Unknown budget {b!r} in {where}.budgets[{i}]: no setting has it.{_hint(b, known_b)}")
        keys.add(k)
    return keys


def _same_budget_pairs(refs: Sequence[SettingRef]) -> list[tuple[str, str]]:
    """Every two settings of different compressors with the same nominal budget, in suite order."""
    out = []
    for i, x in enumerate(refs):
        for y in (r for r in refs[i + 1 :] if r.retrieval == x.retrieval):
            if (k := _budget_key(x.budget)) is not None and k == _budget_key(y.budget) and x.compressor != y.compressor:
                out.append((x.name, y.name))
    return out


def _budget_step_pairs(refs: Sequence[SettingRef]) -> list[tuple[str, str]]:
    """Within each compressor and retrieval (in suite order), budgets from loose to tight: (tighter, next looser)."""
    out: list[tuple[str, str]] = []
    for comp in dict.fromkeys((r.compressor, r.retrieval) for r in refs):
        keyed = [(r, _budget_key(r.budget)) for r in refs if (r.compressor, r.retrieval) == comp]
        for kind in ("fraction", "tokens"):
            steps = sorted((r for r, k in keyed if k is not None and k[0] == kind), key=lambda r: -float(r.budget))
            out.extend((tight.name, loose.name) for loose, tight in itertools.pairwise(steps))
    return out


def _gap_pairs(value: Any, where: str) -> list[Any]:
    if isinstance(value, (list, tuple)) and value and all(isinstance(g, (list, tuple)) for g in value):
        return [(g, f"{where}[{i}]") for i, g in enumerate(value)]
    return [(value, where)]


class _Expander:
    """Expands one family's items into rows (shared validation and the duplicate check across families)."""

    def __init__(self, refs, metric_names, default_metrics, known_metrics):
        self.refs = refs
        self.names = [r.name for r in refs]
        self.metric_names = metric_names
        self.default = default_metrics
        self.known = known_metrics
        self.rows: list[ContrastRow] = []
        self.seen: dict[tuple[str, ...], str] = {}

    def add(self, row: ContrastRow, where: str) -> None:
        if row.a == row.b and row.metric_a == row.metric_b:
            raise ValueError(f"{where} compares {row.a!r} with itself on {row.metric_a!r}: pick two different settings")
        if row.key in self.seen:
            raise ValueError(
                f"{where} declares {row.label!r} again (already in {self.seen[row.key]}): "
                "each contrast may enter the Holm family once"
            )
        self.seen[row.key] = where
        self.rows.append(row)

    def metrics(self, item: Mapping[str, Any], where: str) -> list[str]:
        return _metrics(item.get("metrics"), f"{where}.metrics", self.metric_names, self.default, self.known)

    def item(self, item: Any, i: int, where: str, family: str) -> None:
        if isinstance(item, str):
            m = _SHORTHAND.match(item)
            if not m:
                raise ValueError(
                    f"{where} = {item!r} is not understood: write 'every setting vs <setting>', "
                    "'<a> vs <b>', or a mapping {a: ..., b: ..., metrics: [...]}"
                )
            lhs, rhs = m.group(1), m.group(2)
            every = lhs.lower() in ("every setting", "all settings", "all", "every")
            item = {"vs": rhs} if every else {"a": lhs, "b": rhs}
        elif isinstance(item, Mapping):
            unknown = [k for k in item if k not in ITEM_KEYS]
            if unknown:
                k = str(unknown[0])
                raise ValueError(f"Unknown key {k!r} in {where}.{_hint(k, sorted(ITEM_KEYS))}")
        else:
            raise ValueError(f"{where} must be a string or a mapping, got {type(item).__name__}: {item!r}")
        forms = [k for k in ("gap", "vs", "a", "pairs", "interaction") if k in item]
        if len(forms) != 1:
            raise ValueError(
                f"{where} must have exactly one of 'a'+'b' (a pair), 'vs' (every setting against one), "
                f"'gap' (two metrics within a setting), 'pairs' (same_budget, budget_steps) or 'interaction' "
                f"([[A, B], [C, D]]); got keys {sorted(item)}"
            )
        getattr(self, f"_{forms[0]}")(item, i, where, family)

    def _a(self, item, i, where, family) -> None:
        if "b" not in item:
            raise ValueError(f"{where} has 'a' but no 'b': a pair needs both settings")
        extra = [k for k in ("settings", "compressors", "budgets") if k in item]
        if extra:
            raise ValueError(f"{where}: {extra[0]!r} applies to 'vs', 'gap' and 'pairs' items, not to a pair")
        a = _setting(item["a"], f"{where}.a", self.names)
        b = _setting(item["b"], f"{where}.b", self.names)
        for met in self.metrics(item, where):
            self.add(ContrastRow(a, b, met, met, "pair", i, family), where)

    def _vs(self, item, i, where, family) -> None:
        if "b" in item:
            raise ValueError(f"{where} has both 'vs' and 'b': use one")
        ref = _setting(item["vs"], f"{where}.vs", self.names)
        if "settings" in item and ref in _settings_list(item["settings"], f"{where}.settings", self.names):
            raise ValueError(f"{where}.settings lists the reference {ref!r} itself")
        others = [r.name for r in _selected(item, where, self.refs) if r.name != ref]
        if not others:
            raise ValueError(f"{where} selects no setting besides the reference {ref!r}: widen its filters")
        mets = self.metrics(item, where)
        for s in others:
            for met in mets:
                self.add(ContrastRow(s, ref, met, met, "pair", i, family), where)

    def _gap(self, item, i, where, family) -> None:
        if "b" in item or "metrics" in item:
            raise ValueError(f"{where}: a 'gap' item takes 'gap: [metric1, metric2]' and optional 'settings'")
        sets = [r.name for r in _selected(item, where, self.refs)]
        if not sets:
            raise ValueError(f"{where} selects no setting: widen its filters")
        for g, gwhere in _gap_pairs(item["gap"], f"{where}.gap"):
            if not isinstance(g, (list, tuple)) or len(g) != 2:
                raise ValueError(
                    f"{gwhere} must be two metric names, e.g. [emitted_precision, grounded_precision] "
                    "(or a list of such pairs)"
                )
            m1, m2 = _metrics(list(g), gwhere, self.metric_names, None, self.known)
            if m1 == m2:
                raise ValueError(f"{gwhere} names {m1!r} twice: a gap needs two different metrics")
            for s in sets:
                self.add(ContrastRow(s, s, m1, m2, "gap", i, family), where)

    def _interaction(self, item, i, where, family) -> None:
        a, b, c, d = _families.interaction_settings(item, where, lambda v, w: _setting(v, w, self.names))
        for met in self.metrics(item, where):
            self.add(ContrastRow(a, b, met, met, "interaction", i, family, c, d), where)

    def _pairs(self, item, i, where, family) -> None:
        kind = item["pairs"]
        if kind not in _PAIR_KINDS:
            raise ValueError(f"Unknown pairs {kind!r} in {where}.pairs.{_hint(str(kind), _PAIR_KINDS)}")
        if "b" in item:
            raise ValueError(f"{where}: a 'pairs' item builds its own pairs; drop 'b'")
        refs = _selected(item, where, self.refs)
        pairs = _same_budget_pairs(refs) if kind == "same_budget" else _budget_step_pairs(refs)
        if not pairs:
            what = "two compressors share a nominal budget" if kind == "same_budget" else "a compressor has two budgets"
            raise ValueError(f"{where} (pairs: {kind}) expands to no pair: no {what} among the selected settings")
        mets = self.metrics(item, where)
        for a, b in pairs:
            for met in mets:
                self.add(ContrastRow(a, b, met, met, "pair", i, family), where)


def expand_plan(
    spec: Any,
    settings: Sequence[Any],
    *,
    metric_names: Sequence[str] | None = None,
    default_metrics: Sequence[str] | None = None,
    known_metrics: Sequence[str] | None = None,
    contrasted: Callable[[str], bool] | None = None,
) -> ContrastPlan:
    """Validate ``spec`` (module docstring) and expand it into a :class:`ContrastPlan`.

    ``settings``: the suite's settings, as names (``"<compressor>@<budget>"`` is read as
    compressor and budget) or mappings ``{name, compressor, budget}``.  ``metric_names``:
    the metrics the records carry (checked when given).  ``default_metrics``: the set for
    items that name none (default: the ``metric_names`` that ``contrasted`` accepts; callers pass
    :func:`rageval.diagnostics.contrasted_by_default`: this module knows no catalog).  ``known_metrics``: when the records are not known yet (the suite
    loader), named metrics are checked against these.

    >>> plan = expand_plan({"holm": "family", "families": {"steps": {"pairs": "budget_steps"}}},
    ...                    ["identity", "ext@0.5", "ext@0.25", "ext@0.1"], default_metrics=["answer_f1"])
    >>> [r.label for r in plan.rows], plan.holm
    (['ext@0.25 - ext@0.5: answer_f1', 'ext@0.1 - ext@0.25: answer_f1'], 'family')
    """
    refs = [_ref(s) for s in settings]
    if default_metrics is None and metric_names is not None:
        default_metrics = [m for m in metric_names if contrasted is None or contrasted(m)]
    if spec is None:
        return ContrastPlan((), "suite", ())
    families, prefix, holm, separate = parse_families(spec)
    ex = _Expander(refs, metric_names, default_metrics, known_metrics)
    for family, items in [*families.items(), *separate.items()]:
        base = prefix.format(family=family) if family in families else f"contrasts.separate.{family}"
        if family == _families.INTERACTIONS and isinstance(spec, Mapping) and _families.INTERACTIONS in spec:
            base = f"contrasts.{_families.INTERACTIONS}"
        for i, item in enumerate(items):
            ex.item(item, i, f"{base}[{i}]", family)
    return ContrastPlan(tuple(ex.rows), holm, (*families, *separate), tuple(separate))


def parse_contrasts(
    spec: Any,
    setting_names: Sequence[Any],
    *,
    metric_names: Sequence[str] | None = None,
    default_metrics: Sequence[str] | None = None,
    contrasted: Callable[[str], bool] | None = None,
) -> list[ContrastRow]:
    """The rows of :func:`expand_plan` (every family, in declaration order).

    >>> rows = parse_contrasts("every setting vs identity", ["identity", "ext@0.25", "abs@0.25"], default_metrics=["f1"])
    >>> [r.label for r in rows]
    ['ext@0.25 - identity: f1', 'abs@0.25 - identity: f1']
    >>> parse_contrasts([{"a": "ext@0.52", "b": "identity", "metrics": "answer_f1"}], ["identity", "ext@0.25"])
    Traceback (most recent call last):
    ...
    ValueError: Unknown setting 'ext@0.52' in contrasts[0].a. Did you mean 'ext@0.25'?
    """
    kw = dict(metric_names=metric_names, default_metrics=default_metrics)
    return list(expand_plan(spec, setting_names, contrasted=contrasted, **kw).rows)
