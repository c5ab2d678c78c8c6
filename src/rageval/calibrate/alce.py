"""Human calibration of the citation scores on ALCE's human citation evaluation (``--format alce-human``).

The file (ALCE's ``human_eval/human_eval_citations_completed.json``) is
``{dataset: {system_file: {question_id: item}}}``; an item holds ``id``,
``question``, ``output`` and ``sentences``, each sentence ``{text, citations:
[{title, text, citation_precision_score: 0|1|2}], sentence_recall_score: 0|1,
sentence_precision_score}``, and (when recorded) ALCE's own automatic decisions
``automatic_recall_scores`` (per sentence), ``automatic_precision_scores`` (per
sentence) and ``automatic_citation_precision_scores`` (per sentence, per
citation).  A key ``overall_results`` among the items is a summary and is skipped.

rageval's citation gate (:mod:`rageval.diagnostics.attribution.gate`) scores the
file's own sentences and citation lists with the given judge: no re-splitting, the
documents are the ones the file gives, the hypothesis is the sentence with its
citation markers removed, each cited document's premise is ``"Title: {title}\\n{text}"``.
The labels follow ALCE's human-evaluation analysis script (``human_eval/analyze.py``),
for human and automatic labels alike (docs/judges.md#human-citation-judgments-alce):

* a citation's precision label is ``min(label, 1)`` (partial support, 1, counts as
  support) and is set to 0 when its sentence's recall label is 0;
* a sentence's precision is ``min(recall, precision)`` (the per-system human means);
* agreement and Cohen's kappa are computed over the labels pooled over every
  dataset, system and item; the confusion table's rows are the human labels.

A judge abstention leaves that label out (counted), never a 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval.calibrate.judge import judge_runner
from rageval.infiles import read_json
from rageval.scoring import DEFAULT_JUDGE, DEFAULT_THRESHOLD
from rageval.stats.agreement import agreement
from rageval.text.normalize import remove_citations

__all__ = ["AlceSentence", "load_alce_human", "calibrate_alce_human", "format_alce_report", "SKIP_KEYS"]

#: item keys that are summaries, not questions (analyze.py skips them)
SKIP_KEYS = ("overall_results",)


@dataclass
class AlceSentence:
    """One sentence of the file with its labels (``None``: not recorded)."""

    dataset: str
    system: str
    item: str
    index: int
    text: str
    docs: list[tuple[str | None, str]]  # (title, text) per citation, in the file's order
    human_recall: int
    human_citation: list[int]  # 0/1/2 as annotated
    human_precision: int | None
    auto_recall: int | None = None
    auto_precision: int | None = None
    auto_citation: list[int] | None = None
    # rageval's decisions (filled by calibrate_alce_human)
    recall: int | None = None
    citation: list[int | None] = field(default_factory=list)


def _label(v: Any, where: str, allowed: Sequence[int]) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v not in allowed:
        raise ValueError(f"{where} must be one of {list(allowed)}, got {v!r}")
    return int(v)


def _auto(item: Mapping[str, Any], key: str, i: int, n: int, where: str) -> Any:
    vals = item.get(key)
    if vals is None:
        return None
    if not isinstance(vals, list) or len(vals) != n:
        raise ValueError(f"{where}.{key} must list one value per sentence ({n}), got {vals!r:.80}")
    return vals[i]


def _sentence(dataset: str, system: str, qid: str, item: Mapping[str, Any], i: int, s: Any) -> AlceSentence:
    where = f"{dataset}/{system}/{qid}.sentences[{i}]"
    if not isinstance(s, Mapping) or not isinstance(s.get("text"), str):
        raise ValueError(f"{where} must be an object with a string 'text'")
    cites = s.get("citations") or []
    if not isinstance(cites, list):
        raise ValueError(f"{where}.citations must be a list of {{title, text, citation_precision_score}}")
    docs, human_cite = [], []
    for j, c in enumerate(cites):
        if not isinstance(c, Mapping) or not isinstance(c.get("text"), str):
            raise ValueError(f"{where}.citations[{j}] must be an object with a string 'text'")
        docs.append((c.get("title"), c["text"]))
        human_cite.append(
            _label(c.get("citation_precision_score"), f"{where}.citations[{j}].citation_precision_score", (0, 1, 2))
        )
    n = len(item["sentences"])
    iwhere = f"{dataset}/{system}/{qid}"
    auto_cite = _auto(item, "automatic_citation_precision_scores", i, n, iwhere)
    if auto_cite is not None and (not isinstance(auto_cite, list) or len(auto_cite) != len(cites)):
        raise ValueError(
            f"{iwhere}.automatic_citation_precision_scores[{i}] must list one score per citation ({len(cites)}), "
            f"got {auto_cite!r:.80}"
        )
    auto_r = _auto(item, "automatic_recall_scores", i, n, iwhere)
    auto_p = _auto(item, "automatic_precision_scores", i, n, iwhere)
    sp = s.get("sentence_precision_score")
    return AlceSentence(
        dataset=dataset,
        system=system,
        item=qid,
        index=i,
        text=s["text"],
        docs=docs,
        human_recall=_label(s.get("sentence_recall_score"), f"{where}.sentence_recall_score", (0, 1)),
        human_citation=human_cite,
        human_precision=None if sp is None else _label(sp, f"{where}.sentence_precision_score", (0, 1)),
        auto_recall=None if auto_r is None else _label(auto_r, f"{iwhere}.automatic_recall_scores[{i}]", (0, 1)),
        auto_precision=None if auto_p is None else _label(auto_p, f"{iwhere}.automatic_precision_scores[{i}]", (0, 1)),
        auto_citation=None
        if auto_cite is None
        else [_label(x, f"{iwhere}.automatic_citation_precision_scores[{i}]", (0, 1, 2)) for x in auto_cite],
    )


def load_alce_human(path: str) -> list[AlceSentence]:
    """Every sentence of an ALCE human citation evaluation file (see the module doc); errors name the place."""
    data = read_json(path, what="the calibrate --format alce-human file")
    if not isinstance(data, Mapping):
        raise ValueError(
            f"{path}: expected {{dataset: {{system_file: {{question_id: item}}}}}}, got {type(data).__name__}"
        )
    out: list[AlceSentence] = []
    for dataset, systems in data.items():
        if not isinstance(systems, Mapping):
            raise ValueError(f"{path}: {dataset} must map system files to items")
        for system, items in systems.items():
            if not isinstance(items, Mapping):
                raise ValueError(f"{path}: {dataset}/{system} must map question ids to items")
            for qid, item in items.items():
                if qid in SKIP_KEYS:
                    continue
                if not isinstance(item, Mapping) or not isinstance(item.get("sentences"), list):
                    raise ValueError(f"{path}: {dataset}/{system}/{qid} has no 'sentences' list")
                out += [_sentence(dataset, system, qid, item, i, s) for i, s in enumerate(item["sentences"])]
    if not out:
        raise ValueError(f"{path} holds no sentence to score")
    return out


def _hypothesis(text: str) -> str:
    return " ".join(remove_citations(text).split())


def _score(sentences: Sequence[AlceSentence], runner: Any, threshold: float) -> int:
    """rageval's gate on the file's sentences and citations; returns the abstentions."""
    from rageval.diagnostics.attribution.gate import Job, run_gate

    jobs = [
        Job(
            groups=[[(("doc", j), title, text, None)] for j, (title, text) in enumerate(s.docs)],
            hyp=_hypothesis(s.text),
        )
        for s in sentences
    ]
    abstentions = run_gate(jobs, runner, threshold)
    for s, j in zip(sentences, jobs):
        s.recall = None if j.joint_abstained else int(bool(j.joint))
        s.citation = [
            None if s.recall is None or abst else (0 if s.recall == 0 else int(bool(p)))
            for p, abst in zip(j.precise, j.abstained)
        ]
    return abstentions


def _cite_labels(recall: int | None, labels: Sequence[int] | None) -> list[int | None]:
    """analyze.py's citation labels: min(label, 1), and 0 when the sentence's recall label is 0."""
    if labels is None:
        return []
    return [None if recall is None else (0 if recall == 0 else min(x, 1)) for x in labels]


def _figure(pairs: list[tuple[Any, Any]]) -> dict[str, Any]:
    ag = agreement([a for a, _ in pairs], [b for _, b in pairs])
    (n00, n01), (n10, _n11) = ag["confusion"]
    # analyze.py also reports how well the automatic label finds *unsupported* (human 0): its recall and precision
    ag["unsupported_recall"] = n00 / (n00 + n01) if n00 + n01 else None
    ag["unsupported_precision"] = n00 / (n00 + n10) if n00 + n10 else None
    return ag


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _systems(sentences: Sequence[AlceSentence]) -> list[dict[str, Any]]:
    """Per dataset and system: means over items of each item's mean (items without a label left out, counted)."""
    out = []
    keys = list(dict.fromkeys((s.dataset, s.system) for s in sentences))
    for ds, sys_ in keys:
        mine = [s for s in sentences if (s.dataset, s.system) == (ds, sys_)]
        items = list(dict.fromkeys(s.item for s in mine))
        row: dict[str, Any] = {"dataset": ds, "system": sys_, "items": len(items), "sentences": len(mine)}
        getters = {
            "human_recall": lambda s: [s.human_recall],
            "human_citation_precision": lambda s: _cite_labels(s.human_recall, s.human_citation),
            "human_sentence_precision": lambda s: (
                [] if s.human_precision is None else [min(s.human_recall, s.human_precision)]
            ),
            "alce_recall": lambda s: [] if s.auto_recall is None else [s.auto_recall],
            "alce_citation_precision": lambda s: _cite_labels(s.auto_recall, s.auto_citation),
            "rageval_recall": lambda s: [] if s.recall is None else [s.recall],
            "rageval_citation_precision": lambda s: [x for x in s.citation if x is not None],
        }
        for name, get in getters.items():
            per_item = []
            for q in items:
                vals = [v for s in mine if s.item == q for v in get(s) if v is not None]
                if vals:
                    per_item.append(sum(vals) / len(vals))
            row[name] = _mean(per_item)
            row[f"{name}_items"] = len(per_item)
        out.append(row)
    return out


