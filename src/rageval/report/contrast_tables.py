"""The contrast tables of an analysis: ``contrasts.csv``'s columns, ``contrasts.md`` and the families the HTML shows.

Rows are grouped by family and sorted by Holm-adjusted p; those with Holm p at or
above :data:`ALPHA` (or undefined) are collapsed as no detectable difference.
The cell formats and the header lines come from :mod:`rageval.report.tables`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rageval.escape import md_text
from rageval.report.result import Analysis, ContrastEntry
from rageval.report.tables import fmt_p, holm_note, resolution_lines, run_header, to_markdown
from rageval.stats.gain import GAIN_GROUPS

__all__ = [
    "ALPHA",
    "contrast_columns",
    "contrast_csv_rows",
    "GAIN_COLUMNS",
    "GAIN_LABELS",
    "gain_intro",
    "gain_markdown",
    "gain_rows",
    "gain_table",
    "contrast_families",
    "contrasts_table",
    "contrasts_intro",
    "contrasts_markdown",
    "effect_digits",
    "FOUR_DECIMALS",
]


def contrast_columns(an: Analysis) -> list[str]:
    cols = [
        "contrast",
        "family",
        "kind",
        "a",
        "b",
        "metric_a",
        "metric_b",
        "direction",
        "mean_a",
        "mean_b",
        "effect",
        "ci_low",
        "ci_high",
        "p_value",
        "p_holm",
        "p_method",
        "p_resamples",
        "n",
        "n_dropped",
    ]
    if an.cohort.get("n_clusters") is not None:
        cols.append("n_clusters")
    return cols + ["note", *GAIN_COLUMNS]


#: the gain decomposition's columns (after every other column of ``contrasts.csv``): per group of
#: :data:`rageval.stats.gain.GAIN_GROUPS` its paired questions, contribution, interval and share
GAIN_COLUMNS = tuple(f"gain_{g}{suffix}" for g in GAIN_GROUPS for suffix in ("_n", "", "_lo", "_hi", "_share"))

#: the groups as the tables name them
GAIN_LABELS = {
    "new": "answer in context under a only",
    "lost": "answer in context under b only",
    "both": "answer in context under both",
    "neither": "answer in context under neither",
    "undefined": "answer-in-context undefined on a side",
}


def _gain_cells(c: Mapping[str, Any]) -> dict[str, Any]:
    """A row's gain columns: empty text where the decomposition does not apply (not an answer-quality pair, or
    no answer-in-context in the run), else the values (None: undefined, written as NA)."""
    gain = c.get("gain")
    if not gain:
        return dict.fromkeys(GAIN_COLUMNS, "")
    out: dict[str, Any] = {}
    for g in GAIN_GROUPS:
        v = gain["groups"][g]
        out[f"gain_{g}_n"] = v["n"]
        out[f"gain_{g}"] = v["contribution"]
        out[f"gain_{g}_lo"] = v["ci_low"]
        out[f"gain_{g}_hi"] = v["ci_high"]
        out[f"gain_{g}_share"] = v["share"]
    return out


def contrast_csv_rows(an: Analysis) -> list[dict[str, Any]]:
    """The rows of ``contrasts.csv``: each contrast entry with its gain columns (:data:`GAIN_COLUMNS`)."""
    return [{**c, **_gain_cells(c)} for c in an.contrasts]


#: metrics whose effects and intervals are printed to 4 decimals (the attribution-compression paper prints evidence
#: F1 so; every other metric to 3); ``contrasts.csv`` keeps full precision either way
FOUR_DECIMALS = frozenset({"evidence_f1"})


def effect_digits(c: Mapping[str, Any]) -> int:
    """Decimals of a contrast row's effect and interval in the tables: 4 for :data:`FOUR_DECIMALS`, else 3."""
    return 4 if c.get("metric_a") in FOUR_DECIMALS and c.get("metric_b") in FOUR_DECIMALS else 3


#: adjusted p-value at or above which a contrast row is "no detectable difference" (collapsed in the tables)
ALPHA = 0.05


