"""Values fixed by construction: the one table of the scores a setting's shape decides before any judge runs.

The metric cards state them (metrics/verification/README.md, metrics/grounded_precision/README.md,
metrics/emitted_precision/README.md); the report reads them from here to mark such a value in its tables and
findings with a one-line reason, and never to present it as an effect (docs/statistics.md#structural-values).

A setting's **facts** come from its ``ok`` records in one pass (:func:`setting_facts`, bounded memory):

* ``no_provenance``: no unit of any record declares ``source_ids`` — declared-span verification has no
  premise, so ``unsupported_declared_span`` is 1.0 for every cited claim;
* ``verbatim``: every unit declares provenance and its text is the join of its declared snippets (one
  space) — the grounded premise is byte-identical to the emitted one, so grounded = emitted and the gap is 0;
* ``no_citations``: no answer sentence cites a unit — no sentence is supported by a citation: citation recall is
  0 and precision 0 (undefined with ``no_citation_precision="undefined"``).  Re-attributability is not among
  them: it judges the units without provenance against the sources and reads no citation.

>>> recs = [{"status": "ok", "setting": {"name": "s"}, "context": {"units": [{"text": "a b", "source_ids": None}]},
...          "answer": {"sentences": [{"citations": [1]}]}}]
>>> setting_facts(recs)["s"]
{'no_provenance': True, 'verbatim': False, 'no_citations': False}
>>> marks = structural_marks(setting_facts(recs), ["unsupported_declared_span", "answer_f1"])["s"]
>>> list(marks), marks["unsupported_declared_span"]["fixed"]
(['unsupported_declared_span'], True)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["STRUCTURAL", "SettingFacts", "Structural", "setting_facts", "structural_marks", "FACTS"]

#: the facts a rule may name (see the module doc)
FACTS = ("no_provenance", "verbatim", "no_citations")


@dataclass(frozen=True)
class Structural:
    """Metric keys (an exact key, or a prefix ending in ``*``) a fact decides, and why; ``fixed``: the fact fixes
    the value itself (never an effect), else it fixes only its relation to another metric (grounded = emitted);
    ``values``: the values a fixed rule leaves a setting's mean (None: undefined), each named in ``reason``."""

    keys: tuple[str, ...]
    fact: str
    reason: str
    fixed: bool = True
    values: tuple[float | None, ...] = ()

    def covers(self, key: str) -> bool:
        return any(key == k or (k.endswith("*") and key.startswith(k[:-1])) for k in self.keys)


#: The table (the cards' "by construction" statements), in the order a mark is looked up.
STRUCTURAL: tuple[Structural, ...] = (
    Structural(
        ("unsupported_declared_span*",),
        "no_provenance",
        "by construction: no unit declares provenance, so declared-span verification has no premise and every "
        "cited claim counts unsupported",
        values=(1.0, None),
    ),
    Structural(
        ("gap_precision", "gap_recall"),
        "verbatim",
        "0 by construction: every unit is the join of its declared snippets, so grounded = emitted",
        values=(0.0, None),
    ),
    Structural(
        ("grounded_precision*", "grounded_recall*"),
        "verbatim",
        "equal to emitted by construction: every unit is the join of its declared snippets (the same premise)",
        fixed=False,
    ),
    Structural(
        (
            "emitted_precision*",
            "emitted_recall*",
            "grounded_precision*",
            "grounded_recall*",
            "gap_precision",
            "gap_recall",
        ),
        "no_citations",
        "by construction: the answers cite no unit, so no sentence is supported by a citation: citation recall is 0 "
        "and precision 0 (undefined when the option no_citation_precision is undefined)",
        values=(0.0, None),
    ),
)


def _verbatim(unit: Mapping[str, Any], sources: Mapping[str, str]) -> bool:
    ids = unit.get("source_ids")
    if not ids or any(i not in sources for i in ids):
        return False
    return " ".join(str(unit.get("text") or "").split()) == " ".join(" ".join(sources[i] for i in ids).split())


def _cites(rec: Mapping[str, Any]) -> bool:
    sentences = (rec.get("answer") or {}).get("sentences") or []
    return any(isinstance(s, Mapping) and s.get("citations") for s in sentences)


class SettingFacts:
    """The facts of each setting accumulated one ``ok`` record at a time (:meth:`add`), read with :meth:`result`."""

    def __init__(self) -> None:
        self._acc: dict[str, list[bool]] = {}  # [any provenance, all verbatim, any citation]

    def add(self, rec: Mapping[str, Any]) -> None:
        if rec.get("status") != "ok":
            return
        slot = self._acc.setdefault(rec["setting"]["name"], [False, True, False])
        units = [u for u in (rec.get("context") or {}).get("units") or [] if isinstance(u, Mapping)]
        slot[0] = slot[0] or any(u.get("source_ids") for u in units)
        if slot[1] and units:  # the sources read only while every unit so far was verbatim
            sources = {
                str(s.get("id")): str(s.get("text") or "") for s in rec.get("sources") or [] if isinstance(s, Mapping)
            }
            slot[1] = all(_verbatim(u, sources) for u in units)
        slot[2] = slot[2] or _cites(rec)

    def result(self) -> dict[str, dict[str, bool]]:
        return {s: {"no_provenance": not a, "verbatim": b, "no_citations": not c} for s, (a, b, c) in self._acc.items()}


def setting_facts(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, bool]]:
    """``{setting: {fact: bool}}`` over the ``ok`` records (one pass; a setting with none has no entry)."""
    facts = SettingFacts()
    for rec in records:
        facts.add(rec)
    return facts.result()


def structural_marks(
    facts: Mapping[str, Mapping[str, bool]], keys: Sequence[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{setting: {metric: {"reason", "fixed"}}}``: the metrics among ``keys`` a rule of :data:`STRUCTURAL`
    decides in each setting (the first rule that applies; settings with no mark are left out)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for s, f in facts.items():
        marks = {}
        for k in keys:
            rule = next((r for r in STRUCTURAL if f.get(r.fact) and r.covers(k)), None)
            if rule is not None:
                marks[k] = {"reason": rule.reason, "fixed": rule.fixed}
        if marks:
            out[s] = marks
    return out
