"""The file reader of the dataset loaders: a local ``.json`` / ``.jsonl`` file -> its raw records.

A JSON list, an object holding one (``data``, ``demos`` or ``examples``), or
QASPER's ``{paper_id: paper}`` (each paper gets its ``id``); JSON Lines by
suffix, or when a file that is not one JSON document reads as JSON Lines.  A
file that is not UTF-8 or not JSON raises :class:`~rageval.data.errors.DataLoadError`
naming the line.

Not a second reader: the bytes, the size limit, UTF-8, lines and JSON are :mod:`rageval.infiles`' (the one
reader of input files); this module adds what only datasets mean — which shapes hold the records, a
``.json`` file that is JSON Lines, and the dataset loaders' error (:mod:`rageval.infiles` sits below the data
layer and knows none of them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rageval.data.errors import DataLoadError
from rageval.infiles import iter_json_lines, loads, read_text

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
    text = read_text(path, what="the dataset file", error=_error(src))
    if path.suffix != ".jsonl":
        try:
            return _unwrap(loads(text, src, error=_error(src), line_of_doc=True, syntax_error=_NotOneDocument), src)
        except _NotOneDocument as e:
            if not text.lstrip().startswith("{"):
                raise _error(src)(f"{e}; expected a JSON list, a JSON object, or JSON Lines") from None
            # maybe JSON Lines without the .jsonl suffix
    return [row for _, row in iter_json_lines(text, src, error=_error(src))]


class _NotOneDocument(Exception):
    """The file is not one JSON document (it may be JSON Lines)."""


def _error(src: str):
    """The :class:`DataLoadError` of a message that names the file already."""

    def make(message: str) -> DataLoadError:
        prefix = f"{src} "
        rest = message[len(prefix) :] if message.startswith(prefix) else message.removeprefix(f"{src}: ")
        return DataLoadError(src, None, None, rest)

    return make


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
