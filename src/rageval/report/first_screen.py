"""The first screen of a run's results: each setting's headline means with their 95% intervals and counts, and
where the contrasts pair fewer questions than the means use (docs/statistics.md#the-first-screen).

The numbers are the analysis's (``report.json``'s shape: ``summary``, ``metric_names``, ``frontier``,
``contrasts``): a mean and its counts from the summary row (the common cohort, undefined values left out and
counted), its interval the frontier's per-setting 95% percentile bootstrap interval of the same values
(:mod:`rageval.report.frontier`).  A cell reads ``mean [low, high]``, with ``n=k`` after it when the mean rests
on fewer questions than the cohort (the rest undefined); an undefined mean is ``—`` in the console and
``undefined`` in Markdown and HTML.

A paired contrast uses the questions defined in *both* settings; a mean uses those defined in its own.
:func:`question_set_notes` says, per metric, where the two differ, with the counts.

>>> doc = {"metric_names": ["answer_f1"], "contrasts": [], "frontier": {"intervals": {"a": {"answer_f1": {
...     "ci_low": 0.25, "ci_high": 0.75}}}}, "summary": [{"setting": "a", "n_cohort": 4,
...     "metrics": {"answer_f1": {"mean": 0.5, "n": 3, "n_undefined": 1}}}]}
>>> print("\\n".join(console_blocks(doc, ["answer_f1"])))
setting  n  answer_f1
a        4  0.500 [0.250, 0.750] n=3
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from rageval.diagnostics import direction_of
from rageval.diagnostics.catalog import CATALOG
from rageval.escape import console_text, md_text
from rageval.report.judge_note import judge_note
from rageval.report.order import REPORT_ORDER

__all__ = [
    "WIDTH",
    "cell_text",
    "defined",
    "headline_metrics",
    "console_blocks",
    "elide",
    "first_screen_markdown",
    "headline_cells",
    "interval",
    "interval_cells",
    "interval_keys",
    "question_set_notes",
    "wrap",
]

#: the console's width: every line a run prints fits it (a wide table wraps into blocks of columns)
WIDTH = 100
#: metric columns per Markdown and HTML headline table (a cell is ``mean [low, high]``: about 20 characters)
MD_COLUMNS = 5
#: the longest setting name the console table shows whole (a longer one keeps its ends around "…")
NAME_WIDTH = 32


def defined(v: Any) -> bool:
    """Whether ``v`` is a finite number (not a flag): a defined mean or bound."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


_defined = defined


def _headline_keys() -> list[str]:
    names = [*REPORT_ORDER, *(n for n in CATALOG if n not in REPORT_ORDER)]
    return [CATALOG[n].outputs[0].key for n in names if CATALOG[n].outputs[0].direction != "none"]


def headline_metrics(summary: Mapping[str, Any]) -> list[str]:
    """The headline metrics of a summary: each diagnostic's first output (in the report's column order, with a
    direction) that some setting has a mean of."""
    present = set(summary.get("metric_names") or ())
    rows = summary.get("summary") or []
    return [
        k
        for k in _headline_keys()
        if k in present and any(_defined((r["metrics"].get(k) or {}).get("mean")) for r in rows)
    ]


def interval(doc: Mapping[str, Any], setting: str, metric: str) -> tuple[float, float] | None:
    """The 95% interval of ``setting``'s mean of ``metric`` (the frontier's), None where undefined."""
    iv = (((doc.get("frontier") or {}).get("intervals") or {}).get(setting) or {}).get(metric) or {}
    bounds = [iv.get("ci_low"), iv.get("ci_high")]
    if all(isinstance(b, (int, float)) and _defined(b) for b in bounds):
        return float(bounds[0]), float(bounds[1])  # type: ignore[arg-type]  # numbers: checked above
    return None


def cell_text(doc: Mapping[str, Any], row: Mapping[str, Any], metric: str, undefined: str = "—") -> str:
    """``mean [low, high]`` of a summary row's metric, ``n=k`` after it when ``k`` is below the row's cohort."""
    st = row["metrics"].get(metric) or {}
    mean = st.get("mean")
    if not _defined(mean):
        return undefined
    iv = interval(doc, row["setting"], metric)
    if iv is not None:
        text = f"{mean:.3f} [{iv[0]:.3f}, {iv[1]:.3f}]"
    else:  # no interval: too few questions, or none computed (no report: the means alone)
        text = f"{mean:.3f} [{undefined}]" if "frontier" in doc else f"{mean:.3f}"
    n, cohort = st.get("n"), row.get("n_cohort")
    return f"{text} n={n}" if n is not None and cohort is not None and n != cohort else text