def calibrate_alce_human(
    sentences: Sequence[AlceSentence],
    *,
    judge: Any = DEFAULT_JUDGE,
    threshold: float = DEFAULT_THRESHOLD,
    cache_dir: Any = None,
    dtype: Any = None,
    max_length: int | None = 512,
    judge_params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Agreement of rageval's citation gate (and of ALCE's recorded decisions) with the human labels.

    ``judge_params``: the judge's own options (``openai``: model, base_url, ...), as a suite's ``judge.params``; the
    judge is built as a run's is (:func:`rageval.calibrate.judge.judge_runner`).
    """
    runner = judge_runner(
        judge, threshold=threshold, cache_dir=cache_dir, dtype=dtype, max_length=max_length, judge_params=judge_params
    )
    abstentions = _score(sentences, runner, threshold)
    recall_r = [(s.human_recall, s.recall) for s in sentences]
    cite_r = [(h, a) for s in sentences for h, a in zip(_cite_labels(s.human_recall, s.human_citation), s.citation)]
    has_auto = [s for s in sentences if s.auto_recall is not None]
    recall_a = [(s.human_recall, s.auto_recall) for s in has_auto]
    cite_a = [
        (h, a)
        for s in has_auto
        for h, a in zip(_cite_labels(s.human_recall, s.human_citation), _cite_labels(s.auto_recall, s.auto_citation))
    ]
    stats = runner.stats() if hasattr(runner, "stats") else {}
    return {
        "format": "alce-human",
        "judge": runner.id,
        "threshold": threshold,
        "n_sentences": len(sentences),
        "n_citations": sum(len(s.docs) for s in sentences),
        "n_items": len({(s.dataset, s.system, s.item) for s in sentences}),
        "judge_abstentions": abstentions,
        "rageval": {"sentence_recall": _figure(recall_r), "citation_precision": _figure(cite_r)},
        "alce_automatic": {
            "n_sentences": len(has_auto),
            "sentence_recall": _figure(recall_a) if has_auto else None,
            "citation_precision": _figure(cite_a) if has_auto else None,
        },
        "systems": _systems(sentences),
        "judge_stats": {k: v for k, v in stats.items() if k in ("executed", "requested", "truncated", "abstained")},
    }


def _fmt(v: Any) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def format_alce_report(r: dict[str, Any]) -> str:
    rows = []
    for who, figs in (
        ("rageval gate (" + r["judge"] + ")", r["rageval"]),
        ("ALCE's recorded automatic", r["alce_automatic"]),
    ):
        for name in ("sentence_recall", "citation_precision"):
            f = figs.get(name) if figs else None
            if f is None:
                rows.append(f"| {who} | {name.replace('_', ' ')} | not recorded in the file | | | | |")
                continue
            rows.append(
                f"| {who} | {name.replace('_', ' ')} | {f['n']} | {_fmt(f['rate'])} | {_fmt(f['kappa'])} | "
                f"{f['confusion']} | {f['n_missing']} |"
            )
    lines = [
        (
            f"judge: {r['judge']}   threshold: {r['threshold']}   sentences: {r['n_sentences']}   citations: "
            f"{r['n_citations']}   items: {r['n_items']}"
        ),
        "",
        "| labels | decision | n | accuracy | Cohen's kappa | confusion [[h0 a0, h0 a1], [h1 a0, h1 a1]] | left out |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        (
            "Human labels in rows; a citation's precision is min(label, 1) and 0 when its sentence is not supported "
            "(ALCE's human_eval/analyze.py); kappa over the pooled labels. Left out: a judge abstention."
        ),
    ]
    if r.get("judge_abstentions"):
        lines.append(f"judge abstentions (left out, never scored 0): {r['judge_abstentions']}")
    return "\n".join(lines)
