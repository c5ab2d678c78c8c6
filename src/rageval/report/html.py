"""The self-contained static HTML report: one file, no external resources, no request.

Rendered with Jinja2 from the templates shipped in ``rageval/report/templates``
(autoescaped; the stylesheet ``report.css``, the explorer's vanilla ``explorer.js`` and the figures' ``figures.js``
inlined); this module only turns the analysis into the template's context (the reading layout:
:mod:`rageval.report.page`).  The figures' data (:mod:`rageval.report.page_figures`), the manifest and the
explorer's records are embedded as escaped JSON; the page draws the figures itself (no image in it).
No wall-clock time is written, so a rebuild from the same records is byte-identical.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rageval.io import json_text
from rageval.report import contrast_tables as C
from rageval.report import first_screen as FS
from rageval.report import tables as T
from rageval.report import validity_tables as V
from rageval.report.audit_section import audit_blocks
from rageval.report.explorer import explorer_json
from rageval.report.findings import frontier_sentence
from rageval.report.grounding import gaps_grounding_note
from rageval.report.judge_note import judge_note
from rageval.report.page import examples_split, frontier_figures, means_blocks
from rageval.report.page_figures import figures_json
from rageval.report.plots import pareto_name
from rageval.report.ppi import ppi_blocks
from rageval.report.result import Analysis, PageParts
from rageval.types import STATUSES

__all__ = ["render_html", "RUN_COUNTERS_BEGIN", "RUN_COUNTERS_END"]


RUN_COUNTERS_BEGIN = "<!-- run-counters:begin -->"
RUN_COUNTERS_END = "<!-- run-counters:end -->"
UNDEFINED = "undefined"
#: significant contrast rows shown per family before the rest are folded (the smallest adjusted p first)
TOP_CONTRASTS = 10


def _undef_cell(c: Any) -> bool:
    return isinstance(c, str) and (c in (UNDEFINED, "NA") or c.startswith(UNDEFINED))


def _code(text: Any) -> Any:
    """Escape ``text`` and turn its `backquoted` spans into ``<code>``."""
    from markupsafe import Markup, escape

    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(str(text)))))


def _wbr(text: Any) -> Any:
    """Escape ``text`` and let a long metric name break after its underscores (narrow table headers)."""
    from markupsafe import Markup, escape

    return Markup(str(escape(str(text))).replace("_", "_<wbr>"))


@functools.lru_cache(maxsize=1)
def _env():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("rageval.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["code"] = _code
    env.filters["wbr"] = _wbr
    env.tests["undef_cell"] = _undef_cell
    return env


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _table_html(tid: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> Any:
    """The table macro's markup (its values escaped by the template)."""
    return _env().get_template("macros.html.j2").module.table(tid, list(columns), [list(r) for r in rows])


def _judge_table(stats: Mapping[str, Any], tid: str = "judge-table") -> Any:
    from markupsafe import Markup

    if not stats:
        return Markup(
            '<p class="note">The manifest records no <code>judge_stats</code> (no judge ran, or the runner keeps '
            "its cache counters in run_stats.json, outside the reproducible outputs).</p>"
        )
    if all(isinstance(v, Mapping) and all(_scalar(x) for x in v.values()) for v in stats.values()):
        keys = list(dict.fromkeys(k for v in stats.values() for k in v))  # a counter a row: the table stays narrow
        rows = [[k, *[T.fmt(v.get(k), 4, na="") for v in stats.values()]] for k in keys]
        return _table_html(tid, ["counter", *map(str, stats)], rows)
    flat: list[list[str]] = []

    def walk(prefix: str, v: Any) -> None:
        if isinstance(v, Mapping):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else str(k), x)
        else:
            flat.append([prefix, json.dumps(v, sort_keys=True) if not _scalar(v) else T.fmt(v, 4, na="null")])

    walk("", stats)
    return _table_html(tid, ["counter", "value"], flat)


def _tab(columns: Sequence[str], rows: Sequence[Sequence[str]], links: Sequence[str | None] | None = None) -> dict:
    return {"columns": list(columns), "rows": [list(r) for r in rows], "links": list(links) if links else None}


def _anchors(an: Analysis) -> dict[str, str]:
    return {r["setting"]: f"examples-{i + 1}" for i, r in enumerate(an.summary)}


def _warning(an: Analysis) -> str | None:
    return (an.holm.get("resolution") or {}).get("warning")


def _test_resamples(an: Analysis) -> str | None:
    test = an.n_test_resamples
    return f"{test:,}" if test != an.n_resamples else None


