"""What a run found, in sentences generated from its statistics: the report's first section, the last lines of
``rageval suite`` / ``rageval score`` and ``report.json``'s ``findings`` (docs/statistics.md#findings).

Each finding is ``{"kind", "text"}`` (``text``: plain, `backquoted` names; an ``effect`` adds its ``items``,
one sentence each), in this order:

* ``warning``: anything that changes how to read the numbers (the Holm floor above alpha, a small cohort,
  settings left out, judge abstentions, windowed or truncated judge inputs);
* ``effect``: per contrast family and metric family, the largest effects with Holm p < alpha (at most
  :data:`PER_FAMILY`, at most two per metric), each with both means, its CI and adjusted p; a row whose metric
  is fixed by construction in either setting (:mod:`rageval.diagnostics.structural`) is never an effect;
* ``gap``: the settings whose emitted − grounded gap is non-zero, with both means;
* ``frontier``: per Pareto pair, the non-dominated settings and the paired support (a degenerate frontier in
  one sentence);
* ``validity``: answer-in-context against retrieval recall as predictors of the answer metric;
* ``mediation``: recall -> answer-in-context -> the answer metric, pooled: the total, indirect and direct effects
  with their cluster-bootstrap intervals and the proportion mediated;
* ``gain``: one finding, its ``items`` a sentence per contrast on the answer metric that carries a gain
  decomposition and sets the packer against another setting or has Holm p < alpha (at most :data:`GAIN_SHOWN`,
  in the declared order): how much of its effect comes from the questions where only one side has the answer in
  its context;
* ``structural``: the values fixed by construction, with their reason;
* with human labels (``rageval report --human-labels``), a ``warning`` per contrast whose judge-only conclusion
  flips under judge-error correction (sign or significance), after the other warnings.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rageval.report.contrast_tables import ALPHA, contrast_families
from rageval.report.grounding import gap_grounding
from rageval.report.packing_findings import GAIN_SHOWN, gain_findings, mediation_findings
from rageval.report.packing_findings import signed as _signed
from rageval.report.result import Analysis, Finding
from rageval.report.tables import MEAN_FAMILIES, fmt_p, left_out_line, metric_family, structural_mark

__all__ = [
    "findings",
    "with_findings",
    "findings_lines",
    "frontier_sentence",
    "PER_FAMILY",
    "SMALL_COHORT",
    "structural_reason",
    "TEMPLATES",
    "GAIN_SHOWN",
    "PPI_FLIPS",
]

#: effects listed per (contrast family, metric family)
PER_FAMILY = 4
#: a cohort below this many questions (or clusters) gets a warning: wide intervals, coarse p-values
SMALL_COHORT = 30
#: every sentence shape this module writes (its template), by id: ``tests/test_findings_harness.py`` checks each
#: against the numbers it prints over random analyses, fails on a sentence that matches none of them and on an id
#: it has no check for — add a new sentence here and there
TEMPLATES = (
    "warning_resolution",
    "warning_small_cohort",
    "warning_empty_cohort",
    "warning_left_out",
    "warning_judge_counter",
    "warning_abstentions",
    "effect_head",
    "effect_item",
    "gap",
    "frontier_constant",
    "frontier_degenerate",
    "frontier_front",
    "validity_tracks",
    "validity_correlated",
    "validity_range",
    "validity_constant",
    "validity_one_setting",
    "validity_interval",
    "validity_interval_includes",
    "structural_fixed",
    "structural_relation",
    "mediation",
    "mediation_undefined",
    "gain_head",
    "gain",
    "ppi_flip",
)
#: record counters whose positive mean in a setting changes how to read its judge's scores
JUDGE_COUNTERS = {
    "judge_inputs_windowed": "judge inputs longer than the judge's window were scored window by window",
    "judge_inputs_truncated": "judge inputs were truncated to the judge's window",
}


def _f3(x: Any) -> str:
    return "undefined" if x is None else f"{x:.3f}"


def _p_text(p: float) -> str:
    """A Holm p below :data:`ALPHA` as :func:`fmt_p` writes it, with more decimals where that would round it up
    to alpha or above (0.04996 is written 0.04996, not 0.0500)."""
    s, digits = fmt_p(p), 4
    while p < ALPHA <= float(s) and digits < 12:
        digits += 1
        s = f"{p:.{digits}f}"
    return s


def structural_reason(an: Analysis, c: Mapping[str, Any]) -> str | None:
    """The reason a contrast row is fixed by construction (its value in either setting, or a gap that is 0 by
    construction), else None: such a row is never an effect."""
    if c.get("kind") == "gap":
        gap = next((g for g, (x, y) in an.gaps.items() if (x, y) == (c["metric_a"], c["metric_b"])), None)
        m = structural_mark(an, c["a"], gap) if gap else None
        return m["reason"] if m else None
    for s, k in ((c["a"], c["metric_a"]), (c["b"], c["metric_b"])):
        m = structural_mark(an, s, k)
        if m and m["fixed"]:
            return str(m["reason"])
    return None


def _effect_text(c: Mapping[str, Any]) -> str:
    better = (c["effect"] > 0) == (c["direction"] == "higher")
    verdict = "" if c["direction"] not in ("higher", "lower") else (", better" if better else ", worse")
    return (
        f"`{c['a']}` − `{c['b']}` on `{c['metric']}`: {_signed(c['effect'])} ({_f3(c['mean_a'])} vs "
        f"{_f3(c['mean_b'])}; 95% CI [{c['ci_low']:+.3f}, {c['ci_high']:+.3f}], Holm p {_p_text(c['p_holm'])}"
        f"{verdict})."
    )


def _effects(an: Analysis) -> list[Finding]:
    out: list[Finding] = []
    for fam, sig, _rest in contrast_families(an):
        rows = [c for c in sig if c["effect"] and c["ci_low"] is not None and not structural_reason(an, c)]
        for mfam in MEAN_FAMILIES:
            mine = sorted(
                (c for c in rows if metric_family(c["metric"]) == mfam), key=lambda c: -abs(c["effect"] or 0.0)
            )
            shown: list[Mapping[str, Any]] = []
            for c in mine:
                if sum(x["metric"] == c["metric"] for x in shown) < 2 and len(shown) < PER_FAMILY:
                    shown.append(c)
            if shown:
                where = f" ({fam})" if fam != "contrasts" else ""
                head = f"Largest supported {mfam} effects{where}, of {len(mine)} with Holm p < {ALPHA:g}:"
                out.append({"kind": "effect", "text": head, "items": [_effect_text(c) for c in shown]})
    return out


def _mean(row: Mapping[str, Any], key: str) -> float | None:
    return ((row.get("metrics") or {}).get(key) or {}).get("mean")


def _gaps(an: Analysis) -> list[Finding]:
    out: list[Finding] = []
    for gap, (a, b) in an.gaps.items():
        parts = []
        for r in an.summary:
            g = _mean(r, gap)
            if g is not None and abs(g) > 1e-12 and not structural_mark(an, r["setting"], gap):
                parts.append(f"`{r['setting']}` {_f3(_mean(r, a))} vs {_f3(_mean(r, b))} (gap {_signed(g)})")
        if parts:
            n = len(an.summary)
            out.append(
                {
                    "kind": "gap",
                    "text": f"`{a}` − `{b}` (what the reader saw vs the source) is non-zero in {len(parts)} of {n} "
                    f"settings: {'; '.join(parts)} ({gap_grounding(an.manifest, gap)}).",
                }
            )
    return out


def frontier_sentence(p: Mapping[str, Any]) -> tuple[str, bool]:
    """``(the sentence, degenerate)`` of a Pareto pair: degenerate when one axis is constant, or the frontier
    is one setting among several that reach the best value (the figure adds nothing to the sentence)."""
    pts = {s: v for s, v in (p.get("points") or {}).items() if v and all(x is not None for x in v)}
    dirs = p.get("directions") or ["lower", "higher"]
    ys = [v[1] for v in pts.values()]
    best = (max if dirs[1] == "higher" else min)(ys) if ys else None
    at_best = [s for s, v in pts.items() if best is not None and math.isclose(v[1], best, abs_tol=1e-9)]
    head = f"Frontier of `{p['y']}` vs `{p['x']}`"
    if best is not None and len({round(y, 9) for y in ys}) == 1:
        return f"{head}: every setting has `{p['y']}` = {best:.3f}; only `{p['x']}` separates them.", True
    if len(p["frontier"]) == 1 and len(at_best) > 1:
        return (
            f"{head} is degenerate: {len(at_best)} of {len(pts)} settings reach the best `{p['y']}` ({best:.3f}); "
            f"the frontier is the one of them with the best `{p['x']}`, `{p['frontier'][0]}`."
        ), True
    front = ", ".join(f"`{s}`" for s in p["frontier"])
    return (
        f"{head}: non-dominated {front}; {p['n_supported']} of {len(p['relations'])} dominance relations "
        "supported by the paired test."
    ), False


def _frontier(an: Analysis) -> list[Finding]:
    pairs = an.frontier.get("pairs") or []
    return [{"kind": "frontier", "text": frontier_sentence(p)[0]} for p in pairs if not p.get("note")]


def _strength(r_aic: str, r_rec: str, metric: str) -> str:
    """Answer-in-context against retrieval recall as predictors of ``metric``, compared by |r| as printed (the
    strength of the linear relation, what R² orders); the sign said in words where either r is negative
    (docs/statistics.md#findings)."""
    a, b = float(r_aic), float(r_rec)
    cmp = "more" if abs(a) > abs(b) else "less" if abs(a) < abs(b) else "as"
    than = "as" if cmp == "as" else "than"
    if a >= 0 and b >= 0:
        return f"Answer-in-context tracks `{metric}` {cmp} closely {than} retrieval recall does (pooled r = "
    return f"Answer-in-context is {cmp} strongly correlated with `{metric}` {than} retrieval recall is (by |r|: pooled r = "


def _sign_clause(r_aic: str, r_rec: str, metric: str) -> str:
    a, b = float(r_aic) < 0, float(r_rec) < 0
    if a and b:
        return f"; both correlations are negative: a higher value of either goes with a lower `{metric}`"
    if a:
        return f"; answer-in-context's is negative: a higher answer-in-context goes with a lower `{metric}`"
    if b:
        return f"; retrieval recall's is negative: a higher recall goes with a lower `{metric}`"
    return ""


def _validity(an: Analysis) -> list[Finding]:
    v = an.validity
    pooled = v.get("pooled") or {}
    if not v.get("available") or pooled.get("r_aic_f1") is None or pooled.get("r_recall_f1") is None:
        return []
    r_aic, r_rec, metric = f"{pooled['r_aic_f1']:.3f}", f"{pooled['r_recall_f1']:.3f}", str(v["answer_metric"])
    text = (
        f"{_strength(r_aic, r_rec, metric)}{r_aic} vs {r_rec}, n = {pooled['n']}; adding it to recall changes R² "
        f"by {_f3(pooled.get('delta_r2'))}){_sign_clause(r_aic, r_rec, metric)}."
    )
    aic = [(r["setting"], m) for r in an.summary if (m := _mean(r, "answer_in_context")) is not None]
    rec = [m for r in an.summary if (m := _mean(r, "retrieval_recall")) is not None]
    n = len(an.summary)
    if len(aic) == n and len(rec) == n and len({round(m, 9) for m in rec}) == 1:
        lo, hi = min(aic, key=lambda x: x[1]), max(aic, key=lambda x: x[1])
        if n == 1:
            text += (
                f" Its one setting, `{hi[0]}`, has retrieval recall {rec[0]:.3f} and `answer_in_context` {hi[1]:.3f}."
            )
        elif float(f"{hi[1]:.3f}") == float(f"{lo[1]:.3f}"):  # one value as printed
            text += f" Retrieval recall is {rec[0]:.3f} and `answer_in_context` {hi[1]:.3f} in every setting."
        else:
            text += (
                f" Retrieval recall is {rec[0]:.3f} in every setting while `answer_in_context` runs from "
                f"{hi[1]:.3f} (`{hi[0]}`) to {lo[1]:.3f} (`{lo[0]}`): recall does not see what compression removes."
            )
    return [{"kind": "validity", "text": text}, *_validity_interval(an)]


def _validity_interval(an: Analysis) -> list[Finding]:
    """The pooled r_AIC − r_recall with its cluster-bootstrap interval and test-inversion p, saying whether the
    interval excludes 0 (docs/statistics.md#findings)."""
    v = an.validity
    pooled = v.get("pooled") or {}
    d, lo, hi, p = (pooled.get(k) for k in ("r_diff", "r_diff_ci_low", "r_diff_ci_high", "r_diff_p"))
    if d is None or lo is None or hi is None or p is None:
        return []
    unit = "cluster" if an.suite.get("cluster_key") else "question"
    k = int(pooled["n_clusters"])
    p_text = f"p {fmt_p(p)}" if p > 0 else f"p below 1/{int(pooled['n_resamples'])}: every replicate on one side"
    if lo > 0 or hi < 0:
        said = f"the interval excludes 0, answer-in-context's r is the {'higher' if lo > 0 else 'lower'} (signed, not by |r|)"
    else:
        said = "the interval includes 0, so these data do not tell the two correlations apart"
    return [
        {
            "kind": "validity",
            "text": (
                f"r(answer-in-context, `{v['answer_metric']}`) − r(retrieval recall, `{v['answer_metric']}`) = "
                f"{_signed(d)} (95% cluster-bootstrap CI [{_signed(lo)}, {_signed(hi)}] over {k} {unit}"
                f"{'s' if k != 1 else ''}, test-inversion {p_text}): {said}."
            ),
        }
    ]


def _listed(names: Sequence[str], n: int) -> str:
    shown = ", ".join(names[:6]) + (", …" if len(names) > 6 else "")
    return f"in {len(names)} of {n} settings ({shown})"


def _structural(an: Analysis) -> list[Finding]:
    by: dict[tuple[str, str, bool], list[str]] = {}
    for r in an.summary:
        for m, mark in (an.structural.get(r["setting"]) or {}).items():
            if m in an.metric_names and not m.endswith("_excl_abstain"):
                cell = f"`{r['setting']}` = {_f3(_mean(r, m))}" if mark["fixed"] else f"`{r['setting']}`"
                by.setdefault((m, mark["reason"], mark["fixed"]), []).append(cell)
    n = len(an.summary)
    return [
        {
            "kind": "structural",
            "text": f"{'Not an effect' if fixed else 'By construction'}: `{m}` {_listed(v, n)}, {why}.",
        }
        for (m, why, fixed), v in by.items()
    ]


def _judge_warnings(an: Analysis) -> list[str]:
    out = []
    for key, what in JUDGE_COUNTERS.items():
        hit = [r["setting"] for r in an.summary if (_mean(r, key) or 0) > 0]
        if hit:
            out.append(
                f"{what} in {len(hit)} setting{'s' if len(hit) > 1 else ''} ({', '.join(hit[:4])}{', …' if len(hit) > 4 else ''})."
            )
    sums = [(r["setting"], r["judge_abstentions"]["sum"] or 0) for r in an.summary if "judge_abstentions" in r]
    abst = [(s, n) for s, n in sums if n]
    if abst:
        total = sum(n for _, n in abst)
        times, where = "time" if total == 1 else "times", "setting" if len(abst) == 1 else "settings"
        out.append(f"The judge abstained {total} {times} in {len(abst)} {where} (counted as not supported).")
    return out


def _warnings(an: Analysis) -> list[Finding]:
    lines = []
    res = an.holm.get("resolution") or {}
    if res.get("warning"):
        lines.append(str(res["warning"]))
    c = an.cohort
    n = c.get("n_clusters") or c["n"]
    if 0 < n < SMALL_COHORT:
        unit = ("cluster" if c.get("n_clusters") else "question") + ("s" if n > 1 else "")
        lines.append(f"Small cohort: {n} {unit}; intervals are wide and p-values coarse.")
    if c["n"] == 0:
        lines.append("The common cohort is empty: every mean and contrast is undefined.")
    gone = left_out_line(an.cohort)
    if gone:
        lines.append(gone)
    lines += _judge_warnings(an)
    return [{"kind": "warning", "text": t} for t in lines]


#: the flips of judge-only conclusions under judge-error correction listed (the largest judge-only effects first)
PPI_FLIPS = 4
_FLIP_WORDS = {"sign": "changes sign", "lost": "is no longer significant", "gained": "becomes significant"}


def _p_any(p: float | None) -> str:
    """A Holm p as printed: below alpha never rounded up to it (:func:`_p_text`), undefined for None."""
    if p is None:
        return "undefined"
    return _p_text(p) if p < ALPHA else fmt_p(p)


def _ppi_flips(an: Analysis) -> list[Finding]:
    """A warning per contrast whose judge-only conclusion flips under judge-error correction (its sign, or its
    significance at Holm p < alpha; :mod:`rageval.report.ppi`), at most :data:`PPI_FLIPS`."""
    every = (an.ppi or {}).get("contrasts") or []
    rows = [r for r in every if r.get("flip") in _FLIP_WORDS]
    rows.sort(key=lambda r: -abs(r["judge_effect"]))
    out: list[Finding] = []
    for r in rows[:PPI_FLIPS]:
        ci = "undefined" if r["ci_low"] is None else f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"
        out.append(
            {
                "kind": "warning",
                "text": f"Under judge-error correction (PPI++, {r['n_labelled']} human-labelled questions) `{r['a']}` "
                f"− `{r['b']}` on `{r['metric']}` {_FLIP_WORDS[r['flip']]}: judge-only {_signed(r['judge_effect'])} "
                f"(Holm p {_p_any(r['judge_p_holm'])}), corrected {_signed(r['estimate'])} (95% CI "
                f"{ci}, Holm p {_p_any(r['p_holm'])}); {len(rows)} of "
                f"{len(every)} contrasts flip in all (ppi.md).",
            }
        )
    return out


def findings(an: Analysis) -> list[Finding]:
    """The findings of an analysis (see the module doc), as ``[{"kind", "text"}]``."""
    return [
        *_warnings(an),
        *_ppi_flips(an),
        *_effects(an),
        *_gaps(an),
        *_frontier(an),
        *_validity(an),
        *mediation_findings(an),
        *gain_findings(an),
        *_structural(an),
    ]


def with_findings(an: Analysis) -> Analysis:
    """``an`` with the findings of its numbers (a new value): after any step that changes them (the union's Holm
    adjustment: the p-values the tables show)."""
    return dataclasses.replace(an, findings=tuple(findings(an)))


def findings_lines(found: Sequence[Mapping[str, Any]]) -> list[str]:
    """The findings as terminal lines: ``! text`` for a warning, ``- text`` otherwise, an effect's items below
    it as ``    text``."""
    out = []
    for f in found:
        out.append(("! " if f["kind"] == "warning" else "- ") + f["text"].replace("`", ""))
        out += ["    " + i.replace("`", "") for i in f.get("items") or []]
    return out
