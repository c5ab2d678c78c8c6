"""The file reader of the dataset loaders: a local ``.json`` / ``.jsonl`` file -> its raw records.

A JSON list, an object holding one (``data``, ``demos`` or ``examples``), or
QASPER's ``{paper_id: paper}`` (each paper gets its ``id``); JSON Lines by
suffix, or when a file that is not one JSON document reads as JSON Lines.  A
file that is not UTF-8 or not JSON raises :class:`~rageval.data.errors.DataLoadError`
naming the line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rageval.data.errors import DataLoadError

__all__ = ["read_records"]


def read_records(path: Path) -> list[Any]:
    """The raw records of a local dataset file (module doc).

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "papers.json"
    >>> _ = p.write_text('{"p1": {"title": "A paper"}}', encoding="utf-8")
    >>> read_records(p)
    [{'id': 'p1', 'title': 'A paper'}]
    """
    src = str(path)
    if not path.exists():
        raise FileNotFoundError(f"dataset file not found: {src} (pass an existing .json/.jsonl file)")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        bad_line = raw[: e.start].count(b"\n") + 1
        raise DataLoadError(
            src,
            None,
            None,
            f"line {bad_line}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start}); save it as UTF-8",
        ) from None
    if path.suffix != ".jsonl":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            if not text.lstrip().startswith("{"):
                raise DataLoadError(
                    src,
                    None,
                    None,
                    f"not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}); expected a "
                    "JSON list, a JSON object, or JSON Lines",
                ) from None
            data = None  # maybe JSON Lines without the .jsonl suffix
        if data is not None:
            return _unwrap(data, src)
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise DataLoadError(
                src,
                None,
                None,
                f"line {lineno} is not valid JSON ({e.msg} at column {e.colno}); expected one JSON object per line",
            ) from None
    return records


def _unwrap(data: Any, src: str) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("data", "demos", "examples"):
            if isinstance(data.get(key), list):
                return data[key]
        if data and all(isinstance(v, dict) for v in data.values()):
            # QASPER: {paper_id: paper}
            return [v if "id" in v else {"id": k, **v} for k, v in data.items()]
    raise DataLoadError(
        src,
        None,
        None,
        f"top-level JSON is {type(data).__name__}; expected a list of records, "
        "{'data'|'demos': [...]}, or {id: record}",
    )
