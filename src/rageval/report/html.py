"""The self-contained static HTML report: one file, no scripts, no external resources.

Images are inlined as ``data:`` URIs; the manifest is embedded as escaped JSON.  No
wall-clock time is written, so a rebuild from the same records is byte-identical.
"""

from __future__ import annotations

import base64
import html
import json
import re
from typing import Any, Mapping, Sequence

from rageval.report import tables as T

__all__ = ["render_html"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:80rem;padding:0 1rem;color:#222}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.2rem .5rem;text-align:right;white-space:nowrap}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
td.undef{color:#a33;font-style:italic}
#contrasts-table td:last-child,#validity-table td:last-child{text-align:left;white-space:normal}
.scroll{overflow-x:auto}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #eee}
pre{background:#f7f7f7;padding:.8rem;overflow:auto;font-size:.8rem;max-height:40rem}
.note{color:#555;font-size:.9rem}
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _table(tid: str, columns: Sequence[str], rows: Sequence[Sequence[str]], *, undefined: str = "undefined") -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for c in row:
            cls = ' class="undef"' if c in (undefined, "NA") or c.startswith(undefined) else ""
            cells.append(f"<td{cls}>{_e(c)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="scroll"><table id="{_e(tid)}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _code(text: str) -> str:
    """Escape ``text`` and turn its `backquoted` spans into ``<code>``."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", _e(text))


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<figure><img alt="{_e(alt)}" src="data:image/png;base64,{data}"><figcaption class="note">{_e(alt)}</figcaption></figure>'


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


RUN_COUNTERS_BEGIN = "<!-- run-counters:begin -->"
RUN_COUNTERS_END = "<!-- run-counters:end -->"


def _judge_table(stats: Mapping[str, Any]) -> str:
    if not stats:
        return (
            '<p class="note">The manifest records no <code>judge_stats</code> (no judge ran, or the runner keeps '
            "its cache counters in run_stats.json, outside the reproducible outputs).</p>"
        )
    if all(isinstance(v, Mapping) and all(_scalar(x) for x in v.values()) for v in stats.values()):
        keys = list(dict.fromkeys(k for v in stats.values() for k in v))
        rows = [[str(j), *[T.fmt(v.get(k), 4, na="") for k in keys]] for j, v in stats.items()]
        return _table("judge-table", ["judge", *keys], rows)
    flat: list[list[str]] = []

    def walk(prefix: str, v: Any) -> None:
        if isinstance(v, Mapping):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else str(k), x)
        else:
            flat.append([prefix, json.dumps(v, sort_keys=True) if not _scalar(v) else T.fmt(v, 4, na="null")])

    walk("", stats)
    return _table("judge-table", ["counter", "value"], flat)


def render_html(
    an: dict[str, Any], figures: Mapping[str, Mapping[str, Any]], sweep_fig: Mapping[str, Any] | None
) -> str:
    s = an["suite"]
    c = an["cohort"]
    out: list[str] = []
    add = out.append
    add('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">')
    add('<meta name="viewport" content="width=device-width, initial-scale=1">')
    add('<link rel="icon" href="data:,">')
    add(f"<title>rageval report: {_e(s.get('name'))}</title><style>{_CSS}</style></head><body>")
    add(f"<h1>rageval report: {_e(s.get('name'))}</h1>")
    add(
        f"<p>Suite hash <code>{_e(s.get('hash'))}</code>, dataset <b>{_e(s.get('dataset'))}</b>, "
        f'seed {_e(an["seed"])}, {an["n_resamples"]:,} resamples. Common cohort: <b id="cohort-n">{c["n"]}</b> of '
        f"{c['n_questions']} questions are <code>ok</code> in every setting"
        + (f" ({c['n_clusters']} clusters by <code>{_e(s.get('cluster_key'))}</code>)" if c.get("n_clusters") else "")
        + ". Means are question-weighted over the cohort; undefined values are left out and counted, never scored 0.</p>"
    )
    if c["n"] == 0:
        add('<p class="undef"><b>The common cohort is empty: every mean and contrast is undefined.</b></p>')
    if an.get("notes"):  # the run's notes on its inputs (rageval score)
        add('<ul id="notes" class="note">' + "".join(f"<li>{_code(n)}</li>" for n in an["notes"]) + "</ul>")
    abstentions = T.abstentions_table(an)
    sections = [
        ("failures", "failures"),
        ("summary", "means"),
        *([("abstentions", "judge abstentions")] if abstentions[1] else []),
        ("undefined", "undefined counts"),
        ("contrasts", "contrasts"),
        ("frontiers", "frontier plots"),
        ("validity", "validity"),
        ("sweep", "re-attribution sweep"),
        ("judges", "judge counters"),
        ("manifest", "manifest"),
    ]
    add('<nav class="note">' + " · ".join(f'<a href="#{k}">{v}</a>' for k, v in sections) + "</nav>")

    add('<h2 id="failures">Records by status and the common cohort</h2>')
    add(_table("failures-table", *T.failure_table(an)))

    add('<h2 id="summary">Means on the common cohort</h2>')
    if an["gaps"]:
        add(
            '<p class="note">Emitted − grounded gap per question, then averaged: '
            + ", ".join(f"<code>{_e(g)}</code> = {_e(a)} − {_e(b)}" for g, (a, b) in an["gaps"].items())
            + ".</p>"
        )
    add(f'<p class="note">{_e(T.DIRECTION_LEGEND)}</p>')
    add(_table("summary-table", *T.means_table(an)))

    if abstentions[1]:
        add('<h2 id="abstentions">Judge abstentions</h2>')
        add(f'<p class="note">{_code(T.ABSTENTIONS_NOTE)}</p>')
        add(_table("abstentions-table", *abstentions))

    add('<h2 id="undefined">Defined / undefined counts</h2>')
    add(_table("undefined-table", *T.undefined_table(an)))

    add('<h2 id="contrasts">Paired contrasts</h2>')
    clustered = c.get("n_clusters") is not None
    add(
        f'<p class="note">Effect = mean(a) − mean(b) over questions where both are defined (drops counted). '
        f"{int(an['confidence'] * 100)}% percentile {'cluster ' if clustered else ''}bootstrap intervals; two-sided "
        f"paired sign-flip p-values{' (cluster-level flips)' if clustered else ''}; Holm over all "
        f"{len(an['contrasts'])} declared contrasts. Non-significance does not establish equivalence.</p>"
    )
    if an["contrasts"]:
        add(_table("contrasts-table", *T.contrasts_table(an)))
    else:
        add(f'<p class="note">{_e(an["contrasts_note"])}</p>')

    add('<h2 id="frontiers">Frontier plots</h2>')
    if an.get("unplotted"):
        add(
            '<p class="note">Not plotted, undefined in every setting: '
            + ", ".join(f"<code>{_e(m)}</code>" for m in an["unplotted"])
            + ".</p>"
        )
    if figures:
        for name, fig in figures.items():
            add(_img(fig["png_bytes"], f"frontier: {', '.join(fig['metrics'])} vs achieved ratio"))
    else:
        add('<p class="note">No metric with a direction to plot.</p>')

    add('<h2 id="validity">Validity: answer-in-context vs retrieval recall</h2>')
    v = an["validity"]
    if v.get("available"):
        vrows = T.validity_rows(an)
        cols = [
            "group",
            "n",
            "r(AIC, F1)",
            "r(recall, F1)",
            "R² recall",
            "R² recall+AIC",
            "ΔR²",
            "F1 | in context",
            "F1 | not in context",
            "note",
        ]
        rows = [
            [
                r["group"],
                str(r["n"]),
                *[
                    T.fmt(r[k], 3, na="undefined")
                    for k in (
                        "r_aic_f1",
                        "r_recall_f1",
                        "r2_recall",
                        "r2_recall_aic",
                        "delta_r2",
                        "mean_f1_in_context",
                        "mean_f1_not_in_context",
                    )
                ],
                r.get("note") or "",
            ]
            for r in vrows
        ]
        add(
            f'<p class="note">Answer metric: <code>{_e(v["answer_metric"])}</code>; pooled over every ok '
            "(question, setting) record, then per setting.</p>"
        )
        add(_table("validity-table", cols, rows))
    else:
        add(f'<p class="note">{_e(v.get("note"))}</p>')

    add('<h2 id="sweep">Re-attribution threshold sweep</h2>')
    if an["sweep"]:
        rows = [
            [
                r["setting"],
                f"{r['threshold']:g}",
                T.fmt(r["rate"], 3, na="undefined"),
                str(r["rate_n"]),
                T.fmt(r["grounded_precision"], 3, na="undefined"),
                str(r["grounded_precision_n"]),
            ]
            for r in an["sweep"]
        ]
        add(
            _table(
                "sweep-table", ["setting", "threshold", "re-attributable rate", "n", "grounded precision", "n"], rows
            )
        )
        if sweep_fig:
            add(_img(sweep_fig["png_bytes"], "re-attribution threshold sweep"))
    else:
        add('<p class="note">No record carries <code>extra.reattribution_sweep</code>.</p>')

    add('<h2 id="judges">Judge cache and call counters</h2>')
    # The counters describe how this invocation got its numbers (cache hits differ after a resume), so
    # they sit between markers: everything outside them is byte-identical for the same records and seed.
    add(RUN_COUNTERS_BEGIN)
    counters = an.get("run_counters") or {}
    if counters:
        add(
            '<p class="note">Counters of the last invocation that wrote this report (<code>run_stats.json</code> / '
            "<code>rescore_stats.json</code>); they depend on what was already cached, not on the results.</p>"
        )
        add(_judge_table({"judge": counters.get("judge", {})} if counters.get("judge") else {}))
        rest = {k: v for k, v in counters.items() if k != "judge"}
        if rest:
            add(_judge_table({"records": {k: v for k, v in rest.items() if _scalar(v)}}))
    else:
        add(_judge_table(an.get("judge_stats") or {}))
    add(RUN_COUNTERS_END)

    add('<h2 id="manifest">Manifest</h2>')
    add(f'<pre id="manifest-json">{_e(json.dumps(an["manifest"], indent=2, sort_keys=True, default=str))}</pre>')
    add("</body></html>\n")
    return "\n".join(out)
