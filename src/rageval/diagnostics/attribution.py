"""Attribution diagnostics: emitted vs grounded citation precision/recall, re-attributability.

Pure functions over lists (DESIGN §3 "Module interface")::

    emitted_precision(predictions, units, sources, *, judge="lexical", threshold=0.5, max_citations=3,
                      alce_compat=False, no_citation_precision="zero")
    emitted_recall(...), grounded_precision(...), grounded_recall(...)      # same signature
    re_attributability(predictions, units, sources, *, judge, recovery_threshold=0.5, k=10,
                       multi_snippet=False, candidates="bm25")
    re_attributability_sweep(predictions, units, sources, *, judge, thresholds=(0.3, ..., 0.8))
    attribution_scores(prediction, units, sources, *, judge, ...) -> dict        # one question, everything
    attribution_scores_batch(predictions, units, sources, *, judge, ...) -> list[dict]

``predictions[q]`` is an answer with ``[k]`` citations; ``units[q]`` the list of
``{"text", "source_ids" (list or None), "title" (optional)}`` the reader saw
(``[k]`` = ``units[q][k-1]``); ``sources[q]`` the question's source snippets
``{"id", "text", "title" (optional)}``.  ``judge`` is anything
:func:`rageval.judges.get_judge` accepts; pass the same
:class:`~rageval.judges.JudgeRunner` to several calls to share its memo and
cache.  Each function returns ``{<name>: mean or None, "n", "n_undefined",
"per_question": [...]}`` like every diagnostic.

**The gate** (ALCE's ``compute_autoais``, shared by emitted and grounded).  For
each sentence with valid citations ``c1..cm`` (de-duplicated, capped at
``max_citations`` keeping the first ones) and hypothesis = the sentence without
markers:

* *joint*: the judge decides whether the pooled premises of all citations
  entail the hypothesis; that is the sentence's recall (0/1).  A sentence
  without valid citations has recall 0 and costs no judge call.
* precision: if joint fails, every citation is imprecise; if ``m == 1`` the
  citation is precise iff joint holds; if ``m > 1`` and joint holds, citation
  ``c`` is imprecise only when it alone does *not* entail the hypothesis *and*
  the pooled premises of the others still do.
* default mode: each invalid citation (out of range, ``[0]``) is one more
  imprecise citation in the denominator; ``alce_compat=True``: a sentence with
  an out-of-range citation has recall 0 and adds nothing to the denominator.
* per question: recall = mean over sentences; precision = precise / citations,
  0 when the answer cites nothing (``no_citation_precision="undefined"`` makes
  it None); an empty answer (no sentences) is undefined for both.

**Premises.**  Emitted: the unit text the reader saw, ``"Title: {title}\\n{text}"``
when the unit has a title.  Grounded: the unit's *declared* source snippets,
else the snippets *recovered* by re-attribution, else nothing (``missing``: no
precision credit, cannot support recall).  Each snippet is formatted
``"Title: {title}\\n{text}"`` (or the text) and pooled with ``"\\n"`` in citation
order; in grounded pools a source id appears once.  Emitted pools keep
duplicates (``alce_compat`` keeps ALCE's duplicated citations).

**Re-attribution** (units without declared provenance): the unit text is the
BM25 (``bm25s``, English stopwords, no stemming) query over the question's
source snippet texts; the top ``k`` with a positive score are candidates; the
judge scores ``(candidate premise, unit text)``; every candidate with
probability >= ``recovery_threshold`` is recovered (pooled, source order).  The
unit is re-attributable when at least one passes.  ``multi_snippet=True``:
when no single candidate passes, each candidate joined with the next source
snippet, and the pairs of the top 3 candidates, are tried too.
``candidates="dense"`` ranks by MiniLM cosine similarity instead
(:func:`dense_candidates`); ``candidates`` may also be any callable
``(query, source_texts, k) -> list[int]``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from rageval.citations import parse_answer
from rageval.diagnostics._attribution_inputs import PreparedQuestion, prepare_inputs
from rageval.diagnostics._common import mean_defined, summarize

__all__ = [
    "emitted_precision",
    "emitted_recall",
    "grounded_precision",
    "grounded_recall",
    "re_attributability",
    "re_attributability_sweep",
    "attribution_scores",
    "attribution_scores_batch",
    "DEFAULT_SWEEP",
]

DEFAULT_SWEEP = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
_NO_CITATION = ("zero", "undefined")

Item = tuple  # (pool key, title, text)


def _fmt(items: Sequence[Item]) -> str:
    return "\n".join(f"Title: {t}\n{x}" if t is not None else x for _, t, x in items)


def _pool(groups: Sequence[Sequence[Item] | None], dedupe: bool) -> list[Item]:
    out: list[Item] = []
    seen = set()
    for g in groups:
        if g is None:
            continue
        for it in g:
            if dedupe:
                if it[0] in seen:
                    continue
                seen.add(it[0])
            out.append(it)
    return out


# ----------------------------------------------------------------------------------------------
# options


@dataclass
class _Opts:
    runner: Any
    threshold: float = 0.5
    recovery_threshold: float = 0.5
    k: int = 10
    multi_snippet: bool = False
    candidates: Any = "bm25"
    max_citations: int | None = 3
    alce_compat: bool = False
    no_citation_precision: str = "zero"


def _make_opts(judge, *, threshold=0.5, recovery_threshold=None, k=10, multi_snippet=False, candidates="bm25",
               max_citations=3, alce_compat=False, no_citation_precision="zero", cache_dir=None) -> _Opts:
    from rageval.judges import get_judge

    for name, v in (("threshold", threshold), ("recovery_threshold", recovery_threshold)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0):
            raise ValueError(f"{name} must be a number in [0, 1], got {v!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer (BM25 candidates per unit), got {k!r}")
    if no_citation_precision not in _NO_CITATION:
        raise ValueError(f"no_citation_precision must be one of {_NO_CITATION}, got {no_citation_precision!r}")
    if candidates == "dense":
        candidates = dense_candidates()
    if not (candidates == "bm25" or callable(candidates)):
        raise ValueError(
            f"candidates must be 'bm25', 'dense' or a callable (query, texts, k) -> indices, got {candidates!r}")
    return _Opts(
        runner=get_judge(judge, cache_dir=cache_dir),
        threshold=float(threshold),
        recovery_threshold=float(threshold if recovery_threshold is None else recovery_threshold),
        k=k,
        multi_snippet=bool(multi_snippet),
        candidates=candidates,
        max_citations=max_citations,
        alce_compat=bool(alce_compat),
        no_citation_precision=no_citation_precision,
    )


def _parse(q: PreparedQuestion, opts: _Opts):
    return parse_answer(q.prediction, len(q.units), mode="alce" if opts.alce_compat else "default",
                        max_citations=opts.max_citations)


# ----------------------------------------------------------------------------------------------
# re-attribution


@dataclass
class Recovery:
    """Re-attribution of one unit: candidates (ranked ids), their probabilities, recovered ids (pooled)."""

    candidates: list[str] = field(default_factory=list)
    probabilities: list[float] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    pairs_scored: int = 0
    tokens_scored: int = 0
    multi_snippet_used: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidates": list(self.candidates),
            "probabilities": [round(p, 6) for p in self.probabilities],
            "recovered": list(self.recovered),
            "pairs_scored": self.pairs_scored,
            "multi_snippet_used": self.multi_snippet_used,
        }


@functools.lru_cache(maxsize=2)
def dense_candidates(path: str | None = None) -> Callable[[str, list[str], int], list[int]]:
    """Dense candidates: the top-k source texts by cosine similarity of MiniLM embeddings (``candidates="dense"``).

    ``path``: another sentence-embedding folder (mean pooling).  Loaded once per process.
    """
    from rageval.judges.embedding import EmbeddingJudge

    enc = EmbeddingJudge(path)

    def candidates(query: str, texts: list[str], k: int) -> list[int]:
        if not texts:
            return []
        enc._embed([query] + list(texts))
        q = enc._emb[query]
        scores = [float(enc._emb[t] @ q) for t in texts]
        return sorted(range(len(texts)), key=lambda i: (-scores[i], i))[:k]

    candidates.id = f"dense:{enc.id}"  # type: ignore[attr-defined]
    return candidates


class _BM25Index:
    """One bm25s index per question, reused for all its units."""

    def __init__(self, texts: list[str]):
        import bm25s

        self.n = len(texts)
        self._r = None
        if texts:
            corpus = bm25s.tokenize(texts, stopwords="en", show_progress=False)
            if corpus.vocab:
                self._r = bm25s.BM25()
                self._r.index(corpus, show_progress=False)

    def __call__(self, query: str, k: int) -> list[int]:
        import bm25s

        if self._r is None:
            return []
        qtok = bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)
        if not qtok or not qtok[0]:
            return []
        docs, scores = self._r.retrieve(qtok, k=min(k, self.n), show_progress=False)
        ranked = sorted(((float(s), int(d)) for d, s in zip(docs[0], scores[0]) if s > 0), key=lambda x: (-x[0], x[1]))
        return [d for _, d in ranked]


def recover_units(questions: list[PreparedQuestion], wanted: dict[int, list[int]], opts: _Opts,
                  *, threshold: float | None = None) -> dict[tuple[int, int], Recovery]:
    """Re-attribute units ``wanted[q] = [unit indices]`` (only those without declared provenance)."""
    thr = opts.recovery_threshold if threshold is None else threshold
    runner = opts.runner
    plan: list[tuple[tuple[int, int], list[int]]] = []
    for qi, ks in wanted.items():
        q = questions[qi]
        if not ks:
            continue
        texts = [s.text for s in q.sources]
        index = _BM25Index(texts) if opts.candidates == "bm25" else None
        for k in ks:
            u = q.units[k]
            if u.source_ids is not None:
                continue
            if index is not None:
                cands = index(u.text, opts.k)
            else:
                cands = [int(i) for i in opts.candidates(u.text, texts, opts.k)][: opts.k]
                for i in cands:
                    if not 0 <= i < len(texts):
                        raise ValueError(f"candidates callable returned index {i} for sources[{qi}] of length {len(texts)}")
            plan.append(((qi, k), cands))
    # phase 1: single snippets
    prem, hyp, owner = [], [], []
    for key, cands in plan:
        q = questions[key[0]]
        for i in cands:
            s = q.sources[i]
            prem.append(_fmt([(s.id, s.title, s.text)]))
            hyp.append(q.units[key[1]].text)
            owner.append((key, i))
    probs = runner(prem, hyp) if prem else []
    out: dict[tuple[int, int], Recovery] = {key: Recovery() for key, _ in plan}
    for (key, i), p, pr, hy in zip(owner, probs, prem, hyp):
        rec = out[key]
        rec.candidates.append(questions[key[0]].sources[i].id)
        rec.probabilities.append(p)
        rec.pairs_scored += 1
        rec.tokens_scored += runner.input_tokens(pr, hy)
    for key, cands in plan:
        rec = out[key]
        passing = {cands[j] for j, p in enumerate(rec.probabilities) if p >= thr}
        rec.recovered = [questions[key[0]].sources[i].id for i in sorted(passing)]
    if not opts.multi_snippet:
        return out
    # phase 2: joined pairs for units where no single candidate passed
    prem, hyp, owner = [], [], []
    for key, cands in plan:
        if out[key].recovered or not cands:
            continue
        q = questions[key[0]]
        combos = []
        for i in cands:
            if i + 1 < len(q.sources):
                combos.append((i, i + 1))
        top = cands[:3]
        combos += [(a, b) if a < b else (b, a) for x, a in enumerate(top) for b in top[x + 1:]]
        for a, b in dict.fromkeys(combos):
            sa, sb = q.sources[a], q.sources[b]
            prem.append(_fmt([(sa.id, sa.title, sa.text), (sb.id, sb.title, sb.text)]))
            hyp.append(q.units[key[1]].text)
            owner.append((key, (a, b)))
    probs = runner(prem, hyp) if prem else []
    passing2: dict[tuple[int, int], set[int]] = {}
    for (key, ab), p, pr, hy in zip(owner, probs, prem, hyp):
        rec = out[key]
        rec.pairs_scored += 1
        rec.tokens_scored += runner.input_tokens(pr, hy)
        rec.multi_snippet_used = True
        if p >= thr:
            passing2.setdefault(key, set()).update(ab)
    for key, idx in passing2.items():
        out[key].recovered = [questions[key[0]].sources[i].id for i in sorted(idx)]
    return out


# ----------------------------------------------------------------------------------------------
# the gate


@dataclass
class _Job:
    groups: list[list[Item] | None]  # per citation: its premise items, None = unresolvable
    hyp: str
    dedupe: bool
    joint: bool = False
    precise: list[bool] = field(default_factory=list)


def run_gate(jobs: list[_Job], runner, threshold: float) -> None:
    """ALCE's precision gate for many sentences at once (three batched judge calls)."""
    # phase 1: joint entailment
    ask = [(j, _fmt(_pool(j.groups, j.dedupe))) for j in jobs if any(g for g in j.groups)]
    if ask:
        dec = runner.decide([p for _, p in ask], [j.hyp for j, _ in ask], threshold=threshold)
        for (j, _), d in zip(ask, dec):
            j.joint = d
    for j in jobs:
        m = len(j.groups)
        if not j.joint:
            j.precise = [False] * m
        elif m == 1:
            j.precise = [True]
        else:
            j.precise = [False] * m
    # phase 2: each citation alone (joint holds, m > 1)
    alone = [(j, c) for j in jobs if j.joint and len(j.groups) > 1 for c in range(len(j.groups)) if j.groups[c]]
    alone_ok: dict[tuple[int, int], bool] = {}
    if alone:
        dec = runner.decide([_fmt(j.groups[c]) for j, c in alone], [j.hyp for j, _ in alone], threshold=threshold)
        for (j, c), d in zip(alone, dec):
            alone_ok[(id(j), c)] = d
    # phase 3: the others without it
    rest = []
    for j in jobs:
        if not (j.joint and len(j.groups) > 1):
            continue
        for c in range(len(j.groups)):
            if alone_ok.get((id(j), c)):
                j.precise[c] = True
            elif j.groups[c] is None or not j.groups[c]:
                j.precise[c] = False  # the others are the whole (entailing) pool: no credit
            else:
                others = _pool(j.groups[:c] + j.groups[c + 1:], j.dedupe)
                if not others:
                    j.precise[c] = True
                else:
                    rest.append((j, c, _fmt(others)))
    if rest:
        dec = runner.decide([p for _, _, p in rest], [j.hyp for j, _, _ in rest], threshold=threshold)
        for (j, c, _), d in zip(rest, dec):
            j.precise[c] = not d


