"""What an audit looks at: the settings that ran, the questions ok in all of them, the seeded subsample, and each
audited record with the first judge's values (its saved scores and per-sentence decisions, its recovered ids
checked).

Nothing here calls a judge: the engine scores the sample with the second judge (:mod:`rageval.audit.run`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rageval.diagnostics.attribution.fixed import saved_recovery
from rageval.errors import ConfigError
from rageval.registry import did_you_mean
from rageval.types import Record

__all__ = ["AuditError", "AuditItem", "SCORES", "select_sample", "select_settings", "ok_cohort", "build_items"]

SCORES = ("emitted_precision", "emitted_recall", "grounded_precision", "grounded_recall")


class AuditError(ConfigError):
    """A run that cannot be audited as asked; the message names what, where and the fix."""


def select_sample(question_ids: Sequence[str], n: int, seed: int) -> list[str]:
    """``n`` of ``question_ids`` drawn without replacement with ``np.random.default_rng(seed)``, in their order.

    >>> select_sample(["q1", "q2", "q3", "q4"], 2, seed=0) == select_sample(["q1", "q2", "q3", "q4"], 2, seed=0)
    True
    """
    ids = list(question_ids)
    if n >= len(ids):
        return ids
    pick = set(np.random.default_rng(seed).choice(len(ids), size=n, replace=False).tolist())
    return [q for i, q in enumerate(ids) if i in pick]


def select_settings(run, wanted: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """``(audited, left out)``: the wanted settings (default: every setting) that ran, and those that did not
    (no ok record, e.g. unavailable weights: left out as the common cohort leaves them out)."""
    names = run.setting_names
    for s in wanted or ():
        if s not in names:
            hint = did_you_mean(s, names) or f" Known: {', '.join(names)}."
            raise AuditError(f"audit setting {s!r} is not a setting of this run.{hint}")
    chosen = [s for s in names if not wanted or s in set(wanted)]
    ran = {r["setting"]["name"] for r in run.records if r["status"] == "ok"}
    return [s for s in chosen if s in ran], [s for s in chosen if s not in ran]


def ok_cohort(run, settings: Sequence[str]) -> list[str]:
    """Questions whose records are ok in every audited setting, in the run's question order."""
    status: dict[tuple[str, str], str] = {(r["question_id"], r["setting"]["name"]): r["status"] for r in run.records}
    order = list(dict.fromkeys(r["question_id"] for r in run.records))
    return [q for q in order if all(status.get((q, s)) == "ok" for s in settings)]


@dataclass
class AuditItem:
    """One audited record (as read, and as the engine scores it again), the first judge's values and the second
    judge's per mode."""

    record: dict[str, Any]
    saved: Record
    first: dict[str, Any]
    second: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return self.record["question_id"], self.record["setting"]["name"]


def _check_recovery(rec: Mapping[str, Any], where: str) -> None:
    """The first judge's recovered ids (``extra.attribution.recovery``), read as fixed mappings read them."""
    try:
        saved_recovery(rec.get("extra") or {})
    except ValueError as err:
        raise AuditError(f"{where}: {err}") from None


def _first(rec: Mapping[str, Any], where: str) -> dict[str, Any]:
    metrics = rec.get("metrics") or {}
    missing = [m for m in SCORES if m not in metrics]
    if missing:
        raise AuditError(
            f"{where}: the record carries no {', '.join(missing)}: the audit needs the run's citation scores "
            "(diagnostics emitted_* and grounded_*); add them and rescore the run (rageval rescore RUN_DIR)"
        )
    details = (rec.get("extra") or {}).get("attribution")
    if not isinstance(details, Mapping) or not isinstance(details.get("sentences"), list):
        raise AuditError(
            f"{where}: the record carries no per-sentence decisions (extra.attribution.sentences): "
            "rescore the run first (rageval rescore RUN_DIR)"
        )
    out = {k: metrics.get(k) for m in SCORES for k in (m, f"{m}_excl_abstain")}
    out["judge_abstentions"] = metrics.get("judge_abstentions")
    out["sentences"] = details["sentences"]
    return out


def build_items(run, settings: Sequence[str], sample: Sequence[str]) -> list[AuditItem]:
    """The ok records of the sampled questions in the audited settings (settings, then sample order)."""
    wanted = set(sample)
    order = {q: i for i, q in enumerate(sample)}
    sorder = {s: i for i, s in enumerate(settings)}
    recs = [
        r for r in run.records if r["question_id"] in wanted and r["setting"]["name"] in sorder and r["status"] == "ok"
    ]
    recs.sort(key=lambda r: (sorder[r["setting"]["name"]], order[r["question_id"]]))
    items = []
    for r in recs:
        where = f"records.jsonl line {r.get('_line')} ({r['question_id']}, {r['setting']['name']})"
        _check_recovery(r, where)
        clean = {k: v for k, v in r.items() if k != "_line"}
        items.append(AuditItem(record=r, saved=Record.from_dict(clean), first=_first(r, where)))
    return items
