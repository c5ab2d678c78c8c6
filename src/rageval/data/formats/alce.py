"""ALCE result files (``run.py``'s output): ``{args, data: [{question, output, docs, ...}]}``.

``args`` decides which text the reader saw: ``use_shorter`` (the docs' ``summary``
or ``extraction`` instead of their ``text``, ALCE's ``get_shorter_text``) and
``ndoc``; those texts are the units, the docs' ``text`` the sources.  A list of
``output`` samples gives one system per sample (``sample1``, ``sample2``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rageval.data.formats.common import ImportedFile, read_text, whole_json
from rageval.data.formats.layout import ScoreInputError, ScoreItem, to_item, validate_record
from rageval.data.formats.registry import Peek

__all__ = ["ALCE_DATASETS", "alce_dataset", "read_alce", "sniff_alce"]

_ALCE_ID_KEYS = ("id", "sample_id", "question_id", "qid")
#: ALCE's three datasets, as its eval.py tells them apart (QAMPARI by the file's name; ELI5 by ``claims``)
ALCE_DATASETS = ("asqa", "qampari", "eli5")


def sniff_alce(peek: Peek) -> bool:
    """An ALCE result file: a JSON object whose ``data`` list starts with an item carrying ``output``."""
    doc = peek.document
    data = doc.get("data") if isinstance(doc, Mapping) else None
    return isinstance(data, list) and bool(data) and isinstance(data[0], Mapping) and "output" in data[0]


def alce_dataset(args: Any, data: Sequence[Any]) -> tuple[str | None, str]:
    """Which ALCE dataset a result file holds, and how that was told: ``args.dataset_name`` first, else the
    items' own fields (``claims``: ELI5; ``answers`` as lists of aliases: QAMPARI; ``qa_pairs``: ASQA)."""
    name = str(args.get("dataset_name") or "").lower() if isinstance(args, Mapping) else ""
    for d in ALCE_DATASETS:
        if d in name:
            return d, f"args.dataset_name = {args['dataset_name']!r}"
    first = next((it for it in data if isinstance(it, Mapping)), {})
    answers = first.get("answers")
    if first.get("claims") is not None:
        return "eli5", "its items' `claims`"
    if isinstance(answers, list) and answers and all(isinstance(a, list) for a in answers):
        return "qampari", "its items' `answers` (lists of aliases)"
    if first.get("qa_pairs") is not None:
        return "asqa", "its items' `qa_pairs`"
    return None, "neither args.dataset_name nor its items' fields"


def _dataset_notes(name: str, dataset: str | None, how: str) -> list[str]:
    """Which of ALCE's eval.py rules apply to a file of ``dataset``, and what rageval does not compute."""
    told = f"{name}: ALCE {dataset.upper()} file (told by {how})" if dataset else f"{name}: ALCE file ({how})"
    first = (
        f"{told}: ALCE's eval.py rules apply when every input is an ALCE file (--citations auto): the output's "
        "first line, ALCE's citation removal and sentence splitting, its citation cap (--max-citations, 3), "
        "str-EM over qa_pairs, ROUGE-Lsum (rouge_lsum, against ASQA's two annotations' long answers, else "
        "`answer`) and length (answer_length); MAUVE is not computed (it needs the gpt2-large featurizer and "
        "a GPU: not offline)"
    )
    notes = [first]
    if dataset == "qampari":
        notes.append(
            f"{name}: QAMPARI's rules apply: precision, recall, recall-top-5, F1 and F1-top-5 over `answers` "
            "(qampari_f1, the comma-split normalized output), and in ALCE mode the citation sentences are "
            "ALCE's: 'question + piece' per comma-separated piece; no ROUGE (no reference, as ALCE skips it); "
            "str-EM is undefined (no qa_pairs; ALCE's eval.py reports 0); --cot is not applied"
        )
    if dataset == "eli5":
        notes.append(
            f"{name}: ELI5's claims recall applies (claims_recall, ALCE's --claims_nli: each claim judged "
            "against the output with citations removed, through this run's judge instead of ALCE's TRUE model)"
        )
    return notes


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


def _alce_docs(path: Path, i: int, item: Any) -> list[Mapping[str, Any]]:
    """The item's docs, checked, after checking the item is an object with a question and an output."""
    if not isinstance(item, Mapping):
        raise ScoreInputError(f"{_alce_where(path, i)}: expected an object, got {type(item).__name__}")
    for key in ("question", "output"):
        if key not in item or item[key] is None:
            raise ScoreInputError(f"{_alce_where(path, i)}: missing required field {key!r}")
    docs = item.get("docs") or []
    if not isinstance(docs, list):
        raise ScoreInputError(f"{_alce_where(path, i, 'docs')} must be a list, got {type(docs).__name__}")
    return [_alce_doc(path, i, k, d) for k, d in enumerate(docs)]


