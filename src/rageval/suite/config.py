"""Suite YAML: schema, ``include:``, validation with errors that name the field and the fix.

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
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from rageval.budget import check_budgets
from rageval.diagnostics.attribution.options import AttributionSettings
from rageval.judges.spec import JudgeSpec
from rageval.readers.spec import ReaderSpec
from rageval.registry import did_you_mean
from rageval.strict import Strict
from rageval.suite.study import AuditSpec, FrontierSpec
from rageval.suite.yamlsafe import YamlError, load_yaml_file

__all__ = ["Suite", "SuiteError", "load_suite", "SettingSpec", "suite_hash"]


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names the file, field and fix."""


_Strict = Strict  # unknown keys, coercion, NaN/inf and blank strings refused (rageval.strict)


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
        return check_budgets(v)  # the one budget check (rageval.budget), shared with the compressors


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


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _merge(base[k], v) if k in base else v
        return out
    return over


def _read_yaml(path: Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    if path in chain:
        raise SuiteError(f"{path}: include cycle: {' -> '.join(map(str, chain + (path,)))}")
    if not path.is_file():
        raise SuiteError(f"suite file not found: {path}")
    try:  # UTF-8 only; duplicate keys, alias bombs and non-finite numbers are refused (rageval.suite.yamlsafe)
        data = load_yaml_file(path)
    except YamlError as err:
        raise SuiteError(str(err)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SuiteError(f"{path}: a suite must be a YAML mapping (key: value), got {type(data).__name__}")
    inc = data.pop("include", None)
    if inc is not None:
        if not isinstance(inc, str):
            raise SuiteError(f"{path}: include must be a file path, got {inc!r}")
        base = _read_yaml((path.parent / inc).resolve(), chain + (path,))
        data = _merge(base, data)
    return data


def _field_names(model: type[BaseModel], loc: tuple) -> list[str]:
    """Known keys at ``loc`` (for the did-you-mean hint)."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        args = getattr(ann, "__args__", ())
        candidates = [ann, *args]
        for a in list(candidates):
            candidates.extend(getattr(a, "__args__", ()))
        current = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if current is None:
            return []
    return list(getattr(current, "model_fields", {}))


def _format_errors(path: Path, err: ValidationError) -> str:
    lines = [f"{path}: invalid suite:"]
    for e in err.errors():
        loc = tuple(e["loc"])
        where = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in loc).replace(".[", "[")
        if e["type"] == "extra_forbidden":
            known = _field_names(Suite, loc)
            hint = did_you_mean(loc[-1], known) or (f" Known keys: {', '.join(known)}." if known else "")
            lines.append(f"  {where}: unknown key.{hint}")
        elif e["type"] == "missing":
            lines.append(f"  {where}: required key is missing.")
        else:
            msg = e["msg"].removeprefix("Value error, ")
            lines.append(f"  {where}: {msg} (got {e.get('input')!r:.60}).")
    return "\n".join(lines)


def shipped_suites() -> dict[str, Path]:
    """The suites installed with rageval, by name (``demo``, ``asqa``, ...)."""
    from importlib import resources

    root = Path(str(resources.files("rageval.suites")))
    return {p.stem: p for p in sorted(root.glob("*.yaml"))}


def resolve_suite_path(path: str | Path) -> Path:
    """A suite file, or the name of a shipped suite (``rageval suite demo``)."""
    p = Path(path)
    if p.exists() or p.suffix or len(p.parts) > 1:
        return p
    shipped = shipped_suites()
    if str(path) in shipped:
        return shipped[str(path)]
    hint = did_you_mean(path, shipped) or f" Shipped suites: {', '.join(shipped)}."
    raise SuiteError(f"suite file not found: {path} (and no shipped suite of that name).{hint}")


def load_suite(path: str | Path, **overrides: Any) -> Suite:
    """Read, merge ``include:``, apply ``overrides`` (dotted keys: ``{"judge.spec": "lexical"}``) and validate."""
    path = resolve_suite_path(path)
    data = _read_yaml(path.resolve())
    for dotted, value in overrides.items():
        node = data
        parts = dotted.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    data.setdefault("source", str(path.resolve()))
    try:
        suite = Suite.model_validate(data)
    except ValidationError as err:
        raise SuiteError(_format_errors(path, err)) from None
    _check_names(path, suite)
    return suite


def _check_names(path: Path, suite: Suite) -> None:
    """Fail at load time, not an hour into the run: unknown compressors, diagnostics, duplicate settings."""
    from rageval.diagnostics import CATALOG

    problems = []
    try:
        from rageval.compressors import names as compressor_names

        known = compressor_names()
    except ImportError:  # pragma: no cover - compressors always ship
        known = []
    for i, s in enumerate(suite.settings):
        if known and s.compressor not in known:
            hint = did_you_mean(s.compressor, known) or f" Known: {', '.join(known)}."
            problems.append(f"  settings[{i}].compressor: unknown compressor {s.compressor!r}.{hint}")
            continue
        problem = _check_compressor_params(s.compressor, s.params)
        if problem:
            problems.append(f"  settings[{i}].params: {problem}")
    from rageval.readers import READERS

    if suite.reader.backend not in READERS:
        hint = did_you_mean(suite.reader.backend, READERS) or f" Known: {', '.join(READERS)}."
        problems.append(f"  reader.backend: unknown reader {suite.reader.backend!r}.{hint}")
    for i, s in enumerate(suite.settings):
        if s.reader is not None and s.reader.backend not in READERS:
            hint = did_you_mean(s.reader.backend, READERS) or f" Known: {', '.join(READERS)}."
            problems.append(f"  settings[{i}].reader.backend: unknown reader {s.reader.backend!r}.{hint}")
    if suite.diagnostics != "auto":
        for i, d in enumerate(suite.diagnostics):
            if d not in CATALOG:
                hint = did_you_mean(d, CATALOG)
                problems.append(f"  diagnostics[{i}]: unknown diagnostic {d!r}.{hint}")
    names = suite.setting_names()
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(f"  settings: duplicate setting names {dupes}; give one of them a distinct `name:`")
    from rageval.suite.checks import config_problems  # dataset, tokenizer, reader, judge, contrasts

    problems += config_problems(suite)
    from rageval.suite.study import study_problems

    problems += study_problems(suite)
    if problems:
        raise SuiteError(f"{path}: invalid suite:\n" + "\n".join(problems))


def _check_compressor_params(name: str, params: dict[str, Any]) -> str | None:
    """Build the compressor once (no model is loaded at construction) to check its parameters."""
    from rageval.compressors import CompressorConfigError, get

    try:
        get(name, **params)
    except CompressorConfigError as err:
        return str(err)
    except Exception:  # noqa: BLE001 - e.g. weights missing: reported when the setting runs
        return None
    return None


def suite_hash(suite: Suite) -> str:
    """Hash of everything that can change a score (the source path is left out)."""
    payload = suite.model_dump(mode="json", exclude={"source", "output_dir", "description", "audit", "frontier"})
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
