"""CSV and Markdown tables of an analysis (see :mod:`rageval.report.analysis`): the cell and table formats,
the header lines, the summary and sweep tables (the contrasts: :mod:`rageval.report.contrast_tables`; validity and
mediation: :mod:`rageval.report.validity_tables`).

Undefined values are written ``NA`` in CSV (read as missing by pandas and R) and
``undefined`` in Markdown, always with the counts beside them; never 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rageval.diagnostics import CATALOG, DERIVED, contrasted_by_default, direction_of, output_owner
from rageval.escape import csv_text, md_code, md_text
from rageval.report import first_screen as FS
from rageval.report.grounding import gaps_grounding_note
from rageval.report.result import Analysis
from rageval.types import STATUSES

__all__ = [
    "summary_columns",
    "summary_rows",
    "sweep_columns",
    "to_csv",
    "to_markdown",
    "summary_markdown",
    "fmt",
    "abstentions_table",
    "left_out_line",
    "run_header",
    "holm_note",
    "family_counts_line",
    "resolution_lines",
    "ARROWS",
    "DIRECTION_LEGEND",
]

NA = "NA"
FAILURE_STATUSES = tuple(s for s in STATUSES if s != "ok")
#: the arrow of a catalog direction (:func:`rageval.diagnostics.direction_of`) in table headers
ARROWS = {"higher": "↑", "lower": "↓", "none": ""}
DIRECTION_LEGEND = (
    "↑ higher is better, ↓ lower is better (the diagnostics catalog's directions); no arrow: no direction."
)
#: summary.csv columns of the judge abstentions per setting (after every metric column)
ABSTENTION_COLUMNS = ("judge_abstentions_sum", "n_questions_with_abstentions")
ABSTENTIONS_NOTE = (
    "A judge abstains when it reaches no clean decision. Main scores count an abstention as not supported; "
    "the `*_excl_abstain` columns leave abstained items out. Counts over the common cohort."
)


def fmt(x: Any, digits: int = 4, *, na: str = NA) -> str:
    if x is None:
        return na
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def fmt_p(p: Any, *, na: str = NA) -> str:
    if p is None:
        return na
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def to_csv(columns: Sequence[str], rows: Sequence[Mapping[str, Any]], *, digits: int = 6) -> str:
    """The rows as CSV: a number formatted with ``digits``, undefined ``NA``, a text cell through the CSV rule
    (:func:`rageval.escape.csv_cell`: no formula, every line break quoted)."""
    return csv_text([list(columns), *([r.get(c) for c in columns] for r in rows)], lambda v: fmt(v, digits))


def to_markdown(columns: Sequence[str], rows: Sequence[Sequence[str]], *, align: Sequence[str] | None = None) -> str:
    align = list(align or [])[: len(columns)]
    align += [align[-1] if align else "l"] * (len(columns) - len(align))
    head = "| " + " | ".join(md_text(c) for c in columns) + " |"
    sep = "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"
    body = ["| " + " | ".join(md_text(c) for c in row) + " |" for row in rows]
    return "\n".join([head, sep, *body]) + "\n"


# ---------------------------------------------------------------- summary


def summary_columns(an: Analysis) -> list[str]:
    cols = [
        "setting",
        "compressor",
        "budget",
        "n_records",
        "n_ok",
        "n_failed",
        "n_missing",
        "n_cohort",
        "n_excluded",
        "left_out",
        *[f"n_{s}" for s in FAILURE_STATUSES],
        "achieved_ratio",
        "achieved_tokens",
    ]
    for m in [*an.metric_names, *an.gaps]:
        cols += [m, f"{m}_n", f"{m}_n_undefined"]
    if _has_abstentions(an):
        cols += ABSTENTION_COLUMNS
    # last, so no earlier column moves: the 95% intervals (docs/statistics.md#what-is-written)
    return cols + [f"{k}_ci_{side}" for k in FS.interval_keys(an.as_json()) for side in ("low", "high")]


def _has_abstentions(an: Analysis) -> bool:
    return any("judge_abstentions" in r for r in an.summary)


def summary_rows(an: Analysis) -> list[dict[str, Any]]:
    out = []
    doc = an.as_json()
    for row in an.summary:
        flat = {
            k: row[k]
            for k in (
                "setting",
                "compressor",
                "budget",
                "n_records",
                "n_ok",
                "n_failed",
                "n_missing",
                "n_cohort",
                "n_excluded",
                "achieved_ratio",
                "achieved_tokens",
            )
        }
        flat["left_out"] = bool(row.get("left_out"))  # did not run: left out of the cohort and the contrasts
        flat["budget"] = "NA" if row["budget"] is None else str(row["budget"])  # as the suite wrote it
        for s in FAILURE_STATUSES:
            flat[f"n_{s}"] = row["status"].get(s, 0)
        for m, v in row["metrics"].items():
            flat[m], flat[f"{m}_n"], flat[f"{m}_n_undefined"] = v["mean"], v["n"], v["n_undefined"]
        if "judge_abstentions" in row:
            a = row["judge_abstentions"]
            flat["judge_abstentions_sum"], flat["n_questions_with_abstentions"] = a["sum"], a["n_questions_with"]
        out.append({**flat, **FS.interval_cells(doc, row["setting"])})
    return out


def failure_table(an: Analysis) -> tuple[list[str], list[list[str]]]:
    present = [s for s in FAILURE_STATUSES if any(r["status"].get(s) for r in an.summary)]
    cols = ["setting", "records", "ok", *present, "missing", "in cohort", "excluded (ok here, not ok elsewhere)"]
    rows = [
        [
            r["setting"],
            str(r["n_records"]),
            str(r["n_ok"]),
            *[str(r["status"].get(s, 0)) for s in present],
            str(r["n_missing"]),
            str(r["n_cohort"]),
            str(r["n_excluded"]),
        ]
        for r in an.summary
    ]
    return cols, rows


def headed(metric: str) -> str:
    """A metric name with its direction arrow (table headers)."""
    arrow = ARROWS[direction_of(metric)]
    return f"{metric} {arrow}" if arrow else metric


def structural_mark(an: Analysis, setting: str, metric: str) -> Mapping[str, Any] | None:
    """``{"reason", "fixed"}`` when the catalog knows a metric's value in a setting by construction
    (:mod:`rageval.diagnostics.structural`, ``an.structural``), else None."""
    return (an.structural.get(setting) or {}).get(metric)


#: metric columns per means table: with the setting and the achieved ratio, a table fits 1,400 px
MAX_COLUMNS = 7


def family_columns(an: Analysis) -> list[tuple[str, list[str], list[str]]]:
    """Per family the run has: ``(family, the science, the rest)``: the science is every metric with a
    direction that is no secondary view, and the gaps; the rest are the counters and the views."""
    gaps = an.gaps
    out = []
    for fam in MEAN_FAMILIES:
        keys = [m for m in [*an.metric_names, *gaps] if metric_family(m) == fam]
        if keys:
            main = [m for m in keys if m in gaps or contrasted_by_default(m)]
            out.append((fam, main, [m for m in keys if m not in main]))
    return out


def mean_cell(row: Mapping[str, Any], m: str, undefined: str = "undefined") -> str:
    v = row["metrics"][m]
    return undefined if v["mean"] is None else fmt(v["mean"], 3)


def means_chunks(fam: str, keys: Sequence[str]) -> list[tuple[list[str], list[str]]]:
    """``keys`` in pieces of at most :data:`MAX_COLUMNS`, each with its lead columns (the setting; the achieved
    ratio beside answers and costs): ``[(lead column names, metric keys)]``."""
    lead = ["setting", *(["achieved ratio"] if fam in ("answer", "cost") else [])]
    return [(lead, list(keys[i : i + MAX_COLUMNS])) for i in range(0, len(keys), MAX_COLUMNS)]


def lead_cells(row: Mapping[str, Any], lead: Sequence[str]) -> list[str]:
    return [row["setting"], *([fmt(row["achieved_ratio"], 3, na="—")] if len(lead) > 1 else [])]


def _means_markdown(an: Analysis) -> str:
    """The means per family in tables of at most :data:`MAX_COLUMNS` metrics (the science, then the counters
    and views), a value fixed by construction marked † with its reason below."""
    parts = []
    for fam, main, rest in family_columns(an):
        parts.append(f"\n### {fam}\n\n")
        reasons: list[str] = []
        for keys in (main, rest):
            for lead, chunk in means_chunks(fam, keys):
                rows = []
                for r in an.summary:
                    cells = []
                    for m in chunk:
                        mark = structural_mark(an, r["setting"], m)
                        if mark and mark["reason"] not in reasons:
                            reasons.append(mark["reason"])
                        tag = f" †{reasons.index(mark['reason']) + 1}" if mark else ""
                        cells.append(mean_cell(r, m) + tag)
                    rows.append([*lead_cells(r, lead), *cells])
                parts.append(to_markdown([*lead, *map(headed, chunk)], rows, align=["l"] + ["r"] * 20) + "\n")
        parts += [f"†{i} {why}.\n" for i, why in enumerate(reasons, 1)]
    return "".join(parts)


#: the families of the means tables, in order (docs/statistics.md#what-is-written)
MEAN_FAMILIES = ("answer", "attribution", "verification", "cost", "other")


def metric_family(key: str) -> str:
    """The means-table family of a metric: answer (answer and retrieval diagnostics), attribution,
    verification (the unsupported-claim rates), cost (tokens, counters) or other (a key no diagnostic declares)."""
    if key in DERIVED:
        return "attribution"
    owner = output_owner(key)
    if owner is None:
        return "other"
    if key.startswith("unsupported_"):
        return "verification"
    if key.startswith(("verifier_tokens_", "verification_cost_")):
        return "cost"
    fam = CATALOG[owner].family
    return {"answer": "answer", "retrieval": "answer", "attribution": "attribution"}.get(fam, "cost")


def undefined_table(an: Analysis) -> tuple[list[str], list[list[str]]]:
    mets = [*an.metric_names, *an.gaps]
    cols = ["setting", *[f"{m} (n / undef.)" for m in mets]]
    rows = [
        [r["setting"], *[f"{r['metrics'][m]['n']} / {r['metrics'][m]['n_undefined']}" for m in mets]]
        for r in an.summary
    ]
    return cols, rows


def abstentions_table(an: Analysis, *, undefined: str = "undefined") -> tuple[list[str], list[list[str]]]:
    """Judge abstentions per setting over the cohort: the sum, the questions with any, the questions counted."""
    cols = ["setting", "judge abstentions (sum)", "questions with an abstention", "questions counted"]
    rows = []
    for r in an.summary:
        a = r.get("judge_abstentions")
        if a is not None:
            rows.append(
                [
                    r["setting"],
                    undefined if a["sum"] is None else str(a["sum"]),
                    str(a["n_questions_with"]),
                    str(a["n"]),
                ]
            )
    return cols, rows


def left_out_line(c: Mapping[str, Any], name: Callable[[str], str] = str) -> str | None:
    """The settings left out of the cohort ``c`` (an analysis's ``cohort``) and the contrasts because they did not
    run (every record ``unavailable``), with their counts; None when every setting ran
    (docs/design.md#common-cohort).  ``name`` writes a setting's name (Markdown: :func:`rageval.escape.md_text`)."""
    gone = c.get("left_out") or []
    if not gone:
        return None
    listed = ", ".join(
        f"{name(g['setting'])} ({g['n_unavailable']} of {g['n_records']} records unavailable)" for g in gone
    )
    rows = c.get("n_contrast_rows_left_out") or 0
    return (
        f"Left out of the common cohort and the contrasts (the setting did not run: every record `unavailable`): "
        f"{listed}; {rows} contrast row{'' if rows == 1 else 's'} left out."
    )


def run_header(an: Analysis) -> str:
    """The lines that open summary.md and contrasts.md: the suite, the common cohort, what was left out."""
    s = an.suite
    c = an.cohort
    lines = [
        f"Suite **{md_text(s.get('name'))}** (hash {md_code(s.get('hash'))}), dataset {md_text(s.get('dataset'))}.",
        f"Common cohort: **{c['n']}** of {c['n_questions']} questions are `ok` in every setting that ran"
        + (f" ({c['n_clusters']} clusters by {md_code(s.get('cluster_key'))})." if c.get("n_clusters") else "."),
        "Means are question-weighted over the cohort; an undefined value is left out of its mean and counted.",
    ]
    gone = left_out_line(an.cohort, md_text)
    if gone:
        lines.append(gone)
    if c["n"] == 0:
        lines.append("**The common cohort is empty: every mean below is undefined.**")
    return "\n".join(lines) + "\n"


def holm_note(an: Analysis, name: Callable[[Any], str] = str) -> str:
    """One sentence: over what the Holm adjustment ran (scope, family sizes, runs).  ``name`` writes a run's or a
    family's name (Markdown: :func:`rageval.escape.md_text`; the HTML page escapes on its own)."""
    h = an.holm
    runs = h.get("runs") or []
    of_runs = f" of {len(runs)} runs ({', '.join(map(name, runs))})" if len(runs) > 1 else ""
    sizes = h.get("family_sizes") or {}
    if h.get("scope") == "family":
        each = ", ".join(f"{name(k)}: {v}" for k, v in sizes.items())
        return f"Holm adjustment within each family ({each} contrasts{of_runs})"
    n = sizes.get("all", len(an.contrasts))
    alone = "".join(f"; {name(k)} ({v}) adjusted on its own, outside it" for k, v in sizes.items() if k != "all")
    if sizes and "all" not in sizes:  # only families adjusted on their own (a plan of interactions alone)
        each = ", ".join(f"{name(k)} ({v})" for k, v in sizes.items())
        return f"Holm adjustment within each family adjusted on its own: {each}{of_runs}"
    return f"Holm adjustment over all {n} contrasts{of_runs} as one family{alone}"


def family_counts_line(an: Analysis, name: Callable[[Any], str] = str) -> str:
    """``Contrasts: N in K families (name: n, ...); <Holm note>.`` (``name``: as :func:`holm_note`)"""
    fams = an.holm.get("families") or {}
    if not fams:
        return "Contrasts: none declared."
    listed = ", ".join(f"{name(k)}: {v}" for k, v in fams.items())
    total = sum(fams.values())
    counted = f"{total} in {len(fams)} famil{'y' if len(fams) == 1 else 'ies'}"
    return f"Contrasts: {counted} ({listed}); {holm_note(an, name)}."


def resolution_lines(
    holm: Mapping[str, Any], *, method: bool = True, warning: str | None = "**Warning:** "
) -> list[str]:
    """The rows left out of the Holm family, the p-values' method and B with the family's floor (``method``),
    and the warning after the prefix ``warning`` (None: no warning) when the floor m/(B+1) is within a factor 10
    of alpha (the terminal, the summary, the contrasts)."""
    lines = []
    left = holm.get("left_out") or {}
    if left.get("n_rows"):
        lines.append(
            f"Left out of the Holm family: {left['n_rows']} rows of {', '.join(left['metrics'])} "
            "(identical in every setting on every cohort question: they cannot differ)."
        )
    res = holm.get("resolution") or {}
    if method and res.get("m"):
        lines.append(
            f"p-values: {res['method']}, B = {res['n_resamples']:,} ({res['setting']}); "
            f"Holm floor m/(B+1) = {res['floor']:.4g} for m = {res['m']}."
        )
    if res.get("warning") and warning is not None:
        lines.append(warning + res["warning"])
    return lines


def summary_markdown(an: Analysis) -> str:
    doc = an.as_json()
    parts = [
        "# Summary\n",
        run_header(an),
        FS.first_screen_markdown(doc, FS.headline_metrics(doc), an.manifest),
        "\n## Contrasts\n\n",
        family_counts_line(an, md_text) + "\n",
        *(f"{line}\n" for line in resolution_lines(an.holm, method=False)),
        *(["\n## Notes on the inputs\n\n", *(f"- {md_text(n, spans=True)}\n" for n in an.notes)] if an.notes else []),
        "\n## Records by status and the common cohort\n",
    ]
    parts.append(to_markdown(*failure_table(an), align=["l"] + ["r"] * 20))
    parts.append("\n## Means on the common cohort\n")
    if an.gaps:
        parts.append(
            "`gap_*` = emitted − grounded, per question, then averaged ("
            + ", ".join(f"`{g}` = {a} − {b}" for g, (a, b) in an.gaps.items())
            + "). "
            + gaps_grounding_note(an.manifest, an.gaps)
            + "\n\n"
        )
    parts.append(DIRECTION_LEGEND + "\n\n")
    parts.append(_means_markdown(an))
    if _has_abstentions(an):
        parts.append("\n## Judge abstentions\n\n" + ABSTENTIONS_NOTE + "\n\n")
        parts.append(to_markdown(*abstentions_table(an), align=["l", "r"]))
    parts.append("\n## Defined / undefined counts\n")
    parts.append(to_markdown(*undefined_table(an), align=["l"] + ["r"] * 200))
    return "".join(parts)


SWEEP_COLUMNS = [
    "setting",
    "threshold",
    "rate",
    "rate_n",
    "rate_n_undefined",
    "grounded_precision",
    "grounded_precision_n",
    "grounded_precision_n_undefined",
]


def sweep_columns() -> list[str]:
    return list(SWEEP_COLUMNS)
