"""Importers: the generic layout, ALCE result files, RAGChecker input files and RAGAS-style columns.

Each importer turns a file into :class:`ImportedFile` — its
:class:`~rageval.score.layout.ScoreItem` s plus notes — by building generic-layout
dicts and validating them with :func:`rageval.score.layout.validate_record`, so
every format goes through one conversion.  :func:`detect` tells the formats
apart by content (docs/score.md#formats):

* ``alce``: a JSON object with a ``data`` list whose items carry ``output``
  (ALCE's ``run.py`` result files; ``args`` decides which text the reader saw);
* ``ragchecker``: a JSON object with a ``results`` list (``query``, ``response``,
  ``retrieved_context``);
* ``ragas``: rows with RAGAS's columns (``user_input``/``response``/
  ``retrieved_contexts``/``reference``, or the older ``question``/``answer``/
  ``contexts``/``ground_truth(s)``), from JSONL, CSV or Parquet, or a Hugging
  Face dataset (``hf:<id>``);
* ``generic``: JSON lines (or a JSON array) in the generic layout.

Every error names the file, the line (or item) and the field.
"""

from __future__ import annotations

import ast
import csv
import json
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval.registry import did_you_mean
from rageval.score.layout import ScoreInputError, ScoreItem, to_item, validate_record

__all__ = [
    "FORMATS",
    "HF_PREFIX",
    "RAGAS_COLUMNS",
    "ImportedFile",
    "detect",
    "parse_mapping",
    "read_input",
]

FORMATS = ("generic", "alce", "ragchecker", "ragas")
HF_PREFIX = "hf:"

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
_RAGAS_MARKERS = ("user_input", "response", "retrieved_contexts", "ground_truth", "ground_truths")
_ALCE_ID_KEYS = ("id", "sample_id", "question_id", "qid")


@dataclass
class ImportedFile:
    """One input file: its items (one per line and system), the format it was read as, notes for the summary."""

    path: str
    format: str
    items: list[ScoreItem]
    notes: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- reading rows


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ScoreInputError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


def _json_lines(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as e:
            raise ScoreInputError(f"{path} line {lineno}: not valid JSON ({e.msg} at column {e.colno})") from None


def _whole_json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ScoreInputError(f"{path} line {e.lineno}: not valid JSON ({e.msg} at column {e.colno})") from None


def _rows(path: Path, text: str) -> Iterator[tuple[str, int | str, Any]]:
    """``(where, line, row)`` of a JSONL file or of a JSON array file."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        data = _whole_json(path, text)
        for i, row in enumerate(data):
            yield f"{path} item [{i}]", f"[{i}]", row
        return
    for lineno, row in _json_lines(path, text):
        yield f"{path} line {lineno}", lineno, row


def _first_json(text: str) -> Any:
    """The first JSON value of ``text`` (the first line of JSONL, or the whole document), else None."""
    stripped = text.lstrip()
    first = stripped.split("\n", 1)[0]
    try:
        return json.loads(first)
    except json.JSONDecodeError:
        pass
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        return None


# ---------------------------------------------------------------- detection


def _row_format(row: Any) -> str | None:
    if not isinstance(row, Mapping):
        return None
    if any(k in row for k in _RAGAS_MARKERS):
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
    text = _read_text(path)
    if not text.strip():
        raise ScoreInputError(f"{path}: the file is empty")
    first = _first_json(text)
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
        what = (
            "not JSON, JSON lines, CSV or Parquet"
            if first is None
            else f"a JSON {type(first).__name__} with keys {sorted(first)[:8]}"
            if isinstance(first, Mapping)
            else f"a JSON {type(first).__name__}"
        )
        raise ScoreInputError(
            f"{path}: cannot tell its format ({what}); expected the generic layout (question, answer, ...), "
            "an ALCE result file ({args, data: [{question, output, docs}]}), a RAGChecker file ({results: [...]}) "
            "or RAGAS columns; pass --format generic|alce|ragchecker|ragas"
        )
    return fmt


# ---------------------------------------------------------------- generic


def _items(rows: Iterator[tuple[str, int | str, Any]], path: Path) -> list[ScoreItem]:
    return [to_item(validate_record(row, where), where, file_line=(str(path), line)) for where, line, row in rows]


def read_generic(path: Path) -> ImportedFile:
    items = _items(_rows(path, _read_text(path)), path)
    return ImportedFile(str(path), "generic", items)


# ---------------------------------------------------------------- ALCE


def _alce_shorter(docs: Sequence[Mapping[str, Any]], ndoc: int | None, key: str) -> list[tuple[int, str]]:
    """ALCE's ``get_shorter_text``: ``(doc index, text shown)`` of the docs the reader saw (no mutation)."""
    out: list[tuple[int, str]] = []
    for i, doc in enumerate(docs):
        if key not in doc:
            if not out:  # ALCE: "at least provide one (using full text)"
                out.append((i, doc.get("text", "")))
            break
        if "irrelevant" in doc[key] or "Irrelevant" in doc[key]:
            continue
        out.append((i, doc[key]))
        if ndoc is not None and len(out) >= ndoc:
            break
    return out


def _alce_where(path: Path, i: int, key: str | None = None) -> str:
    return f"{path} data[{i}]" + (f": field {key!r}" if key else "")


def _alce_doc(path: Path, i: int, k: int, doc: Any) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping):
        raise ScoreInputError(f"{_alce_where(path, i)}: docs[{k}] must be an object {{title, text}}, got {doc!r:.60}")
    for key in ("title", "text"):
        if not isinstance(doc.get(key), str):
            raise ScoreInputError(
                f"{_alce_where(path, i)}: docs[{k}].{key} must be a string, got {type(doc.get(key)).__name__}"
            )
    return doc