def contrast_families(an: Analysis) -> list[tuple[str, list[ContrastEntry], list[ContrastEntry]]]:
    """Per family (plan order): ``(name, rows with Holm p < ALPHA, the other rows)``, each sorted by adjusted p
    (undefined last)."""
    order = list(an.holm.get("families") or {})
    for c in an.contrasts:
        if c.get("family", "contrasts") not in order:
            order.append(c.get("family", "contrasts"))
    out = []
    for fam in order:
        rows = [c for c in an.contrasts if c.get("family", "contrasts") == fam]
        rows.sort(key=lambda c: (c["p_holm"] is None, c["p_holm"] if c["p_holm"] is not None else 0.0))
        sig = [c for c in rows if c["p_holm"] is not None and c["p_holm"] < ALPHA]
        rest = [c for c in rows if not (c["p_holm"] is not None and c["p_holm"] < ALPHA)]
        out.append((fam, sig, rest))
    return out


def contrasts_table(
    an: Analysis, *, undefined: str = "undefined", rows: Sequence[Mapping[str, Any]] | None = None
) -> tuple[list[str], list[list[str]]]:
    clustered = an.cohort.get("n_clusters") is not None
    cols = ["contrast", "effect", f"{int(an.confidence * 100)}% CI", "p", "p (Holm)", "n (dropped)"]
    if clustered:
        cols.append("clusters")
    cols.append("note")
    out = []
    for c in an.contrasts if rows is None else rows:
        d = effect_digits(c)
        ci = undefined if c["ci_low"] is None else f"[{c['ci_low']:+.{d}f}, {c['ci_high']:+.{d}f}]"
        eff = undefined if c["effect"] is None else f"{c['effect']:+.{d}f}"
        row = [
            c["contrast"],
            eff,
            ci,
            fmt_p(c["p_value"], na=undefined),
            fmt_p(c["p_holm"], na=undefined),
            f"{c['n']} ({c['n_dropped']})",
        ]
        if clustered:
            row.append(str(c["n_clusters"]))
        row.append(c["note"] or "")
        out.append(row)
    return cols, out


def _replicates(an: Analysis) -> str:
    """``10,000 replicates each`` or, when the test drew its own count, both counts."""
    boot, test = an.n_resamples, an.n_test_resamples
    if boot == test:
        return f"{boot:,} replicates each"
    return f"{boot:,} bootstrap replicates; {test:,} sign-flip replicates, sized for the Holm family"


def contrasts_intro(an: Analysis, name: Callable[[Any], str] = str) -> str:
    """The paragraph above the contrasts (``name`` writes a run's or family's name: as :func:`holm_note`)."""
    clustered = an.cohort.get("n_clusters") is not None
    return (
        f"Effect = mean(a) − mean(b) over the questions where both are defined (a pair is dropped when either "
        f"side is undefined; the drops are counted). {int(an.confidence * 100)}% percentile "
        f"{'cluster ' if clustered else ''}bootstrap intervals and two-sided paired sign-flip randomization "
        f"p-values{' with cluster-level flips' if clustered else ''} ({_replicates(an)}), "
        f"seed {an.seed}; {holm_note(an, name)} "
        "(an undefined contrast keeps its place in the family, ranked as p = 1). "
        f"Grouped by family and sorted by adjusted p; rows with Holm p ≥ {ALPHA:g} or undefined are collapsed "
        "as no detectable difference. "
        "Non-significance does not establish equivalence; inference is conditional on the fixed generator "
        "outputs, recovery procedure and evaluator."
    ) + (_INTERACTION_NOTE if any(c.get("kind") == "interaction" for c in an.contrasts) else "")


#: the intro's sentence on interaction rows (written only where the analysis has one)
_INTERACTION_NOTE = (
    " An interaction row (kind interaction, family interactions) is a contrast of two contrasts: its a and b are "
    "the paired differences A − B and C − D, and its effect is the mean of (A − B) − (C − D) over the questions "
    "where all four settings are defined, resampled and sign-flipped per question like every other row."
)


