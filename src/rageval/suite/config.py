"""The suite's schema: every field of a suite YAML as strict pydantic models (reading a file: :mod:`rageval.suite.load`).

A suite names a dataset, retrieval, settings (compressor x budgets), a reader, a
judge, the diagnostics, contrasts, the tokenizer, the output directory and the
seed.  ``include: base.yaml`` (path relative to the including file) loads a base
suite; the including file's keys override it (mappings merge key by key, lists
and scalars replace).  Unknown keys are rejected with a "did you mean" hint.

Example (``suites/demo.yaml``)::

    name: demo
    dataset: {name: hotpotqa, limit: 20}          # the shipped sample unless path/hub_id
    retrieval: {method: bm25, k: 5}               # bm25 over the example's own pool
    tokenizer: regex
    settings:
      - {compressor: identity}
      - {compressor: naive, budgets: [96, 160]}
    reader: {backend: extractive}
    judge: {spec: lexical}
    diagnostics: auto                              # every diagnostic that applies
    contrasts: [{vs: identity}]
    output_dir: runs/demo
    seed: 0
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import Field, field_validator, model_serializer, model_validator
from pydantic_core import PydanticCustomError

from rageval.budget import check_budgets
from rageval.data.formats.common import HF_PREFIX
from rageval.data.formats.registry import FORMATS, spoken_list
from rageval.diagnostics.attribution.options import AttributionSettings
from rageval.judges.spec import JudgeSpec
from rageval.readers.spec import ReaderSpec
from rageval.rundir.manifest import run_dir_path
from rageval.scoring import DEFAULT_TOKENIZER, CitationConfig
from rageval.stats.resolution import AUTO, parse_resamples
from rageval.strict import Seed, Strict
from rageval.suite.study import AuditSpec, FrontierSpec

__all__ = ["Suite", "SuiteError", "SettingSpec", "suite_hash"]


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names the file, field and fix."""


_Strict = Strict  # unknown keys, coercion, NaN/inf and blank strings refused (rageval.strict)