# ----------------------------------------------------------------------------------------------
# per-question engine


def _unit_items(q: PreparedQuestion, k: int) -> list[Item]:
    u = q.units[k]
    return [(("unit", k), u.title, u.text)]


def _source_items(q: PreparedQuestion, ids: Sequence[str]) -> list[Item]:
    return [(sid, q.by_id[sid].title, q.by_id[sid].text) for sid in ids]


def _grounded_items(q: PreparedQuestion, k: int, rec: dict[tuple[int, int], Recovery]) -> tuple[list[Item] | None, str]:
    u = q.units[k]
    if u.source_ids is not None:
        return _source_items(q, u.source_ids), "declared"
    r = rec.get((q.index, k))
    if r is not None and r.recovered:
        return _source_items(q, r.recovered), "recovered"
    return None, "missing"


def _score_citations(questions, parsed, opts, rec, variant: str) -> dict[int, dict[str, Any]]:
    jobs: dict[tuple[int, int], _Job] = {}
    statuses: dict[tuple[int, int], list[str]] = {}
    for q, ans in zip(questions, parsed):
        for si, s in enumerate(ans.sentences):
            groups: list[list[Item] | None] = []
            st = []
            for c in s.citations:
                if variant == "emitted":
                    groups.append(_unit_items(q, c - 1))
                    st.append("unit")
                else:
                    items, status = _grounded_items(q, c - 1, rec)
                    groups.append(items)
                    st.append(status)
            jobs[(q.index, si)] = _Job(groups=groups, hyp=s.text, dedupe=(variant == "grounded"))
            statuses[(q.index, si)] = st
    run_gate(list(jobs.values()), opts.runner, opts.threshold)
    out: dict[int, dict[str, Any]] = {}
    for q, ans in zip(questions, parsed):
        sents = []
        n_support = 0
        precise = 0
        denom = 0
        for si, s in enumerate(ans.sentences):
            j = jobs[(q.index, si)]
            n_support += int(j.joint)
            precise += sum(j.precise)
            denom += len(s.citations) + (0 if opts.alce_compat else len(s.invalid))
            sents.append({"supported": bool(j.joint), "precise": list(j.precise), "evidence": statuses[(q.index, si)]})
        n = len(ans.sentences)
        if n == 0:
            prec = recall = None
        else:
            recall = n_support / n
            if denom:
                prec = precise / denom
            else:
                prec = 0.0 if opts.no_citation_precision == "zero" else None
        out[q.index] = {"precision": prec, "recall": recall, "sentences": sents, "citations": denom,
                        "precise": precise}
    return out


