"""The report's analysis as a typed, immutable value: what :func:`rageval.report.analysis.analyze` returns and every
writer (the tables, the figures, ``report.json``, ``report.html``) reads.

:class:`Analysis` is a frozen dataclass, one field per key of ``report.json`` (plus the run's manifest, which the
HTML shows and ``report.json`` leaves out).  Its JSON-shaped parts are typed with :class:`~typing.TypedDict`\\ s
whose keys are read-only (``ReadOnly``, PEP 705) and whose containers are ``Mapping`` and ``Sequence`` (tuples at
the top): a writer reads them, and the type checker refuses a write into them.  A step that changes numbers after
the analysis (Holm over the union of several runs: :func:`rageval.report.union.adjust_union`) returns a new value
(:func:`dataclasses.replace`); what writing the page adds (the figures' metric lists, the run's counters, its
audits, the explorer's data) is a value of its own, :class:`PageParts`.  :meth:`Analysis.to_json` is the one writer
of ``report.json``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from rageval.io import json_text

if TYPE_CHECKING:
    from typing_extensions import NotRequired, ReadOnly  # the keys no reader writes (PEP 705)

__all__ = [
    "FIXED_TOL",
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

    name: ReadOnly[str | None]
    hash: ReadOnly[str | None]
    dataset: ReadOnly[Any]
    seed: ReadOnly[Any]
    cluster_key: ReadOnly[str | None]


class LeftOutSetting(TypedDict):
    """A setting that did not run (every record unavailable): reported, left out of the cohort and contrasts."""

    setting: ReadOnly[str]
    n_records: ReadOnly[int]
    n_unavailable: ReadOnly[int]


class CohortInfo(TypedDict):
    """The common cohort: its size, the questions and clusters, each setting's counts and the settings left out."""

    n: ReadOnly[int]
    n_questions: ReadOnly[int]
    n_clusters: ReadOnly[int | None]
    counts: ReadOnly[Mapping[str, Mapping[str, int]]]
    left_out: ReadOnly[Sequence[LeftOutSetting]]
    n_contrast_rows_left_out: ReadOnly[int]


class MetricStat(TypedDict):
    """A mean over the cohort (None: no defined value) with its defined and undefined counts."""

    mean: ReadOnly[float | None]
    n: ReadOnly[int]
    n_undefined: ReadOnly[int]


class Abstentions(TypedDict):
    """A setting's judge abstentions over the cohort: their sum and the questions with any."""

    sum: ReadOnly[int | None]
    n_questions_with: ReadOnly[int]
    n: ReadOnly[int]


class _SummaryRow(TypedDict):
    setting: ReadOnly[str]
    compressor: ReadOnly[Any]
    budget: ReadOnly[Any]
    n_records: ReadOnly[int]
    n_ok: ReadOnly[int]
    n_failed: ReadOnly[int]
    n_missing: ReadOnly[int]
    n_cohort: ReadOnly[int]
    n_excluded: ReadOnly[int]
    status: ReadOnly[Mapping[str, int]]
    achieved_ratio: ReadOnly[float | None]
    achieved_tokens: ReadOnly[float | None]
    metrics: ReadOnly[Mapping[str, MetricStat]]
    left_out: ReadOnly[bool]


class SummaryRow(_SummaryRow, total=False):
    """One setting's row of the summary: its counts, statuses, context means and metric means."""

    judge_abstentions: ReadOnly[Abstentions]


class ContrastEntry(TypedDict):
    """One planned contrast: its sides, effect, interval, raw and Holm p-values and counts."""

    contrast: ReadOnly[str]
    family: ReadOnly[str]
    kind: ReadOnly[str]
    a: ReadOnly[str]
    b: ReadOnly[str]
    metric_a: ReadOnly[str]
    metric_b: ReadOnly[str]
    metric: ReadOnly[str]
    direction: ReadOnly[str]
    mean_a: ReadOnly[float | None]
    mean_b: ReadOnly[float | None]
    effect: ReadOnly[float | None]
    ci_low: ReadOnly[float | None]
    ci_high: ReadOnly[float | None]
    p_value: ReadOnly[float | None]
    p_holm: ReadOnly[float | None]
    p_method: ReadOnly[str]
    p_resamples: ReadOnly[int]
    in_holm_family: ReadOnly[bool]
    n: ReadOnly[int]
    n_dropped: ReadOnly[int]
    n_clusters: ReadOnly[int | None]
    note: ReadOnly[str | None]
    #: the gain decomposition by answer-in-context (rageval.stats.GainDecomposition.as_dict), on a row of one
    #: answer-quality metric when the run carries answer-in-context; absent otherwise
    gain: NotRequired[ReadOnly[Mapping[str, Any]]]


class HolmLeftOut(TypedDict):
    """The contrast rows left out of the Holm family (metrics constant in every setting)."""

    metrics: ReadOnly[Sequence[str]]
    n_rows: ReadOnly[int]