def gain_rows(an: Analysis, rows: Sequence[Mapping[str, Any]] | None = None) -> list[Mapping[str, Any]]:
    """The contrast rows (of ``rows``, default every row) that carry a gain decomposition, in their order."""
    return [c for c in (an.contrasts if rows is None else rows) if c.get("gain")]


def gain_table(
    an: Analysis, rows: Sequence[Mapping[str, Any]], *, undefined: str = "undefined"
) -> tuple[list[str], list[list[str]]]:
    """The gain decomposition of each of ``rows`` (those with one): a line per group with its paired questions,
    contribution to the effect, interval and share of the effect."""
    cols = ["contrast", "group", "n", "contribution", f"{int(an.confidence * 100)}% CI", "share"]
    out = []
    for c in gain_rows(an, rows):
        d = effect_digits(c)
        for g in GAIN_GROUPS:
            v = c["gain"]["groups"][g]
            eff = undefined if v["contribution"] is None else f"{v['contribution']:+.{d}f}"
            ci = undefined if v["ci_low"] is None else f"[{v['ci_low']:+.{d}f}, {v['ci_high']:+.{d}f}]"
            share = undefined if v["share"] is None else f"{100 * v['share']:.0f}%"
            out.append([c["contrast"], GAIN_LABELS[g], str(v["n"]), eff, ci, share])
    return cols, out


def gain_intro(an: Analysis) -> str:
    """The paragraph above the gain decomposition tables."""
    unit = "clusters" if an.cohort.get("n_clusters") is not None else "paired questions"
    return (
        "Gain decomposition by answer-in-context: each paired question falls into one group by whether the gold "
        "answer is in the context under a and under b; a group's contribution is the sum of its differences "
        "divided by the paired questions, so the contributions sum to the effect, and its share is contribution / "
        f"effect (undefined when the effect is 0). {int(an.confidence * 100)}% percentile bootstrap intervals "
        f"over {unit}, seed {an.seed}. A split by an observed outcome of the settings, not a causal attribution."
    )


def contrasts_markdown(an: Analysis) -> str:
    parts = ["# Paired contrasts\n", run_header(an)]
    parts.append("\n" + contrasts_intro(an, md_text) + "\n\n")
    parts += [f"{line}\n\n" for line in resolution_lines(an.holm)]
    if not an.contrasts:
        parts.append(f"{an.contrasts_note}\n")
        return "".join(parts)
    for fam, sig, rest in contrast_families(an):
        parts.append(f"## {md_text(fam)} ({len(sig) + len(rest)} contrasts, {len(sig)} with Holm p < {ALPHA:g})\n\n")
        if sig:
            cols, rows = contrasts_table(an, rows=sig)
            parts.append(to_markdown(cols, rows, align=["l"] + ["r"] * (len(cols) - 2) + ["l"]) + "\n")
        if rest:
            cols, rows = contrasts_table(an, rows=rest)
            parts.append(
                f"<details><summary>{len(rest)} with no detectable difference (Holm p ≥ {ALPHA:g}) or undefined"
                "</summary>\n\n"
            )
            parts.append(to_markdown(cols, rows, align=["l"] + ["r"] * (len(cols) - 2) + ["l"]))
            parts.append("\n</details>\n\n")
    parts += gain_markdown(an, parts[-1])
    return "".join(parts)


def gain_markdown(an: Analysis, before: str = "\n\n") -> list[str]:
    """The ``## Gain decomposition`` section of ``contrasts.md`` (a run's or the cross-run one), [] without a row
    that carries one; ``before``: the text it follows (a blank line is kept between them)."""
    if not gain_rows(an):
        return []
    cols, rows = gain_table(an, gain_rows(an))
    return [
        ("" if before.endswith("\n\n") else "\n") + f"## Gain decomposition\n\n{gain_intro(an)}\n\n",
        to_markdown(cols, rows, align=["l", "l", "r", "r", "r", "r"]),
    ]
