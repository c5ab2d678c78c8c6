"""FlashRAG's saved runs: ``intermediate_data.json`` (``Dataset.save``: a JSON array of items), or the
same items one per line (JSONL).

An item is ``{id, question, golden_answers, metadata?, output: {retrieval_result: [{id, contents}],
refine_result?, prompt, pred, metric_score?}}``:

* ``output.retrieval_result`` — the retrieved documents — are the **sources** (``contents`` is
  ``"title\\ntext"``: the first line the title, its quotes dropped, the rest the text);
* without ``refine_result`` the reader saw every retrieved document: each is a unit declaring
  its document (emitted = grounded);
* with ``output.refine_result`` (the refiner's text, which FlashRAG's pipeline hands the reader
  in place of the documents) that text is the **one unit the reader saw**, declaring nothing:
  grounded scores re-attribute it to the retrieved documents (the note suggests ``--grounding union``
  for claim support: a refined text drawn from several documents is supported by none of them alone);
* ``output.pred`` is the answer, ``golden_answers`` the short gold answers;
* FlashRAG's own ``metric_score`` and the ``prompt`` are not read (noted).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rageval.data.formats.common import ImportedFile, json_rows, read_text
from rageval.data.formats.layout import ScoreInputError, to_item, validate_record
from rageval.data.formats.registry import Peek

__all__ = ["is_flashrag_item", "read_flashrag", "sniff_flashrag"]


def is_flashrag_item(row: Any) -> bool:
    """Whether ``row`` is one of FlashRAG's saved items: an ``output`` object with ``pred`` or
    ``retrieval_result``, beside ``question`` (format detection)."""
    if not isinstance(row, Mapping) or "question" not in row:
        return False
    out = row.get("output")
    return isinstance(out, Mapping) and ("pred" in out or "retrieval_result" in out)


def sniff_flashrag(peek: Peek) -> bool:
    """FlashRAG's saved run: a first row that :func:`is_flashrag_item`."""
    return is_flashrag_item(peek.row)


def _document(where: str, k: int, doc: Any) -> dict[str, Any]:
    """One retrieved document as a source: ``contents`` split into title (first line) and text."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("contents"), str):
        raise ScoreInputError(f"{where}: output.retrieval_result[{k}] must be an object with a string `contents`")
    title, _, text = doc["contents"].partition("\n")
    if not text:  # a single line: no title
        title, text = "", title
    doc_id = doc.get("id")
    sid = str(doc_id) if isinstance(doc_id, (str, int)) and not isinstance(doc_id, bool) else f"doc{k + 1}"
    return {"id": sid, "title": title.strip().strip('"') or None, "text": text}


def _sources(where: str, out: Mapping[str, Any]) -> list[dict[str, Any]]:
    docs = out.get("retrieval_result") or []
    if not isinstance(docs, list):
        raise ScoreInputError(f"{where}: output.retrieval_result must be a list of {{id, contents}}")
    sources = [_document(where, k, d) for k, d in enumerate(docs)]
    ids = [s["id"] for s in sources]
    if len(set(ids)) != len(ids):  # a document retrieved twice: number them instead
        for k, s in enumerate(sources):
            s["id"] = f"doc{k + 1}"
    return sources


def _row(where: str, item: Any) -> tuple[dict[str, Any], bool]:
    """The generic-layout dict of one item, and whether it carried a ``refine_result``."""
    if not isinstance(item, Mapping):
        raise ScoreInputError(f"{where}: expected an object, got {type(item).__name__}")
    out = item.get("output")
    if not isinstance(out, Mapping):
        raise ScoreInputError(f"{where}: missing the `output` object FlashRAG saves (pred, retrieval_result)")
    if not isinstance(out.get("pred"), str):
        raise ScoreInputError(f"{where}: field 'output.pred' must be a string (the generated answer)")
    sources = _sources(where, out)
    refined = out.get("refine_result")
    if refined is not None and not isinstance(refined, str):
        raise ScoreInputError(f"{where}: field 'output.refine_result' must be a string (the refiner's text)")
    row: dict[str, Any] = {"question": item.get("question"), "answer": out["pred"]}
    if sources:
        row["sources"] = sources
        if refined is not None:
            row["units"] = [{"text": refined}]
        else:
            row["units"] = [{"text": s["text"], "title": s["title"], "source_ids": [s["id"]]} for s in sources]
    elif refined is not None:
        row["contexts"] = [refined]
    if item.get("id") is not None:
        row["id"] = item["id"] if isinstance(item["id"], (str, int)) else str(item["id"])
    gold = item.get("golden_answers")
    if isinstance(gold, str):
        gold = [gold]
    if isinstance(gold, list) and [g for g in gold if isinstance(g, str) and g.strip()]:
        row["answers"] = [str(g) for g in gold]
    return row, refined is not None


def read_flashrag(path: Path) -> ImportedFile:
    """The items of a FlashRAG ``intermediate_data.json`` (or its JSONL form), one per item."""
    items, refined, scored = [], 0, 0
    for where, line, raw in json_rows(path, read_text(path)):
        row, has_refine = _row(where, raw)
        refined += has_refine
        scored += isinstance(raw.get("output", {}).get("metric_score"), Mapping)
        items.append(to_item(validate_record(row, where), where, file_line=(str(path), line)))
    notes = [
        f"{path.name}: FlashRAG items: output.pred is the answer, golden_answers the gold, "
        "output.retrieval_result the sources"
        + (
            f"; {refined} of {len(items)} carry output.refine_result, the refiner's text the reader saw: "
            "one unit without provenance, re-attributed to the retrieved documents for the grounded scores; "
            "a refined text drawn from several documents may be supported by none of them alone: "
            "`--grounding union` (suite: attribution.grounding) grounds claim support in its top-10 "
            "recovery candidates together"
            if refined
            else "; no refine_result: the reader saw every retrieved document (emitted = grounded)"
        )
    ]
    if scored:
        notes.append(f"{path.name}: FlashRAG's own output.metric_score ({scored} items) is not read")
    return ImportedFile(str(path), "flashrag", items, notes, {"refined": refined})
