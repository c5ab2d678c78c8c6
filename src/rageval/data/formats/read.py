"""Reading one ``rageval score`` input: :func:`detect` tells the formats apart by content
(docs/score.md#formats), :func:`read_input` reads it in the one it is given or detected:

* ``alce``: a JSON object with a ``data`` list whose items carry ``output``
  (ALCE's ``run.py`` result files; ``args`` decides which text the reader saw);
* ``ragchecker``: a JSON object with a ``results`` list (``query``, ``response``,
  ``retrieved_context``);
* ``flashrag``: FlashRAG's ``intermediate_data.json`` (a JSON array, or JSON lines) of items with an
  ``output`` object holding ``pred`` or ``retrieval_result``;
* ``ragas``: rows with RAGAS's columns (``user_input``/``response``/
  ``retrieved_contexts``/``reference``, or the older ``question``/``answer``/
  ``contexts``/``ground_truth(s)``), from JSONL, CSV or Parquet, or a Hugging
  Face dataset (``hf:<id>``);
* ``generic``: JSON lines (or a JSON array) in the generic layout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rageval.data.formats.alce import read_alce
from rageval.data.formats.common import HF_PREFIX, ImportedFile, json_lines, read_text
from rageval.data.formats.flashrag import is_flashrag_item, read_flashrag
from rageval.data.formats.generic import read_generic
from rageval.data.formats.layout import ScoreInputError
from rageval.data.formats.ragas import RAGAS_MARKERS, read_ragas
from rageval.data.formats.ragchecker import read_ragchecker
from rageval.infiles import loads
from rageval.registry import did_you_mean

__all__ = ["FORMATS", "detect", "read_input"]

FORMATS = ("generic", "alce", "ragchecker", "ragas", "flashrag")


def _first_json(first: str, path: Path) -> Any:
    """The first JSON value of the file: its first non-blank line ``first`` (JSONL), else the whole document (read
    only then), else None; JSON nested too deep or a number of too many digits is an error here (the format's
    reader names the rest)."""
    for candidate in (first, None):
        if candidate is None:
            candidate = read_text(path).lstrip()
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
        except (RecursionError, ValueError):
            loads(candidate, str(path), error=ScoreInputError, line_of_doc=True)  # raises, in the reader's words
    return None


def _row_format(row: Any) -> str | None:
    if not isinstance(row, Mapping):
        return None
    if is_flashrag_item(row):
        return "flashrag"
    if any(k in row for k in RAGAS_MARKERS):
        return "ragas"
    if "question" in row or "answer" in row:  # the generic layout (validation names a missing field)
        return "generic"
    return None


def detect(source: str) -> str:
    """The format of ``source`` (a path, or ``hf:<id>``), by content; a :class:`ScoreInputError` when unclear."""
    if source.startswith(HF_PREFIX):
        return "ragas"
    path = Path(source)
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv", ".parquet", ".pq"):
        return "ragas"
    head = json_lines(path)
    first_line = head.first_line()  # a JSON Lines file is not read whole (its reader streams it)
    if first_line is None:
        raise ScoreInputError(f"{path}: the file is empty")
    first = _first_json(first_line, path)
    fmt = None
    if isinstance(first, Mapping):
        data = first.get("data")
        if isinstance(data, list) and data and isinstance(data[0], Mapping) and "output" in data[0]:
            fmt = "alce"
        elif isinstance(first.get("results"), list):
            fmt = "ragchecker"
        else:
            fmt = _row_format(first)
    elif isinstance(first, list) and first:
        fmt = _row_format(first[0])
    if fmt is None:
        head.raise_undecodable()  # a byte that is not UTF-8 is named first, as when the file was read whole
        what = (
            "not JSON, JSON lines, CSV or Parquet"
            if first is None
            else f"a JSON {type(first).__name__} with keys {sorted(first)[:8]}"
            if isinstance(first, Mapping)
            else f"a JSON {type(first).__name__}"
        )
        raise ScoreInputError(
            f"{path}: cannot tell its format ({what}); expected the generic layout (question, answer, ...), "
            "an ALCE result file ({args, data: [{question, output, docs}]}), a RAGChecker file ({results: [...]}), "
            "RAGAS columns or FlashRAG's intermediate_data.json ([{question, golden_answers, output: {pred, ...}}]); "
            "pass --format generic|alce|ragchecker|ragas|flashrag"
        )
    return fmt


def read_input(
    source: str, fmt: str = "auto", *, mapping: Mapping[str, str] | None = None, split: str | None = None
) -> ImportedFile:
    """Read one input (a path, or ``hf:<id>``) in format ``fmt`` (``auto``: :func:`detect`)."""
    if fmt not in ("auto", *FORMATS):
        hint = did_you_mean(fmt, FORMATS) or f" Formats: auto, {', '.join(FORMATS)}."
        raise ScoreInputError(f"unknown format {fmt!r}.{hint}")
    if not source.startswith(HF_PREFIX):
        path = Path(source)
        if not path.exists():
            raise ScoreInputError(
                f"{source}: no such file" + (" (a Hugging Face dataset is written hf:<id>)" if "/" in source else "")
            )
    if fmt == "auto":
        fmt = detect(source)
    if mapping and fmt != "ragas":
        raise ScoreInputError(
            f"{source}: --map applies to RAGAS-style columns (--format ragas reads any rows by column, "
            f"a nested field as output.pred), not to {fmt}"
        )
    if source.startswith(HF_PREFIX) and fmt != "ragas":
        raise ScoreInputError(f"{source}: a Hugging Face dataset is read as RAGAS-style columns (--format ragas)")
    if fmt == "ragas":
        return read_ragas(source, mapping, split)
    readers = {"generic": read_generic, "alce": read_alce, "ragchecker": read_ragchecker, "flashrag": read_flashrag}
    return readers[fmt](Path(source))