def _cited_units(ans) -> list[int]:
    return sorted({c - 1 for s in ans.sentences for c in s.citations})


def _verification(questions, parsed, opts, rec) -> dict[int, dict[str, Any]]:
    runner = opts.runner
    modes = ("summary_checked", "declared_span", "recovered_source")
    asks: dict[str, list] = {m: [] for m in modes}  # (qi, si, premise, hyp)
    out: dict[int, dict[str, Any]] = {}
    for q, ans in zip(questions, parsed):
        r = {"claims": len(ans.sentences), "structural_rejections_declared_span": 0, "unrecovered_claims": 0,
             "claims_without_citations": 0, "claim_status": []}
        for si, s in enumerate(ans.sentences):
            status = {}
            if not s.citations:
                r["claims_without_citations"] += 1
                r["structural_rejections_declared_span"] += 1
                r["unrecovered_claims"] += 1
                out_status = {m: "no_citation" for m in modes}
                r["claim_status"].append(out_status)
                continue
            asks["summary_checked"].append((q.index, si, _fmt(_pool([_unit_items(q, c - 1) for c in s.citations], False)), s.text))
            declared: list[str] = []
            recovered: list[str] = []
            for c in s.citations:
                u = q.units[c - 1]
                if u.source_ids is not None:
                    declared.extend(u.source_ids)
                    recovered.extend(u.source_ids)
                else:
                    rr = rec.get((q.index, c - 1))
                    if rr is not None:
                        recovered.extend(rr.recovered)
            declared = list(dict.fromkeys(declared))
            recovered = list(dict.fromkeys(recovered))
            if declared:
                asks["declared_span"].append((q.index, si, _fmt(_source_items(q, declared)), s.text))
            else:
                r["structural_rejections_declared_span"] += 1
                status["declared_span"] = "structural_rejection"
            if recovered:
                asks["recovered_source"].append((q.index, si, _fmt(_source_items(q, recovered)), s.text))
            else:
                r["unrecovered_claims"] += 1
                status["recovered_source"] = "no_evidence"
            r["claim_status"].append(status)
        out[q.index] = r
    for m in modes:
        rows = asks[m]
        dec = runner.decide([p for _, _, p, _ in rows], [h for _, _, _, h in rows], threshold=opts.threshold) if rows else []
        for (qi, si, p, h), d in zip(rows, dec):
            r = out[qi]
            r["claim_status"][si][m] = "supported" if d else "unsupported"
            r.setdefault(f"verifier_tokens_{m}", 0)
            r[f"verifier_tokens_{m}"] += runner.input_tokens(p, h)
    for q in questions:
        r = out[q.index]
        for m in modes:
            r.setdefault(f"verifier_tokens_{m}", 0)
            if r["claims"] == 0:
                r[f"unsupported_{m}"] = None
            else:
                for st in r["claim_status"]:
                    st.setdefault(m, "unsupported")
                unsup = sum(1 for st in r["claim_status"] if st[m] != "supported")
                r[f"unsupported_{m}"] = unsup / r["claims"]
    return out


