"""The record explorer's data: which records report.html embeds, each slimmed to what the explorer shows.

:func:`explorer_data` reads the records as an **iterable, in one pass, in bounded memory**: a run of at most
:data:`EXPLORER_LIMIT` records is embedded whole; above it, a seeded stratified sample — per setting (the
stratum), the ``k = limit // settings`` questions of smallest seeded hash (a bottom-k sample, kept in a heap of
``k`` per setting).  The hash depends on the question and the seed only, so every setting keeps the same
questions and a record sits beside the same question under the baseline.  The page states the count; every
record stays in ``records.jsonl`` (docs/statistics.md#the-record-explorer).

Per question (once): its text when the records carry it, the gold answers and the source snippets; per
record: setting, status, the scalar metrics, the context units (a unit that is the join of its declared
snippets is written ``null`` and shown from them), the answer's sentences with their citations and the gate's
decision, the recovered snippets and the claims' verification in each mode.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["EXPLORER_LIMIT", "ExplorerPass", "explorer_data", "explorer_json", "sample_key"]

#: records embedded at most (above: the stratified sample)
EXPLORER_LIMIT = 5000
_CLIP = 1200


def _clip(text: Any, n: int = _CLIP) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[: n - 1].rstrip() + "…"


def sample_key(question_id: str, seed: int) -> str:
    """The seeded hash that orders questions in the sample (the same in every setting)."""
    return hashlib.sha256(f"{seed}:{question_id}".encode()).hexdigest()


def _decision(s: Mapping[str, Any]) -> str:
    """The gate's decision of a sentence's citations: ``source`` (the source snippets support it), ``seen``
    (only the text the reader saw does), ``neither``, or ``unjudged``."""
    e, g = s.get("emitted") or {}, s.get("grounded") or {}
    if not e and not g:
        return "unjudged"
    if g.get("supported"):
        return "source"
    return "seen" if e.get("supported") else "neither"


def _citation_decisions(s: Mapping[str, Any]) -> list[str]:
    """Each citation's own decision from the gate's per-citation precision: ``source`` (its source snippets
    support the sentence), ``seen`` (only the unit the reader saw does), ``neither``; the sentence's decision
    (:func:`_decision`) where the record has no per-citation decisions."""
    cites = list(s.get("citations") or [])
    e = (s.get("emitted") or {}).get("precise")
    g = (s.get("grounded") or {}).get("precise")
    if not isinstance(e, list) or not isinstance(g, list) or not (len(e) == len(g) == len(cites)):
        return [_decision(s)] * len(cites)
    return ["source" if gk else "seen" if ek else "neither" for ek, gk in zip(e, g)]


def _sentences(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    judged = ((rec.get("extra") or {}).get("attribution") or {}).get("sentences")
    answer = rec.get("answer") or {}
    plain = answer.get("sentences") or []
    if not judged and not plain and str(answer.get("text") or "").strip():
        plain = [{"text": answer["text"]}]  # not split (no selected diagnostic reads its claims): shown whole
    out = []
    for s in judged if judged else plain:
        if isinstance(s, Mapping):
            out.append(
                {
                    "t": _clip(s.get("text")),
                    "c": list(s.get("citations") or []),
                    "d": _decision(s),
                    "cd": _citation_decisions(s),
                    "ev": list(s.get("evidence") or []),
                    "v": dict(s.get("verification") or {}),
                }
            )
    return out


def _joined(sources: Mapping[str, str], ids: Sequence[str]) -> str:
    """The snippets ``ids`` joined by a space, white space collapsed (each snippet is :func:`_clip`'s: collapsed
    already, so only an empty or missing one needs the collapse)."""
    parts = [sources.get(i, "") for i in ids]
    return " ".join(parts) if all(parts) else " ".join(" ".join(parts).split())


def _units(rec: Mapping[str, Any], sources: Mapping[str, str]) -> list[list[Any]]:
    out = []
    for u in (rec.get("context") or {}).get("units") or []:
        if not isinstance(u, Mapping):
            continue
        ids = list(u.get("source_ids") or []) or None
        text = " ".join(str(u.get("text") or "").split())
        joined = _joined(sources, ids) if ids else None
        out.append([None if ids and text == joined else _clip(text), ids])
    return out


def _metrics(rec: Mapping[str, Any], keys: Sequence[str]) -> dict[str, float | None]:
    m = rec.get("metrics") or {}
    out: dict[str, float | None] = {}
    for k in keys:
        v = m.get(k)
        if isinstance(v, bool):
            v = float(v)
        if isinstance(v, (int, float)) and math.isfinite(v):
            out[k] = round(float(v), 4)
        elif k in m:
            out[k] = None  # undefined: shown as undefined, never 0
    return out


def _question(rec: Mapping[str, Any]) -> dict[str, Any]:
    extra = rec.get("extra") or {}
    gold = extra.get("gold") or {}
    inp = extra.get("input")
    text = extra.get("question") or (inp.get("question") if isinstance(inp, Mapping) else None)
    srcs = {str(s.get("id")): _clip(s.get("text"), 600) for s in rec.get("sources") or [] if isinstance(s, Mapping)}
    return {
        "text": _clip(text, 400) if text else None,
        "gold": [str(a) for a in gold.get("answers") or []][:8],
        "sources": srcs,
    }


def _slim(rec: Mapping[str, Any], keys: Sequence[str], sources: Mapping[str, str]) -> dict[str, Any]:
    recovery = ((rec.get("extra") or {}).get("attribution") or {}).get("recovery") or {}
    return {
        "q": rec["question_id"],
        "s": rec["setting"]["name"],
        "st": rec.get("status"),
        "m": _metrics(rec, keys),
        "u": _units(rec, sources),
        "a": _sentences(rec),
        "r": {str(k): list(v.get("recovered") or []) for k, v in recovery.items() if isinstance(v, Mapping)},
        "e": _clip(rec.get("error"), 300) if rec.get("error") else None,
    }


class ExplorerPass:
    """The explorer's data built record by record (:meth:`add`, in the records' order), for a pass over the
    records that serves another reader too (the report's examples: one parse of each record for both);
    :func:`explorer_data` is one such pass on its own.  ``settings``, ``metric_keys``, ``seed``, ``limit`` and
    ``reference``: as :func:`explorer_data`."""

    def __init__(
        self,
        settings: Sequence[str],
        metric_keys: Sequence[str] | None,
        *,
        seed: int,
        limit: int = EXPLORER_LIMIT,
        reference: str | None = None,
        shown: Callable[[str], bool] | None = None,
    ) -> None:
        self.settings, self.seed = list(settings), seed
        #: None: not known yet (a pass before the run's metrics are): each record's metrics that ``shown`` accepts
        #: are kept, :meth:`result` keeps those it names
        self.metric_keys = None if metric_keys is None else list(metric_keys)
        self.shown = shown
        self._shown: dict[str, bool] = {}  # ``shown``'s answer per metric name
        self.limit, self.reference = limit, reference
        self.k = max(1, limit // max(1, len(self.settings)))
        self.heaps: dict[str, list[tuple[str, int, dict[str, Any]]]] = {s: [] for s in self.settings}
        self.questions: dict[str, dict[str, Any]] = {}
        self.n_total = 0

    def add(self, rec: Mapping[str, Any]) -> None:
        """The next record of the pass."""
        i = self.n_total
        self.n_total += 1
        qid, s = rec["question_id"], rec["setting"]["name"]
        key = sample_key(qid, self.seed)
        heap = self.heaps.setdefault(s, [])
        # a max-heap of the k smallest keys (negated order through the inverted hex digits)
        inv = key.translate(_INVERT)
        if len(heap) >= self.k and inv <= heap[0][0]:
            return
        q = self.questions.get(qid)
        if q is None:  # a question's text, gold and sources from its first record (made once, not per record)
            q = self.questions[qid] = _question(rec)
        keys = self.metric_keys
        if keys is None:  # each metric name asked of ``shown`` once
            seen = self._shown
            keys = [k for k in rec.get("metrics") or {} if (seen[k] if k in seen else self._ask(k))]
        item = (inv, i, _slim(rec, keys, q["sources"]))
        if len(heap) < self.k:
            heapq.heappush(heap, item)
        else:
            heapq.heapreplace(heap, item)

    def _ask(self, key: str) -> bool:
        ok = self._shown[key] = self.shown is None or self.shown(key)
        return ok

    def result(self, metric_keys: Sequence[str] | None = None) -> dict[str, Any]:
        """The data of the records added so far (:func:`explorer_data`'s); ``metric_keys``: the metrics shown,
        when the pass was made before they were known (each one a metric ``shown`` accepts)."""
        settings = self.settings
        order = {s: j for j, s in enumerate(settings)}
        kept = sorted(
            (x for h in self.heaps.values() for x in h), key=lambda x: (order.get(x[2]["s"], len(order)), x[1])
        )
        chosen = [x[2] for x in kept]
        if self.metric_keys is None:
            keys = list(metric_keys or ())
            chosen = [{**r, "m": {k: r["m"][k] for k in keys if k in r["m"]}} for r in chosen]
        else:
            keys = self.metric_keys
        used = {r["q"] for r in chosen}
        return {
            "records": chosen,
            "questions": {q: v for q, v in self.questions.items() if q in used},
            "n_total": self.n_total,
            "n_shown": len(chosen),
            "limit": self.limit,
            "sampled": len(chosen) < self.n_total,
            "settings": list(settings),
            "metrics": list(keys),
            "reference": self.reference,
        }


def explorer_data(
    records: Iterable[Mapping[str, Any]],
    settings: Sequence[str],
    metric_keys: Sequence[str],
    *,
    seed: int,
    limit: int = EXPLORER_LIMIT,
    reference: str | None = None,
) -> dict[str, Any]:
    """``{"records", "questions", "n_total", "n_shown", "limit", "sampled", "settings", "metrics", "reference"}``
    from one pass over ``records`` (see the module doc): at most ``limit`` records (``k`` per setting when the run
    has more), in setting then question order."""
    p = ExplorerPass(settings, metric_keys, seed=seed, limit=limit, reference=reference)
    for rec in records:
        p.add(rec)
    return p.result()


_INVERT = str.maketrans("0123456789abcdef", "fedcba9876543210")


def explorer_json(data: Mapping[str, Any]) -> str:
    """The data as JSON safe inside ``<script type="application/json">`` (no ``<`` in the text)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).replace("<", "\\u003c")
