"""Human labels applied to a run: each labelled question's judge-based metrics with human decisions in place of
the judge's (docs/score.md#human-labels).

A label file is the exported ``labels.jsonl`` (or its CSV twin) with ``label`` filled: ``true``/``false``,
``1``/``0`` or ``supported``/``unsupported`` (``null`` or an empty cell: not labelled).  Labels match by pair
content (the ``id`` hash of premise and hypothesis), so one label serves every setting that asks the same pair.
Each record of a question the file names is scored again through the suite's scoring path with the labels as its
decisions (:func:`rageval.labels.pairs.replayed_metrics`, fixed mappings); a question with any pair the labels do
not decide, in any setting, is **unlabelled** (counted).  An id that is not a pair of its row's question in this run
refuses the file (:class:`~rageval.labels.export.LabelError`, with the count).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval.labels.export import LabelError, RunPairs, cohort_questions, run_records
from rageval.labels.files import LabelRow, parse_label, read_labels
from rageval.labels.pairs import PPI_METRICS, pair_id, replayed_metrics, scoring_input

__all__ = ["LabelRow", "HumanValues", "read_labels", "human_values", "parse_label"]


@dataclass
class HumanValues:
    """Per labelled question, per setting, the metrics with human decisions; what was named and left out."""

    source: str
    values: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    named: list[str] = field(default_factory=list)  # questions the file names (in the run's cohort)
    unlabelled: dict[str, int] = field(default_factory=dict)  # question -> its pairs no label decides
    n_labels: int = 0  # rows with a label

    @property
    def labelled(self) -> list[str]:
        return list(self.values)

    def summary(self) -> dict[str, Any]:
        return {
            "file": self.source,
            "labels": self.n_labels,
            "questions_named": len(self.named),
            "questions_labelled": len(self.values),
            "questions_unlabelled": len(self.unlabelled),
            "unlabelled_pairs": sum(self.unlabelled.values()),
        }


def _named_questions(run: RunPairs, rows: list[LabelRow]) -> list[str]:
    """The questions the rows name, each checked: every id a pair of its question (else the file is refused)."""
    cohort = cohort_questions(run)
    in_cohort = set(cohort)
    asked: dict[str, set[str]] = {}
    unmatched = 0
    for r in rows:
        q = r.question_id
        if q not in in_cohort:
            unmatched += 1
            continue
        if q not in asked:
            asked[q] = {pair_id(p, h) for rec in run.by_question[q].values() for p, h in run.pairs(rec)}
        unmatched += r.id not in asked[q]
    if unmatched:
        raise LabelError(
            f"{unmatched} of {len(rows)} label ids do not belong to this run (no pair of their question_id has "
            "that id): label the pairs `rageval label` exported from this run"
        )
    return [q for q in cohort if q in asked]


def human_values(run_dir: str | Path, labels_file: str | Path, *, run: RunPairs | None = None) -> HumanValues:
    """Every labelled question's judge-based metrics per setting with the labels as decisions (module doc)."""
    rows = read_labels(labels_file)
    run = run if run is not None else run_records(run_dir)
    named = _named_questions(run, rows)
    decided = {r.id: r.label for r in rows if r.label is not None}
    out = HumanValues(str(labels_file), named=named, n_labels=len(decided))
    from rageval.readers import PromptTemplate

    for q in named:
        per: dict[str, dict[str, Any]] = {}
        missing = 0
        for s in run.settings:
            rec = run.by_question[q][s]
            x = scoring_input(rec, PromptTemplate.coerce(run.manifest.template_of(s)).evidence_text)
            metrics, miss = replayed_metrics(x, run.diagnostics(s), run.options, decided)
            missing += miss
            per[s] = {k: metrics[k] for k in PPI_METRICS if k in metrics}
        if missing:
            out.unlabelled[q] = missing
        else:
            out.values[q] = per
    return out
