"""The findings of the packing paper's analyses (docs/statistics.md#findings): the pooled mediation of recall's
effect on the answer metric by answer-in-context, and the gain decompositions of the packer's contrasts.  Their
templates are listed in :data:`rageval.report.findings.TEMPLATES` (``mediation``, ``mediation_undefined``,
``gain_head``, ``gain``) and checked by ``tests/test_findings_harness.py``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rageval.report.contrast_tables import ALPHA
from rageval.report.result import Analysis, Finding

__all__ = ["GAIN_SHARE_FROM", "GAIN_SHOWN", "PACKER", "gain_findings", "mediation_findings", "signed"]

#: gain decompositions stated in the findings (the rest: contrasts.md)
GAIN_SHOWN = 6
#: the packer (compressors/submodular.py): the packing paper reads its gain over a heuristic by answer-in-context,
#: so every contrast with it on one side gets its gain decomposition stated
PACKER = "submodular"
#: a gain decomposition states each group's share of the effect only for an effect at least this large (one that
#: prints as non-zero at three decimals): a share of an effect that is 0 up to rounding is noise
GAIN_SHARE_FROM = 5e-4


def signed(x: float) -> str:
    """A difference with its sign, three decimals; one that is not 0 but rounds to 0 there in two significant
    digits (``+4.0e-05``), so that a sentence never calls a printed ``+0.000`` non-zero, better or worse."""
    s = f"{x:+.3f}"
    return f"{x:+.1e}" if x and float(s) == 0 else s


def _pct(x: float) -> str:
    """A share in whole percents (never ``-0%``)."""
    s = f"{100 * x:.0f}"
    return ("0" if s == "-0" else s) + "%"


def _ci(v: Mapping[str, Any], key: str = "", pct: bool = False) -> str:
    """``[lo, hi]`` of ``key``'s interval (``<key>_ci_low``/``_ci_high``; without a key a gain group's
    ``ci_low``/``ci_high``) as printed, signed or in whole percents; "" without one."""
    pre = f"{key}_" if key else ""
    lo, hi = v.get(f"{pre}ci_low"), v.get(f"{pre}ci_high")
    if lo is None or hi is None:
        return ""
    return f"[{_pct(lo)}, {_pct(hi)}]" if pct else f"[{signed(lo)}, {signed(hi)}]"


def mediation_findings(an: Analysis) -> list[Finding]:
    """The pooled mediation of recall's effect on the answer metric by answer-in-context
    (docs/statistics.md#mediation): total, indirect (with its share) and direct effects, each with its
    cluster-bootstrap interval where the analysis has one."""
    v = an.validity
    med = (v.get("mediation") or {}).get("pooled") if v.get("available") else None
    if not med:
        return []
    metric = str(v["answer_metric"])
    if med.get("indirect") is None or med.get("total") is None or med.get("c_prime") is None:
        note = med.get("note") or "a path is undefined"
        return [
            {
                "kind": "mediation",
                "text": f"Mediation of retrieval recall's effect on `{metric}` by answer-in-context is undefined: {note}.",
            }
        ]
    k = med.get("n_clusters")
    unit = "cluster" if an.suite.get("cluster_key") else "question"
    over = f"{med['n']} (question, setting) rows" + (f", {k} {unit}{'s' if k != 1 else ''}" if k else "")
    tot, ind, dirc = (_ci(med, key) for key in ("total", "indirect", "c_prime"))
    text = (
        f"Mediation (linear models, pooled over {over}): of retrieval recall's total effect on `{metric}`, "
        f"{signed(med['total'])}{f' (95% CI {tot})' if tot else ''}, the indirect path through answer-in-context "
        f"carries {signed(med['indirect'])} ({f'{ind}; ' if ind else ''}{_mediated_share(med)}) and the direct effect is "
        f"{signed(med['c_prime'])}{f' ({dirc})' if dirc else ''}"
    )
    lo, hi = med.get("indirect_ci_low"), med.get("indirect_ci_high")
    if lo is not None and hi is not None:
        plo, phi = float(signed(lo)), float(signed(hi))
        text += "; the indirect effect's interval " + ("excludes 0" if plo > 0 or phi < 0 else "includes 0")
    return [{"kind": "mediation", "text": text + ". Correlational, and conditional on the reader."}]


def _mediated_share(med: Mapping[str, Any]) -> str:
    prop = med.get("proportion_mediated")
    if prop is None:
        return "the proportion mediated undefined: no total effect"
    pci = _ci(med, "proportion_mediated", pct=True)
    return f"{_pct(prop)} of the total" + (f", {pci}" if pci else "")


#: the gain groups a sentence names, in its order: group, how the sentence says it
_GAIN_SAID = (
    ("new", "where only `{a}` has the answer in its context"),
    ("lost", "where only `{b}` has it"),
    ("both", "where both have it"),
    ("neither", "where neither has it"),
    ("undefined", "where answer-in-context is undefined"),
)


def _gain_sentence(c: Mapping[str, Any]) -> str:
    g = c["gain"]
    parts = []
    small = abs(g["effect"]) < GAIN_SHARE_FROM  # a share of (almost) nothing is noise: not stated
    for key, said in _GAIN_SAID:
        v = g["groups"][key]
        if not v["n"]:
            continue
        extra = []
        if v["share"] is not None and not small:
            extra.append(f"{_pct(v['share'])} of the effect")
        if key in ("new", "lost") and (ci := _ci(v)):
            extra.append(f"95% CI {ci}")
        tail = f" ({'; '.join(extra)})" if extra else ""
        parts.append(f"{signed(v['contribution'])}{tail} from the {v['n']} {said.format(a=c['a'], b=c['b'])}")
    zero = f" (no share stated: {'the effect is 0' if g['effect'] == 0 else 'an effect below 0.0005'})" if small else ""
    return (
        f"`{c['a']}` − `{c['b']}` on `{c['metric']}`, {signed(g['effect'])} over {g['n']} "
        f"paired question{'s' if g['n'] != 1 else ''}{zero}: {'; '.join(parts)}."
    )


def gain_findings(an: Analysis) -> list[Finding]:
    """The gain decompositions (docs/statistics.md#gain-decomposition) of the contrasts on the answer metric that
    set the packer against another setting or whose effect has Holm p < alpha, in the declared order (at most
    :data:`GAIN_SHOWN`): one finding, a sentence per contrast in its ``items``; every decomposition is in
    contrasts.md."""
    metric = an.validity.get("answer_metric")
    rows = [
        c
        for c in an.contrasts
        if c.get("gain") and c["metric"] == metric and c["gain"]["n"] and c["gain"]["effect"] is not None
    ]
    packer = {x["name"] for x in an.settings if x.get("compressor") == PACKER}
    said = [c for c in rows if packer & {c["a"], c["b"]} or (c["p_holm"] is not None and c["p_holm"] < ALPHA)]
    if not said:
        return []
    k, n = min(len(said), GAIN_SHOWN), len(rows)
    head = (
        f"Gain decomposition by answer-in-context of {k} of {n} contrast{'s' if n > 1 else ''} on `{metric}` (the "
        f"packer's, or Holm p < {ALPHA:g}; all in contrasts.md):"
    )
    return [{"kind": "gain", "text": head, "items": [_gain_sentence(c) for c in said[:GAIN_SHOWN]]}]