def _alce_args(path: Path, top: Mapping[str, Any]) -> tuple[str | None, int | None, list[str]]:
    notes = []
    args = top.get("args")
    if args is None:
        notes.append(f"{path.name}: no `args`: every doc is taken as shown in full (`text`), in order")
        return None, None, notes
    if not isinstance(args, Mapping):
        raise ScoreInputError(f"{path}: field 'args' must be an object (ALCE's run arguments), got {args!r:.60}")
    shorter = args.get("use_shorter")
    if shorter not in (None, "summary", "extraction"):
        raise ScoreInputError(f"{path}: args.use_shorter is {shorter!r}; ALCE writes null, 'summary' or 'extraction'")
    ndoc = args.get("ndoc")
    if ndoc is not None and (isinstance(ndoc, bool) or not isinstance(ndoc, int) or ndoc < 0):
        raise ScoreInputError(f"{path}: args.ndoc is {ndoc!r}; expected a non-negative integer or null")
    if args.get("retrieve_in_all_docs"):
        notes.append(
            f"{path.name}: args.retrieve_in_all_docs is set: ALCE's eval.py then numbers citations over every doc "
            "in the file, rageval over the docs the reader saw (ndoc, use_shorter)"
        )
    if args.get("interactive"):
        notes.append(f"{path.name}: an interactive run: units are the docs of the initial prompt (ndoc, use_shorter)")
    return shorter, ndoc, notes


