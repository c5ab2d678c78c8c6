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


RetrievalMethod = Literal["given", "bm25", "dense"]
DenseIndexKind = Literal["exact", "faiss"]


class RetrievalSpec(_Strict):
    method: RetrievalMethod = "given"
    k: int | None = Field(None, ge=1)
    corpus: Literal["example", "dataset"] = Field(
        "example", description="bm25/dense over each example's own pool, or over all examples' passages"
    )
    model: str | None = Field(None, description="dense: the sentence-embedding model (default: all-MiniLM-L6-v2)")
    index: DenseIndexKind = Field("exact", description="dense: exact inner products (numpy) or a FAISS index")

    @model_validator(mode="after")
    def _dense_only(self):
        if self.method != "dense" and (self.model is not None or self.index != "exact"):
            raise ValueError("retrieval.model and retrieval.index are options of method: dense")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        """``model``/``index`` written only when set: a suite without them dumps (and hashes) as before."""
        data = handler(self)
        if isinstance(data, dict):
            if data.get("model", 0) is None:
                del data["model"]
            if data.get("index") == "exact":
                del data["index"]
        return data

    def label(self) -> str:
        """The setting-name suffix of this retrieval: ``<method>@<k>`` (``all`` when k is None)."""
        return f"{self.method}@{'all' if self.k is None else self.k}"

    def key(self) -> dict[str, Any]:
        """What of it enters a record's key: the spec, with a dense retriever's model named."""
        d = self.model_dump(mode="json")
        if self.method == "dense":
            from rageval.dense import DEFAULT_MODEL  # numpy: not on the schema's import path

            d["model"] = self.model or DEFAULT_MODEL
        return d


class SettingRetrieval(_Strict):
    """A setting's retrieval: the suite's ``retrieval:`` with these fields replaced (those given)."""

    method: RetrievalMethod | None = None
    k: int | None = Field(None, ge=1)
    corpus: Literal["example", "dataset"] | None = None
    model: str | None = None
    index: DenseIndexKind | None = None
    name: str | None = Field(None, description="the setting-name suffix (default: <method>@<k>)")

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        """Only the fields given (a field left out takes the suite's value)."""
        data = handler(self)
        return {k: v for k, v in data.items() if k in self.model_fields_set} if isinstance(data, dict) else data

    def over(self, base: RetrievalSpec) -> RetrievalSpec:
        """``base`` with the fields given here replaced (a dense-only option dropped when the method changes)."""
        data = base.model_dump(mode="python")
        given = {k: getattr(self, k) for k in self.model_fields_set if k != "name"}
        if given.get("method", base.method) != "dense":
            data.pop("model", None)
            data.pop("index", None)
        return RetrievalSpec.model_validate({**data, **given})


class SettingSpec(_Strict):
    compressor: str
    budgets: list[int | float | None] = Field(default_factory=lambda: list[int | float | None]([None]))
    params: dict[str, Any] = Field(default_factory=dict)
    name: str | None = Field(None, description="setting name prefix (default: the compressor name)")
    reader: ReaderSpec | None = Field(None, description="this setting's own reader (default: the suite's reader)")
    retrieval: list[SettingRetrieval] | None = Field(
        None, description="this setting's retrievals (a mapping or a list; default: the suite's retrieval)"
    )

    @field_validator("budgets", mode="before")
    @classmethod
    def _budgets(cls, v):
        return check_budgets(v)  # the one budget check (rageval.budget), shared with the compressors

    @field_validator("retrieval", mode="before")
    @classmethod
    def _retrievals(cls, v):
        if isinstance(v, dict):
            return [v]
        if isinstance(v, list) and not v:
            raise ValueError("retrieval: give at least one retrieval (or leave the key out: the suite's)")
        return v

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        """``retrieval`` written only when set: a suite without it dumps (and hashes) as before it existed."""
        data = handler(self)
        if isinstance(data, dict) and data.get("retrieval", 0) is None:
            del data["retrieval"]
        return data


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

    @model_validator(mode="after")
    def _setting_retrievals(self):
        """Each setting's own retrieval, the suite's with its fields replaced, checked now (not when it runs)."""
        if self.retrieval_varies():
            self._expanded()
        return self

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

    def _expanded(self) -> list[tuple[str, SettingSpec, Any, RetrievalSpec | None]]:
        """(name, setting, budget, retrieval) for every compressor x budget x retrieval, in suite order; the
        retrieval is None for a setting without its own (it takes the suite's).  A setting with ``retrieval:`` is
        named ``<prefix>@<budget>+<method>@<k>`` (or ``+<name>`` when the retrieval names itself)."""
        out: list[tuple[str, SettingSpec, Any, RetrievalSpec | None]] = []
        for s in self.settings:
            prefix = s.name or s.compressor
            for b in s.budgets:
                base = prefix if b is None else f"{prefix}@{b}"
                if not s.retrieval:
                    out.append((base, s, b, None))
                for choice in s.retrieval or []:
                    spec = choice.over(self.retrieval)
                    out.append((f"{base}+{choice.name or spec.label()}", s, b, spec))
        return out

    def setting_readers(self) -> dict[str, ReaderSpec]:
        """Setting name -> the reader that reads it: its own ``reader:``, else the suite's."""
        return {name: s.reader or self.reader for name, s, _, _ in self._expanded()}

    def setting_retrievals(self) -> dict[str, RetrievalSpec | None]:
        """Setting name -> its own retrieval (None: the suite's ``retrieval:``)."""
        return {name: spec for name, _, _, spec in self._expanded()}

    def retrieval_varies(self) -> bool:
        """Whether some setting has a retrieval of its own."""
        return any(s.retrieval for s in self.settings)

    def setting_refs(self) -> list[dict[str, Any]]:
        """The settings as a contrast plan takes them: name, compressor, budget (and a retrieval of its own)."""
        out = []
        for name, s, b, spec in self._expanded():
            ref = {"name": name, "compressor": s.compressor, "budget": b}
            out.append(ref if spec is None else {**ref, "retrieval": spec.key()})
        return out

    def expand_settings(self) -> list[tuple[str, str, Any, dict[str, Any]]]:
        """(name, compressor, budget, params) for every compressor x budget (x retrieval), in suite order."""
        return [(name, s.compressor, b, dict(s.params)) for name, s, b, _ in self._expanded()]


def suite_hash(suite: Suite) -> str:
    """Hash of everything that can change a score (the source path is left out)."""
    payload = suite.model_dump(
        mode="json", exclude={"source", "output_dir", "description", "audit", "frontier", "statistics", "report"}
    )
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
