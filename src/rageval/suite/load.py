"""Reading a suite: YAML (safe), ``include:`` a base suite, overrides, validation with errors naming field and fix.

``include: base.yaml`` (path relative to the including file) loads a base
suite; the including file's keys override it (mappings merge key by key, lists
and scalars replace).  Unknown keys are rejected with a "did you mean" hint;
names (compressors, readers, diagnostics) and everything that needs no data or
model (:func:`rageval.suite.checks.config_problems`) are checked at load time.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rageval.compressors import CompressorConfigError, get
from rageval.compressors import names as compressor_names
from rageval.diagnostics import CATALOG
from rageval.registry import did_you_mean
from rageval.suite.checks import config_problems
from rageval.suite.config import Suite, SuiteError
from rageval.suite.study import study_problems
from rageval.suite.yamlsafe import YamlError, load_yaml_file

__all__ = ["load_suite", "resolve_suite_path", "shipped_suites"]


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _merge(base[k], v) if k in base else v
        return out
    return over


def _resolved(path: Path, named_by: Path | None = None) -> Path:
    """``path`` made absolute with its links followed; a link loop or an unusable name is a :class:`SuiteError`."""
    where = f"{named_by}: include: " if named_by is not None else ""
    if "\x00" in str(path):
        raise SuiteError(f"{where}{str(path)!r} holds a NUL character; give a plain file path")
    try:
        return path.resolve(strict=False)
    except (RuntimeError, OSError) as err:  # Python < 3.13 raises RuntimeError for a loop, later ones OSError
        raise SuiteError(f"{where}{path}: a symbolic-link loop ({' '.join(str(err).split())}); point it at a file")


def _read_yaml(path: Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    if path in chain:
        raise SuiteError(f"{path}: include cycle: {' -> '.join(map(str, chain + (path,)))}")
    if not path.is_file():
        shipped = shipped_suites().get(path.stem) if path.suffix == ".yaml" and not chain else None
        hint = f" (a shipped suite of that name runs with: rageval suite {path.stem})" if shipped else ""
        raise SuiteError(f"suite file not found: {path}{hint}")
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
        base = _read_yaml(_resolved(path.parent / inc, path), chain + (path,))
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
    root = Path(str(resources.files("rageval.suites")))
    return {p.stem: p for p in sorted(root.glob("*.yaml"))}


def resolve_suite_path(path: str | Path) -> Path:
    """A suite file, or the name of a shipped suite (``rageval suite demo``).

    A bare name is a shipped suite unless a file of that name is here: a folder of that name (the output of
    ``rageval suite demo --out demo``) does not hide the shipped suite.
    """
    p = Path(path)
    shipped = shipped_suites()
    if p.is_dir():
        if str(path) in shipped and not p.suffix and len(p.parts) == 1:
            return shipped[str(path)]
        raise SuiteError(f"suite file {path} is a folder: give a suite YAML file (or a shipped suite's name)")
    if p.exists() or p.suffix or len(p.parts) > 1:
        return p
    if str(path) in shipped:
        return shipped[str(path)]
    hint = did_you_mean(path, shipped) or f" Shipped suites: {', '.join(shipped)}."
    raise SuiteError(f"suite file not found: {path} (and no shipped suite of that name).{hint}")


def load_suite(path: str | Path, **overrides: Any) -> Suite:
    """Read, merge ``include:``, apply ``overrides`` (dotted keys: ``{"judge.spec": "lexical"}``) and validate."""
    path = resolve_suite_path(path)
    data = _read_yaml(_resolved(path))
    for dotted, value in overrides.items():
        node = data
        parts = dotted.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    data.setdefault("source", str(_resolved(path)))
    try:
        suite = Suite.model_validate(data)
    except ValidationError as err:
        raise SuiteError(_format_errors(path, err)) from None
    _check_names(path, suite)
    return suite


def _check_names(path: Path, suite: Suite) -> None:
    """Fail at load time, not an hour into the run: unknown compressors, diagnostics, duplicate settings."""

    problems = []
    known = compressor_names()
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
    problems += config_problems(suite)  # dataset, tokenizer, reader, judge, contrasts
    problems += study_problems(suite)
    if problems:
        raise SuiteError(f"{path}: invalid suite:\n" + "\n".join(problems))


def _check_compressor_params(name: str, params: dict[str, Any]) -> str | None:
    """Build the compressor once (no model is loaded at construction) to check its parameters."""

    try:
        get(name, **params)
    except CompressorConfigError as err:
        return str(err)
    except Exception:  # noqa: BLE001 - e.g. weights missing: reported when the setting runs
        return None
    return None