def _alce_source_ids(docs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The docs' own ids when every doc has one and they are distinct, else ``doc1, doc2, ...``."""
    doc_ids = [str(d["id"]) for d in docs if d.get("id") is not None]
    use_own_ids = len(doc_ids) == len(docs) and len(set(doc_ids)) == len(docs)
    return [str(d["id"]) if use_own_ids else f"doc{k + 1}" for k, d in enumerate(docs)]


def _alce_units(
    docs: Sequence[Mapping[str, Any]], sid: Sequence[str], shorter: str | None, ndoc: int | None
) -> list[dict[str, Any]]:
    """The units the reader saw: the first ``ndoc`` docs' text, or their ``shorter`` text (ALCE's rules)."""
    if shorter:
        shown = _alce_shorter(docs, ndoc, shorter)
    else:
        shown = [(k, d["text"]) for k, d in enumerate(docs[:ndoc] if ndoc is not None else docs)]
    return [{"text": text, "title": docs[k]["title"], "source_ids": [sid[k]]} for k, text in shown]


def _alce_gold(item: Mapping[str, Any], dataset: str | None = None) -> dict[str, Any]:
    """The gold ALCE's eval.py reads: ``qa_pairs`` (str-EM); the long reference (ROUGE-Lsum) = ASQA's first two
    ``annotations``' ``long_answer`` (as ALCE reads them), else ``answer`` as a string (a list of strings: short
    answers); QAMPARI's ``answers`` (lists of aliases) as ``answer_lists``; ELI5's ``claims``."""
    gold: dict[str, Any] = {}
    if item.get("qa_pairs") is not None:
        gold["qa_pairs"] = item["qa_pairs"]
    answer = item.get("answer")
    if isinstance(answer, str) and dataset != "qampari":
        gold["reference"] = answer
    elif isinstance(answer, list) and all(isinstance(a, str) for a in answer):
        gold["answers"] = answer
    notes = item.get("annotations")
    if isinstance(notes, list) and notes:
        longs = [a.get("long_answer") for a in notes[:2] if isinstance(a, Mapping)]
        if longs and all(isinstance(x, str) for x in longs):
            gold["reference"] = longs
    answers = item.get("answers")
    if isinstance(answers, list) and answers and all(isinstance(a, list) for a in answers):
        gold["answer_lists"] = answers
    if item.get("claims") is not None:
        gold["claims"] = item["claims"]
    return gold


def _alce_outputs(path: Path, i: int, outputs: Any) -> list[tuple[str | None, str]]:
    """``(system, text)`` per output sample: one string (no system), or a list (``sample1``, ...)."""
    if isinstance(outputs, str):
        outputs_sys: list[tuple[str | None, Any]] = [(None, outputs)]
    elif isinstance(outputs, list):
        outputs_sys = [(f"sample{j + 1}", o) for j, o in enumerate(outputs)]
    else:
        raise ScoreInputError(
            f"{_alce_where(path, i, 'output')} must be a string (or a list of samples), got {type(outputs).__name__}"
        )
    for _, text in outputs_sys:
        if not isinstance(text, str):
            raise ScoreInputError(f"{_alce_where(path, i, 'output')}: a sample is {type(text).__name__}, not a string")
    return outputs_sys


def _alce_id(item: Mapping[str, Any]) -> Any:
    """The first id the item carries (``id``, ``sample_id``, ...), a string unless a str or int; else None."""
    qid = next((item[k] for k in _ALCE_ID_KEYS if item.get(k) is not None), None)
    if qid is None:
        return None
    return qid if isinstance(qid, (str, int)) and not isinstance(qid, bool) else str(qid)


def _alce_item(
    path: Path, i: int, item: Any, shorter: str | None, ndoc: int | None, dataset: str | None = None
) -> list[tuple[str | None, dict]]:
    """``(system, generic dict)`` per output sample of one ALCE item."""
    docs = _alce_docs(path, i, item)
    sid = _alce_source_ids(docs)
    sources = [
        {"id": sid[k], "text": d["sent"] if "sent" in d else d["text"], "title": d["title"]} for k, d in enumerate(docs)
    ]
    units = _alce_units(docs, sid, shorter, ndoc)
    gold = _alce_gold(item, dataset)
    qid = _alce_id(item)
    out = []
    for system, text in _alce_outputs(path, i, item["output"]):
        row = {"question": item["question"], "answer": text, "units": units, "sources": sources, **gold}
        if qid is not None:
            row["id"] = qid
        out.append((system, row))
    return out


def read_alce(path: Path) -> ImportedFile:
    """The items of an ALCE result file (one per item and output sample) and notes on what ``args`` says."""
    top = whole_json(path, read_text(path))
    if not isinstance(top, Mapping) or not isinstance(top.get("data"), list):
        raise ScoreInputError(f"{path}: an ALCE result file is a JSON object with a `data` list (run.py's output)")
    shorter, ndoc, notes = _alce_args(path, top)
    dataset, how = alce_dataset(top.get("args"), top["data"])
    notes += _dataset_notes(path.name, dataset, how)
    items: list[ScoreItem] = []
    for i, raw in enumerate(top["data"]):
        where = _alce_where(path, i)
        for system, row in _alce_item(path, i, raw, shorter, ndoc, dataset):
            it = to_item(validate_record(row, where), where, file_line=(str(path), f"data[{i}]"))
            items.append(_with_system(it, system))
    meta = {k: top[k] for k in ("total_cost", "azure_filter_fail") if k in top}
    meta.update({"use_shorter": shorter, "ndoc": ndoc, "dataset": dataset})
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
    return replace(item, system=system)
