"""The report's judge-error correction (``rageval report RUN --human-labels FILE``): PPI++ means and contrasts
from human labels on a sample of the run's questions, beside the judge-only ones (docs/score.md#human-labels,
docs/statistics.md#judge-error).

:func:`ppi_section` computes the ``ppi`` section of ``report.json`` (:mod:`rageval.labels` applies the labels,
:mod:`rageval.labels.correct` the estimators); :func:`ppi_csv` and :func:`ppi_markdown` write ``ppi.csv`` and
``ppi.md``; :func:`ppi_blocks` the tables of ``report.html``.  A run reported without labels has no section and no
file of it: its outputs are those of a report without this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rageval.escape import csv_text, md_code, md_text
from rageval.labels.correct import contrast_rows, ppi_rows
from rageval.report.result import Analysis
from rageval.report.tables import fmt, fmt_p

__all__ = ["ppi_section", "ppi_csv", "ppi_markdown", "ppi_blocks", "PPI_COLUMNS"]

U = "undefined"

#: the columns of ``ppi.csv`` (one row per setting mean, then one per contrast)
PPI_COLUMNS = (
    "kind",
    "setting",
    "a",
    "b",
    "metric",
    "n_labelled",
    "n_unlabelled",
    "n_undefined",
    "judge_estimate",
    "judge_ci_low",
    "judge_ci_high",
    "judge_p_holm",
    "ppi_estimate",
    "ppi_ci_low",
    "ppi_ci_high",
    "ppi_p_value",
    "ppi_p_holm",
    "human_only",
    "bias",
    "effective_n",
    "lam",
    "flip",
)


def ppi_section(run: Any, an: Analysis, labels_file: str | Path) -> dict[str, Any]:
    """The ``ppi`` section of ``report.json`` for ``run`` (a loaded :class:`~rageval.report.load.Run`) and its
    analysis ``an`` with the labels of ``labels_file`` (a :class:`~rageval.labels.export.LabelError`, a
    ``ValueError``, for a file whose ids are not the run's)."""
    from rageval.labels.apply import human_values
    from rageval.labels.export import run_records
    from rageval.labels.pairs import NOT_CORRECTED, PPI_METRICS

    pairs = run_records(run.path)
    human = human_values(run.path, labels_file, run=pairs)
    settings = [r["setting"] for r in an.summary]
    cohort = [q for q, recs in pairs.by_question.items() if all(s in recs for s in settings)]
    judge = {q: {s: dict(recs[s].metrics or {}) for s in settings} for q, recs in pairs.by_question.items()}
    clusters = dict(run.clusters) if an.suite.get("cluster_key") else None
    alpha = round(1.0 - float(an.confidence), 10)
    metrics = [m for m in PPI_METRICS if m in an.metric_names]
    declared = [
        c
        for c in an.contrasts
        if c.get("kind") != "gap" and c["metric"] in metrics and c.get("metric_a", c["metric"]) == c["metric"]
    ]
    means = ppi_rows(cohort, settings, metrics, judge, human.values, clusters=clusters, alpha=alpha)
    contrasts = contrast_rows(cohort, declared, judge, human.values, clusters=clusters, alpha=alpha)
    present = {k for c in an.metric_names for k in NOT_CORRECTED if c == k}
    return {
        "labels": human.summary(),
        "cohort": len(cohort),
        "alpha": alpha,
        "clustered": clusters is not None,
        "means": means,
        "contrasts": contrasts,
        "holm": {"ppi_family_size": len(contrasts), "judge_family": "the report's contrasts (p_holm)"},
        "not_corrected": {k: NOT_CORRECTED[k] for k in sorted(present)},
    }


def _row_values(r: Mapping[str, Any], kind: str) -> dict[str, Any]:
    mean = kind == "mean"
    return {
        "kind": kind,
        "setting": r.get("setting") if mean else None,
        "a": None if mean else r.get("a"),
        "b": None if mean else r.get("b"),
        "metric": r["metric"],
        "n_labelled": r.get("n_labelled"),
        "n_unlabelled": r.get("n_unlabelled"),
        "n_undefined": r.get("n_undefined"),
        "judge_estimate": r.get("judge_mean") if mean else r.get("judge_effect"),
        "judge_ci_low": r.get("judge_ci_low"),
        "judge_ci_high": r.get("judge_ci_high"),
        "judge_p_holm": None if mean else r.get("judge_p_holm"),
        "ppi_estimate": r.get("estimate"),
        "ppi_ci_low": r.get("ci_low"),
        "ppi_ci_high": r.get("ci_high"),
        "ppi_p_value": None if mean else r.get("p_value"),
        "ppi_p_holm": None if mean else r.get("p_holm"),
        "human_only": r.get("human_mean") if mean else r.get("human_mean_diff"),
        "bias": r.get("bias"),
        "effective_n": r.get("effective_n"),
        "lam": r.get("lam"),
        "flip": None if mean else r.get("flip"),
    }


def _rows(ppi: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [_row_values(r, "mean") for r in ppi.get("means") or []] + [
        _row_values(r, "contrast") for r in ppi.get("contrasts") or []
    ]


def _num(x: Any) -> Any:
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.6g}"
    return x


def ppi_csv(ppi: Mapping[str, Any]) -> str:
    """``ppi.csv``: one row per setting mean, then per contrast (:data:`PPI_COLUMNS`; empty: undefined)."""
    return csv_text([list(PPI_COLUMNS)] + [[r[c] for c in PPI_COLUMNS] for r in _rows(ppi)], number=_num)


def _ci(lo: Any, hi: Any, signed: bool = False) -> str:
    if lo is None or hi is None:
        return U
    return f"[{lo:+.3f}, {hi:+.3f}]" if signed else f"[{lo:.3f}, {hi:.3f}]"


def _head(ppi: Mapping[str, Any]) -> str:
    lab = ppi["labels"]
    text = (
        f"{lab['labels']} human labels: {lab['questions_labelled']} of {ppi['cohort']} cohort questions labelled "
        f"({lab['questions_unlabelled']} named in the file left unlabelled: {lab['unlabelled_pairs']} pairs without "
        f"a label)"
    )
    if ppi.get("clustered"):
        text += "; intervals cluster-robust"
    return text + "."


def _mean_cells(r: Mapping[str, Any]) -> list[str]:
    return [
        r["setting"],
        r["metric"],
        str(r["n_labelled"]),
        fmt(r.get("judge_mean"), 3, na=U),
        _ci(r.get("judge_ci_low"), r.get("judge_ci_high")),
        fmt(r.get("estimate"), 3, na=U),
        _ci(r.get("ci_low"), r.get("ci_high")),
        fmt(r.get("human_mean"), 3, na=U),
        U if r.get("bias") is None else f"{r['bias']:+.3f}",
        fmt(r.get("effective_n"), 1, na=U),
    ]


MEAN_HEAD = [
    "setting",
    "metric",
    "labelled",
    "judge",
    "judge 95% CI",
    "PPI++",
    "PPI++ 95% CI",
    "human",
    "bias",
    "eff. n",
]
CONTRAST_HEAD = [
    "A",
    "B",
    "metric",
    "labelled",
    "judge A − B",
    "judge CI",
    "judge Holm p",
    "PPI++ A − B",
    "PPI++ CI",
    "PPI++ Holm p",
    "flip",
]


def _contrast_cells(r: Mapping[str, Any]) -> list[str]:
    return [
        r["a"],
        r["b"],
        r["metric"],
        str(r["n_labelled"]),
        U if r.get("judge_effect") is None else f"{r['judge_effect']:+.3f}",
        _ci(r.get("judge_ci_low"), r.get("judge_ci_high"), True),
        fmt_p(r.get("judge_p_holm"), na=U),
        U if r.get("estimate") is None else f"{r['estimate']:+.3f}",
        _ci(r.get("ci_low"), r.get("ci_high"), True),
        fmt_p(r.get("p_holm"), na=U),
        r.get("flip") or "",
    ]


def ppi_markdown(ppi: Mapping[str, Any]) -> str:
    """``ppi.md``: the labels' counts, the means and the contrasts."""

    def table(head: Sequence[str], rows: Sequence[Sequence[str]], code: int) -> list[str]:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for cells in rows:
            out.append("| " + " | ".join(md_code(c) if i < code else md_text(c) for i, c in enumerate(cells)) + " |")
        return out

    lines = ["# Judge-error correction (PPI++)", "", md_text(_head(ppi)), ""]
    lines += ["## Setting means", ""]
    lines += table(MEAN_HEAD, [_mean_cells(r) for r in ppi["means"]], 2) + [""]
    if ppi["contrasts"]:
        lines += ["## Contrasts", ""]
        lines += [
            md_text(
                f"PPI++ p-values Holm-adjusted as one family of {ppi['holm']['ppi_family_size']}; the judge-only Holm "
                "p is the report's (contrasts.md)."
            ),
            "",
        ]
        lines += table(CONTRAST_HEAD, [_contrast_cells(r) for r in ppi["contrasts"]], 3) + [""]
    for k, why in (ppi.get("not_corrected") or {}).items():
        lines.append(md_text(f"Not corrected: {k}: {why}."))
    return "\n".join(lines).rstrip("\n") + "\n"


def ppi_blocks(ppi: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The HTML section's heading line and tables (None without labels)."""
    if not ppi:
        return None
    return {
        "head": _head(ppi),
        "means": {"columns": MEAN_HEAD, "rows": [_mean_cells(r) for r in ppi["means"]], "links": None},
        "contrasts": {
            "columns": CONTRAST_HEAD,
            "rows": [_contrast_cells(r) for r in ppi["contrasts"]],
            "links": None,
        },
        "family": ppi["holm"]["ppi_family_size"],
        "not_corrected": [f"{k}: {why}." for k, why in (ppi.get("not_corrected") or {}).items()],
    }
