"""``rageval label RUN --n N``: a seeded sample of the run's questions and every judge decision its judge-based
metrics rest on, as files to label (docs/score.md#human-labels).

The sample is uniform over the run's **cohort** (the questions with an ``ok`` record in every setting that has
any), drawn with ``random.Random(seed).sample``, and every setting of a drawn question comes along (a paired
contrast then has labels on both sides).  The pairs of each record are those :func:`rageval.labels.pairs.record_pairs`
finds, re-attribution mappings fixed as the judge found them; one line per distinct pair:
``{"id", "question_id", "settings", "premise", "hypothesis", "label": null}`` (no judge score, so that it cannot
anchor the labeller).  Written into ``DIR``: ``labels.jsonl``, its CSV twin ``labels.csv``, ``label.html`` (a page
that shows one pair at a time and saves the filled JSON lines: :mod:`rageval.labels.page`) and ``sample.json``
(the run, the seed and the questions drawn).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval.diagnostics.inputs import scoring_options
from rageval.escape import csv_text
from rageval.io import json_text, write_text_atomic
from rageval.labels.errors import LabelError
from rageval.labels.files import read_labels
from rageval.labels.page import label_page
from rageval.labels.pairs import judged_diagnostics, pair_id, record_pairs, scoring_input
from rageval.rundir.manifest import Manifest, RunDir, RunDirError
from rageval.types import Record

__all__ = ["LabelError", "RunPairs", "run_records", "cohort_questions", "draw_sample", "export_labels", "COLUMNS"]

#: the fields of a label line, in order (the CSV's columns)
COLUMNS = ("id", "question_id", "settings", "premise", "hypothesis", "label")


@dataclass
class RunPairs:
    """A run's manifest and ``ok`` records by question (settings in the manifest's order), its cohort."""

    path: Path
    manifest: Manifest
    by_question: dict[str, dict[str, Record]] = field(default_factory=dict)
    settings: list[str] = field(default_factory=list)

    @property
    def options(self) -> Any:
        return scoring_options(self.manifest.scoring_spec())

    def diagnostics(self, setting: str) -> tuple[str, ...]:
        return judged_diagnostics(self.manifest.diagnostics_of(setting))

    def pairs(self, record: Record) -> list[tuple[str, str]]:
        """The pairs of one record (fixed mappings)."""
        from rageval.readers import PromptTemplate

        name = record.setting.name
        x = scoring_input(record, PromptTemplate.coerce(self.manifest.template_of(name)).evidence_text)
        return record_pairs(x, self.diagnostics(name), self.options)


def run_records(run_dir: str | Path) -> RunPairs:
    """The run's manifest and ``ok`` records (a :class:`LabelError` for a directory that is not a run)."""
    rd = RunDir(run_dir)
    try:
        manifest = rd.read_manifest()
        records = rd.records()
    except RunDirError as err:
        raise LabelError(str(err)) from None
    names = [s.name for s in manifest.suite.settings]
    out = RunPairs(Path(run_dir), manifest)
    ok_settings: set[str] = set()
    for r in records:
        if r.status != "ok":
            continue
        out.by_question.setdefault(r.question_id, {})[r.setting.name] = r
        ok_settings.add(r.setting.name)
    out.settings = [n for n in names if n in ok_settings] + sorted(ok_settings - set(names))
    if not any(out.diagnostics(s) for s in out.settings):
        raise LabelError(f"{run_dir}: no setting of the run has a judge-based metric: there is nothing to label")
    return out


def cohort_questions(run: RunPairs) -> list[str]:
    """The questions with an ``ok`` record in every setting that has any, in the order of ``records.jsonl``."""
    return [q for q, recs in run.by_question.items() if all(s in recs for s in run.settings)]


def draw_sample(cohort: Sequence[str], n: int, seed: int) -> list[str]:
    """``n`` questions drawn uniformly without replacement (all of them when ``n`` exceeds the cohort), in cohort
    order.

    >>> draw_sample(["a", "b", "c", "d"], 2, seed=0)
    ['b', 'd']
    """
    if n < 1:
        raise LabelError(f"--n must be at least 1, got {n}")
    chosen = set(random.Random(seed).sample(list(cohort), min(n, len(cohort))))
    return [q for q in cohort if q in chosen]


def _lines(run: RunPairs, questions: Sequence[str]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for q in questions:
        for s in run.settings:
            rec = run.by_question[q].get(s)
            if rec is None:
                continue
            for p, h in run.pairs(rec):
                pid = pair_id(p, h)
                row = rows.setdefault(
                    pid, {"id": pid, "question_id": q, "settings": [], "premise": p, "hypothesis": h, "label": None}
                )
                if s not in row["settings"]:
                    row["settings"].append(s)
    return list(rows.values())


def export_labels(run_dir: str | Path, out: str | Path, *, n: int, seed: int = 0) -> dict[str, Any]:
    """Draw the sample, find its pairs and write the files (see the module doc); returns what was written."""
    run = run_records(run_dir)
    cohort = cohort_questions(run)
    if not cohort:
        raise LabelError(f"{run_dir}: the run's cohort is empty (no question has an ok record in every setting)")
    sample = draw_sample(cohort, n, seed)
    rows = _lines(run, sample)
    out = Path(out)
    _refuse_filled(out)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "labels_jsonl": out / "labels.jsonl",
        "labels_csv": out / "labels.csv",
        "label_html": out / "label.html",
        "sample_json": out / "sample.json",
    }
    write_text_atomic(files["labels_jsonl"], "".join(json_text(r, sort_keys=False) + "\n" for r in rows))
    write_text_atomic(files["labels_csv"], labels_csv(rows))
    write_text_atomic(
        files["label_html"], label_page(rows, title=f"{run.manifest.suite.name}: {len(sample)} questions")
    )
    info = {
        "run": str(Path(run_dir).resolve()),
        "seed": seed,
        "n": n,
        "cohort": len(cohort),
        "questions": sample,
        "settings": run.settings,
        "pairs": len(rows),
    }
    write_text_atomic(files["sample_json"], json_text(info, indent=1) + "\n")
    return {**info, "files": files}


def _refuse_filled(out: Path) -> None:
    """Refuse to write over a label file that holds labels (a person's work); an unfilled one is written again."""
    for name in ("labels.jsonl", "labels.csv"):
        path = out / name
        if not path.is_file():
            continue
        try:
            filled = sum(r.label is not None for r in read_labels(path))
        except LabelError:
            filled = -1  # not a label file as written: not ours to overwrite either
        if filled:
            what = f"holds {filled} filled label{'s' if filled != 1 else ''}" if filled > 0 else "is not as written"
            raise LabelError(
                f"{path} {what}: rageval label would overwrite it; choose another --out, or move the file away"
            )


def labels_csv(rows: Sequence[dict[str, Any]]) -> str:
    """The label lines as CSV (settings joined with ``;``, an empty label cell for null)."""
    body = [list(COLUMNS)]
    for r in rows:
        label = r.get("label")
        body.append(
            [r["id"], r["question_id"], ";".join(r["settings"]), r["premise"], r["hypothesis"]]
            + ["" if label is None else ("supported" if label else "unsupported")]
        )
    return csv_text(body)