class DatasetSpec(_Strict):
    name: str = Field(description="hotpotqa | musique | 2wikimultihopqa | asqa | qasper")
    format: str | None = Field(
        None, description="a file `rageval score` reads (docs/score.md): its questions, gold, units and answers"
    )

    @field_validator("format", mode="before")
    @classmethod
    def _registered_format(cls, value: Any) -> Any:
        """A registered input format (rageval.data.formats.FORMATS), refused in pydantic's words for a choice (a
        blank string is left to Strict's check, which runs after this one)."""
        blank = isinstance(value, str) and not value.strip()
        if value is not None and not blank and value not in FORMATS:
            expected = spoken_list([repr(name) for name in FORMATS])
            raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
        return value

    @model_validator(mode="before")
    @classmethod
    def _name_of_format(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("format") is not None and "name" not in data:
            data = {**data, "name": data["format"]}  # the dataset is the file (dataset: {format: generic, path: ...})
        return data

    path: str | None = Field(None, description="local .json/.jsonl file (relative: to the suite file, else the cwd)")
    sample: str | None = Field(None, description="a shipped sample by name (default: the dataset's own sample)")
    hub_id: str | None = Field(None, description="datasets.load_dataset id (needs hub access)")
    hub_config: str | None = None
    split: str | None = None
    limit: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _one_source(self):
        given = [k for k in ("path", "hub_id", "sample") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ValueError(f"give one of dataset.path, dataset.hub_id, dataset.sample, not {' and '.join(given)}")
        reads_hub = self.format is not None and HF_PREFIX in FORMATS.meta(self.format).prefixes  # ragas: hf:<id>
        if self.format is not None and self.path is None and not (reads_hub and self.hub_id):
            raise ValueError(f"dataset.format {self.format!r} reads a file: give dataset.path (docs/score.md)")
        return self


class RetrievalSpec(_Strict):
    method: Literal["given", "bm25"] = "given"
    k: int | None = Field(None, ge=1)
    corpus: Literal["example", "dataset"] = Field(
        "example", description="bm25 over each example's own pool, or over all examples' passages"
    )


class SettingSpec(_Strict):
    compressor: str
    budgets: list[int | float | None] = Field(default_factory=lambda: list[int | float | None]([None]))
    params: dict[str, Any] = Field(default_factory=dict)
    name: str | None = Field(None, description="setting name prefix (default: the compressor name)")
    reader: ReaderSpec | None = Field(None, description="this setting's own reader (default: the suite's reader)")

    @field_validator("budgets", mode="before")
    @classmethod
    def _budgets(cls, v):
        return check_budgets(v)  # the one budget check (rageval.budget), shared with the compressors


#: the suite's ``attribution:`` section is the attribution engine's own settings object
AttributionSpec = AttributionSettings


class StatisticsSpec(_Strict):
    """The report's statistics (docs/statistics.md#resolution); they change no record (not in the suite hash)."""

    resamples: int | str = Field(
        AUTO,
        description="auto (the sign-flip test's replicates sized for the Holm family; the bootstrap keeps "
        "10,000) | paper (10,000 for both, the paper's protocol) | a positive count for both",
    )

    @field_validator("resamples", mode="before")
    @classmethod
    def _resamples(cls, v):
        return parse_resamples(v)


class ReportSpec(_Strict):
    """The report's figure files (docs/suites.md#the-report-section); they change no record (not in the suite
    hash).  report.html draws its own figures: files only on request."""

    figures: list[Literal["png", "svg"]] = Field(
        default_factory=list, description="figure files to write besides report.html: png, svg (default: none)"
    )


#: the suite's ``citations:`` section is the run's citation rules (rageval.scoring)
CitationSpec = CitationConfig


class Suite(_Strict):
    name: str
    description: str | None = None
    dataset: DatasetSpec
    retrieval: RetrievalSpec = Field(default_factory=RetrievalSpec)
    tokenizer: str = DEFAULT_TOKENIZER
    settings: list[SettingSpec]
    reader: ReaderSpec = Field(default_factory=ReaderSpec)
    judge: JudgeSpec = Field(default_factory=JudgeSpec)
    citations: CitationSpec = Field(default_factory=CitationSpec)
    attribution: AttributionSpec = Field(default_factory=AttributionSpec)
    diagnostics: Literal["auto"] | list[str] = "auto"
    contrasts: Any = None
    #: the second-evaluator audit and the Pareto axes (rageval.suite.study; neither changes a record)
    audit: AuditSpec | None = None
    frontier: FrontierSpec | None = None
    #: the report's replicates (rageval.stats.resolution; changes no record)
    statistics: StatisticsSpec = Field(default_factory=StatisticsSpec)
    #: the report's figure files (changes no record; written to the manifest only when set)
    report: ReportSpec = Field(default_factory=ReportSpec)
    #: the most tokens (the suite's tokenizer) a setting's context may hold, identity's included: a context over
    #: it is ``budget_check`` (docs/suites.md#context-limit); None: the reader's declared maximum input
    #: (``reader.params.max_input_tokens``), else none beyond the reader's own prompt check (``prompt_overflow``)
    context_limit: int | None = Field(None, ge=1)
    output_dir: str = "runs/suite"
    seed: Seed = 0
    #: recorded, never read: where the suite came from
    source: str | None = None

    @field_validator("output_dir")
    @classmethod
    def _output_dir(cls, v):
        run_dir_path(v)  # no control characters (checked again, with ~ expanded, when the directory is opened)
        return v

    @field_validator("settings")
    @classmethod
    def _settings(cls, v):
        if not v:
            raise ValueError("settings must list at least one compressor")
        return v

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        """``context_limit`` and ``report`` written only when set: a suite without them dumps (and hashes) as
        before they existed."""
        data = handler(self)
        if isinstance(data, dict) and data.get("context_limit", 0) is None:
            del data["context_limit"]
        if isinstance(data, dict) and data.get("report") == {"figures": []}:
            del data["report"]
        return data

    def context_limits(self) -> dict[str, int | None]:
        """Setting name -> the context limit its records are checked against: ``context_limit``, else the
        maximum input its reader declares (``params.max_input_tokens``), else None (no check)."""
        out = {}
        for name, reader in self.setting_readers().items():
            declared = reader.params.get("max_input_tokens")
            declared = declared if isinstance(declared, int) and not isinstance(declared, bool) else None
            out[name] = self.context_limit if self.context_limit is not None else declared
        return out

    def setting_names(self) -> list[str]:
        return [name for name, _, _, _ in self.expand_settings()]

    def setting_readers(self) -> dict[str, ReaderSpec]:
        """Setting name -> the reader that reads it: its own ``reader:``, else the suite's."""
        out = {}
        for s in self.settings:
            prefix = s.name or s.compressor
            for b in s.budgets:
                out[prefix if b is None else f"{prefix}@{b}"] = s.reader or self.reader
        return out

    def expand_settings(self) -> list[tuple[str, str, Any, dict[str, Any]]]:
        """(name, compressor, budget, params) for every compressor x budget, in suite order."""
        out = []
        for s in self.settings:
            prefix = s.name or s.compressor
            for b in s.budgets:
                name = prefix if b is None else f"{prefix}@{b}"
                out.append((name, s.compressor, b, dict(s.params)))
        return out


def suite_hash(suite: Suite) -> str:
    """Hash of everything that can change a score (the source path is left out)."""
    payload = suite.model_dump(
        mode="json", exclude={"source", "output_dir", "description", "audit", "frontier", "statistics", "report"}
    )
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
