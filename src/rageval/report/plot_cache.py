"""Skip redrawing the figures when nothing they show has changed.

Drawing the frontier, Pareto and sweep figures is most of a report's time.  The
figures are a pure function of the analysis (``report.json``: the statistics of
the run's records) and of the plotting code, so :func:`cached_plots` keys them
by a hash of the analysis (:meth:`~rageval.report.result.Analysis.as_json`: every
number of ``report.json``, not the manifest), the source of the plotting code (:mod:`rageval.report.plots`, which
draws the figures, :mod:`rageval.report.labels`, which places their labels
and legends, and :mod:`rageval.report.result`, whose rule says which axes do not vary) with what it reads from the diagnostics catalog, and the rageval and
matplotlib versions.  After drawing it records that key, the SHA-256 of every
file written and what the renderers returned in ``<out>/cache/plots.json``.  A rebuild with the same key whose files
are all still there, byte for byte, returns the recorded result (the PNG bytes
read back from the files) and draws nothing; anything else (different records,
seed or resamples, another version, a figure deleted or edited) draws everything
again.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from rageval.io import json_text, write_text_atomic
from rageval.report import labels, plots, result
from rageval.report.result import Analysis

__all__ = ["cached_plots", "plots_key", "CACHE_FILE"]

CACHE_FILE = Path("cache") / "plots.json"
#: the source files whose code decides a figure's pixels (the worker pool only decides where they are drawn)
_DRAWING = (plots.__file__, labels.__file__, result.__file__)  # result: the rule of which axes are drawn


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def plots_key(an: Analysis, formats: Sequence[str] = plots.FORMATS) -> str:
    """SHA-256 of what the figures depend on: the analysis, the plotting code, the versions and the formats
    written (``png``, ``svg``)."""
    h = hashlib.sha256()
    h.update(repr(tuple(formats)).encode())
    h.update(json.dumps(an.as_json(), sort_keys=True, default=str).encode())  # the manifest left out
    for source in _DRAWING:
        h.update(Path(source).read_bytes())
    # what the plotting code reads from the catalog: which metrics pair up and which are drawn
    names = an.metric_names
    h.update(repr((sorted(plots.DERIVED.items()), [plots.contrasted_by_default(m) for m in names])).encode())
    h.update(f"rageval {_version('rageval')} matplotlib {_version('matplotlib')}".encode())
    return h.hexdigest()


class _Unencodable(TypeError):
    pass


def _encode(obj: Any, out: Path, files: dict[str, bytes]) -> Any:
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, Path):
        try:
            rel = obj.relative_to(out).as_posix()
        except ValueError:
            raise _Unencodable(f"{obj} is outside {out}") from None
        files[rel] = obj.read_bytes()
        return {"$path": rel}
    if isinstance(obj, bytes):
        return {"$bytes": obj}  # resolved against the files once they are all known
    if isinstance(obj, tuple):
        return {"$tuple": [_encode(x, out, files) for x in obj]}
    if isinstance(obj, list):
        return [_encode(x, out, files) for x in obj]
    if isinstance(obj, dict) and all(isinstance(k, str) and not k.startswith("$") for k in obj):
        return {k: _encode(v, out, files) for k, v in obj.items()}
    raise _Unencodable(type(obj).__name__)


def _resolve_bytes(obj: Any, by_hash: dict[str, str]) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {"$bytes"}:
            data = obj["$bytes"]
            rel = by_hash.get(hashlib.sha256(data).hexdigest())
            return {"$file": rel} if rel is not None else {"$b64": base64.b64encode(data).decode("ascii")}
        return {k: _resolve_bytes(v, by_hash) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_resolve_bytes(x, by_hash) for x in obj]
    return obj


def _decode(obj: Any, out: Path, contents: dict[str, bytes]) -> Any:
    if isinstance(obj, list):
        return [_decode(x, out, contents) for x in obj]
    if isinstance(obj, dict):
        if set(obj) == {"$path"}:
            return out / obj["$path"]
        if set(obj) == {"$file"}:
            return contents[obj["$file"]]
        if set(obj) == {"$b64"}:
            return base64.b64decode(obj["$b64"])
        if set(obj) == {"$tuple"}:
            return tuple(_decode(x, out, contents) for x in obj["$tuple"])
        return {k: _decode(v, out, contents) for k, v in obj.items()}
    return obj


def _load(out: Path, key: str) -> Any | None:
    path = out / CACHE_FILE
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved.get("key") != key:
            return None
        contents = {}
        for rel, digest in saved["files"].items():
            data = (out / rel).read_bytes()
            if hashlib.sha256(data).hexdigest() != digest:
                return None
            contents[rel] = data
        return _decode(saved["result"], out, contents)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # no record, or an unreadable one: draw


def cached_plots(out: Path, an: Analysis, render: Callable[[], Any], formats: Sequence[str] = plots.FORMATS) -> Any:
    """``render()``'s result, from ``out/cache/plots.json`` when the figures are already drawn for this analysis
    in these ``formats``."""
    key = plots_key(an, formats)
    hit = _load(out, key)
    if hit is not None:
        return hit
    result = render()
    files: dict[str, bytes] = {}
    try:
        encoded = _encode(result, out, files)
    except (_Unencodable, OSError):
        return result  # something the record cannot hold: draw again next time
    by_hash = {hashlib.sha256(data).hexdigest(): rel for rel, data in sorted(files.items())}
    record = {
        "key": key,
        "files": {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(files.items())},
        "result": _resolve_bytes(encoded, by_hash),
    }
    # keys in their order: the renderers' dicts are ordered (the HTML shows the figures in that order)
    write_text_atomic(out / CACHE_FILE, json_text(record, sort_keys=False) + "\n", root=out)
    return result
