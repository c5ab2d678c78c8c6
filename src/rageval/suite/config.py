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
import math
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from rageval.diagnostics.attribution.options import AttributionSettings
from rageval.suite.study import AuditSpec, FrontierSpec

__all__ = ["Suite", "SuiteError", "SettingSpec", "suite_hash"]


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names the file, field and fix."""


class _Strict(BaseModel):
    # strict: no bool where a number is meant, no "3" for 3; no NaN/inf; no blank string for a field
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_blank_strings(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and not value.strip() and info.field_name != "description":
            raise ValueError("empty string; give a value or leave the key out")
        return value


class DatasetSpec(_Strict):
    name: str = Field(description="hotpotqa | musique | 2wikimultihopqa | asqa | qasper")
    format: Literal["generic", "alce", "ragchecker", "ragas"] | None = Field(
        None, description="a file `rageval score` reads (docs/score.md): its questions, gold, units and answers"
    )

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
        if self.format is not None and self.path is None and not (self.format == "ragas" and self.hub_id):
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
        if not isinstance(v, list) or not v:
            raise ValueError("budgets must list at least one budget (use [null] for no budget)")
        for b in v:
            if b is None:
                continue
            if isinstance(b, bool) or not isinstance(b, (int, float)):
                raise ValueError(
                    f"budget {b!r} is not a number: give a token count (an integer) or a fraction in (0, 1]"
                )
            if isinstance(b, float) and not math.isfinite(b):
                raise ValueError(f"budget {b!r} must be a finite number")
            if b <= 0:
                raise ValueError(f"budget {b!r} must be a positive token count or a fraction in (0, 1]")
            if isinstance(b, float) and b > 1:
                raise ValueError(f"budget {b!r}: a float is a fraction in (0, 1]; write an integer for tokens")
        return v


class ReaderSpec(_Strict):
    backend: str = "extractive"
    params: dict[str, Any] = Field(default_factory=dict)
    template: dict[str, Any] | None = Field(
        None, description="prompt template fields (instruction, user, system, unit, ...); default: the built-in one"
    )
    batch_size: int = Field(8, ge=1)


SettingSpec.model_rebuild()  # its `reader` is a ReaderSpec, defined after it


class JudgeSpec(_Strict):
    spec: str = "lexical"
    threshold: float = Field(0.5, ge=0.0, le=1.0)
    params: dict[str, Any] = Field(default_factory=dict)


#: the suite's ``attribution:`` section is the attribution engine's own settings object
AttributionSpec = AttributionSettings


class CitationSpec(_Strict):
    mode: Literal["default", "alce"] = "default"
    max_citations: int | None = Field(3, ge=1)


class Suite(_Strict):
    name: str
    description: str | None = None
    dataset: DatasetSpec
    retrieval: RetrievalSpec = Field(default_factory=RetrievalSpec)
    tokenizer: str = "regex"
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
    output_dir: str = "runs/suite"
    seed: int = 0
    #: recorded, never read: where the suite came from
    source: str | None = None

    @field_validator("settings")
    @classmethod
    def _settings(cls, v):
        if not v:
            raise ValueError("settings must list at least one compressor")
        return v

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
    payload = suite.model_dump(mode="json", exclude={"source", "output_dir", "description", "audit", "frontier"})
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
