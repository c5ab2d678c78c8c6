"""The report's analysis as a typed, immutable value: what :func:`rageval.report.analysis.analyze` returns and every
writer (the tables, the figures, ``report.json``, ``report.html``) reads.

:class:`Analysis` is a frozen dataclass, one field per key of ``report.json`` (plus the run's manifest, which the
HTML shows and ``report.json`` leaves out).  Its JSON-shaped parts are typed with :class:`~typing.TypedDict`\\ s
whose containers are read-only (``Mapping``, ``Sequence``; tuples at the top): a writer reads them and never
writes into them.  A step that changes numbers after the analysis (Holm over the union of several runs:
:func:`rageval.report.union.adjust_union`) returns a new value (:func:`dataclasses.replace`); what writing the
page adds (the figures' metric lists, the run's counters, its audits, the explorer's data) is a value of its own,
:class:`PageParts`.  :meth:`Analysis.to_json` is the one writer of ``report.json``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from rageval.io import json_text

__all__ = [
    "Abstentions",
    "Analysis",
    "CohortInfo",
    "ContrastEntry",
    "Examples",
    "Finding",
    "Frontier",
    "HolmInfo",
    "HolmLeftOut",
    "LeftOutSetting",
    "MetricStat",
    "PageParts",
    "StructuralMark",
    "SuiteInfo",
    "SummaryRow",
    "SweepRow",
    "Validity",
]


class SuiteInfo(TypedDict):
    """The suite's identity as the manifest records it."""

    name: str | None
    hash: str | None
    dataset: Any
    seed: Any
    cluster_key: str | None


class LeftOutSetting(TypedDict):
    """A setting that did not run (every record unavailable): reported, left out of the cohort and contrasts."""

    setting: str
    n_records: int
    n_unavailable: int


class CohortInfo(TypedDict):
    """The common cohort: its size, the questions and clusters, each setting's counts and the settings left out."""

    n: int
    n_questions: int
    n_clusters: int | None
    counts: Mapping[str, Mapping[str, int]]
    left_out: Sequence[LeftOutSetting]
    n_contrast_rows_left_out: int


class MetricStat(TypedDict):
    """A mean over the cohort (None: no defined value) with its defined and undefined counts."""

    mean: float | None
    n: int
    n_undefined: int


class Abstentions(TypedDict):
    """A setting's judge abstentions over the cohort: their sum and the questions with any."""

    sum: int | None
    n_questions_with: int
    n: int


class _SummaryRow(TypedDict):
    setting: str
    compressor: Any
    budget: Any
    n_records: int
    n_ok: int
    n_failed: int
    n_missing: int
    n_cohort: int
    n_excluded: int
    status: Mapping[str, int]
    achieved_ratio: float | None
    achieved_tokens: float | None
    metrics: Mapping[str, MetricStat]
    left_out: bool


class SummaryRow(_SummaryRow, total=False):
    """One setting's row of the summary: its counts, statuses, context means and metric means."""

    judge_abstentions: Abstentions


class ContrastEntry(TypedDict):
    """One planned contrast: its sides, effect, interval, raw and Holm p-values and counts."""

    contrast: str
    family: str
    kind: str
    a: str
    b: str
    metric_a: str
    metric_b: str
    metric: str
    direction: str
    mean_a: float | None
    mean_b: float | None
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_holm: float | None
    p_method: str
    p_resamples: int
    in_holm_family: bool
    n: int
    n_dropped: int
    n_clusters: int | None
    note: str | None


class HolmLeftOut(TypedDict):
    """The contrast rows left out of the Holm family (metrics constant in every setting)."""

    metrics: Sequence[str]
    n_rows: int


class HolmInfo(TypedDict):
    """The Holm scope, the runs and family sizes it adjusts over, the plan's families and the resolution."""

    scope: str
    runs: Sequence[Any]
    family_sizes: Mapping[str, int]
    families: Mapping[str, int]
    family_order: Sequence[str]
    left_out: HolmLeftOut
    resolution: Mapping[str, Any]


class _Validity(TypedDict):
    available: bool
    answer_metric: str | None
    note: str | None


class Validity(_Validity, total=False):
    """Answer-in-context against retrieval recall as predictors of the answer metric (pooled and per setting;
    absent when the records lack a metric, ``note`` says which)."""

    pooled: Mapping[str, Any]
    by_group: Mapping[str, Mapping[str, Any]]


