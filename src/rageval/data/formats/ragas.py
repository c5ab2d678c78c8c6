"""RAGAS-style columns: rows with RAGAS's columns (``user_input``/``response``/``retrieved_contexts``/
``reference``, or the older ``question``/``answer``/``contexts``/``ground_truth(s)``), from JSONL, CSV or
Parquet, or a Hugging Face dataset (``hf:<id>``).  :data:`RAGAS_COLUMNS` says which column each field
is read from; ``--map field=column`` (:func:`parse_mapping`) overrides it, and a column written
``a.b`` reaches field ``b`` of an object-valued column ``a`` (``--map answer=output.pred``).  The reference
(the gold answer) is also the short ``answers`` when it is at most
:data:`~rageval.data.formats.common.SHORT_GOLD_TOKENS` tokens long and the rows give no ``answers`` column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from rageval.data.formats.common import (
    HF_PREFIX,
    SCORE_INPUT,
    ImportedFile,
    json_rows,
    read_text,
    short_gold,
    short_gold_note,
)
from rageval.data.formats.layout import ScoreInputError, to_item, validate_record
from rageval.data.formats.registry import Peek
from rageval.infiles import check_file, list_cell, read_csv
from rageval.registry import did_you_mean

__all__ = ["RAGAS_COLUMNS", "RAGAS_MARKERS", "parse_mapping", "read_ragas", "sniff_ragas"]

#: RAGAS-style field -> the columns it is read from, first present wins (``--map field=column`` overrides)
RAGAS_COLUMNS: dict[str, tuple[str, ...]] = {
    "id": ("id", "question_id", "query_id", "qid", "sample_id"),
    "question": ("question", "user_input", "query"),
    "answer": ("answer", "response"),
    "contexts": ("contexts", "retrieved_contexts"),
    "reference": ("reference", "ground_truth", "ground_truths"),
    "answers": ("answers",),
    "system": ("system",),
}
#: columns only RAGAS writes (format detection)
RAGAS_MARKERS = ("user_input", "response", "retrieved_contexts", "ground_truth", "ground_truths")


def sniff_ragas(peek: Peek) -> bool:
    """RAGAS-style rows: a first row with a column only RAGAS writes (:data:`RAGAS_MARKERS`); a CSV, TSV or
    Parquet file and a Hugging Face dataset are RAGAS-style by name (the registry's suffixes and prefix)."""
    row = peek.row
    return row is not None and any(k in row for k in RAGAS_MARKERS)


def parse_mapping(pairs: Sequence[str]) -> dict[str, str]:
    """``["answer=response", ...]`` -> ``{"answer": "response"}``; unknown fields get a did-you-mean."""
    out: dict[str, str] = {}
    for p in pairs:
        name, sep, col = p.partition("=")
        name, col = name.strip(), col.strip()
        if not sep or not name or not col:
            raise ScoreInputError(f"--map {p!r}: write FIELD=COLUMN, e.g. --map answer=response")
        if name not in RAGAS_COLUMNS:
            hint = did_you_mean(name, RAGAS_COLUMNS) or f" Fields: {', '.join(RAGAS_COLUMNS)}."
            raise ScoreInputError(f"--map {p!r}: unknown field {name!r}.{hint}")
        out[name] = col
    return out


def _list_cell(value: Any) -> Any:
    """A list-valued cell: a list as read (Parquet, JSON, datasets), a CSV cell in any writer's list text
    (:func:`rageval.infiles.list_cell`: JSON, a Python list, numpy's ``['a' 'b']``), or one plain string.

    A cell in brackets that reads as no list is one plain string only when no comma separates items in it
    (``[citation needed]``); ``[Hamlet is by Shakespeare., b]`` — unquoted items — is an error (the caller names
    the line and the column), never one context made of two.
    """
    if not isinstance(value, str):
        return value
    got = list_cell(value, "list cell", error=ScoreInputError)
    if got is not None:
        return got
    if _UNQUOTED_LIST.match(value):
        raise ScoreInputError(
            "a list cell whose items are not quoted (brackets around comma-separated text): it cannot be read as "
            "a list or as one text; write it as a JSON list ([\"a\", \"b\"]) or a Python list (['a', 'b'])"
        )
    return [value] if value else []


#: a cell in brackets holding a comma (after stripping): a list written without quotes
_UNQUOTED_LIST = re.compile(r"\s*\[[^\]]*,.*\]\s*\Z", re.DOTALL)


def _columns(available: Sequence[str], mapping: Mapping[str, str], where: str) -> dict[str, str]:
    cols: dict[str, str] = {}
    for name, candidates in RAGAS_COLUMNS.items():
        if name in mapping:
            if mapping[name] not in available and mapping[name].partition(".")[0] not in available:
                hint = did_you_mean(mapping[name], available) or f" Columns: {', '.join(available)}."
                raise ScoreInputError(f"{where}: --map {name}={mapping[name]}: no column {mapping[name]!r}.{hint}")
            cols[name] = mapping[name]
            continue
        found = next((c for c in candidates if c in available), None)
        if found is not None:
            cols[name] = found
    for req in ("question", "answer"):
        if req not in cols:
            cands = " or ".join(repr(c) for c in RAGAS_COLUMNS[req])
            raise ScoreInputError(
                f"{where}: missing required column {req!r} (looked for {cands}); "
                f"columns: {', '.join(available)}; map one with --map {req}=COLUMN"
            )
    return cols


#: the value of a cell that leaves its field out (a reference cell holding only blank strings)
_LEFT_OUT = object()


def _contexts_value(v: Any) -> Any:
    """A contexts cell: a list (of strings or ``{text, title}``; other items as strings), or as written."""
    v = _list_cell(v)
    if isinstance(v, list):
        v = [str(c) if not isinstance(c, (str, dict)) else c for c in v]
    return v


def _reference_value(v: Any) -> Any:
    """A reference cell: one string, a list of the non-blank strings (one: that string), or :data:`_LEFT_OUT`."""
    v = _list_cell(v) if isinstance(v, str) and v.strip().startswith("[") else v
    if isinstance(v, list):
        v = [x for x in v if isinstance(x, str) and x.strip()]
        if not v:
            return _LEFT_OUT
        v = v if len(v) > 1 else v[0]
    return v


def _ragas_value(name: str, v: Any) -> Any:
    """The generic-layout value of field ``name`` from a present (not null, not NaN) cell."""
    if name == "contexts":
        return _contexts_value(v)
    if name == "reference":
        return _reference_value(v)
    if name == "answers":
        return _list_cell(v)
    if name == "id" and isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _cell(row: Mapping[str, Any], col: str) -> Any:
    """The cell of column ``col``; a column named ``a.b`` that the row does not hold is field ``b`` of the
    object in column ``a`` (``--map answer=output.pred``), None when any step is missing."""
    if col in row or "." not in col:
        return row.get(col)
    value: Any = row
    for part in col.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _ragas_row(row: Mapping[str, Any], cols: Mapping[str, str], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, col in cols.items():
        v = _cell(row, col)
        if v is None or (isinstance(v, float) and math.isnan(v)):  # absent / NaN cell
            continue
        try:
            v = _ragas_value(name, v)
        except ScoreInputError as err:
            raise ScoreInputError(f"{where}: column {col!r}: {err}") from None
        if v is not _LEFT_OUT:
            out[name] = v
    if "answers" not in cols and "reference" in out and (short := short_gold(out["reference"])):
        out["answers"] = short  # also the short answers (docs/score.md#peers-short-gold-answers)
    return out


def _table_rows(source: str, split: str | None) -> tuple[list[str], Iterator[tuple[str, int | str, Mapping]]]:
    if source.startswith(HF_PREFIX):
        return _hf_rows(source[len(HF_PREFIX) :], split)
    path = Path(source)
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        check_file(path, what=SCORE_INPUT, error=ScoreInputError)
        try:
            import pyarrow.parquet as pq

            table = pq.read_table(path)
        except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
            raise ScoreInputError(f"{path}: not a readable Parquet file ({err})") from None
        rows = table.to_pylist()
        return list(table.column_names), ((f"{path} row {i + 1}", i + 1, r) for i, r in enumerate(rows))
    if suffix in (".csv", ".tsv"):
        delimiter = "\t" if suffix == ".tsv" else ","
        header, table = read_csv(path, delimiter=delimiter, what=SCORE_INPUT, error=ScoreInputError)
        if not header:
            raise ScoreInputError(f"{path}: the CSV file has no header row")
        return header, ((f"{path} line {line}", line, r) for line, r in table)
    text = read_text(path)
    rows = list(json_rows(path, text))
    header = list(dict.fromkeys(k for _, _, r in rows if isinstance(r, Mapping) for k in r))
    for where, _, r in rows:
        if not isinstance(r, Mapping):
            raise ScoreInputError(f"{where}: expected a JSON object, got {type(r).__name__}")
    return header, iter(rows)


#: the files ``Dataset.save_to_disk`` writes (a ``Dataset``: both; a ``DatasetDict``: its own, one folder a split)
SAVED_DATASET = ("dataset_info.json", "state.json")
SAVED_DATASET_DICT = "dataset_dict.json"


def saved_to_disk(folder: Path) -> bool:
    """Whether ``folder`` is what ``Dataset.save_to_disk`` or ``DatasetDict.save_to_disk`` wrote (its marker files:
    :data:`SAVED_DATASET` or :data:`SAVED_DATASET_DICT`), which ``datasets.load_dataset`` refuses."""
    return folder.is_dir() and (
        all((folder / name).is_file() for name in SAVED_DATASET) or (folder / SAVED_DATASET_DICT).is_file()
    )


def _load_hf(datasets: Any, dataset_id: str, split: str | None) -> Any:
    """The dataset ``hf:<dataset_id>`` names: a ``save_to_disk`` folder through ``datasets.load_from_disk``, any
    other id or folder through ``datasets.load_dataset``; a failure is one line naming the call."""
    folder = Path(dataset_id)
    saved = saved_to_disk(folder)
    call = "datasets.load_from_disk" if saved else "datasets.load_dataset"
    try:
        if saved:
            ds = datasets.load_from_disk(str(folder))
            if split is not None and not isinstance(ds, datasets.DatasetDict):
                raise ScoreInputError(f"hf:{dataset_id}: a saved Dataset has no splits; leave out --split {split}")
            return ds[split] if split is not None else ds
        return datasets.load_dataset(dataset_id, split=split)
    except ScoreInputError:
        raise
    except Exception as err:  # noqa: BLE001 - datasets raises many kinds (offline, missing, bad split): one line
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        hint = (
            "check --split (the saved splits are its subfolders)"
            if saved
            else "a local folder is read as Dataset.save_to_disk wrote it (dataset_info.json and state.json, or "
            "dataset_dict.json) or as data files load_dataset reads (Parquet, CSV, JSON)"
            if folder.is_dir()
            else "check the id and --split, and that the dataset is cached when offline"
        )
        raise ScoreInputError(f"hf:{dataset_id}: {call} failed ({type(err).__name__}: {msg:.200}); {hint}") from None


def _hf_rows(dataset_id: str, split: str | None):
    try:
        import datasets
    except ImportError as err:  # pragma: no cover - a dependency
        raise ScoreInputError(f"hf:{dataset_id}: the `datasets` package is needed ({err})") from None
    ds = _load_hf(datasets, dataset_id, split)
    if isinstance(ds, datasets.DatasetDict):
        if len(ds) != 1:
            raise ScoreInputError(f"hf:{dataset_id}: has splits {sorted(ds)}; choose one with --split")
        ds = next(iter(ds.values()))
    return list(ds.column_names), ((f"hf:{dataset_id} row {i + 1}", i + 1, r) for i, r in enumerate(ds))


def read_ragas(source: str, mapping: Mapping[str, str] | None = None, split: str | None = None) -> ImportedFile:
    """The items of a table (a file, or ``hf:<id>``) with RAGAS-style columns, one per row."""
    header, rows = _table_rows(source, split)
    cols = _columns(header, mapping or {}, source)
    items, short = [], 0
    for where, line, row in rows:
        generic = _ragas_row(row, cols, where)
        short += "answers" in generic and "answers" not in cols
        items.append(to_item(validate_record(generic, where), where, file_line=(source, line)))
    used = ", ".join(f"{k}←{v}" for k, v in cols.items())
    notes = [f"{Path(source).name}: columns {used}"]
    notes += short_gold_note(Path(source).name, cols.get("reference", ""), short, len(items))
    return ImportedFile(source, "ragas", items, notes, {"columns": dict(cols)})
