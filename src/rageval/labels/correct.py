"""Judge-error-corrected means and contrasts of a run from its human values (docs/score.md#human-labels).

For every setting and judge-based metric the PPI++ mean (:func:`rageval.stats.ppi.ppi_mean`) of the cohort:
human values on the labelled questions, the judge's on every question (the labelled ones paired with their human
values, the others as the unlabelled sample); for every declared contrast of a judge-based metric the PPI++
paired contrast (:func:`rageval.stats.ppi.ppi_paired`); the contrasts' PPI p-values Holm-adjusted as one family of
their own (:func:`rageval.stats.ppi.ppi_holm`), reported beside the judge-only family's.  A question whose value is
undefined (None) under the judge or the human decisions is left out of that row (counted).  A contrast **flips**
when the corrected effect's sign differs from the judge-only effect's, or when one of the two is significant (Holm
p < alpha) and the other is not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ppi_rows", "contrast_rows", "flip_of"]

Values = Mapping[str, Mapping[str, Mapping[str, Any]]]  # question -> setting -> metric -> value


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None if v is None else float(v)
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _clusters(qs: Sequence[str], clusters: Mapping[str, Any] | None) -> list[str] | None:
    return None if clusters is None else [str(clusters.get(q)) for q in qs]


def _clean(x: float) -> float | None:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def _est(e: Any) -> dict[str, Any]:
    return {
        "estimate": _clean(e.estimate),
        "ci_low": _clean(e.ci_low),
        "ci_high": _clean(e.ci_high),
        "p_value": _clean(e.p_value),
        "lam": _clean(e.lam),
        "n_labelled": e.n_labelled,
        "n_unlabelled": e.n_unlabelled,
        "judge_mean": _clean(e.judge_only.estimate),
        "judge_ci_low": _clean(e.judge_only.ci_low),
        "judge_ci_high": _clean(e.judge_only.ci_high),
        "human_mean": _clean(e.human_only.estimate),
        "human_ci_low": _clean(e.human_only.ci_low),
        "human_ci_high": _clean(e.human_only.ci_high),
        "bias": _clean(e.bias),
        "effective_n": _clean(e.effective_n),
    }


def _side(
    cohort: Sequence[str], labelled: set[str], judge: Values, human: Values, pick
) -> tuple[list[str], list[Any], list[Any], list[str], list[Any], int]:
    """``(labelled qs, human, judge, unlabelled qs, judge, undefined)`` of one row's per-question values."""
    ql: list[str] = []
    qu: list[str] = []
    y: list[Any] = []
    yh: list[Any] = []
    yu: list[Any] = []
    undefined = 0
    for q in cohort:
        j = pick(judge.get(q) or {})
        if q in labelled:
            h = pick(human.get(q) or {})
            if j is None or h is None:
                undefined += 1
                continue
            ql.append(q)
            y.append(h)
            yh.append(j)
        elif j is None:
            undefined += 1
        else:
            qu.append(q)
            yu.append(j)
    return ql, y, yh, qu, yu, undefined


def ppi_rows(
    cohort: Sequence[str],
    settings: Sequence[str],
    metrics: Sequence[str],
    judge: Values,
    human: Values,
    *,
    clusters: Mapping[str, Any] | None = None,
    alpha: float = 0.05,
) -> list[dict[str, Any]]:
    """Per setting and metric (a metric with no defined labelled value left out): the PPI++ mean beside the
    judge-only and human-only ones (:meth:`rageval.stats.ppi.PPIEstimate` fields, None where undefined)."""
    from rageval.stats.ppi import ppi_mean

    labelled = set(human)
    out = []
    for s in settings:
        for m in metrics:

            def pick(per, s=s, m=m):
                return _num((per.get(s) or {}).get(m))

            ql, y, yh, qu, yu, undefined = _side(cohort, labelled, judge, human, pick)
            if not ql:
                continue
            e = ppi_mean(
                y,
                yh,
                yu,
                alpha=alpha,
                clusters_labelled=_clusters(ql, clusters),
                clusters_unlabelled=_clusters(qu, clusters),
            )
            out.append({"setting": s, "metric": m, **_est(e), "n_undefined": undefined})
    return out


def flip_of(judge_effect: Any, judge_p_holm: Any, ppi_effect: Any, ppi_p_holm: Any, alpha: float) -> str | None:
    """``"sign"`` (the two effects have opposite signs), ``"lost"`` (judge-only significant, corrected not),
    ``"gained"`` (the reverse) or None; None when either side is undefined.

    >>> flip_of(0.1, 0.01, -0.02, 0.4, 0.05), flip_of(0.1, 0.01, 0.05, 0.2, 0.05), flip_of(0.1, 0.3, 0.2, 0.01, 0.05)
    ('sign', 'lost', 'gained')
    """
    je, jp, pe, pp = (_num(x) for x in (judge_effect, judge_p_holm, ppi_effect, ppi_p_holm))
    if je is None or pe is None:
        return None
    if (je > 0 > pe) or (je < 0 < pe):  # compared, not multiplied: a product of two tiny effects underflows to 0
        return "sign"
    if jp is None or pp is None:
        return None
    if (jp < alpha) != (pp < alpha):
        return "lost" if jp < alpha else "gained"
    return None


def contrast_rows(
    cohort: Sequence[str],
    contrasts: Sequence[Mapping[str, Any]],
    judge: Values,
    human: Values,
    *,
    clusters: Mapping[str, Any] | None = None,
    alpha: float = 0.05,
) -> list[dict[str, Any]]:
    """Per declared contrast row (``a``, ``b``, ``metric``, the report's ``effect``, ``ci_low``, ``ci_high``,
    ``p_holm``): the PPI++ paired contrast, its Holm p in the PPI family and the flip (:func:`flip_of`)."""
    from rageval.stats.ppi import ppi_holm, ppi_paired

    labelled = set(human)
    rows, ests = [], []
    for c in contrasts:
        a, b, m = c["a"], c["b"], c["metric"]

        def pick(per, a=a, b=b, m=m):
            va, vb = _num((per.get(a) or {}).get(m)), _num((per.get(b) or {}).get(m))
            return None if va is None or vb is None else (va, vb)

        ql, y, yh, qu, yu, undefined = _side(cohort, labelled, judge, human, pick)
        if not ql:
            continue
        e = ppi_paired(
            [v[0] for v in y],
            [v[1] for v in y],
            [v[0] for v in yh],
            [v[1] for v in yh],
            [v[0] for v in yu],
            [v[1] for v in yu],
            alpha=alpha,
            clusters_labelled=_clusters(ql, clusters),
            clusters_unlabelled=_clusters(qu, clusters),
        )
        ests.append(e)
        rows.append(
            {
                "contrast": c.get("contrast"),
                "family": c.get("family"),
                "a": a,
                "b": b,
                "metric": m,
                "judge_effect": _num(c.get("effect")),
                "judge_ci_low": _num(c.get("ci_low")),
                "judge_ci_high": _num(c.get("ci_high")),
                "judge_p_holm": _num(c.get("p_holm")),
                **{k: v for k, v in _est(e).items() if not k.startswith("judge_") and not k.startswith("human_")},
                "judge_mean_diff": _clean(e.judge_only.estimate),
                "human_mean_diff": _clean(e.human_only.estimate),
                "n_undefined": undefined,
            }
        )
    adjusted: Any = ppi_holm(ests) if ests else []
    for r, p in zip(rows, adjusted):
        r["p_holm"] = _clean(float(p))
        r["flip"] = flip_of(r["judge_effect"], r["judge_p_holm"], r["estimate"], r["p_holm"], alpha)
    return rows
