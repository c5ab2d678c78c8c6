"""The report's audit section: the tables of each second-evaluator audit written into the run directory
(``RUN_DIR/audit-<judge>/audit.json``, by ``rageval audit``), shown in ``report.html`` when one exists
(docs/statistics.md#second-evaluator-audit).  The report only reads them: an audit run after the report
appears once the report is rebuilt (``rageval report RUN_DIR``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rageval.report.tables import fmt, fmt_p

__all__ = ["load_audits", "audit_blocks"]

U = "undefined"
_SCORES = ("emitted_precision", "emitted_recall", "grounded_precision", "grounded_recall")


def load_audits(run_dir: Path) -> list[dict[str, Any]]:
    """Every readable ``audit-*/audit.json`` of ``run_dir`` (folder order); an unreadable one is skipped."""
    out = []
    for p in sorted(Path(run_dir).glob("audit-*/audit.json")):
        try:
            res = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(res, dict) and isinstance(res.get("scores"), list):
            out.append({**res, "folder": p.parent.name})
    return out


def _ci(r: dict[str, Any]) -> str:
    return U if r.get("ci_low") is None else f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"


def _eff(x: Any) -> str:
    return U if x is None else f"{x:+.3f}"


def _tab(columns: list[str], rows: list[list[str]]) -> dict[str, Any]:
    return {"columns": columns, "rows": rows, "links": None}


def _head(a: Mapping[str, Any]) -> Any:
    """The audit's heading line as markup: every value from the audit (folder, judge specs, settings, runs) is
    escaped by :class:`markupsafe.Markup`'s ``format``; only the ``<code>`` elements are markup."""
    from markupsafe import Markup

    sj, fj = a.get("second_judge") or {}, a.get("first_judge") or {}
    params = "".join(f", {k} {v}" for k, v in sorted((sj.get("params") or {}).items()))
    holm = a.get("gaps_holm") or {}
    size = (holm.get("family_size") or {}).get("as_unsupported")
    runs = holm.get("runs") or []
    over = f" of {len(runs)} runs ({', '.join(map(str, runs))})" if len(runs) > 1 else ""
    settings = a.get("settings") or []
    return Markup(
        "<code>{}</code>: second judge <code>{}</code> (threshold {}{}) against <code>{}</code>; {} questions x "
        "{} settings ({}), {}. Planned gaps: Holm over {}{}."
    ).format(
        a["folder"],
        sj.get("spec"),
        sj.get("threshold"),
        params,
        fj.get("spec"),
        len(a.get("questions") or []),
        len(settings),
        ", ".join(map(str, settings)),
        " and ".join(map(str, a.get("modes") or [])),
        size,
        over,
    )


def _gap_row(r: dict[str, Any]) -> list[str]:
    holm = fmt_p(r.get("p_holm"), na=U) if r.get("planned") else "not planned"
    return [r["setting"], r["evaluator"], r["gap"], _eff(r.get("effect")), _ci(r), fmt_p(r.get("p_value"), na=U), holm]


def _cross_row(r: dict[str, Any]) -> list[str]:
    return [r["setting"], r["mode"], r["metric"], _eff(r.get("effect")), _ci(r), fmt_p(r.get("p_holm"), na=U)]


def audit_blocks(audits: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per audit: a heading line and its scores, planned gaps (with Holm p) and cross-judge tables (abstentions
    counted as not supported, as the paper scored its non-binary generations)."""
    way = "as_unsupported"
    blocks = []
    for a in audits:
        scores = [
            [r["setting"], r["evaluator"], *[fmt(r.get(m), 3, na=U) for m in _SCORES]]
            for r in a["scores"]
            if r.get("abstentions") == way
        ]
        gaps = [_gap_row(r) for r in a.get("gaps") or [] if r.get("abstentions") == way]
        cross = [_cross_row(r) for r in a.get("cross_judge") or [] if r.get("abstentions") == way]
        blocks.append(
            {
                "head": _head(a),
                "scores": _tab(["setting", "evaluator", "emitted P", "emitted R", "grounded P", "grounded R"], scores),
                "gaps": _tab(["setting", "evaluator", "gap", "emitted − grounded", "95% CI", "p", "p (Holm)"], gaps),
                "cross": _tab(["setting", "mode", "metric", "second − first", "95% CI", "p (Holm)"], cross),
            }
        )
    return blocks
