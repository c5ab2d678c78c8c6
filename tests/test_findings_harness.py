"""Findings that are true: every sentence template of :mod:`rageval.report.findings`, over random analyses, says
what the numbers it prints say (docs/statistics.md#findings).

Each finding is matched against the templates below (:data:`CHECKS`, one per id of
:data:`rageval.report.findings.TEMPLATES`); a sentence that matches none fails, and so does a template id with no
check or one the generator cannot reach.  A check parses the numbers the sentence prints and asserts its words
("more closely", "from X to Y", "non-zero", "better", "Holm p < 0.05", counts and plurals) against them and
against the analysis.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from rageval.diagnostics.structural import FACTS, STRUCTURAL, structural_marks
from rageval.labels.correct import flip_of
from rageval.report.contrast_tables import ALPHA
from rageval.report.findings import (
    GAIN_SHOWN,
    JUDGE_COUNTERS,
    PER_FAMILY,
    PPI_FLIPS,
    SMALL_COHORT,
    TEMPLATES,
    findings,
    structural_reason,
)
from rageval.report.grounding import gap_grounding
from rageval.report.result import Analysis
from rageval.report.tables import fmt_p, metric_family
from rageval.stats.gain import GAIN_GROUPS

SETTINGS = ["base", "prune@0.5", "rerank@96", "naive", "submodular@160"]
METRICS = [
    "answer_f1",
    "answer_in_context",
    "retrieval_recall",
    "emitted_precision",
    "grounded_precision",
    "gap_precision",
    "emitted_recall",
    "unsupported_declared_span",
    "re_attributability",
    "judge_inputs_windowed",
    "judge_inputs_truncated",
]
CONTRASTED = ["answer_f1", "answer_in_context", "emitted_precision", "grounded_precision", "unsupported_declared_span"]
RULES = {r.reason: r for r in STRUCTURAL}
# values near the printed precision's edges: ties at three decimals, a difference that rounds to 0, p near alpha
MEANS = st.one_of(
    st.none(),
    st.floats(0, 1),
    st.sampled_from([0.0, 1.0, 0.341, 0.3414, 0.34149, 0.3406, 0.5, 0.50001]),
)
RS = st.one_of(st.floats(-1, 1), st.sampled_from([-0.091, -0.214, 0.0, -0.0004, 0.1234, 0.1236, -0.1234, 0.416]))
PS = st.one_of(st.floats(0, 1), st.sampled_from([1e-5, 0.001, 0.0049, 0.04996, 0.049999, 0.05, 0.3125]))


def _dominates(u, v, dirs) -> bool:
    better = [(a > b) if d == "higher" else (a < b) for a, b, d in zip(u, v, dirs)]
    worse = [(a < b) if d == "higher" else (a > b) for a, b, d in zip(u, v, dirs)]
    return any(better) and not any(worse)


@st.composite
def analyses(draw) -> Analysis:
    names = draw(st.lists(st.sampled_from(SETTINGS), min_size=1, max_size=5, unique=True))
    const_recall = draw(st.booleans())
    const_aic = draw(st.booleans())
    many_gains = draw(st.booleans())  # every ordered pair on answer_f1, with a gain decomposition: past GAIN_SHOWN
    recall0, aic0 = draw(st.floats(0, 1)), draw(MEANS.filter(lambda x: x is not None))
    facts = {s: {f: draw(st.booleans()) for f in FACTS} for s in names}
    marks = structural_marks(facts, METRICS)
    means: dict[str, dict[str, float | None]] = {}
    for s in names:
        m = {k: draw(MEANS) for k in METRICS}
        m["judge_inputs_windowed"] = draw(st.sampled_from([0.0, 0.5, None]))
        m["judge_inputs_truncated"] = draw(st.sampled_from([0.0, 1.0, None]))
        if many_gains and m["answer_f1"] is None:
            m["answer_f1"] = draw(st.floats(0, 1))
        if const_recall:  # the setting of the range sentence: every value defined
            m["retrieval_recall"] = recall0
            m["answer_in_context"] = draw(MEANS.filter(lambda x: x is not None))
        if const_aic:
            m["answer_in_context"] = min(1.0, max(0.0, aic0 + draw(st.sampled_from([0.0, 1e-5, -1e-5]))))
        for k, mark in (marks.get(s) or {}).items():  # what the engine gives a setting of that shape
            if mark["fixed"]:
                m[k] = draw(st.sampled_from(RULES[mark["reason"]].values))
        if facts[s]["verbatim"]:
            m["grounded_precision"] = m["emitted_precision"]
        e, g = m["emitted_precision"], m["grounded_precision"]
        m["gap_precision"] = None if e is None or g is None else e - g
        means[s] = m
    rows = []
    for s in names:
        row: dict[str, Any] = {
            "setting": s,
            "n_records": 10,
            "n_ok": 10,
            "metrics": {k: {"mean": v, "n": 10, "n_undefined": 0} for k, v in means[s].items()},
        }
        if draw(st.booleans()):
            row["judge_abstentions"] = {"sum": draw(st.integers(0, 3)), "n_questions_with": 1, "n": 10}
        rows.append(row)
    contrasts = []
    direction = {k: draw(st.sampled_from(["higher", "lower", "none"])) for k in CONTRASTED}  # one per metric
    seen = set()
    for a, b in draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names)), max_size=8)):
        metric = draw(st.sampled_from(CONTRASTED))
        ma, mb = means[a][metric], means[b][metric]
        if a == b or ma is None or mb is None or (a, b, metric) in seen:
            continue
        seen.add((a, b, metric))
        contrasts.append(_contrast(draw, a, b, metric, ma, mb, direction[metric]))
    if many_gains:
        for a, b in itertools.permutations(names, 2):
            if (a, b, "answer_f1") not in seen:
                seen.add((a, b, "answer_f1"))
                ma, mb = means[a]["answer_f1"], means[b]["answer_f1"]
                contrasts.append(_contrast(draw, a, b, "answer_f1", ma, mb, direction["answer_f1"], gain=True))
    pairs = []
    for y in ["answer_f1", "emitted_precision"][: draw(st.integers(0, 2))]:
        dirs = [draw(st.sampled_from(["lower", "higher"])), draw(st.sampled_from(["lower", "higher"]))]
        ys = st.sampled_from([0.2, 0.5, 1.0]) if draw(st.booleans()) else st.floats(0, 1)
        points = {s: [draw(st.floats(0, 1)), draw(ys)] for s in names}
        front = [s for s in names if not any(_dominates(points[t], points[s], dirs) for t in names if t != s)]
        n_rel = draw(st.integers(0, 6))
        pairs.append(
            {
                "x": "achieved_ratio",
                "y": y,
                "directions": dirs,
                "points": points,
                "frontier": front,
                "relations": [{}] * n_rel,
                "n_supported": draw(st.integers(0, n_rel)),
            }
        )
    n = draw(st.integers(0, 60))
    clustered = draw(st.booleans())
    left_out = [
        {"setting": f"gone{i}", "n_unavailable": k, "n_records": k}
        for i, k in enumerate(draw(st.lists(st.integers(1, 20), max_size=2)))
    ]
    ppi = None
    if contrasts and draw(st.booleans()):  # human labels (rageval report --human-labels): the PPI++ contrasts
        ppi_rows = []
        for c in contrasts:
            est = draw(st.one_of(st.floats(-1, 1), st.sampled_from([0.0, -4e-05, 0.0004])))
            half, p = draw(st.floats(0, 0.5)), draw(PS)
            ppi_rows.append(
                {
                    "a": c["a"],
                    "b": c["b"],
                    "metric": c["metric"],
                    "n_labelled": draw(st.integers(2, 200)),
                    "judge_effect": c["effect"],
                    "judge_p_holm": c["p_holm"],
                    "estimate": est,
                    "ci_low": est - half,
                    "ci_high": est + half,
                    "p_holm": p,
                    "flip": flip_of(c["effect"], c["p_holm"], est, p, ALPHA),
                }
            )
        ppi = {"contrasts": ppi_rows}
    data = {
        "settings": [{"name": s, "compressor": s.split("@")[0], "budget": None} for s in names],
        "ppi": ppi,
        "summary": rows,
        "metric_names": METRICS,
        "gaps": {"gap_precision": ["emitted_precision", "grounded_precision"]},
        "contrasts": contrasts,
        "holm": {
            "families": {"contrasts": 1, "judges": 1},
            "resolution": {"warning": draw(st.sampled_from([None, "Holm floor 0.3125: no contrast can reach alpha."]))},
        },
        "cohort": {
            "n": n,
            "n_questions": n + 3,
            "n_clusters": draw(st.integers(1, 40)) if clustered and n else None,
            "left_out": left_out,
            "n_contrast_rows_left_out": draw(st.integers(0, 3)) if left_out else 0,
        },
        "structural": marks,
        "frontier": {"pairs": pairs},
        "validity": {
            "available": draw(st.booleans()),
            "answer_metric": "answer_f1",
            "pooled": {
                "r_aic_f1": draw(st.one_of(st.none(), RS)),
                "r_recall_f1": draw(st.one_of(st.none(), RS)),
                "n": draw(st.integers(3, 2000)),
                "delta_r2": draw(st.one_of(st.none(), st.floats(0, 1))),
                **_r_diff(draw),
            },
            "mediation": {"pooled": _mediation(draw)} if draw(st.booleans()) else {},
        },
    }
    return Analysis.from_json(data)


def _contrast(draw, a, b, metric, ma, mb, direction, gain=False) -> dict[str, Any]:
    effect = ma - mb
    half = draw(st.floats(0, 0.5))
    p = draw(PS)
    row = {
        "a": a,
        "b": b,
        "metric": metric,
        "metric_a": metric,
        "metric_b": metric,
        "kind": "pair",
        "family": draw(st.sampled_from(["contrasts", "judges"])),
        "direction": direction,
        "effect": effect,
        "mean_a": ma,
        "mean_b": mb,
        "ci_low": effect - half,
        "ci_high": effect + half,
        "p_value": p,
        "p_holm": p,
        "contrast": f"{a} - {b}: {metric}",
    }
    if metric == "answer_f1" and (gain or draw(st.booleans())):
        row["gain"] = _gain(draw, effect)
    return row


SMALL = st.one_of(st.floats(-1, 1), st.sampled_from([0.0, 4e-5, -4e-5, 0.0004, -0.0006, 0.5]))


def _gain(draw, effect: float) -> dict[str, Any]:
    """A gain decomposition of ``effect``: counts per group, contributions summing to it (0 for an empty group),
    shares, intervals or none (rageval.stats.gain's ``as_dict``)."""
    counts = {g: draw(st.integers(0, 12)) for g in GAIN_GROUPS}
    n = sum(counts.values())
    filled = [g for g in GAIN_GROUPS if counts[g]]
    contrib = {g: 0.0 for g in GAIN_GROUPS}
    for g in filled[:-1]:
        contrib[g] = draw(SMALL)
    if filled:
        contrib[filled[-1]] = effect - sum(contrib[g] for g in filled[:-1])
    groups = {}
    for g in GAIN_GROUPS:
        c = contrib[g]
        lo, hi = (None, None) if draw(st.booleans()) else (c - draw(st.floats(0, 0.3)), c + draw(st.floats(0, 0.3)))
        share = c / effect if effect and n and math.isfinite(c / effect) else None  # as_dict: NaN/inf -> None
        groups[g] = {"n": counts[g], "contribution": c, "ci_low": lo, "ci_high": hi, "share": share}
    return {"n": n, "n_dropped": 0, "effect": effect if n else None, "reason": None, "groups": groups}


def _mediation(draw) -> dict[str, Any]:
    """A pooled mediation analysis (rageval.stats.mediation's keys): defined with or without intervals, or
    undefined with its note."""
    n = draw(st.integers(4, 3000))
    if draw(st.integers(0, 3)) == 0:
        return {"n": n, **{k: None for k in ("a", "b", "c_prime", "indirect", "total", "proportion_mediated")},
                "note": draw(st.sampled_from(["recall is constant: no path from it", None]))}  # fmt: skip
    a, b, cp = draw(SMALL), draw(SMALL), draw(SMALL)
    ind = a * b
    tot = cp + ind
    out: dict[str, Any] = {
        "n": n, "a": a, "b": b, "c_prime": cp, "indirect": ind, "total": tot,
        "proportion_mediated": ind / tot if abs(tot) > 1e-9 else None, "note": None,
        "n_clusters": draw(st.one_of(st.none(), st.integers(1, 300))),
    }  # fmt: skip
    if draw(st.booleans()):
        for k in ("total", "indirect", "c_prime", "proportion_mediated"):
            x = out[k]
            lo = None if x is None else x - draw(st.one_of(st.floats(0, 1), st.just(0.0)))
            hi = None if x is None else x + draw(st.one_of(st.floats(0, 1), st.just(0.0)))
            out[f"{k}_ci_low"], out[f"{k}_ci_high"] = lo, hi
    return out


def _r_diff(draw) -> dict[str, Any]:
    """The pooled r_AIC − r_recall with its interval and test-inversion p (either bound at 0 or tiny included)."""
    bound = st.one_of(st.just(0.0), st.floats(-1e-4, 1e-4), st.floats(-2, 2))
    lo, hi = sorted([draw(bound), draw(bound)])
    return {
        "r_diff": draw(st.one_of(st.none(), st.floats(0, 1).map(lambda t: lo + (hi - lo) * t))),
        "r_diff_ci_low": draw(st.one_of(st.none(), st.just(lo))),
        "r_diff_ci_high": hi,
        "r_diff_p": draw(st.one_of(st.none(), st.just(0.0), st.floats(0, 1))),
        "n_clusters": draw(st.integers(1, 200)),
        "n_resamples": draw(st.sampled_from([200, 10_000])),
    }


# ---- the checks: each parses a sentence and asserts what it says against what it prints -------------------------

Check = Callable[[Analysis, "re.Match[str]"], None]


def _mean(an: Analysis, setting: str, key: str) -> float | None:
    row = next(r for r in an.summary if r["setting"] == setting)
    return row["metrics"][key]["mean"]


def _plural(word: str, k: int) -> str:
    return word if k == 1 else word + "s"


def _num(s: str) -> float | None:
    return None if s == "undefined" else float(s)


def _resolution(an, m):
    assert m.group(0) == an.holm["resolution"]["warning"]


def _small_cohort(an, m):
    c = an.cohort
    n = c.get("n_clusters") or c["n"]
    assert int(m["n"]) == n and 0 < n < SMALL_COHORT
    assert m["unit"] == _plural("cluster" if c.get("n_clusters") else "question", n)


def _empty_cohort(an, m):
    assert an.cohort["n"] == 0


def _left_out(an, m):
    gone = an.cohort["left_out"]
    listed = re.findall(r"(\S+) \((\d+) of (\d+) records unavailable\)", m["listed"])
    assert [(g["setting"], g["n_unavailable"], g["n_records"]) for g in gone] == [
        (s, int(u), int(r)) for s, u, r in listed
    ]
    assert all(int(u) == int(r) for _, u, r in listed)  # "every record unavailable"
    k = an.cohort["n_contrast_rows_left_out"]
    assert int(m["k"]) == k and m["rows"] == _plural("row", k)


def _judge_counter(an, m):
    key = next(k for k, what in JUDGE_COUNTERS.items() if what == m["what"])
    hit = [r["setting"] for r in an.summary if (_mean(an, r["setting"], key) or 0) > 0]
    k = int(m["k"])
    assert k == len(hit) and m["where"] == _plural("setting", k)
    shown = m["names"].split(", ")
    assert shown == hit[:4] + (["…"] if k > 4 else [])


def _abstentions(an, m):
    sums = [r["judge_abstentions"]["sum"] for r in an.summary if "judge_abstentions" in r]
    total, k = sum(sums), sum(1 for s in sums if s)
    assert (int(m["t"]), int(m["k"])) == (total, k) and total > 0
    assert m["times"] == _plural("time", total) and m["where"] == _plural("setting", k)


def _eligible(an, fam: str, mfam: str) -> list[Mapping[str, Any]]:
    return [
        c
        for c in an.contrasts
        if c.get("family", "contrasts") == fam
        and metric_family(c["metric"]) == mfam
        and c["p_holm"] is not None
        and c["p_holm"] < ALPHA
        and c["effect"]
        and c["ci_low"] is not None
        and not structural_reason(an, c)
    ]


ITEM = re.compile(
    r"^`(?P<a>[^`]+)` − `(?P<b>[^`]+)` on `(?P<m>[^`]+)`: (?P<e>[+-]\S+) \((?P<ma>\S+) vs (?P<mb>\S+); "
    r"95% CI \[(?P<lo>[+-]\d\.\d{3}), (?P<hi>[+-]\d\.\d{3})\], Holm p (?P<p>[0-9.e+-]+?)(?:, (?P<v>better|worse))?\)\.$"
)


def _effect_item(an, m):
    cands = [c for c in an.contrasts if (c["a"], c["b"], c["metric"]) == (m["a"], m["b"], m["m"])]
    c = next(c for c in cands if f"{c['mean_a']:.3f}" == m["ma"] and f"{c['mean_b']:.3f}" == m["mb"])
    e, p = float(m["e"]), float(m["p"])
    assert p < ALPHA  # "supported": Holm p < alpha as printed
    assert e != 0  # a printed +0.000 is never an effect
    assert abs(e - (float(m["ma"]) - float(m["mb"]))) <= 0.0015 + 1e-9  # the effect is the difference it prints
    if c["direction"] in ("higher", "lower"):
        assert m["v"] == ("better" if (e > 0) == (c["direction"] == "higher") else "worse")
    else:
        assert m["v"] is None
    assert float(m["lo"]) <= float(m["hi"])


def _gap(an, m):
    parts = m["parts"].split("; ")
    assert int(m["k"]) == len(parts) and int(m["n"]) == len(an.summary)
    gap = next(g for g, (x, y) in an.gaps.items() if (x, y) == (m["a"], m["b"]))
    for part in parts:
        p = re.fullmatch(r"`(?P<s>[^`]+)` (?P<ma>\S+) vs (?P<mb>\S+) \(gap (?P<g>[+-]\S+)\)", part)
        assert p, part
        g = float(p["g"])
        assert g != 0  # "non-zero", as printed
        assert g == pytest.approx(_mean(an, p["s"], gap), rel=0.06, abs=5e-4)
        ma, mb = _num(p["ma"]), _num(p["mb"])
        if ma is not None and mb is not None:
            assert abs(g - (ma - mb)) <= 0.0015 + 1e-9


def _pair(an, y: str, x: str) -> Mapping[str, Any]:
    return next(p for p in an.frontier["pairs"] if (p["y"], p["x"]) == (y, x))


def _frontier_constant(an, m):
    p = _pair(an, m["y"], m["x"])
    assert {f"{v[1]:.3f}" for v in p["points"].values()} == {m["v"]}  # "every setting has y = v"


def _frontier_degenerate(an, m):
    p = _pair(an, m["y"], m["x"])
    dy, dx = p["directions"][1], p["directions"][0]
    pts = p["points"]
    best = (max if dy == "higher" else min)(v[1] for v in pts.values())
    at_best = [s for s, v in pts.items() if v[1] == pytest.approx(best, abs=1e-9)]
    assert (int(m["k"]), int(m["n"]), m["best"]) == (len(at_best), len(pts), f"{best:.3f}") and len(at_best) > 1
    assert len({round(v[1], 9) for v in pts.values()}) > 1  # otherwise "every setting has"
    s = m["s"]
    assert s in at_best and p["frontier"] == [s]
    bx = (min if dx == "lower" else max)(pts[t][0] for t in at_best)
    assert pts[s][0] == bx  # "the one of them with the best x"


def _frontier_front(an, m):
    p = _pair(an, m["y"], m["x"])
    listed = re.findall(r"`([^`]+)`", m["front"])
    assert listed == p["frontier"]
    for s in listed:  # "non-dominated"
        assert not any(_dominates(v, p["points"][s], p["directions"]) for t, v in p["points"].items() if t != s)
    assert int(m["s"]) <= int(m["r"]) == len(p["relations"])


VALIDITY = re.compile(
    r"^Answer-in-context (?:tracks `(?P<m1>[^`]+)` (?P<c1>more|less|as) closely (?P<t1>than|as) retrieval recall "
    r"does \(pooled r = |is (?P<c2>more|less|as) strongly correlated with `(?P<m2>[^`]+)` (?P<t2>than|as) retrieval "
    r"recall is \(by \|r\|: pooled r = )(?P<ra>-?\d\.\d{3}) vs (?P<rr>-?\d\.\d{3}), n = (?P<n>\d+); adding it to "
    r"recall changes R² by (?P<d>\S+)\)(?P<sign>; [^.]*)?\.(?P<rest>.*)$"
)
VALIDITY_REST = {
    "validity_range": re.compile(
        r"^ Retrieval recall is (?P<r>\d\.\d{3}) in every setting while `answer_in_context` runs from "
        r"(?P<hi>\d\.\d{3}) \(`(?P<shi>[^`]+)`\) to (?P<lo>\d\.\d{3}) \(`(?P<slo>[^`]+)`\): recall does not see what "
        r"compression removes\.$"
    ),
    "validity_constant": re.compile(
        r"^ Retrieval recall is (?P<r>\d\.\d{3}) and `answer_in_context` (?P<a>\d\.\d{3}) in every setting\.$"
    ),
    "validity_one_setting": re.compile(
        r"^ Its one setting, `(?P<s>[^`]+)`, has retrieval recall (?P<r>\d\.\d{3}) and `answer_in_context` "
        r"(?P<a>\d\.\d{3})\.$"
    ),
}


def _validity_main(an, m):
    pooled = an.validity["pooled"]
    ra, rr = float(m["ra"]), float(m["rr"])
    assert (m["ra"], m["rr"]) == (f"{pooled['r_aic_f1']:.3f}", f"{pooled['r_recall_f1']:.3f}")
    cmp = m["c1"] or m["c2"]
    want = "more" if abs(ra) > abs(rr) else "less" if abs(ra) < abs(rr) else "as"
    assert cmp == want  # compared by |r| as printed
    assert (m["t1"] or m["t2"]) == ("as" if cmp == "as" else "than")
    negative = [name for name, r in (("answer-in-context", ra), ("retrieval recall", rr)) if r < 0]
    assert (m["c1"] is not None) == (not negative)  # "tracks ... closely" only where neither r is negative
    sign = m["sign"] or ""
    if len(negative) == 2:
        assert sign.startswith("; both correlations are negative")
    elif negative == ["answer-in-context"]:
        assert sign.startswith("; answer-in-context's is negative")
    elif negative == ["retrieval recall"]:
        assert sign.startswith("; retrieval recall's is negative")
    else:
        assert sign == ""
    assert int(m["n"]) == pooled["n"]


def _aic(an) -> dict[str, Any]:
    return {r["setting"]: _mean(an, r["setting"], "answer_in_context") for r in an.summary}


def _recall_printed(an) -> set[str]:
    return {f"{_mean(an, r['setting'], 'retrieval_recall'):.3f}" for r in an.summary}


def _validity_range(an, m):
    aic = _aic(an)
    assert _recall_printed(an) == {m["r"]}  # "in every setting"
    assert float(m["hi"]) > float(m["lo"])  # "runs from X to Y": two different values
    assert (m["hi"], m["lo"]) == (f"{max(aic.values()):.3f}", f"{min(aic.values()):.3f}")
    assert (f"{aic[m['shi']]:.3f}", f"{aic[m['slo']]:.3f}") == (m["hi"], m["lo"])


def _validity_constant(an, m):
    assert len(an.summary) > 1
    assert _recall_printed(an) == {m["r"]} and {f"{v:.3f}" for v in _aic(an).values()} == {m["a"]}


def _validity_one_setting(an, m):
    assert [r["setting"] for r in an.summary] == [m["s"]]
    assert _recall_printed(an) == {m["r"]} and f"{_aic(an)[m['s']]:.3f}" == m["a"]


VALIDITY_INTERVAL = re.compile(
    r"^r\(answer-in-context, `(?P<m>[^`]+)`\) − r\(retrieval recall, `(?P=m)`\) = (?P<d>\S+) \(95% "
    r"cluster-bootstrap CI \[(?P<lo>\S+), (?P<hi>\S+)\] over (?P<k>\d+) (?P<unit>question|cluster)s?, "
    r"test-inversion p (?:(?P<p>\d\S*)|below 1/(?P<b>\d+): every replicate on one side)\): (?:the interval excludes 0, "
    r"answer-in-context's r is the (?P<side>higher|lower) \(signed, not by \|r\|\)|(?P<incl>the interval includes 0, so these data do "
    r"not tell the two correlations apart))\.$"
)


def _signed_printed(x: float) -> str:
    s = f"{x:+.3f}"
    return f"{x:+.1e}" if x and float(s) == 0 else s


def _validity_interval(an, m):
    pooled = an.validity["pooled"]
    assert m["m"] == an.validity["answer_metric"]
    assert m["d"] == _signed_printed(pooled["r_diff"])
    assert (m["lo"], m["hi"]) == (_signed_printed(pooled["r_diff_ci_low"]), _signed_printed(pooled["r_diff_ci_high"]))
    lo, hi = float(m["lo"]), float(m["hi"])
    if m["incl"]:  # "the interval includes 0", as printed
        assert lo <= 0 <= hi
    else:
        assert lo > 0 or hi < 0  # "the interval excludes 0", as printed
        assert m["side"] == ("higher" if lo > 0 else "lower")  # the sign the interval prints
    k = int(m["k"])
    assert k == pooled["n_clusters"] and m["unit"] == ("cluster" if an.suite.get("cluster_key") else "question")
    if m["p"] is not None:
        assert float(m["p"]) > 0 and fmt_p(pooled["r_diff_p"]) == m["p"]
    else:
        assert pooled["r_diff_p"] == 0 and int(m["b"]) == pooled["n_resamples"]


MEDIATION = re.compile(
    r"^Mediation \(linear models, pooled over (?P<n>\d+) \(question, setting\) rows(?:, (?P<k>\d+) "
    r"(?P<unit>question|cluster)s?)?\): of retrieval recall's total effect on `(?P<m>[^`]+)`, (?P<t>\S+)"
    r"(?: \(95% CI \[(?P<tlo>\S+), (?P<thi>\S+)\]\))?, the indirect path through answer-in-context carries "
    r"(?P<i>\S+) \((?:\[(?P<ilo>\S+), (?P<ihi>\S+)\]; )?(?:(?P<pct>-?\d+)% of the total(?:, \[(?P<plo>-?\d+)%, "
    r"(?P<phi>-?\d+)%\])?|(?P<pundef>the proportion mediated undefined: no total effect))\) and the direct effect "
    r"is (?P<d>\S+)(?: \(\[(?P<dlo>\S+), (?P<dhi>\S+)\]\))?(?:; the indirect effect's interval "
    r"(?P<ex>excludes|includes) 0)?\. Correlational, and conditional on the reader\.$"
)
MEDIATION_UNDEFINED = re.compile(
    r"^Mediation of retrieval recall's effect on `(?P<m>[^`]+)` by answer-in-context is undefined: (?P<note>.+)\.$"
)


def _pct_printed(x: float) -> str:
    s = f"{100 * x:.0f}"
    return "0" if s == "-0" else s


def _mediation_check(an, m):
    med = an.validity["mediation"]["pooled"]
    assert an.validity["available"] and m["m"] == an.validity["answer_metric"]
    assert int(m["n"]) == med["n"]
    k = med.get("n_clusters")
    assert (m["k"] is None) == (not k) and (m["k"] is None or int(m["k"]) == k)
    for key, g in (("total", "t"), ("indirect", "i"), ("c_prime", "d")):
        assert m[g] == _signed_printed(med[key])  # each effect as the analysis has it
        lo, hi = med.get(f"{key}_ci_low"), med.get(f"{key}_ci_high")
        assert (m[g + "lo"], m[g + "hi"]) == (
            (None, None) if lo is None or hi is None else (_signed_printed(lo), _signed_printed(hi))
        )
    # total = indirect + direct, as printed (three decimals each, unless a tiny value is printed in full)
    assert abs(float(m["t"]) - float(m["i"]) - float(m["d"])) <= 0.0015 + 1e-9
    prop = med["proportion_mediated"]
    if prop is None:
        assert m["pundef"] and m["pct"] is None
    else:
        assert m["pct"] == _pct_printed(prop)
        lo, hi = med.get("proportion_mediated_ci_low"), med.get("proportion_mediated_ci_high")
        assert (m["plo"], m["phi"]) == (
            (None, None) if lo is None or hi is None else (_pct_printed(lo), _pct_printed(hi))
        )
    if m["ilo"] is None:
        assert m["ex"] is None
    else:  # "excludes 0" exactly when the interval as printed lies on one side of 0
        excl = float(m["ilo"]) > 0 or float(m["ihi"]) < 0
        assert m["ex"] == ("excludes" if excl else "includes")


def _mediation_undefined(an, m):
    med = an.validity["mediation"]["pooled"]
    assert m["m"] == an.validity["answer_metric"]
    assert None in (med["indirect"], med["total"], med["c_prime"])
    assert m["note"] == (med.get("note") or "a path is undefined")


GAIN = re.compile(
    r"^`(?P<a>[^`]+)` − `(?P<b>[^`]+)` on `(?P<m>[^`]+)`, (?P<e>\S+) over (?P<n>\d+) paired (?P<q>questions?)"
    r"(?P<zero> \(no share stated: (?:the effect is 0|an effect below 0\.0005)\))?: (?P<parts>.+)\.$"
)
GAIN_PART = re.compile(
    r"(?P<c>[+-]\S+)(?: \((?:(?P<pct>-?\d+)% of the effect)?(?:; )?(?:95% CI \[(?P<lo>\S+), (?P<hi>\S+)\])?\))? "
    r"from the (?P<k>\d+) (?P<said>where [^;]+?)(?:; |$)"
)
GAIN_HEAD = re.compile(
    r"^Gain decomposition by answer-in-context of (?P<k>\d+) of (?P<n>\d+) (?P<c>contrasts?) on `(?P<m>[^`]+)` \(the "
    r"packer's, or Holm p < 0\.05; all in contrasts\.md\):$"
)


def _gain_eligible(an) -> list[Mapping[str, Any]]:
    metric = an.validity.get("answer_metric")
    return [
        c
        for c in an.contrasts
        if c.get("gain") and c["metric"] == metric and c["gain"]["n"] and c["gain"]["effect"] is not None
    ]


def _gain_check(an, m, c):
    g = c["gain"]
    assert (m["a"], m["b"], m["m"]) == (c["a"], c["b"], c["metric"])
    assert m["e"] == _signed_printed(g["effect"]) and int(m["n"]) == g["n"] and m["q"] == _plural("question", g["n"])
    small = abs(g["effect"]) < 5e-4  # shares of (almost) nothing are not stated
    assert (m["zero"] is not None) == small
    assert m["zero"] is None or ("is 0" in m["zero"]) == (g["effect"] == 0)
    said = {
        f"where only `{c['a']}` has the answer in its context": "new",
        f"where only `{c['b']}` has it": "lost",
        "where both have it": "both",
        "where neither has it": "neither",
        "where answer-in-context is undefined": "undefined",
    }
    parts = list(GAIN_PART.finditer(m["parts"]))
    assert "".join(p.group(0) for p in parts) == m["parts"]  # every part parsed
    named = [said[p["said"]] for p in parts]
    assert named == [x for x in GAIN_GROUPS if g["groups"][x]["n"]]  # every non-empty group, in order
    total = 0.0
    for p, key in zip(parts, named):
        v = g["groups"][key]
        assert int(p["k"]) == v["n"] and p["c"] == _signed_printed(v["contribution"])
        total += float(p["c"])
        assert p["pct"] == (None if v["share"] is None or small else _pct_printed(v["share"]))
        has_ci = key in ("new", "lost") and v["ci_low"] is not None and v["ci_high"] is not None
        assert (p["lo"], p["hi"]) == (
            (_signed_printed(v["ci_low"]), _signed_printed(v["ci_high"])) if has_ci else (None, None)
        )
    # the printed contributions sum to the printed effect (each rounded to three decimals)
    assert abs(total - float(m["e"])) <= 0.0005 * (len(parts) + 1) + 1e-9


def _gain_said(an) -> list[Mapping[str, Any]]:
    """The decompositions the findings state: the packer on one side, or Holm p < alpha (at most GAIN_SHOWN)."""
    packer = {x["name"] for x in an.settings if x["compressor"] == "submodular"}
    said = [c for c in _gain_eligible(an) if packer & {c["a"], c["b"]} or c["p_holm"] < ALPHA]
    return said[:GAIN_SHOWN]


def _gain_head(an, m):
    k, n = len(_gain_said(an)), len(_gain_eligible(an))
    assert (int(m["k"]), int(m["n"])) == (k, n) and 0 < k <= min(n, GAIN_SHOWN)
    assert m["c"] == _plural("contrast", n) and m["m"] == an.validity["answer_metric"]


STRUCTURAL_RE = re.compile(
    r"^(?P<head>Not an effect|By construction): `(?P<m>[^`]+)` in (?P<k>\d+) of (?P<n>\d+) settings "
    r"\((?P<cells>.*)\), (?P<why>.+)\.$"
)


def _structural(fixed: bool) -> Check:
    def check(an, m):
        rule = RULES[m["why"]]
        assert rule.fixed is fixed and (m["head"] == "Not an effect") is fixed
        marked = [s for s, ms in an.structural.items() if (ms.get(m["m"]) or {}).get("reason") == m["why"]]
        assert int(m["k"]) == len(marked) and int(m["n"]) == len(an.summary)
        cells = m["cells"].split(", ")
        if len(marked) > 6:
            assert cells[-1] == "…"
            cells = cells[:-1]
        assert len(cells) == min(6, len(marked))
        for cell in cells:
            c = re.fullmatch(r"`(?P<s>[^`]+)`(?: = (?P<v>\S+))?", cell)
            assert c and c["s"] in marked and (c["v"] is not None) is fixed
            if fixed:  # the value printed is the value the rule says the shape fixes
                v = _mean(an, c["s"], m["m"])
                assert c["v"] == ("undefined" if v is None else f"{v:.3f}")
                assert v in rule.values

    return check


def _check_head(an, m, shown):
    fam = m["fam"] or "contrasts"
    eligible = _eligible(an, fam, m["mfam"])
    assert int(m["n"]) == len(eligible) and 0 < len(shown) <= min(PER_FAMILY, len(eligible))
    sizes = [abs(c["effect"]) for c in shown]
    assert sizes == sorted(sizes, reverse=True)  # "largest", in order
    metrics = [c["metric"] for c in shown]
    assert all(metrics.count(x) <= 2 for x in metrics)
    # no eligible effect larger than the smallest shown is left out unless its metric already has two
    for c in eligible:
        if c not in shown and abs(c["effect"]) > min(sizes) and len(shown) < PER_FAMILY:
            assert metrics.count(c["metric"]) >= 2


WARNINGS: dict[str, re.Pattern[str]] = {
    "warning_small_cohort": re.compile(
        r"^Small cohort: (?P<n>\d+) (?P<unit>questions?|clusters?); intervals are wide and p-values coarse\.$"
    ),
    "warning_empty_cohort": re.compile(r"^The common cohort is empty: every mean and contrast is undefined\.$"),
    "warning_left_out": re.compile(
        r"^Left out of the common cohort and the contrasts \(the setting did not run: every record `unavailable`\): "
        r"(?P<listed>.+); (?P<k>\d+) contrast (?P<rows>rows?) left out\.$"
    ),
    "warning_judge_counter": re.compile(
        r"^(?P<what>" + "|".join(re.escape(w) for w in JUDGE_COUNTERS.values()) + r") in (?P<k>\d+) "
        r"(?P<where>settings?) \((?P<names>[^)]*)\)\.$"
    ),
    "warning_abstentions": re.compile(
        r"^The judge abstained (?P<t>\d+) (?P<times>times?) in (?P<k>\d+) (?P<where>settings?) "
        r"\(counted as not supported\)\.$"
    ),
    "warning_resolution": re.compile(r"^Holm floor .*$"),
    "ppi_flip": re.compile(
        r"^Under judge-error correction \(PPI\+\+, (?P<n>\d+) human-labelled questions\) `(?P<a>[^`]+)` − "
        r"`(?P<b>[^`]+)` on `(?P<m>[^`]+)` (?P<why>changes sign|is no longer significant|becomes significant): "
        r"judge-only (?P<je>\S+) \(Holm p (?P<jp>\S+)\), corrected (?P<pe>\S+) \(95% CI "
        r"(?P<ci>undefined|\[\S+, \S+\]), Holm p (?P<pp>\S+)\); (?P<k>\d+) of (?P<t>\d+) contrasts flip in all "
        r"\(ppi\.md\)\.$"
    ),
}


def _ppi_flip(an, m):
    rows = an.ppi["contrasts"]
    r = next(r for r in rows if (r["a"], r["b"], r["metric"]) == (m["a"], m["b"], m["m"]))
    flips = [x for x in rows if x["flip"]]
    assert int(m["k"]) == len(flips) and int(m["t"]) == len(rows) and int(m["n"]) == r["n_labelled"]
    assert float(m["je"]) == float(f"{r['judge_effect']:+.3f}") or "e" in m["je"]
    if m["why"] == "changes sign":  # the printed signs differ, neither printed as zero
        assert {m["je"][0], m["pe"][0]} == {"+", "-"} and float(m["je"]) != 0 and float(m["pe"]) != 0
    else:
        jp, pp = float(m["jp"]), float(m["pp"])
        assert m["je"][0] == m["pe"][0] or float(m["pe"]) == 0 or float(m["je"]) == 0
        if m["why"] == "is no longer significant":
            assert jp < ALPHA <= pp
        else:
            assert pp < ALPHA <= jp
    shown = [c for c in findings(an) if c["text"].startswith("Under judge-error correction")]
    assert len(shown) == min(PPI_FLIPS, len(flips))


CHECKS: dict[str, Callable[..., None]] = {
    "warning_resolution": _resolution,
    "warning_small_cohort": _small_cohort,
    "warning_empty_cohort": _empty_cohort,
    "warning_left_out": _left_out,
    "warning_judge_counter": _judge_counter,
    "warning_abstentions": _abstentions,
    "effect_head": _check_head,
    "effect_item": _effect_item,
    "gap": _gap,
    "frontier_constant": _frontier_constant,
    "frontier_degenerate": _frontier_degenerate,
    "frontier_front": _frontier_front,
    "validity_tracks": _validity_main,
    "validity_correlated": _validity_main,
    "validity_range": _validity_range,
    "validity_constant": _validity_constant,
    "validity_one_setting": _validity_one_setting,
    "validity_interval": _validity_interval,
    "validity_interval_includes": _validity_interval,
    "structural_fixed": _structural(True),
    "structural_relation": _structural(False),
    "mediation": _mediation_check,
    "mediation_undefined": _mediation_undefined,
    "gain_head": _gain_head,
    "gain": _gain_check,
    "ppi_flip": _ppi_flip,
}
FRONTIER = {
    "frontier_constant": re.compile(
        r"^Frontier of `(?P<y>[^`]+)` vs `(?P<x>[^`]+)`: every setting has `(?P=y)` = (?P<v>\d\.\d{3}); only "
        r"`(?P=x)` separates them\.$"
    ),
    "frontier_degenerate": re.compile(
        r"^Frontier of `(?P<y>[^`]+)` vs `(?P<x>[^`]+)` is degenerate: (?P<k>\d+) of (?P<n>\d+) settings reach the "
        r"best `(?P=y)` \((?P<best>\d\.\d{3})\); the frontier is the one of them with the best `(?P=x)`, "
        r"`(?P<s>[^`]+)`\.$"
    ),
    "frontier_front": re.compile(
        r"^Frontier of `(?P<y>[^`]+)` vs `(?P<x>[^`]+)`: non-dominated (?P<front>`[^;]+`); (?P<s>\d+) of (?P<r>\d+) "
        r"dominance relations supported by the paired test\.$"
    ),
}
HEAD = re.compile(
    r"^Largest supported (?P<mfam>\w+) effects(?: \((?P<fam>[^)]+)\))?, of (?P<n>\d+) with Holm p < 0\.05:$"
)


def _one(patterns: Mapping[str, re.Pattern[str]], text: str) -> tuple[str, re.Match[str]]:
    hits = [(t, m) for t, p in patterns.items() if (m := p.match(text))]
    assert len(hits) == 1, f"{len(hits)} templates match {text!r}"
    return hits[0]


def check_findings(an: Analysis) -> set[str]:
    """Check every finding of ``an`` against its template; the template ids seen."""
    seen: set[str] = set()
    gains: list[re.Match[str]] = []
    m: Any  # the match of the finding's template
    for f in findings(an):
        text, kind = f["text"], f["kind"]
        if kind == "warning":
            tid, m = _one(WARNINGS, text)
            CHECKS[tid](an, m)
            seen.add(tid)
        elif kind == "effect":
            m = HEAD.match(text)
            assert m, f"an effect heading no template matches: {text!r}"
            items = list(f["items"])
            for i in items:
                im = ITEM.match(i)
                assert im, f"an effect sentence no template matches: {i!r}"
                CHECKS["effect_item"](an, im)
            fam = m["fam"] or "contrasts"
            shown = []
            for i in items:
                im = ITEM.match(i)
                assert im is not None
                c = next(
                    c
                    for c in _eligible(an, fam, m["mfam"])
                    if (c["a"], c["b"], c["metric"]) == (im["a"], im["b"], im["m"]) and f"{c['mean_a']:.3f}" == im["ma"]
                )
                shown.append(c)
            _check_head(an, m, shown)
            seen |= {"effect_head", "effect_item"}
        elif kind == "gap":
            m = re.match(
                r"^`(?P<a>[^`]+)` − `(?P<b>[^`]+)` \(what the reader saw vs the source\) is non-zero in (?P<k>\d+) "
                r"of (?P<n>\d+) settings: (?P<parts>.+) \((?P<rule>grounding `[^`]+`: [^()]+)\)\.$",
                text,
            )
            assert m, f"a gap sentence no template matches: {text!r}"
            gap = next(g for g, (x, y) in an.gaps.items() if (x, y) == (m["a"], m["b"]))
            assert m["rule"] == gap_grounding(an.manifest, gap)  # the rule the run recorded
            _gap(an, m)
            seen.add("gap")
        elif kind == "frontier":
            tid, m = _one(FRONTIER, text)
            CHECKS[tid](an, m)
            seen.add(tid)
        elif kind == "validity" and (mi := VALIDITY_INTERVAL.match(text)):
            _validity_interval(an, mi)
            seen.add("validity_interval_includes" if mi["incl"] else "validity_interval")
        elif kind == "validity":
            m = VALIDITY.match(text)
            assert m, f"a validity sentence no template matches: {text!r}"
            tid = "validity_tracks" if m["c1"] else "validity_correlated"
            CHECKS[tid](an, m)
            seen.add(tid)
            if m["rest"]:
                rid, r = _one(VALIDITY_REST, m["rest"])
                CHECKS[rid](an, r)
                seen.add(rid)
        elif kind == "mediation" and (mu := MEDIATION_UNDEFINED.match(text)):
            _mediation_undefined(an, mu)
            seen.add("mediation_undefined")
        elif kind == "mediation":
            m = MEDIATION.match(text)
            assert m, f"a mediation sentence no template matches: {text!r}"
            _mediation_check(an, m)
            seen.add("mediation")
        elif kind == "gain":
            m = GAIN_HEAD.match(text)
            assert m, f"a gain heading no template matches: {text!r}"
            _gain_head(an, m)
            for i in f["items"]:
                im = GAIN.match(i)
                assert im, f"a gain sentence no template matches: {i!r}"
                gains.append(im)
            seen |= {"gain_head", "gain"}
        elif kind == "structural":
            m = STRUCTURAL_RE.match(text)
            assert m, f"a structural sentence no template matches: {text!r}"
            tid = "structural_fixed" if m["head"] == "Not an effect" else "structural_relation"
            CHECKS[tid](an, m)
            seen.add(tid)
        else:
            raise AssertionError(f"a finding of a kind no template covers: {f!r}")
    # the decompositions stated, in the declared order
    said = _gain_said(an)
    assert len(gains) == len(said)
    for gm, c in zip(gains, said):
        _gain_check(an, gm, c)
    return seen


def test_every_template_has_a_check():
    assert set(CHECKS) == set(TEMPLATES)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(analyses())
def test_every_finding_says_what_its_numbers_say(an):
    check_findings(an)


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_generator_reaches_every_template(template):
    from hypothesis import find

    try:
        find(
            analyses(),
            lambda an: template in check_findings(an),
            settings=settings(
                max_examples=3000,
                database=None,
                derandomize=True,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            ),
        )
    except NoSuchExample:
        pytest.fail(f"no random analysis produced the template {template}: the harness does not cover it")