# ----------------------------------------------------------------------------------------------
# public API


_PARTS = ("emitted", "grounded", "re_attributability", "verification")


def attribution_scores_batch(predictions, units, sources, *, judge: Any = "lexical", threshold: float = 0.5,
                             recovery_threshold: float | None = None, k: int = 10, multi_snippet: bool = False,
                             candidates: Any = "bm25", max_citations: int | None = 3, alce_compat: bool = False,
                             no_citation_precision: str = "zero", parts: Sequence[str] = _PARTS,
                             cache_dir: Any = None, details: bool = True) -> list[dict[str, Any]]:
    """Every attribution value of every question, sharing one judge runner (one batched call per phase).

    Returns one dict per question with the flat values ``emitted_precision``,
    ``emitted_recall``, ``grounded_precision``, ``grounded_recall``,
    ``emitted_minus_grounded_precision``, ``emitted_minus_grounded_recall``,
    ``re_attributability``, ``unsupported_summary_checked``,
    ``unsupported_declared_span``, ``unsupported_recovered_source``,
    ``verifier_tokens_<mode>``, ``recovery_candidates_scored``,
    ``recovery_tokens``, evidence status counts, and (``details=True``) a
    ``details`` dict: per sentence, its citations, support, precision flags and
    per-citation evidence status (declared / recovered / missing), per unit its
    re-attribution.  Undefined values are None.
    """
    bad = [p for p in parts if p not in _PARTS]
    if bad:
        raise ValueError(f"unknown parts {bad}; choose from {_PARTS}")
    opts = _make_opts(judge, threshold=threshold, recovery_threshold=recovery_threshold, k=k,
                      multi_snippet=multi_snippet, candidates=candidates, max_citations=max_citations,
                      alce_compat=alce_compat, no_citation_precision=no_citation_precision, cache_dir=cache_dir)
    questions = prepare_inputs(predictions, units, sources)
    parsed = [_parse(q, opts) for q in questions]
    need_rec_all = "re_attributability" in parts
    need_rec_cited = "grounded" in parts or "verification" in parts
    wanted: dict[int, list[int]] = {}
    for q, ans in zip(questions, parsed):
        ks = set()
        if need_rec_all:
            ks.update(range(len(q.units)))
        elif need_rec_cited:
            ks.update(_cited_units(ans))
        wanted[q.index] = sorted(k for k in ks if q.units[k].source_ids is None)
    rec = recover_units(questions, wanted, opts) if any(wanted.values()) else {}
    emitted = _score_citations(questions, parsed, opts, rec, "emitted") if "emitted" in parts else {}
    grounded = _score_citations(questions, parsed, opts, rec, "grounded") if "grounded" in parts else {}
    verif = _verification(questions, parsed, opts, rec) if "verification" in parts else {}
    results = []
    for q, ans in zip(questions, parsed):
        r: dict[str, Any] = {}
        det: dict[str, Any] = {"sentences": [s.to_dict() for s in ans.sentences], "n_units": len(q.units)}
        if "emitted" in parts:
            e = emitted[q.index]
            r["emitted_precision"], r["emitted_recall"] = e["precision"], e["recall"]
            r["n_citations"] = e["citations"]
            for s, d in zip(det["sentences"], e["sentences"]):
                s["emitted"] = {"supported": d["supported"], "precise": d["precise"]}
        if "grounded" in parts:
            g = grounded[q.index]
            r["grounded_precision"], r["grounded_recall"] = g["precision"], g["recall"]
            r["n_citations"] = g["citations"]
            counts = {"declared": 0, "recovered": 0, "missing": 0}
            for s, d in zip(det["sentences"], g["sentences"]):
                s["grounded"] = {"supported": d["supported"], "precise": d["precise"]}
                s["evidence"] = d["evidence"]
                for st in d["evidence"]:
                    counts[st] += 1
            r.update({f"citations_{k}": v for k, v in counts.items()})
        if "emitted" in parts and "grounded" in parts:
            for m in ("precision", "recall"):
                e_v, g_v = r[f"emitted_{m}"], r[f"grounded_{m}"]
                r[f"emitted_minus_grounded_{m}"] = None if e_v is None or g_v is None else e_v - g_v
        q_rec = {k: v for (qi, k), v in rec.items() if qi == q.index}
        if "re_attributability" in parts:
            no_prov = [k for k, u in enumerate(q.units) if u.source_ids is None]
            r["units_without_provenance"] = len(no_prov)
            n_ok = sum(1 for k in no_prov if q_rec.get(k) is not None and q_rec[k].recovered)
            r["re_attributable_units"] = n_ok
            r["re_attributability"] = n_ok / len(no_prov) if no_prov else None
        r["recovery_candidates_scored"] = sum(v.pairs_scored for v in q_rec.values())
        r["recovery_tokens"] = sum(v.tokens_scored for v in q_rec.values())
        det["recovery"] = {str(k + 1): v.to_dict() for k, v in sorted(q_rec.items())}
        if "verification" in parts:
            v = verif[q.index]
            for key in ("unsupported_summary_checked", "unsupported_declared_span", "unsupported_recovered_source",
                        "verifier_tokens_summary_checked", "verifier_tokens_declared_span",
                        "verifier_tokens_recovered_source", "claims", "structural_rejections_declared_span",
                        "unrecovered_claims", "claims_without_citations"):
                r[key] = v[key]
            for s, st in zip(det["sentences"], v["claim_status"]):
                s["verification"] = st
        if details:
            r["details"] = det
        results.append(r)
    return results


