"""Reading one ``rageval score`` input: :func:`detect` tells the registered formats apart
(:data:`~rageval.data.formats.registry.FORMATS`: by name, else each format's sniffer in the declared order,
docs/score.md#formats), :func:`read_input` reads it with the reader of the one it is given or detected.  The
built-in formats:

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

from rageval.data.formats.common import HF_PREFIX, ImportedFile, json_lines, read_text
from rageval.data.formats.layout import ScoreInputError
from rageval.data.formats.registry import FORMATS, Peek, detection_order, sniffer, spoken_list
from rageval.infiles import loads
from rageval.registry import did_you_mean

__all__ = ["FORMATS", "detect", "read_input"]


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


def _by_name(source: str, order: list[str]) -> str | None:
    """The first format (in ``order``) whose prefixes or suffixes claim ``source`` without reading it."""
    suffix = Path(source).suffix.lower()
    for name in order:
        meta = FORMATS.meta(name)
        if source.startswith(meta.prefixes) or suffix in meta.suffixes:
            return name
    return None


def detect(source: str) -> str:
    """The format of ``source`` (a path, or ``hf:<id>``): the first registered format that claims its name, else
    whose sniffer recognises its first JSON value; a :class:`ScoreInputError` when none does."""
    order = detection_order()
    fmt = _by_name(source, order)
    if fmt is not None:
        return fmt
    path = Path(source)
    head = json_lines(path)
    first_line = head.first_line()  # a JSON Lines file is not read whole (its reader streams it)
    if first_line is None:
        raise ScoreInputError(f"{path}: the file is empty")
    first = _first_json(first_line, path)
    peek = Peek(source, path, first)
    for name in order:
        sniff = sniffer(name)
        if sniff is not None and sniff(peek):
            return name
    head.raise_undecodable()  # a byte that is not UTF-8 is named first, as when the file was read whole
    what = (
        "not JSON, JSON lines, CSV or Parquet"
        if first is None
        else f"a JSON {type(first).__name__} with keys {sorted(first)[:8]}"
        if isinstance(first, Mapping)
        else f"a JSON {type(first).__name__}"
    )
    expected = spoken_list([FORMATS.meta(name).description for name in FORMATS])
    raise ScoreInputError(
        f"{path}: cannot tell its format ({what}); expected {expected}; pass --format {'|'.join(FORMATS)}"
    )


def read_input(
    source: str, fmt: str = "auto", *, mapping: Mapping[str, str] | None = None, split: str | None = None
) -> ImportedFile:
    """Read one input (a path, or ``hf:<id>``) in format ``fmt`` (``auto``: :func:`detect`) with its reader."""
    if fmt != "auto" and fmt not in FORMATS:
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
    meta = FORMATS.meta(fmt)
    if mapping and not meta.columns:
        raise ScoreInputError(
            f"{source}: --map applies to RAGAS-style columns (--format ragas reads any rows by column, "
            f"a nested field as output.pred), not to {fmt}"
        )
    if source.startswith(HF_PREFIX) and HF_PREFIX not in meta.prefixes:
        raise ScoreInputError(f"{source}: a Hugging Face dataset is read as RAGAS-style columns (--format ragas)")
    reader = FORMATS.get(fmt)
    return reader(source, mapping, split) if meta.columns else reader(Path(source))
