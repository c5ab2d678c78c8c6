"""The validity and mediation tables of an analysis (``validity.csv``/``.md`` and the report's validity section;
docs/statistics.md#validity-with-intervals, #mediation): each estimate with its cluster-bootstrap interval, the
test-inversion p of r_AIC − r_recall, the mediation's paths in ``med_*`` columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rageval.report.result import Analysis
from rageval.report.tables import fmt, fmt_p, to_markdown

__all__ = [
    "MEDIATION_NOTE",
    "MEDIATION_TABLE",
    "VALIDITY_COLUMNS",
    "est_ci",
    "inversion_p_text",
    "mediation_markdown_rows",
    "mediation_summary",
    "validity_markdown",
    "validity_table",
    "validity_rows",
]


def _with_ci(*keys: str) -> list[str]:
    return [c for k in keys for c in (k, f"{k}_ci_low", f"{k}_ci_high")]


VALIDITY_COLUMNS = [
    "group",
    "quality_metric",
    "n",
    "n_dropped",
    "n_clusters",
    *_with_ci("r_aic_f1", "r_recall_f1", "r_diff"),
    "r_diff_p",
    *_with_ci("r2_recall", "r2_recall_aic", "delta_r2", "mean_f1_in_context"),
    "n_in_context",
    *_with_ci("mean_f1_not_in_context"),
    "n_not_in_context",
    "n_resamples",
    "note",
    "med_n",
    *[f"med_{c}" for c in _with_ci("a", "b", "c_prime", "indirect", "total", "proportion_mediated")],
    "med_note",
]

#: the mediation table's columns (``validity.md``, the report): key, header
MEDIATION_TABLE = (
    ("a", "a (AIC ~ recall)"),
    ("b", "b (AIC, given recall)"),
    ("c_prime", "direct c′"),
    ("indirect", "indirect a·b"),
    ("total", "total c"),
    ("proportion_mediated", "a·b / c"),
)


#: the validity table's estimate columns (key, header), before and after the p of r_AIC − r_recall; then the mean
#: quality with and without the answer in context (key, header, the count's key)
VALIDITY_R = (("r_aic_f1", "r(AIC, quality)"), ("r_recall_f1", "r(recall, quality)"), ("r_diff", "r_AIC − r_recall"))
VALIDITY_FIT = (("r2_recall", "R² recall"), ("r2_recall_aic", "R² recall+AIC"), ("delta_r2", "ΔR²"))
VALIDITY_MEANS = (
    ("mean_f1_in_context", "quality | in context", "n_in_context"),
    ("mean_f1_not_in_context", "quality | not in context", "n_not_in_context"),
)


def validity_table(
    an: Analysis, *, sep: str = " ", clusters: bool = False, counts: bool = False, na: str = "undefined"
) -> tuple[list[str], list[list[str]]]:
    """The validity table (columns, rows) of :func:`validity_rows`: group, n, (with ``clusters``) the clusters,
    each estimate with its interval (``sep`` between them, :func:`est_ci`), the test-inversion p (``na`` when
    undefined), the mean qualities (with ``counts``, each group's n beside it), the note."""
    cols = [
        "group",
        "n",
        *(["clusters"] if clusters else []),
        *[h for _, h in VALIDITY_R],
        "p",
        *[h for _, h in VALIDITY_FIT],
        *[h for _, h, _ in VALIDITY_MEANS],
        "note",
    ]

    def mean(r: Mapping[str, Any], key: str, n_key: str) -> str:
        cell = est_ci(r, key, sep=sep)
        return f"{cell} (n={r[n_key]})" if counts else cell

    rows = [
        [
            r["group"],
            str(r["n"]),
            *([fmt(r.get("n_clusters"), na="NA")] if clusters else []),
            *[est_ci(r, k, sep=sep) for k, _ in VALIDITY_R],
            inversion_p_text(r, na=na),
            *[est_ci(r, k, sep=sep) for k, _ in VALIDITY_FIT],
            *[mean(r, k, n_key) for k, _, n_key in VALIDITY_MEANS],
            r.get("note") or "",
        ]
        for r in validity_rows(an)
    ]
    return cols, rows


def _mediation(v: Mapping[str, Any], group: str) -> Mapping[str, Any]:
    med = v.get("mediation") or {}
    return (med.get("pooled") if group == "pooled" else (med.get("by_group") or {}).get(group)) or {}


def validity_rows(an: Analysis) -> list[dict[str, Any]]:
    """Per group (pooled, then each setting): the validity quantities and, prefixed ``med_``, the mediation's."""
    v = an.validity
    if not v.get("available"):
        return []
    q = {"quality_metric": v["answer_metric"]}
    groups = [("pooled", v["pooled"]), *v["by_group"].items()]
    return [
        {"group": g, **q, **s, **{f"med_{k}": x for k, x in _mediation(v, g).items() if k != "undefined_replicates"}}
        for g, s in groups
    ]


def mediation_markdown_rows(an: Analysis, sep: str = " ") -> list[list[str]]:
    """The mediation table's rows: group, n, each :data:`MEDIATION_TABLE` estimate with its interval, note."""
    return [
        [
            r["group"],
            fmt(r.get("med_n"), na="NA"),
            *[
                est_ci({k: r.get(f"med_{k}") for k in (key, f"{key}_ci_low", f"{key}_ci_high")}, key, sep=sep)
                for key, _ in MEDIATION_TABLE
            ],
            r.get("med_note") or "",
        ]
        for r in validity_rows(an)
    ]


def mediation_summary(an: Analysis) -> str | None:
    """The pooled indirect effect and proportion mediated with their intervals, for the report's folded line."""
    rows = validity_rows(an)
    if not rows or rows[0].get("med_indirect") is None:
        return None
    r = rows[0]

    def part(key: str) -> str:
        return est_ci({k: r.get(f"med_{k}") for k in (key, f"{key}_ci_low", f"{key}_ci_high")}, key)

    return f"pooled a·b {part('indirect')}, a·b / c {part('proportion_mediated')}"


MEDIATION_NOTE = (
    "Recall → answer-in-context → quality, least squares with an intercept on the same rows: a, the slope of "
    "answer-in-context on recall (a linear probability model: answer-in-context is binary, as the paper reports "
    "it); b and the direct effect c′, the slopes of quality on answer-in-context and recall fitted together; the "
    "total effect c, quality on recall alone (c = c′ + a·b); the proportion mediated a·b / c (undefined when "
    "|c| ≤ 1e-9). In brackets the same cluster-bootstrap intervals as above. Associations across questions and "
    "settings, conditional on the reader: no causal effect is identified (docs/statistics.md#mediation)."
)


def est_ci(r: Mapping[str, Any], key: str, digits: int = 3, sep: str = " ") -> str:
    """``estimate [low, high]`` (the interval left out when the row has none; ``sep`` between them: the report
    puts a line break, its cells keep their line breaks)."""
    est = fmt(r.get(key), digits, na="undefined")
    lo, hi = r.get(f"{key}_ci_low"), r.get(f"{key}_ci_high")
    if lo is None or hi is None:
        return est
    return f"{est}{sep}[{fmt(lo, digits)}, {fmt(hi, digits)}]"


def inversion_p_text(r: Mapping[str, Any], *, na: str = "undefined") -> str:
    """The test-inversion p of ``r_diff`` as :func:`fmt_p` writes it; ``< 1/B`` as a number when every replicate
    lay on one side (the p is then 0, below the resolution)."""
    p = r.get("r_diff_p")
    if p is None:
        return na
    return fmt_p(p) if p > 0 else f"< {fmt_p(1.0 / int(r['n_resamples']))}"


def validity_markdown(an: Analysis) -> str:
    v = an.validity
    parts = ["# Validity: answer-in-context vs retrieval recall\n\n"]
    if not v.get("available"):
        parts.append(f"{v['note']}\n")
        return "".join(parts)
    m = v["answer_metric"]
    pooled = v.get("pooled") or {}
    unit = "clusters (`suite.cluster_key`)" if an.suite.get("cluster_key") else "questions"
    parts.append(
        f"Quality metric `{m}` (the dataset's convention). Pearson r of `answer_in_context` and of "
        f"`retrieval_recall` with `{m}`, and their difference r_AIC − r_recall; R² of {m} ~ recall and ~ recall + "
        "answer-in-context (OLS); ΔR² = the increment; mean quality with and without the answer in context. Pooled "
        "over every ok (question, setting) record, then per setting. In brackets the 95% cluster-bootstrap "
        f"percentile interval ({pooled.get('n_resamples', 'NA')} replicates resampling {unit} with all their "
        "rows); p: the test-inversion p of r_AIC − r_recall (the smallest α at which its (1 − α) interval "
        "excludes 0; < 1/B when every replicate lies on one side), reported with this analysis, not in the contrasts' "
        "Holm family. Correlational, and conditional on the reader (docs/statistics.md#validity-with-intervals).\n\n"
    )
    cols, rows = validity_table(an, clusters=True, counts=True)
    parts.append(to_markdown(cols, rows, align=["l"] + ["r"] * 11 + ["l"]))
    parts.append(f"\n## Mediation: recall → answer-in-context → {m}\n\n{MEDIATION_NOTE}\n\n")
    med_cols = ["group", "n", *[h for _, h in MEDIATION_TABLE], "note"]
    parts.append(to_markdown(med_cols, mediation_markdown_rows(an), align=["l"] + ["r"] * 7 + ["l"]))
    return "".join(parts)