def _alce_item(path: Path, i: int, item: Any, shorter: str | None, ndoc: int | None) -> list[tuple[str | None, dict]]:
    """``(system, generic dict)`` per output sample of one ALCE item."""
    if not isinstance(item, Mapping):
        raise ScoreInputError(f"{_alce_where(path, i)}: expected an object, got {type(item).__name__}")
    for key in ("question", "output"):
        if key not in item or item[key] is None:
            raise ScoreInputError(f"{_alce_where(path, i)}: missing required field {key!r}")
    docs = item.get("docs") or []
    if not isinstance(docs, list):
        raise ScoreInputError(f"{_alce_where(path, i, 'docs')} must be a list, got {type(docs).__name__}")
    docs = [_alce_doc(path, i, k, d) for k, d in enumerate(docs)]
    doc_ids = [str(d["id"]) for d in docs if d.get("id") is not None]
    use_own_ids = len(doc_ids) == len(docs) and len(set(doc_ids)) == len(docs)
    sid = [str(d["id"]) if use_own_ids else f"doc{k + 1}" for k, d in enumerate(docs)]
    sources = [
        {"id": sid[k], "text": d["sent"] if "sent" in d else d["text"], "title": d["title"]} for k, d in enumerate(docs)
    ]
    if shorter:
        shown = _alce_shorter(docs, ndoc, shorter)
    else:
        shown = [(k, d["text"]) for k, d in enumerate(docs[:ndoc] if ndoc is not None else docs)]
    units = [{"text": text, "title": docs[k]["title"], "source_ids": [sid[k]]} for k, text in shown]
    gold: dict[str, Any] = {}
    if item.get("qa_pairs") is not None:
        gold["qa_pairs"] = item["qa_pairs"]
    answer = item.get("answer")
    if isinstance(answer, str):
        gold["reference"] = answer
    elif isinstance(answer, list) and all(isinstance(a, str) for a in answer):
        gold["answers"] = answer
    qid = next((item[k] for k in _ALCE_ID_KEYS if item.get(k) is not None), None)
    outputs = item["output"]
    if isinstance(outputs, str):
        outputs_sys: list[tuple[str | None, Any]] = [(None, outputs)]
    elif isinstance(outputs, list):
        outputs_sys = [(f"sample{j + 1}", o) for j, o in enumerate(outputs)]
    else:
        raise ScoreInputError(
            f"{_alce_where(path, i, 'output')} must be a string (or a list of samples), got {type(outputs).__name__}"
        )
    out = []
    for system, text in outputs_sys:
        if not isinstance(text, str):
            raise ScoreInputError(f"{_alce_where(path, i, 'output')}: a sample is {type(text).__name__}, not a string")
        row = {"question": item["question"], "answer": text, "units": units, "sources": sources, **gold}
        if qid is not None:
            row["id"] = qid if isinstance(qid, (str, int)) and not isinstance(qid, bool) else str(qid)
        out.append((system, row))
    return out


def read_alce(path: Path) -> ImportedFile:
    top = _whole_json(path, _read_text(path))
    if not isinstance(top, Mapping) or not isinstance(top.get("data"), list):
        raise ScoreInputError(f"{path}: an ALCE result file is a JSON object with a `data` list (run.py's output)")
    shorter, ndoc, notes = _alce_args(path, top)
    items: list[ScoreItem] = []
    for i, raw in enumerate(top["data"]):
        where = _alce_where(path, i)
        for system, row in _alce_item(path, i, raw, shorter, ndoc):
            it = to_item(validate_record(row, where), where, file_line=(str(path), f"data[{i}]"))
            items.append(_with_system(it, system))
    meta = {k: top[k] for k in ("total_cost", "azure_filter_fail") if k in top}
    meta.update({"use_shorter": shorter, "ndoc": ndoc})
    if top.get("azure_filter_fail"):
        notes.append(
            f"{path.name}: azure_filter_fail = {top['azure_filter_fail']}: the API filtered that many outputs; "
            "ALCE's file does not say which, so they are scored as written"
        )
    if "total_cost" in top:
        notes.append(f"{path.name}: total_cost = {top['total_cost']} (as recorded by ALCE's run.py)")
    if shorter:
        notes.append(
            f"{path.name}: units are the docs' `{shorter}` (what the reader saw); sources are the docs' `text`, "
            "which ALCE's eval.py judges against: ALCE's citation scores are the grounded ones here"
        )
    return ImportedFile(str(path), "alce", items, notes, meta)


def _with_system(item: ScoreItem, system: str | None) -> ScoreItem:
    if system is None:
        return item
    from dataclasses import replace

    return replace(item, system=system)


# ---------------------------------------------------------------- RAGChecker


