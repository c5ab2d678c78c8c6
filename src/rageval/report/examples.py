"""Per-setting examples of what went wrong, for the HTML report (read from the saved records, no model calls).

Two kinds, over the common cohort, in question order, a few of each per setting
with the total count beside them:

* **answer left the context**: ``answer_in_context`` is 1 for the question in the
  reference setting (the first ``identity`` setting: the uncompressed context) and 0
  in this one — the compressor dropped the gold answer the retriever had found;
* **supported by what the reader saw, not by the source**: a sentence whose
  emitted citations pass the gate (premise: the unit texts the reader saw) while its
  grounded ones do not (premise: the source snippets the cited units declare or
  were recovered to), from ``extra.attribution.sentences``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["setting_examples", "reference_setting", "PER_KIND"]

#: examples shown per kind and setting
PER_KIND = 3
_CLIP = 400


def _clip(text: Any, n: int = _CLIP) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[: n - 1].rstrip() + "…"


def reference_setting(settings: Sequence[Mapping[str, Any]], names: Sequence[str]) -> str | None:
    """The first setting whose compressor is ``identity`` (among ``names``), else None."""
    return next((s["name"] for s in settings if s.get("compressor") == "identity" and s["name"] in names), None)


def _gold(rec: Mapping[str, Any]) -> list[str]:
    gold = (rec.get("extra") or {}).get("gold") or {}
    pairs = gold.get("qa_pairs") or []
    if pairs:
        return [" / ".join(map(str, p)) for p in pairs][:6]
    return [str(a) for a in gold.get("answers") or []][:6]


def _units(rec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(((rec.get("context") or {}).get("units")) or [])


def _left_context(rec: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "question_id": rec["question_id"],
        "question": _clip((rec.get("extra") or {}).get("question")),
        "gold": _gold(rec),
        "answer": _clip((rec.get("answer") or {}).get("text")),
    }


def _emitted_not_grounded(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    sentences = ((rec.get("extra") or {}).get("attribution") or {}).get("sentences") or []
    units = _units(rec)
    out = []
    for s in sentences:
        if not isinstance(s, Mapping):
            continue
        e, g = s.get("emitted") or {}, s.get("grounded") or {}
        if not (e.get("supported") and g and not g.get("supported")):
            continue
        cited = []
        for c, ev in zip(s.get("citations") or [], s.get("evidence") or [None] * len(s.get("citations") or [])):
            u = units[c - 1] if isinstance(c, int) and 0 < c <= len(units) else {}
            cited.append(
                {
                    "number": c,
                    "text": _clip(u.get("text"), 300),
                    "evidence": ev,
                    "source_ids": list(u.get("source_ids") or []),
                }
            )
        out.append({"question_id": rec["question_id"], "sentence": _clip(s.get("text")), "cited": cited})
    return out


def setting_examples(
    records: Sequence[Mapping[str, Any]],
    settings: Sequence[Mapping[str, Any]],
    question_ids: Sequence[str],
    *,
    per_kind: int = PER_KIND,
) -> dict[str, Any]:
    """``{"reference": name | None, "by_setting": {setting: {"left_context": {...}, "emitted_not_grounded": {...}}}}``;
    each kind holds ``n`` (every case over the cohort) and ``shown`` (the first ``per_kind``)."""
    names = [s["name"] for s in settings]
    order = {q: i for i, q in enumerate(question_ids)}
    ok = [r for r in records if r.get("status") == "ok" and r["question_id"] in order]
    ok.sort(key=lambda r: order[r["question_id"]])
    ref = reference_setting(settings, names)
    ref_aic = {
        r["question_id"]: (r.get("metrics") or {}).get("answer_in_context") for r in ok if r["setting"]["name"] == ref
    }
    out: dict[str, Any] = {}
    for s in names:
        mine = [r for r in ok if r["setting"]["name"] == s]
        left = []
        if ref is not None and s != ref:
            left = [
                _left_context(r)
                for r in mine
                if ref_aic.get(r["question_id"]) == 1 and (r.get("metrics") or {}).get("answer_in_context") == 0
            ]
        eng = [x for r in mine for x in _emitted_not_grounded(r)]
        out[s] = {
            "left_context": {"n": len(left), "shown": left[:per_kind]},
            "emitted_not_grounded": {"n": len(eng), "shown": eng[:per_kind]},
        }
    return {"reference": ref, "per_kind": per_kind, "by_setting": out}