def attribution_scores(prediction: str, units, sources, *, judge: Any = "lexical", **options) -> dict[str, Any]:
    """All attribution values of one question (see :func:`attribution_scores_batch` for keys and options).

    ``units`` and ``sources`` are that question's lists.  Pass a
    :class:`~rageval.judges.JudgeRunner` as ``judge`` to share its cache across questions.
    """
    return attribution_scores_batch([prediction], [units], [sources], judge=judge, **options)[0]


def _module(name: str, parts: tuple[str, ...], keys: tuple[str, ...], extra: tuple[str, ...] = ()):
    def fn(predictions, units, sources, *, judge: Any = "lexical", threshold: float = 0.5,
           max_citations: int | None = 3, alce_compat: bool = False, no_citation_precision: str = "zero",
           recovery_threshold: float | None = None, k: int = 10, multi_snippet: bool = False,
           candidates: Any = "bm25", cache_dir: Any = None, details: bool = True) -> dict[str, Any]:
        rows = attribution_scores_batch(
            predictions, units, sources, judge=judge, threshold=threshold, max_citations=max_citations,
            alce_compat=alce_compat, no_citation_precision=no_citation_precision,
            recovery_threshold=recovery_threshold, k=k, multi_snippet=multi_snippet, candidates=candidates,
            parts=parts, cache_dir=cache_dir, details=details,
        )
        per_q = [{kk: r.get(kk) for kk in keys + extra + (("details",) if details else ())} for r in rows]
        return summarize(per_q, name, extra=tuple(x for x in keys if x != name))

    fn.__name__ = name
    return fn