def read_ragchecker(path: Path) -> ImportedFile:
    top = _whole_json(path, _read_text(path))
    if not isinstance(top, Mapping) or not isinstance(top.get("results"), list):
        raise ScoreInputError(f"{path}: a RAGChecker file is a JSON object with a `results` list")
    items = []
    for i, r in enumerate(top["results"]):
        where = f"{path} results[{i}]"
        if not isinstance(r, Mapping):
            raise ScoreInputError(f"{where}: expected an object, got {type(r).__name__}")
        for key in ("query", "response"):
            if key not in r or r[key] is None:
                raise ScoreInputError(f"{where}: missing required field {key!r}")
        ctx = r.get("retrieved_context") or []
        if not isinstance(ctx, list):
            raise ScoreInputError(f"{where}: field 'retrieved_context' must be a list of {{doc_id, text}}")
        contexts, retrieved = [], []
        for k, c in enumerate(ctx):
            if not isinstance(c, Mapping) or not isinstance(c.get("text"), str):
                raise ScoreInputError(f"{where}: retrieved_context[{k}] must be an object with a string `text`")
            contexts.append(c["text"])
            if c.get("doc_id") is not None:
                retrieved.append(str(c["doc_id"]))
        row: dict[str, Any] = {"question": r["query"], "answer": r["response"], "contexts": contexts}
        if r.get("query_id") is not None:
            row["id"] = r["query_id"]
        if isinstance(r.get("gt_answer"), str):
            row["reference"] = r["gt_answer"]
        if retrieved and len(retrieved) == len(contexts):
            row["retrieved"] = list(dict.fromkeys(retrieved))
        items.append(to_item(validate_record(row, where), where, file_line=(str(path), f"results[{i}]")))
    return ImportedFile(str(path), "ragchecker", items)


# ---------------------------------------------------------------- RAGAS-style columns


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
    """A list-valued cell as written by CSV exports: JSON, a Python list repr, or one plain string."""
    if not isinstance(value, str):
        return value
    s = value.strip()
    if s.startswith("["):
        try:
            return json.loads(s)
        except json.JSONDecodeError:
            pass
        try:
            got = ast.literal_eval(s)
            if isinstance(got, (list, tuple)):
                return list(got)
        except (ValueError, SyntaxError):
            pass
    return [value] if value else []


def _columns(available: Sequence[str], mapping: Mapping[str, str], where: str) -> dict[str, str]:
    cols: dict[str, str] = {}
    for name, candidates in RAGAS_COLUMNS.items():
        if name in mapping:
            if mapping[name] not in available:
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


