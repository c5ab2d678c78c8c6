"""The contrast spec of a suite: which paired comparisons form the Holm family.

Format (the ``contrasts:`` field of a suite YAML; a single item may stand alone)::

    contrasts:
      # every other setting against a reference: effect = setting - reference
      - every setting vs identity                 # metrics: the default set
      - {vs: identity, metrics: [answer_f1, grounded_precision]}
      - {vs: identity, settings: [extractive@0.25, abstractive@0.25], metrics: answer_f1}
      # one pair: effect = a - b
      - {a: extractive@0.25, b: identity, metrics: [answer_f1]}
      - extractive@0.25 vs identity               # the same, default metrics
      # a within-setting gap between two metrics: effect = first - second
      - {gap: [emitted_precision, grounded_precision], settings: [abstractive@0.25]}
      - {gap: [emitted_precision, grounded_precision]}   # every setting

Each (pair or gap) x metric is one **row** of the family; Holm adjusts over every
row the suite declares.  ``metrics`` is a name or a list; omitted, it is the
default set: every metric the records carry whose direction the diagnostics
catalog declares (higher or lower is better, :func:`rageval.diagnostics.direction_of`),
in that order, except secondary views such as ``*_excl_abstain`` (shown in the
summary beside their main metric; name them to contrast them); a key the catalog
does not declare has no direction, whatever its name.  Unknown settings and metrics, unknown keys, self-contrasts and rows
declared twice are errors that name the item and the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from rageval.diagnostics import contrasted_by_default, direction_of
from rageval.registry import did_you_mean

__all__ = ["ContrastRow", "parse_contrasts", "metric_direction"]

_ITEM_KEYS = {"a", "b", "vs", "settings", "metrics", "gap"}
_SHORTHAND = re.compile(r"^\s*(.+?)\s+vs\.?\s+(.+?)\s*$")


@dataclass(frozen=True)
class ContrastRow:
    """One row of the family: ``mean(metric_a @ a) - mean(metric_b @ b)`` over paired questions."""

    a: str
    b: str
    metric_a: str
    metric_b: str
    kind: str  # "pair" | "gap"
    item: int  # index of the declaring item in the spec

    @property
    def metric(self) -> str:
        return self.metric_a if self.metric_a == self.metric_b else f"{self.metric_a} - {self.metric_b}"

    @property
    def label(self) -> str:
        if self.kind == "gap":
            return f"{self.a}: {self.metric_a} - {self.metric_b}"
        return f"{self.a} - {self.b}: {self.metric_a}"

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.a, self.b, self.metric_a, self.metric_b)


#: the former name of :func:`rageval.diagnostics.direction_of`
metric_direction = direction_of


def _hint(name: str, known: Sequence[str]) -> str:
    return did_you_mean(name, known, cutoff=0.5) or f" Known: {', '.join(known) if known else '(none)'}."


def _setting(value: Any, where: str, setting_names: Sequence[str]) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a setting name (a string), got {value!r}")
    if value not in setting_names:
        raise ValueError(f"Unknown setting {value!r} in {where}.{_hint(value, setting_names)}")
    return value


def _metrics(value: Any, where: str, metric_names: Sequence[str] | None, default: Sequence[str] | None) -> list[str]:
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
    out = []
    for i, m in enumerate(value):
        if not isinstance(m, str):
            raise ValueError(f"{where}[{i}] must be a metric name (a string), got {m!r}")
        if metric_names is not None and m not in metric_names:
            raise ValueError(f"Unknown metric {m!r} in {where}[{i}]: no record carries it.{_hint(m, metric_names)}")
        out.append(m)
    return out


def _settings_list(value: Any, where: str, setting_names: Sequence[str]) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"{where} must be a setting name or a non-empty list of them, got {value!r}")
    return [_setting(s, f"{where}[{i}]", setting_names) for i, s in enumerate(value)]


def parse_contrasts(
    spec: Any,
    setting_names: Sequence[str],
    *,
    metric_names: Sequence[str] | None = None,
    default_metrics: Sequence[str] | None = None,
) -> list[ContrastRow]:
    """Validate ``spec`` (module docstring) and expand it into family rows.

    ``setting_names``: the suite's settings.  ``metric_names``: the metrics the records
    carry (checked when given).  ``default_metrics``: the set for items that name none
    (default: every name in ``metric_names`` whose catalog direction is higher or lower).

    >>> rows = parse_contrasts("every setting vs identity", ["identity", "ext@0.25", "abs@0.25"],
    ...                        default_metrics=["answer_f1"])
    >>> [r.label for r in rows]
    ['ext@0.25 - identity: answer_f1', 'abs@0.25 - identity: answer_f1']
    >>> parse_contrasts([{"a": "ext@0.52", "b": "identity", "metrics": "answer_f1"}], ["identity", "ext@0.25"])
    Traceback (most recent call last):
    ...
    ValueError: Unknown setting 'ext@0.52' in contrasts[0].a. Did you mean 'ext@0.25'?
    """
    setting_names = list(setting_names)
    if default_metrics is None and metric_names is not None:
        default_metrics = [m for m in metric_names if contrasted_by_default(m)]
    if spec is None:
        return []
    items = spec if isinstance(spec, (list, tuple)) else [spec]
    rows: list[ContrastRow] = []
    seen: dict[tuple[str, str, str, str], int] = {}

    def add(row: ContrastRow, where: str) -> None:
        if row.a == row.b and row.metric_a == row.metric_b:
            raise ValueError(f"{where} compares {row.a!r} with itself on {row.metric_a!r}: pick two different settings")
        if row.key in seen:
            raise ValueError(
                f"{where} declares {row.label!r} again (already in contrasts[{seen[row.key]}]): "
                "each contrast may enter the Holm family once"
            )
        seen[row.key] = row.item
        rows.append(row)

    for i, item in enumerate(items):
        where = f"contrasts[{i}]"
        if isinstance(item, str):
            m = _SHORTHAND.match(item)
            if not m:
                raise ValueError(
                    f"{where} = {item!r} is not understood: write 'every setting vs <setting>', "
                    "'<a> vs <b>', or a mapping {a: ..., b: ..., metrics: [...]}"
                )
            lhs, rhs = m.group(1), m.group(2)
            item = (
                {"vs": rhs}
                if lhs.lower() in ("every setting", "all settings", "all", "every")
                else {"a": lhs, "b": rhs}
            )
            item_where = where
        elif isinstance(item, dict):
            item_where = where
            unknown = [k for k in item if k not in _ITEM_KEYS]
            if unknown:
                k = str(unknown[0])
                raise ValueError(f"Unknown key {k!r} in {where}.{_hint(k, sorted(_ITEM_KEYS))}")
        else:
            raise ValueError(f"{where} must be a string or a mapping, got {type(item).__name__}: {item!r}")

        forms = [k for k in ("gap", "vs", "a") if k in item]
        if len(forms) != 1:
            raise ValueError(
                f"{item_where} must have exactly one of 'a'+'b' (a pair), 'vs' (every setting against one) "
                f"or 'gap' (two metrics within a setting); got keys {sorted(item)}"
            )
        form = forms[0]
        if form == "a":
            if "b" not in item:
                raise ValueError(f"{item_where} has 'a' but no 'b': a pair needs both settings")
            if "settings" in item:
                raise ValueError(f"{item_where}: 'settings' applies to 'vs' and 'gap' items, not to a pair")
            a = _setting(item["a"], f"{item_where}.a", setting_names)
            b = _setting(item["b"], f"{item_where}.b", setting_names)
            for met in _metrics(item.get("metrics"), f"{item_where}.metrics", metric_names, default_metrics):
                add(ContrastRow(a, b, met, met, "pair", i), item_where)
        elif form == "vs":
            if "b" in item:
                raise ValueError(f"{item_where} has both 'vs' and 'b': use one")
            ref = _setting(item["vs"], f"{item_where}.vs", setting_names)
            others = (
                _settings_list(item["settings"], f"{item_where}.settings", setting_names)
                if "settings" in item
                else [s for s in setting_names if s != ref]
            )
            mets = _metrics(item.get("metrics"), f"{item_where}.metrics", metric_names, default_metrics)
            for s in others:
                if s == ref:
                    raise ValueError(f"{item_where}.settings lists the reference {ref!r} itself")
                for met in mets:
                    add(ContrastRow(s, ref, met, met, "pair", i), item_where)
        else:
            if "b" in item or "metrics" in item:
                raise ValueError(f"{item_where}: a 'gap' item takes 'gap: [metric1, metric2]' and optional 'settings'")
            g = item["gap"]
            if not isinstance(g, (list, tuple)) or len(g) != 2:
                raise ValueError(
                    f"{item_where}.gap must be two metric names, e.g. [emitted_precision, grounded_precision]"
                )
            m1, m2 = _metrics(list(g), f"{item_where}.gap", metric_names, None)
            if m1 == m2:
                raise ValueError(f"{item_where}.gap names {m1!r} twice: a gap needs two different metrics")
            sets = (
                _settings_list(item["settings"], f"{item_where}.settings", setting_names)
                if "settings" in item
                else list(setting_names)
            )
            for s in sets:
                add(ContrastRow(s, s, m1, m2, "gap", i), item_where)
    return rows
