"""The audit's files: ``audit.json`` (every number), ``audit.md`` (the tables), one CSV per table and
``records.jsonl`` (each audited record's scores under both judges)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rageval.escape import md_code, md_text
from rageval.io import json_text, write_text_atomic
from rageval.report.tables import fmt, fmt_p, to_csv, to_markdown

__all__ = ["write_audit", "audit_markdown"]

U = "undefined"


def _f(x: Any, d: int = 3) -> str:
    return fmt(x, d, na=U)


def _ci(r: dict[str, Any]) -> str:
    return U if r.get("ci_low") is None else f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"


def _eff(x: Any) -> str:
    return U if x is None else f"{x:+.3f}"


def _scores_md(result: dict[str, Any], way: str) -> str:
    cols = ["setting", "evaluator", "emitted P", "emitted R", "grounded P", "grounded R", "n"]
    rows = [
        [
            r["setting"],
            r["evaluator"],
            *[_f(r[m]) for m in ("emitted_precision", "emitted_recall", "grounded_precision", "grounded_recall")],
            str(r["emitted_precision_n"]),
        ]
        for r in result["scores"]
        if r["abstentions"] == way
    ]
    return to_markdown(cols, rows, align=["l", "l"] + ["r"] * 5)


def _params(judge: dict[str, Any]) -> str:
    params = judge.get("params") or {}
    return "".join(f"; {md_text(k)} {md_text(v)}" for k, v in sorted(params.items()))


def _warning(result: dict[str, Any]) -> str | None:
    return (result.get("resolution") or {}).get("warning")


def _gaps_family(result: dict[str, Any]) -> str:
    """The planned gaps' Holm family in one sentence: its size, the runs adjusted together, the replicates."""
    h = result.get("gaps_holm") or {}
    size = (h.get("family_size") or {}).get("as_unsupported", 0)
    runs = h.get("runs") or [result["run"]]
    over = f"the {len(runs)} audits {', '.join(map(md_code, runs))} together" if len(runs) > 1 else "this audit"
    line = (
        f"Holm over the {size} planned gaps of {over} (the second judge's precision gaps, per audited setting and "
        f"mode), one family per abstention rule; p from "
        f"{result.get('n_gap_test_resamples') or result['n_resamples']:,} sign flips. The second judge's recall "
        "gaps are reported outside the family, the first judge's gaps are the run's own (the report's "
        "`emitted_vs_grounded` family) and the pooled rows summarise: raw p only.\n"
    )
    warning = (result.get("gaps_resolution") or {}).get("warning")
    return line + (f"\n**Warning:** {warning}\n" if warning else "")