class HolmInfo(TypedDict):
    """The Holm scope, the runs and family sizes it adjusts over, the plan's families and the resolution."""

    scope: ReadOnly[str]
    runs: ReadOnly[Sequence[Any]]
    family_sizes: ReadOnly[Mapping[str, int]]
    families: ReadOnly[Mapping[str, int]]
    family_order: ReadOnly[Sequence[str]]
    left_out: ReadOnly[HolmLeftOut]
    resolution: ReadOnly[Mapping[str, Any]]
    #: the families adjusted each on its own, outside the suite-wide family (``contrasts.separate``; when any)
    separate: NotRequired[ReadOnly[Sequence[str]]]


class _Validity(TypedDict):
    available: ReadOnly[bool]
    answer_metric: ReadOnly[str | None]
    note: ReadOnly[str | None]


class Validity(_Validity, total=False):
    """Answer-in-context against retrieval recall as predictors of the answer metric (pooled and per setting;
    absent when the records lack a metric, ``note`` says which)."""

    pooled: ReadOnly[Mapping[str, Any]]
    by_group: ReadOnly[Mapping[str, Mapping[str, Any]]]
    #: recall -> answer-in-context -> quality (rageval.stats.mediation): ``{"pooled": ..., "by_group": ...}``
    mediation: ReadOnly[Mapping[str, Any]]


class SweepRow(TypedDict):
    """Per setting and threshold: the mean re-attribution rate and grounded precision over the cohort."""

    setting: ReadOnly[str]
    threshold: ReadOnly[float]
    rate: ReadOnly[float | None]
    rate_n: ReadOnly[int]
    rate_n_undefined: ReadOnly[int]
    grounded_precision: ReadOnly[float | None]
    grounded_precision_n: ReadOnly[int]
    grounded_precision_n_undefined: ReadOnly[int]


class Frontier(TypedDict):
    """Per setting the intervals of the plotted metrics and the achieved ratio, the constant metrics and per
    declared pair of axes its frontier and dominance relations (:mod:`rageval.report.frontier`)."""

    intervals: ReadOnly[Mapping[str, Mapping[str, Mapping[str, Any]]]]
    constant: ReadOnly[Sequence[str]]
    pairs: ReadOnly[Sequence[Mapping[str, Any]]]
    alpha: ReadOnly[float]


class Examples(TypedDict):
    """The reference setting and per setting the examples of each kind (:mod:`rageval.report.examples`)."""

    reference: ReadOnly[str | None]
    per_kind: ReadOnly[int]
    by_setting: ReadOnly[Mapping[str, Mapping[str, Mapping[str, Any]]]]


class StructuralMark(TypedDict):
    """A value fixed by construction (:mod:`rageval.diagnostics.structural`): why, and whether it is fixed."""

    reason: ReadOnly[str]
    fixed: ReadOnly[bool]


class _Finding(TypedDict):
    kind: ReadOnly[str]
    text: ReadOnly[str]


class Finding(_Finding, total=False):
    """A sentence of the findings (:mod:`rageval.report.findings`); an ``effect`` lists its ``items``."""

    items: ReadOnly[Sequence[str]]


#: two means closer than this are one value (an axis that does not vary; the frontier's ``CONSTANT_TOL``)
FIXED_TOL = 1e-12


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
    #: the judge-error correction from human labels (``rageval report --human-labels``: :mod:`rageval.report.ppi`);
    #: None without labels, and then not a key of ``report.json``
    ppi: Mapping[str, Any] | None = None

    def fixed_axis(self, key: str) -> float | None:
        """The one value an axis takes in every setting, where it does not vary, else None: a figure with an axis
        that does not vary is not drawn (:mod:`rageval.report.plots` asks this; the page says why).

        ``key``: ``achieved_ratio`` or ``achieved_tokens`` (a setting's context means) or a metric (its mean).  An
        axis does not vary when at least two settings have a defined mean and every defined mean is within
        :data:`FIXED_TOL` of the others (the frontier's rule for a constant metric)."""
        means: list[float] = []
        for row in self.summary:
            context: Mapping[str, Any] = row  # the context means are keys of the row itself
            stat = row["metrics"].get(key)
            v = context.get(key) if key in ("achieved_ratio", "achieved_tokens") else stat and stat["mean"]
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                means.append(float(v))
        if len(means) >= 2 and max(means) - min(means) <= FIXED_TOL:
            return means[0]
        return None

    def fixed_axes(self, keys: Sequence[str]) -> dict[str, float]:
        """``{key: value}`` of each of ``keys`` that does not vary (:meth:`fixed_axis`), in order."""
        out = {}
        for k in keys:
            v = self.fixed_axis(k)
            if v is not None:
                out[k] = v
        return out

    def as_json(self) -> dict[str, Any]:
        """The JSON object of ``report.json``: every field but the manifest (a plain dict, built anew)."""
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name != "manifest" and not (f.name == "ppi" and self.ppi is None)
        }

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
            "ppi": None,
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