_emitted_precision = _module("emitted_precision", ("emitted",), ("emitted_precision", "emitted_recall"), ("n_citations",))
_emitted_recall = _module("emitted_recall", ("emitted",), ("emitted_recall", "emitted_precision"), ("n_citations",))
_grounded_keys = ("grounded_precision", "grounded_recall", "emitted_precision", "emitted_recall",
                  "emitted_minus_grounded_precision", "emitted_minus_grounded_recall")
_grounded_extra = ("n_citations", "citations_declared", "citations_recovered", "citations_missing",
                   "recovery_candidates_scored")
_grounded_precision = _module("grounded_precision", ("emitted", "grounded"), _grounded_keys, _grounded_extra)
_grounded_recall = _module(
    "grounded_recall", ("emitted", "grounded"),
    ("grounded_recall",) + tuple(x for x in _grounded_keys if x != "grounded_recall"), _grounded_extra)
_re_attributability = _module(
    "re_attributability", ("re_attributability",), ("re_attributability",),
    ("units_without_provenance", "re_attributable_units", "recovery_candidates_scored", "recovery_tokens"))


def emitted_precision(predictions, units, sources, *, judge: Any = "lexical", threshold: float = 0.5,
                      max_citations: int | None = 3, alce_compat: bool = False, no_citation_precision: str = "zero",
                      recovery_threshold: float | None = None, k: int = 10, multi_snippet: bool = False,
                      candidates: Any = "bm25", cache_dir: Any = None, details: bool = True) -> dict[str, Any]:
    """ALCE citation precision with premise = the unit text the reader saw (see module doc).

    >>> units = [[{"text": "Paris is the capital of France.", "source_ids": None},
    ...           {"text": "Berlin is in Germany.", "source_ids": None}]]
    >>> r = emitted_precision(["Paris is the capital of France [1][2]."], units, [[]])
    >>> r["emitted_precision"], r["emitted_recall"]
    (0.5, 1.0)
    """
    return _emitted_precision(predictions, units, sources, judge=judge, threshold=threshold, max_citations=max_citations,
                                alce_compat=alce_compat, no_citation_precision=no_citation_precision,
                                recovery_threshold=recovery_threshold, k=k, multi_snippet=multi_snippet,
                                candidates=candidates, cache_dir=cache_dir, details=details)