def audit_markdown(result: dict[str, Any]) -> str:
    fj, sj = result["first_judge"], result["second_judge"]
    lines = [
        "# Second-evaluator audit\n",
        (
            f"Run {md_code(result['run'])} (suite **{md_text(result['suite'])}**). First judge: {md_code(fj['spec'])} "
            f"(threshold {fj['threshold']}), its values as the run recorded them. Second judge: {md_code(sj['spec'])} "
            "(threshold "
            f"{sj['threshold']}{_params(sj)}) in {' and '.join(result['modes'])}."
        ),
        (
            f"Sample: **{len(result['questions'])}** questions (of {result['n_cohort']} ok in every audited "
            f"setting; {result['n_requested']} asked; seed {result['seed']}) x {len(result['settings'])} settings "
            f"({', '.join(map(md_text, result['settings']))}) = {result['n_records']} records. Intervals: 95% percentile "
            f"bootstrap ({result['n_resamples']:,} replicates), p: two-sided paired sign-flip "
            f"({result.get('n_test_resamples', result['n_resamples']):,} replicates in the Holm-adjusted "
            "cross-judge table)."
        ),
        *([f"**Warning:** {_warning(result)}"] if _warning(result) else []),
        *(
            [
                f"Left out (no ok record: the setting did not run): {', '.join(map(md_text, result['settings_left_out']))}."
            ]
            if result.get("settings_left_out")
            else []
        ),
        "",
        "## Citation scores under both judges\n",
        "A judge abstention counted as not supported (as the paper scored its non-binary generations):\n",
        _scores_md(result, "as_unsupported"),
        "\nAbstentions left out:\n",
        _scores_md(result, "left_out"),
        "\n## Emitted − grounded gaps under each judge (paired, per question)\n",
        _gaps_family(result),
    ]
    cols = ["setting", "evaluator", "abstentions", "gap", "effect", "95% CI", "p", "p (Holm)", "n (dropped)", "note"]
    rows = [
        [
            r["setting"],
            r["evaluator"],
            r["abstentions"].replace("_", " "),
            r["gap"],
            _eff(r["effect"]),
            _ci(r),
            fmt_p(r["p_value"], na=U),
            fmt_p(r.get("p_holm"), na=U),
            f"{r['n']} ({r['n_dropped']})",
            r["note"] or "",
        ]
        for r in result["gaps"]
    ]
    lines.append(to_markdown(cols, rows, align=["l"] * 4 + ["r"] * 5 + ["l"]))
    fam = next((r.get("holm_family_size") for r in result["cross_judge"]), 0)
    lines.append(
        "\n## Cross-judge differences (second − first)\n\n"
        f"Holm over the {fam} per-setting rows of each abstention rule; the pooled rows summarise and are not tested "
        "again.\n"
    )
    cols = ["setting", "mode", "abstentions", "metric", "first", "second", "difference", "95% CI", "p", "p (Holm)", "n"]
    rows = [
        [
            r["setting"],
            r["mode"],
            r["abstentions"].replace("_", " "),
            r["metric"],
            _f(r["mean_first"]),
            _f(r["mean_second"]),
            _eff(r["effect"]),
            _ci(r),
            fmt_p(r["p_value"], na=U),
            fmt_p(r.get("p_holm"), na=U),
            str(r["n"]),
        ]
        for r in result["cross_judge"]
    ]
    lines.append(to_markdown(cols, rows, align=["l"] * 4 + ["r"] * 7))
    lines.append(
        "\n## Agreement of the two judges\n\n"
        "Per judged pair: the joint decision of each sentence with a premise, and each citation's precision "
        "(a citation of an unsupported sentence counts as imprecise). Under fixed mappings the two judges read "
        "the same premises. Confusion: rows the first judge's label (0, 1), columns the second's; pairs where "
        "either judge abstained are left out and counted.\n"
    )
    cols = [
        "setting",
        "premise",
        "decision",
        "n",
        "agreement",
        "Cohen's κ",
        "confusion [[00, 01], [10, 11]]",
        "left out",
    ]
    rows = [
        [
            r["setting"],
            r["premise"],
            r["decision"],
            str(r["n"]),
            _f(r["rate"]),
            _f(r["kappa"]),
            str(r["confusion"]),
            str(r["n_missing"]),
        ]
        for r in result["agreement"]
    ]
    lines.append(to_markdown(cols, rows, align=["l"] * 3 + ["r"] * 5))
    lines.append(
        "\n## Judge abstentions\n\n"
        "Sentences with an abstained gate decision; `judge abstentions`: the engine's count (the first judge's "
        "covers every attribution part the run scored, the second judge's the audit's recovery and gate).\n"
    )
    cols = [
        "setting",
        "evaluator",
        "sentences (emitted)",
        "sentences (grounded)",
        "judge abstentions",
        "records with any",
        "records",
    ]
    rows = [
        [
            r["setting"],
            r["evaluator"],
            str(r["sentences_abstained_emitted"]),
            str(r["sentences_abstained_grounded"]),
            fmt(r["judge_abstentions"], na=U),
            str(r["records_with_abstentions"]),
            str(r["records"]),
        ]
        for r in result["abstentions"]
    ]
    lines.append(to_markdown(cols, rows, align=["l", "l"] + ["r"] * 5))
    st = result.get("second_judge_stats") or {}
    if st:
        lines.append(
            "\nSecond judge's runner: "
            + ", ".join(
                f"{k} {v}" for k, v in sorted(st.items()) if k in ("requested", "executed", "cache_hits", "abstained")
            )
            + " (pairs; executed = scored by the model in this invocation, the rest answered from memory or the "
            "disk cache).\n"
        )
    return "\n".join(lines)


def _agreement_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for r in result["agreement"]:
        (n00, n01), (n10, n11) = r["confusion"]
        out.append({**{k: v for k, v in r.items() if k != "confusion"}, "n00": n00, "n01": n01, "n10": n10, "n11": n11})
    return out


def write_audit(out: Path, result: dict[str, Any], items: Sequence[Any], modes: Sequence[str]) -> dict[str, Path]:
    files = {
        "audit_json": out / "audit.json",
        "audit_md": out / "audit.md",
        "scores_csv": out / "scores.csv",
        "gaps_csv": out / "gaps.csv",
        "cross_judge_csv": out / "cross_judge.csv",
        "agreement_csv": out / "agreement.csv",
        "abstentions_csv": out / "abstentions.csv",
        "records_jsonl": out / "records.jsonl",
    }
    body = {k: v for k, v in result.items() if k != "files"}
    write_text_atomic(files["audit_json"], to_json({**body, "files": {k: str(v) for k, v in files.items()}}))
    write_text_atomic(files["audit_md"], audit_markdown(result))
    for name, rows in (
        ("scores", result["scores"]),
        ("gaps", result["gaps"]),
        ("cross_judge", result["cross_judge"]),
        ("agreement", _agreement_rows(result)),
        ("abstentions", result["abstentions"]),
    ):
        cols = list(dict.fromkeys(k for r in rows for k in r))
        write_text_atomic(files[f"{name}_csv"], to_csv(cols, rows))

    lines = "".join(json_text(r, default=str) + "\n" for r in item_rows(items, modes))
    write_text_atomic(files["records_jsonl"], lines)
    return files


def item_rows(items: Sequence[Any], modes: Sequence[str]) -> list[dict[str, Any]]:
    """One JSON line per audited record: the first and second judge's scores (no per-sentence details)."""
    out = []
    for it in items:
        row: dict[str, Any] = {"question_id": it.key[0], "setting": it.key[1]}
        row["first"] = {k: v for k, v in it.first.items() if k != "sentences"}
        for mode in modes:
            row[f"second_{mode}"] = {k: v for k, v in it.second[mode].items() if k not in ("sentences",)}
        out.append(row)
    return out


def to_json(obj: Any) -> str:
    return json_text(obj, indent=1, default=str) + "\n"