def _ragas_row(row: Mapping[str, Any], cols: Mapping[str, str], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, col in cols.items():
        v = row.get(col)
        if v is None or (isinstance(v, float) and math.isnan(v)):  # absent / NaN cell
            continue
        if name == "contexts":
            v = _list_cell(v)
            if isinstance(v, list):
                v = [str(c) if not isinstance(c, (str, dict)) else c for c in v]
        elif name == "reference":
            v = _list_cell(v) if isinstance(v, str) and v.strip().startswith("[") else v
            if isinstance(v, list):
                v = [x for x in v if isinstance(x, str) and x.strip()]
                if not v:
                    continue
                v = v if len(v) > 1 else v[0]
        elif name == "answers":
            v = _list_cell(v)
        elif name == "id" and isinstance(v, float) and v.is_integer():
            v = int(v)
        out[name] = v
    return out


def _table_rows(source: str, split: str | None) -> tuple[list[str], Iterator[tuple[str, int | str, Mapping]]]:
    if source.startswith(HF_PREFIX):
        return _hf_rows(source[len(HF_PREFIX) :], split)
    path = Path(source)
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        try:
            import pyarrow.parquet as pq

            table = pq.read_table(path)
        except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
            raise ScoreInputError(f"{path}: not a readable Parquet file ({err})") from None
        rows = table.to_pylist()
        return list(table.column_names), ((f"{path} row {i + 1}", i + 1, r) for i, r in enumerate(rows))
    if suffix in (".csv", ".tsv"):
        text = _read_text(path)
        csv.field_size_limit(sys.maxsize)
        reader = csv.DictReader(text.splitlines(), delimiter="\t" if suffix == ".tsv" else ",")
        header = list(reader.fieldnames or [])
        if not header:
            raise ScoreInputError(f"{path}: the CSV file has no header row")
        # line numbers: the header is line 1 (multi-line cells shift them; the row number is exact)
        return header, ((f"{path} row {i + 1}", i + 1, r) for i, r in enumerate(reader))
    text = _read_text(path)
    rows = list(_rows(path, text))
    header = list(dict.fromkeys(k for _, _, r in rows if isinstance(r, Mapping) for k in r))
    for where, _, r in rows:
        if not isinstance(r, Mapping):
            raise ScoreInputError(f"{where}: expected a JSON object, got {type(r).__name__}")
    return header, iter(rows)


def _hf_rows(dataset_id: str, split: str | None):
    try:
        import datasets
    except ImportError as err:  # pragma: no cover - a dependency
        raise ScoreInputError(f"hf:{dataset_id}: the `datasets` package is needed ({err})") from None
    try:
        ds = datasets.load_dataset(dataset_id, split=split)
    except Exception as err:  # noqa: BLE001 - datasets raises many kinds (offline, missing, bad split): one line
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ScoreInputError(
            f"hf:{dataset_id}: datasets.load_dataset failed ({type(err).__name__}: {msg:.200}); "
            "check the id and --split, and that the dataset is cached when offline"
        ) from None
    if isinstance(ds, datasets.DatasetDict):
        if len(ds) != 1:
            raise ScoreInputError(f"hf:{dataset_id}: has splits {sorted(ds)}; choose one with --split")
        ds = next(iter(ds.values()))
    return list(ds.column_names), ((f"hf:{dataset_id} row {i + 1}", i + 1, r) for i, r in enumerate(ds))


def read_ragas(source: str, mapping: Mapping[str, str] | None = None, split: str | None = None) -> ImportedFile:
    header, rows = _table_rows(source, split)
    cols = _columns(header, mapping or {}, source)
    items = []
    for where, line, row in rows:
        generic = _ragas_row(row, cols, where)
        items.append(to_item(validate_record(generic, where), where, file_line=(source, line)))
    used = ", ".join(f"{k}←{v}" for k, v in cols.items())
    return ImportedFile(source, "ragas", items, [f"{Path(source).name}: columns {used}"], {"columns": dict(cols)})


# ---------------------------------------------------------------- entry point


def read_input(
    source: str, fmt: str = "auto", *, mapping: Mapping[str, str] | None = None, split: str | None = None
) -> ImportedFile:
    """Read one input (a path, or ``hf:<id>``) in format ``fmt`` (``auto``: :func:`detect`)."""
    if fmt not in ("auto", *FORMATS):
        hint = did_you_mean(fmt, FORMATS) or f" Formats: auto, {', '.join(FORMATS)}."
        raise ScoreInputError(f"unknown format {fmt!r}.{hint}")
    if not source.startswith(HF_PREFIX):
        path = Path(source)
        if not path.is_file():
            raise ScoreInputError(
                f"{source}: no such file" + (" (a Hugging Face dataset is written hf:<id>)" if "/" in source else "")
            )
    if fmt == "auto":
        fmt = detect(source)
    if mapping and fmt != "ragas":
        raise ScoreInputError(f"{source}: --map applies to RAGAS-style columns (--format ragas), not to {fmt}")
    if source.startswith(HF_PREFIX) and fmt != "ragas":
        raise ScoreInputError(f"{source}: a Hugging Face dataset is read as RAGAS-style columns (--format ragas)")
    if fmt == "ragas":
        return read_ragas(source, mapping, split)
    return {"generic": read_generic, "alce": read_alce, "ragchecker": read_ragchecker}[fmt](Path(source))