class SweepRow(TypedDict):
    """Per setting and threshold: the mean re-attribution rate and grounded precision over the cohort."""

    setting: str
    threshold: float
    rate: float | None
    rate_n: int
    rate_n_undefined: int
    grounded_precision: float | None
    grounded_precision_n: int
    grounded_precision_n_undefined: int


class Frontier(TypedDict):
    """Per setting the intervals of the plotted metrics and the achieved ratio, the constant metrics and per
    declared pair of axes its frontier and dominance relations (:mod:`rageval.report.frontier`)."""

    intervals: Mapping[str, Mapping[str, Mapping[str, Any]]]
    constant: Sequence[str]
    pairs: Sequence[Mapping[str, Any]]
    alpha: float


class Examples(TypedDict):
    """The reference setting and per setting the examples of each kind (:mod:`rageval.report.examples`)."""

    reference: str | None
    per_kind: int
    by_setting: Mapping[str, Mapping[str, Mapping[str, Any]]]


class StructuralMark(TypedDict):
    """A value fixed by construction (:mod:`rageval.diagnostics.structural`): why, and whether it is fixed."""

    reason: str
    fixed: bool


class _Finding(TypedDict):
    kind: str
    text: str


class Finding(_Finding, total=False):
    """A sentence of the findings (:mod:`rageval.report.findings`); an ``effect`` lists its ``items``."""

    items: Sequence[str]


@dataclass(frozen=True)
class Analysis:
    """Every number of a run's report (see the module doc): one field per key of ``report.json``, and the
    manifest."""

    suite: SuiteInfo
    seed: int
    n_resamples: int
    n_test_resamples: int
    resamples: int | str
    confidence: float
    settings: tuple[Mapping[str, Any], ...]
    cohort: CohortInfo
    metric_names: tuple[str, ...]
    gaps: Mapping[str, tuple[str, str]]
    summary: tuple[SummaryRow, ...]
    contrasts: tuple[ContrastEntry, ...]
    holm: HolmInfo
    contrasts_declared: Any
    contrasts_note: str | None
    validity: Validity
    sweep: tuple[SweepRow, ...]
    frontier: Frontier
    examples: Examples
    judge_stats: Mapping[str, Any]
    notes: tuple[str, ...]
    structural: Mapping[str, Mapping[str, StructuralMark]]
    findings: tuple[Finding, ...]
    manifest: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False)

    def as_json(self) -> dict[str, Any]:
        """The JSON object of ``report.json``: every field but the manifest (a plain dict, built anew)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "manifest"}

    def to_json(self) -> str:
        """The text of ``report.json`` (keys sorted, one space of indent, a final newline)."""
        return json_text(self.as_json(), indent=1, default=str) + "\n"

    @classmethod
    def from_json(cls, data: Mapping[str, Any], manifest: Mapping[str, Any] | None = None) -> Analysis:
        """An analysis from the JSON object of ``report.json`` (what :meth:`as_json` gives), a key it lacks empty."""
        empty: dict[str, Any] = {
            "suite": {},
            "cohort": {},
            "gaps": {},
            "holm": {},
            "validity": {"available": False, "answer_metric": None, "note": None},
            "frontier": {},
            "examples": {},
            "judge_stats": {},
            "structural": {},
            "contrasts_declared": None,
            "contrasts_note": None,
            "confidence": 0.95,
        }
        tuples = ("settings", "metric_names", "summary", "contrasts", "sweep", "notes", "findings")
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name == "manifest":
                continue
            v = data.get(f.name, empty.get(f.name, () if f.name in tuples else 0))
            values[f.name] = tuple(v) if f.name in tuples else v
        values["gaps"] = {g: (str(a), str(b)) for g, (a, b) in values["gaps"].items()}
        return cls(**values, manifest=dict(manifest or {}))


@dataclass(frozen=True)
class PageParts:
    """What writing the report adds for ``report.html`` (not in ``report.json``): the metrics the frontier
    figures leave out (no point to draw; constant in every setting), the run's path-dependent counters, the
    audits written into the run directory and the explorer's data."""

    unplotted: tuple[str, ...] = ()
    constant_metrics: tuple[str, ...] = ()
    run_counters: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    audits: Sequence[Mapping[str, Any]] = ()
    explorer: Mapping[str, Any] | None = None