def emitted_recall(predictions, units, sources, *, judge: Any = "lexical", threshold: float = 0.5,
                      max_citations: int | None = 3, alce_compat: bool = False, no_citation_precision: str = "zero",
                      recovery_threshold: float | None = None, k: int = 10, multi_snippet: bool = False,
                      candidates: Any = "bm25", cache_dir: Any = None, details: bool = True) -> dict[str, Any]:
    """ALCE citation recall with premise = the unit text the reader saw (see module doc)."""
    return _emitted_recall(predictions, units, sources, judge=judge, threshold=threshold, max_citations=max_citations,
                                alce_compat=alce_compat, no_citation_precision=no_citation_precision,
                                recovery_threshold=recovery_threshold, k=k, multi_snippet=multi_snippet,
                                candidates=candidates, cache_dir=cache_dir, details=details)


def grounded_precision(predictions, units, sources, *, judge: Any = "lexical", threshold: float = 0.5,
                      max_citations: int | None = 3, alce_compat: bool = False, no_citation_precision: str = "zero",
                      recovery_threshold: float | None = None, k: int = 10, multi_snippet: bool = False,
                      candidates: Any = "bm25", cache_dir: Any = None, details: bool = True) -> dict[str, Any]:
    """Citation precision with premise = the cited unit's declared, else recovered, source snippets.

    Per question also ``emitted_*``, the emitted − grounded gaps and the
    evidence status counts (declared / recovered / missing).

    >>> units = [[{"text": "Paris is the capital of France.", "source_ids": None}]]
    >>> r = grounded_precision(["Paris is the capital of France [1]."], units, [[{"id": "d0.s0", "text": "Lyon is big."}]])
    >>> r["grounded_precision"], r["emitted_precision"], r["per_question"][0]["citations_missing"]
    (0.0, 1.0, 1)
    """
    return _grounded_precision(predictions, units, sources, judge=judge, threshold=threshold, max_citations=max_citations,
                                alce_compat=alce_compat, no_citation_precision=no_citation_precision,
                                recovery_threshold=recovery_threshold, k=k, multi_snippet=multi_snippet,
                                candidates=candidates, cache_dir=cache_dir, details=details)