def headline_cells(
    doc: Mapping[str, Any], metrics: Sequence[str], undefined: str = "—"
) -> tuple[list[str], list[list[str]]]:
    """``(columns, rows)``: per setting its name, its cohort size and a :func:`cell_text` per metric."""
    cols = ["setting", "n", *metrics]
    rows = [
        [str(r["setting"]), str(r.get("n_cohort", "")), *(cell_text(doc, r, m, undefined) for m in metrics)]
        for r in doc.get("summary") or []
    ]
    return cols, rows


def elide(name: str, width: int = NAME_WIDTH) -> str:
    """``name`` cut to ``width`` characters around a middle ``…`` (its start and end kept).

    >>> elide("a" * 20 + "b" * 20, 11)
    'aaaaa…bbbbb'
    """
    if len(name) <= width:
        return name
    head = (width - 1) // 2
    return name[:head] + "…" + name[len(name) - (width - 1 - head) :]


def _blocks(widths: Sequence[int], lead: int, width: int) -> list[list[int]]:
    """The metric columns (indexes after the ``lead`` ones) in blocks whose lines fit ``width``, at least one
    column a block."""
    base = sum(widths[:lead]) + 2 * (lead - 1)
    blocks: list[list[int]] = []
    used = width + 1
    for i in range(lead, len(widths)):
        if used + 2 + widths[i] > width:
            blocks.append([])
            used = base
        blocks[-1].append(i)
        used += 2 + widths[i]
    return blocks or [[]]