def _contrasts(an: Analysis) -> list[dict[str, Any]]:
    out = []
    for name, sig, rest in C.contrast_families(an):
        out.append(
            {
                "name": name,
                "n": len(sig) + len(rest),
                "n_sig": len(sig),
                "sig": _tab(*C.contrasts_table(an, undefined=UNDEFINED, rows=sig[:TOP_CONTRASTS])),
                "sig_more": _tab(*C.contrasts_table(an, undefined=UNDEFINED, rows=sig[TOP_CONTRASTS:])),
                "rest": _tab(*C.contrasts_table(an, undefined=UNDEFINED, rows=rest)),
                "n_gain": len(C.gain_rows(an, sig + rest)),
                "gain": _tab(*C.gain_table(an, sig + rest, undefined=UNDEFINED)),
            }
        )
    return out


def _pareto(an: Analysis, pareto_figs: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each pair of axes: its sentence, notes, dominance relations and its figure (None: not drawn)."""
    out = []
    for p in an.frontier.get("pairs", []):
        if p.get("note"):
            out.append({"x": p["x"], "y": p["y"], "note": p["note"]})
            continue
        rows = []
        for r in p["relations"]:
            axes = "; ".join(
                f"{a['axis']} {T.fmt(a['effect'], 3, na=UNDEFINED) if a['effect'] is None else format(a['effect'], '+.3f')}"
                f" (Holm p {T.fmt_p(a['p_holm'], na=UNDEFINED)})"
                for a in r["axes"]
            )
            rows.append([r["dominating"], r["dominated"], axes or "tied", r["support"]])
        fig = pareto_figs.get(pareto_name(p))
        sentence, degenerate = frontier_sentence(p)
        flat = an.fixed_axes([p["x"], p["y"]])
        out.append(
            {
                "x": p["x"],
                "y": p["y"],
                "note": None,
                "sentence": sentence,
                "degenerate": degenerate,
                "frontier": p["frontier"],
                "undefined": p.get("undefined") or [],
                "sparse": [
                    f"{s} ({p['defined'][s]['n']} of {p['defined'][s]['n'] + p['defined'][s]['n_undefined']} defined)"
                    for s in p.get("sparse") or []
                ],
                "min_defined": p.get("min_defined"),
                "sparse_mode": p.get("sparse_mode"),
                "n_relations": len(p["relations"]),
                "n_supported": p["n_supported"],
                "fig": fig,
                "flat": _flat_note(flat),
                "relations": _tab(["dominating", "dominated", "per axis: effect (Holm p)", "support"], rows),
            }
        )
    return out


def _headline(an: Analysis, links: Sequence[str]) -> dict[str, Any]:
    """The first screen's table: each setting's headline means with their 95% intervals and ``n``, in tables of
    at most :data:`~rageval.report.first_screen.MD_COLUMNS` metrics (``headline-table``, then ``-2``, ...), and
    where the contrasts use other questions than the means."""
    doc = an.as_json()
    keys = FS.headline_metrics(doc)
    cols, rows = FS.headline_cells(doc, keys, undefined=UNDEFINED)
    tables = []
    for i in range(0, max(1, len(keys)), FS.MD_COLUMNS):
        cut = [0, 1, *range(2 + i, min(2 + i + FS.MD_COLUMNS, len(cols)))]
        tables.append(
            {
                "id": "headline-table" + ("" if i == 0 else f"-{i // FS.MD_COLUMNS + 1}"),
                "columns": [T.headed(cols[j]) if j >= 2 else cols[j] for j in cut],
                "rows": [[r[j] for j in cut] for r in rows],
                "links": links,
            }
        )
    return {"tables": tables, "notes": FS.question_set_notes(doc, keys)}


def _flat_note(flat: Mapping[str, float]) -> str | None:
    """Why a figure is not drawn: the axes that do not vary, with their one value (None: every axis varies)."""
    if not flat:
        return None
    axes = " and ".join(f"`{k}` is {v:.3f}" for k, v in flat.items())
    return f"Not drawn: {axes} in every setting (an axis that does not vary)."


def _validity(an: Analysis) -> dict[str, Any] | None:
    v = an.validity
    if not v.get("available"):
        return None
    cols, rows = V.validity_table(an, sep="\n", na=UNDEFINED)
    pooled = v.get("pooled") or {}
    med_cols = ["group", "n", *[h for _, h in V.MEDIATION_TABLE], "note"]
    return {
        "mediation": {
            "note": V.MEDIATION_NOTE,
            "summary": V.mediation_summary(an),
            **_tab(med_cols, V.mediation_markdown_rows(an, sep="\n")),
        },
        "answer_metric": v["answer_metric"],
        "n_resamples": pooled.get("n_resamples"),
        "unit": "clusters" if an.suite.get("cluster_key") else "questions",
        **_tab(cols, rows),
    }


def _sweep(an: Analysis) -> dict[str, Any] | None:
    if not an.sweep:
        return None
    rows = [
        [
            r["setting"],
            f"{r['threshold']:g}",
            T.fmt(r["rate"], 3, na=UNDEFINED),
            str(r["rate_n"]),
            T.fmt(r["grounded_precision"], 3, na=UNDEFINED),
            str(r["grounded_precision_n"]),
        ]
        for r in an.sweep
    ]
    return _tab(["setting", "threshold", "re-attributable rate", "n", "grounded precision", "n"], rows)


def _examples(an: Analysis) -> dict[str, Any]:
    ex = an.examples
    by = ex.get("by_setting") or {}
    anchors = _anchors(an)
    settings = []
    for r in an.summary:
        s = r["setting"]
        e = by.get(s) or {"left_context": {"n": 0, "shown": []}, "emitted_not_grounded": {"n": 0, "shown": []}}
        left = e["left_context"] if ex.get("reference") not in (None, s) else None
        settings.append({"setting": s, "anchor": anchors[s], "left": left, "eng": e["emitted_not_grounded"]})
    some, none = examples_split(settings)
    return {"reference": ex.get("reference"), "settings": some, "none": none}


def _judge_blocks(an: Analysis, page: PageParts) -> tuple[bool, list[Any]]:
    counters = page.run_counters
    if not counters:
        return False, [_judge_table(an.judge_stats)]
    blocks = [_judge_table({"judge": counters.get("judge", {})} if counters.get("judge") else {})]
    rest = {k: v for k, v in counters.items() if k != "judge"}
    if rest:
        blocks.append(_judge_table({"records": {k: v for k, v in rest.items() if _scalar(v)}}, "judge-table-records"))
    return True, blocks


#: the label of each kind of finding (rageval.report.findings)
KIND_LABELS = {
    "warning": "read with care",
    "effect": "effect",
    "gap": "emitted ≠ grounded",
    "frontier": "frontier",
    "validity": "validity",
    "mediation": "mediation",
    "gain": "gain decomposition",
    "structural": "by construction",
}
_NO_RECORDS = {
    "records": [],
    "questions": {},
    "n_total": 0,
    "n_shown": 0,
    "limit": 0,
    "sampled": False,
    "settings": [],
    "metrics": [],
    "reference": None,
}


def _split(tid: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
    """A wide table as tables of at most :data:`~rageval.report.tables.MAX_COLUMNS` columns after the first."""
    out = []
    for i in range(1, max(2, len(columns)), T.MAX_COLUMNS):
        cut = [0, *range(i, min(i + T.MAX_COLUMNS, len(columns)))]
        out.append(
            {
                "id": tid if i == 1 else f"{tid}-{i // T.MAX_COLUMNS + 1}",
                "columns": [columns[j] for j in cut],
                "rows": [[r[j] for j in cut] for r in rows],
            }
        )
    return out


def _status_line(an: Analysis) -> str:
    n = sum(r["n_records"] for r in an.summary)
    ok = sum(r["n_ok"] for r in an.summary)
    if ok == n:
        return f"All {n:,} records are ok ({len(an.summary)} settings)."
    return f"{ok:,} of {n:,} records are ok; the table below counts the rest by status and setting."


def _constant(an: Analysis, page: PageParts) -> list[tuple[str, str]]:
    out = []
    for m in page.constant_metrics:
        means = [st["mean"] for r in an.summary if (st := r["metrics"].get(m)) and st["mean"] is not None]
        out.append((m, T.fmt(means[0], 3) if means else UNDEFINED))
    return out


def _number_figures(pareto: Sequence[Mapping[str, Any]], frontier: Sequence[Mapping[str, Any]], sweep) -> list:
    """The figures the page draws, in the page's order, each with its ``index`` in the embedded data and its
    element ``id`` (``fig-1``, ...): a setting or metric name never makes an id."""
    figs = [p["fig"] for p in pareto if p.get("fig")] + list(frontier) + ([sweep] if sweep else [])
    for i, f in enumerate(figs):
        f["index"], f["id"] = i, f"fig-{i + 1}"
        f["n_points"] = sum(len(sr["points"]) for panel in f["panels"] for sr in panel["series"])
    return figs


def render_html(
    an: Analysis,
    figures: Mapping[str, Any] | None = None,
    page: PageParts | None = None,
) -> str:
    """The report page of an analysis, with the figures the page draws (:func:`rageval.report.page_figures.
    page_figures`; None: no figure) and what writing it added (``page``).  Every value is escaped by the
    environment's autoescape; the few pieces of markup built here are :class:`markupsafe.Markup` with their
    values escaped (no ``| safe`` in the templates), and the figures' data is JSON with no ``<`` in it."""
    from markupsafe import Markup

    page = page or PageParts()
    figures = copy.deepcopy(dict(figures)) if figures else {"frontier": {}, "pareto": {}, "sweep": None}
    pareto = _pareto(an, figures["pareto"])
    frontier = frontier_figures(an, figures["frontier"])
    drawn = _number_figures(pareto, frontier, figures["sweep"])
    anchors = _anchors(an)
    links = [f"#{anchors[r['setting']]}" for r in an.summary]
    abstentions = T.abstentions_table(an)
    note = judge_note(an.manifest)
    sections = [
        ("headline", "Headline means"),
        ("findings", "Findings"),
        ("frontier", "Frontier"),
        ("summary", "Means by family"),
        ("contrasts", "Paired contrasts"),
        ("validity", "Validity"),
        *([("audit", "Second-evaluator audit")] if page.audits else []),
        *([("ppi", "Judge-error correction")] if an.ppi else []),
        ("examples", "What went wrong"),
        ("explorer", "Every record"),
        ("plumbing", "The run's plumbing"),
    ]
    counters_intro, judge_blocks = _judge_blocks(an, page)
    validity = _validity(an)
    ctx = {
        "findings": an.findings,
        "judge_lines": note.lines(),
        "judge_lead": note.lead(),
        "headline": _headline(an, links),
        "kind_labels": KIND_LABELS,
        "status_line": _status_line(an),
        "status_all_ok": all(r["n_ok"] == r["n_records"] for r in an.summary),
        "explorer": {k: v for k, v in (page.explorer or _NO_RECORDS).items() if k != "records"},
        "explorer_json": Markup(explorer_json(page.explorer or _NO_RECORDS)),  # no "<" in it: inert in <script>
        "statuses": list(STATUSES),
        "suite": an.suite,
        "seed": an.seed,
        "n_resamples": f"{an.n_resamples:,}",
        "n_test_resamples": _test_resamples(an),
        "resolution": T.resolution_lines(an.holm, warning=None),
        "resolution_warning": _warning(an),
        "cohort": an.cohort,
        "notes": an.notes,
        "left_out": T.left_out_line(an.cohort),
        "sections": sections,
        "failures": _tab(*T.failure_table(an), links),
        "gaps": an.gaps,
        "gaps_grounding": gaps_grounding_note(an.manifest, an.gaps, code=str),
        "direction_legend": T.DIRECTION_LEGEND,
        "means": means_blocks(an, links, undefined=UNDEFINED),
        "abstentions": _tab(*abstentions),
        "abstentions_note": T.ABSTENTIONS_NOTE,
        "undefined": _split("undefined-table", *T.undefined_table(an)),
        "family_line": T.family_counts_line(an),
        "contrasts_intro": C.contrasts_intro(an),
        "gain_intro": C.gain_intro(an),
        "contrasts": _contrasts(an) if an.contrasts else [],
        "contrasts_note": an.contrasts_note or "",
        "alpha": f"{C.ALPHA:g}",
        "frontier_alpha": f"{an.frontier.get('alpha', 0.05):g}",
        "pareto": pareto,
        "unplotted": page.unplotted,
        "constant": _constant(an, page),
        "figures": frontier,
        "flat_x": _flat_note(an.fixed_axes(["achieved_ratio"])),
        "validity": validity,
        "validity_note": an.validity.get("note"),
        "sweep": _sweep(an),
        "sweep_fig": figures["sweep"],
        "figures_json": Markup(figures_json(drawn)),  # no "<" in it: inert in <script>
        "examples": _examples(an),
        "audits": audit_blocks(page.audits),
        "ppi": ppi_blocks(an.ppi),
        "run_counters_begin": Markup(RUN_COUNTERS_BEGIN),
        "run_counters_end": Markup(RUN_COUNTERS_END),
        "counters_intro": counters_intro,
        "judge_blocks": judge_blocks,
        "manifest_json": json_text(an.manifest, indent=2, default=str),
    }
    return _env().get_template("report.html.j2").render(**ctx)