def grounded_recall(predictions, units, sources, *, judge: Any = "lexical", threshold: float = 0.5,
                      max_citations: int | None = 3, alce_compat: bool = False, no_citation_precision: str = "zero",
                      recovery_threshold: float | None = None, k: int = 10, multi_snippet: bool = False,
                      candidates: Any = "bm25", cache_dir: Any = None, details: bool = True) -> dict[str, Any]:
    """Citation recall with premise = the cited units' declared, else recovered, source snippets."""
    return _grounded_recall(predictions, units, sources, judge=judge, threshold=threshold, max_citations=max_citations,
                                alce_compat=alce_compat, no_citation_precision=no_citation_precision,
                                recovery_threshold=recovery_threshold, k=k, multi_snippet=multi_snippet,
                                candidates=candidates, cache_dir=cache_dir, details=details)


def re_attributability(predictions, units, sources, *, judge: Any = "lexical", threshold: float = 0.5,
                      max_citations: int | None = 3, alce_compat: bool = False, no_citation_precision: str = "zero",
                      recovery_threshold: float | None = None, k: int = 10, multi_snippet: bool = False,
                      candidates: Any = "bm25", cache_dir: Any = None, details: bool = True) -> dict[str, Any]:
    """Share of units without declared provenance for which a source snippet passes the judge.

    Undefined for a question whose units all declare provenance.  ``predictions``
    are accepted for the common interface and not used.

    >>> units = [[{"text": "Paris is France's capital.", "source_ids": None}, {"text": "x", "source_ids": ["d0.s0"]}]]
    >>> sources = [[{"id": "d0.s0", "text": "Paris is the capital of France."}]]
    >>> re_attributability([""], units, sources)["re_attributability"]
    1.0
    """
    return _re_attributability(predictions, units, sources, judge=judge, threshold=threshold, max_citations=max_citations,
                                alce_compat=alce_compat, no_citation_precision=no_citation_precision,
                                recovery_threshold=recovery_threshold, k=k, multi_snippet=multi_snippet,
                                candidates=candidates, cache_dir=cache_dir, details=details)


def re_attributability_sweep(predictions, units, sources, *, judge: Any = "lexical",
                             thresholds: Sequence[float] = DEFAULT_SWEEP, **options) -> list[dict[str, Any]]:
    """Re-attributability rate and grounded precision/recall at each recovery threshold (default 0.3–0.8).

    The judge's probabilities are computed once (runner memo) and re-thresholded.
    Returns ``[{"threshold", "re_attributability", "grounded_precision", "grounded_recall", "n", "n_undefined"}]``.
    """
    from rageval.judges import get_judge

    runner = get_judge(judge, cache_dir=options.pop("cache_dir", None))
    if "recovery_threshold" in options:
        raise TypeError("re_attributability_sweep sets recovery_threshold itself: pass thresholds=[...]")
    out = []
    for t in thresholds:
        rows = attribution_scores_batch(predictions, units, sources, judge=runner, recovery_threshold=t,
                                        parts=("grounded", "re_attributability"), details=False, **options)
        ra = summarize([{"re_attributability": r["re_attributability"]} for r in rows], "re_attributability")
        out.append({
            "threshold": t,
            "re_attributability": ra["re_attributability"],
            "n": ra["n"],
            "n_undefined": ra["n_undefined"],
            "grounded_precision": mean_defined([r["grounded_precision"] for r in rows])[0],
            "grounded_recall": mean_defined([r["grounded_recall"] for r in rows])[0],
        })
    return out