def console_blocks(doc: Mapping[str, Any], metrics: Sequence[str], width: int = WIDTH) -> list[str]:
    """The headline table as console lines of at most ``width`` characters: the setting and ``n`` columns, then
    as many metric columns as fit; the rest in further blocks under the same lead columns (a blank line
    between).  Names through :func:`rageval.escape.console_text`, a long one elided (:func:`elide`)."""
    cols, rows = headline_cells(doc, metrics)
    table = [cols, *([elide(console_text(r[0])), *r[1:]] for r in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
    out: list[str] = []
    for k, block in enumerate(_blocks(widths, 2, width)):
        if k:
            out.append("")
        for row in table:
            cells = [row[0].ljust(widths[0]), row[1].rjust(widths[1]), *(row[i].ljust(widths[i]) for i in block)]
            out.append("  ".join(cells).rstrip())
    return out


def _pairs(doc: Mapping[str, Any], metrics: Sequence[str]) -> dict[str, list[tuple[Mapping[str, Any], int, int]]]:
    """Per metric, the contrasts of it whose paired questions differ from a side's mean's: ``(row, n_a, n_b)``."""
    means = {r["setting"]: r["metrics"] for r in doc.get("summary") or []}
    out: dict[str, list[tuple[Mapping[str, Any], int, int]]] = {}
    for c in doc.get("contrasts") or []:
        m = c.get("metric_a")
        if m not in metrics or c.get("metric_b") != m or c.get("a") not in means or c.get("b") not in means:
            continue
        n_a = (means[c["a"]].get(m) or {}).get("n", 0)
        n_b = (means[c["b"]].get(m) or {}).get("n", 0)
        if c.get("n") != n_a or c.get("n") != n_b:
            out.setdefault(m, []).append((c, n_a, n_b))
    return out


def question_set_notes(doc: Mapping[str, Any], metrics: Sequence[str]) -> list[str]:
    """Per headline metric whose contrasts pair other questions than its means use: how many contrasts, and the
    first with its counts (a setting's or metric's name in backquotes)."""
    totals: dict[str, int] = {}
    for c in doc.get("contrasts") or []:
        if c.get("metric_a") == c.get("metric_b"):
            totals[c.get("metric_a")] = totals.get(c.get("metric_a"), 0) + 1
    out = []
    for m, found in _pairs(doc, metrics).items():
        c, n_a, n_b = found[0]
        first = (
            f"`{c['a']}` − `{c['b']}` pairs {c['n']} question{'' if c['n'] == 1 else 's'} "
            f"({c.get('n_dropped', 0)} dropped: undefined on a side) while its means use {n_a} and {n_b}"
        )
        more = f"; {len(found) - 1} more alike" if len(found) > 1 else ""
        out.append(
            f"`{m}`: {len(found)} of {totals.get(m, len(found))} contrasts use other questions than the means "
            f"({first}{more})."
        )
    return out


def wrap(line: str, width: int = WIDTH, indent: str = "  ") -> list[str]:
    """``line`` as console lines of at most ``width`` characters (words kept whole; a later line indented by
    ``indent`` plus the line's own leading spaces).  A single word longer than ``width`` (a path) stays whole."""
    if len(line) <= width:
        return [line]
    lead = line[: len(line) - len(line.lstrip(" "))]
    return textwrap.wrap(
        line,
        width=width,
        initial_indent="",
        subsequent_indent=lead + indent,
        break_long_words=False,
        break_on_hyphens=False,
        drop_whitespace=True,
    ) or [line]


def interval_keys(doc: Mapping[str, Any]) -> list[str]:
    """The keys with a per-setting interval (the achieved ratio, then the metrics in table order): each gets the
    ``<key>_ci_low`` and ``<key>_ci_high`` columns of ``summary.csv``."""
    ivs = (doc.get("frontier") or {}).get("intervals") or {}
    have = {k for per in ivs.values() for k in per}
    return [k for k in ["achieved_ratio", *(doc.get("metric_names") or ())] if k in have]


def interval_cells(doc: Mapping[str, Any], setting: str) -> dict[str, float | None]:
    """``{"<key>_ci_low": ..., "<key>_ci_high": ...}`` of one setting (None: undefined) for :func:`interval_keys`."""
    out: dict[str, float | None] = {}
    for k in interval_keys(doc):
        iv = interval(doc, setting, k)
        out[f"{k}_ci_low"], out[f"{k}_ci_high"] = iv if iv is not None else (None, None)
    return out


_ARROWS = {"higher": " ↑", "lower": " ↓"}


def _md_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "| " + " | ".join(md_text(c) for c in columns) + " |"
    sep = "|:---|" + "---:|" * (len(columns) - 1)
    return "\n".join([head, sep, *("| " + " | ".join(md_text(c) for c in r) + " |" for r in rows)]) + "\n"


def first_screen_markdown(doc: Mapping[str, Any], metrics: Sequence[str], manifest: Mapping[str, Any]) -> str:
    """The opening of ``summary.md``: the judge (and the stand-ins' caveat), the headline means with their 95%
    intervals in tables of at most :data:`MD_COLUMNS` metrics, where the contrasts use other questions, then the
    findings under the judge's name (text through :func:`rageval.escape.md_text`)."""
    note = judge_note(manifest)
    parts = ["\n", *(md_text(line, spans=True) + "\n" for line in note.lines())]
    parts.append("\n## Headline means with 95% intervals\n\n")
    parts.append(
        "Each setting's mean over the common cohort and its 95% percentile bootstrap interval `[low, high]`; "
        "`n=k` after a cell: the mean rests on k questions (the rest undefined). Column `n`: the cohort.\n\n"
    )
    cols, rows = headline_cells(doc, metrics, undefined="undefined")
    heads = [c + _ARROWS.get(direction_of(c), "") if i >= 2 else c for i, c in enumerate(cols)]
    for i in range(0, max(1, len(metrics)), MD_COLUMNS):
        cut = [0, 1, *range(2 + i, min(2 + i + MD_COLUMNS, len(cols)))]
        parts.append(_md_table([heads[j] for j in cut], [[r[j] for j in cut] for r in rows]) + "\n")
    notes = question_set_notes(doc, metrics)
    if notes:
        parts.append("Means and contrasts on different questions:\n\n")
        parts += [f"- {md_text(n, spans=True)}\n" for n in notes]
    parts.append("\n## Findings\n\n" + md_text(note.lead(), spans=True) + "\n\n")
    found = doc.get("findings") or []
    for f in found:
        parts.append(("- **read with care**: " if f["kind"] == "warning" else "- ") + md_text(f["text"], spans=True))
        parts += ["\n", *(f"    - {md_text(i, spans=True)}\n" for i in f.get("items") or [])]
    if not found:
        parts.append("No finding.\n")
    return "".join(parts)
