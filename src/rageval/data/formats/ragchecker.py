"""RAGChecker input files: ``{results: [{query_id, query, response, gt_answer, retrieved_context
[{doc_id, text}]}]}``; the retrieved passages are the contexts (each its own source), their
``doc_id`` s the retrieved ids.  RAGChecker's output files (``checking_outputs.json``) add its own claims,
checks and metrics: its claims are read (``response_claims`` as the answer's claims, which claim support
checks; ``gt_answer_claims`` as the gold ``claims``, which claims recall checks; a claim given as a
``[subject, relation, object]`` triplet is its three parts joined by spaces), its checks and metrics
(:data:`RAGCHECKER_OWN`) are read past, and the summary notes it.  ``gt_answer`` is the reference, and also
the short ``answers`` when it is at most :data:`~rageval.data.formats.common.SHORT_GOLD_TOKENS` tokens long."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rageval.data.formats.common import ImportedFile, read_text, short_gold, short_gold_note, whole_json
from rageval.data.formats.layout import ScoreInputError, to_item, validate_record
from rageval.data.formats.registry import Peek

__all__ = ["RAGCHECKER_CLAIMS", "RAGCHECKER_OWN", "read_ragchecker", "sniff_ragchecker"]

#: RAGChecker's claims, read: its field -> the generic layout's
RAGCHECKER_CLAIMS = {"response_claims": "answer_claims", "gt_answer_claims": "claims"}
#: the fields RAGChecker's checker adds to a result besides its claims (its entailment checks, its metrics): not read
RAGCHECKER_OWN = (
    "answer2response",
    "response2answer",
    "retrieved2response",
    "retrieved2answer",
    "metrics",
)


def sniff_ragchecker(peek: Peek) -> bool:
    """A RAGChecker file: a JSON object with a ``results`` list."""
    return isinstance(peek.document, Mapping) and isinstance(peek.document.get("results"), list)


def read_ragchecker(path: Path) -> ImportedFile:
    """The items of a RAGChecker input file, one per result."""
    top = whole_json(path, read_text(path))
    if not isinstance(top, Mapping) or not isinstance(top.get("results"), list):
        raise ScoreInputError(f"{path}: a RAGChecker file is a JSON object with a `results` list")
    items, short = [], 0
    own: dict[str, int] = {}
    for i, r in enumerate(top["results"]):
        where = f"{path} results[{i}]"
        if not isinstance(r, Mapping):
            raise ScoreInputError(f"{where}: expected an object, got {type(r).__name__}")
        for key in RAGCHECKER_OWN:
            if r.get(key) is not None:
                own[key] = own.get(key, 0) + 1
        row = _row(r, where)
        short += "answers" in row
        items.append(to_item(validate_record(row, where), where, file_line=(str(path), f"results[{i}]")))
    notes = _own_notes(path, top, own) + short_gold_note(path.name, "gt_answer", short, len(items), "results")
    return ImportedFile(str(path), "ragchecker", items, notes)


def _row(r: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The generic-layout dict of one result: its query, response, contexts, reference and claims."""
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
    if r.get("gt_answer") is not None:
        row["reference"] = _references(r["gt_answer"], where)
        if short := short_gold(row["reference"]):  # also the short answers (docs/score.md#peers-short-gold-answers)
            row["answers"] = short
    for key, to in RAGCHECKER_CLAIMS.items():
        if r.get(key) is not None:
            row[to] = _claims(r[key], f"{where} field {key!r}")
    if retrieved and len(retrieved) == len(contexts):
        row["retrieved"] = list(dict.fromkeys(retrieved))
    return row


def _references(gt: Any, where: str) -> str | list[str]:
    """``gt_answer``: one reference, or several (each scored, the best kept); anything else is refused."""
    if isinstance(gt, str) or (isinstance(gt, list) and all(isinstance(g, str) for g in gt)):
        return gt
    raise ScoreInputError(f"{where}: field 'gt_answer' must be a string or a list of strings, got {type(gt).__name__}")


def _claims(value: Any, where: str) -> list[str]:
    """RAGChecker's claims as text: a string stays, a ``[subject, relation, object]`` triplet (any list of
    strings) is its parts joined by spaces; anything else is refused."""
    if not isinstance(value, list):
        raise ScoreInputError(f"{where}: expected a list of claims, got {type(value).__name__}")
    out = []
    for j, c in enumerate(value):
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list) and all(isinstance(x, str) for x in c):
            out.append(" ".join(x.strip() for x in c if x.strip()))
        else:
            raise ScoreInputError(f"{where}[{j}]: a claim is a string or a list of strings (a triplet), got {c!r:.60}")
    return out


def _own_notes(path: Path, top: Mapping[str, Any], own: Mapping[str, int]) -> list[str]:
    """The note saying which of RAGChecker's own fields the file carries and that none is read."""
    fields = [f"{k} ({n} results)" for k, n in own.items()]
    if isinstance(top.get("metrics"), Mapping):
        fields.append("the file's metrics")
    if not fields:
        return []
    note = (
        f"{path.name}: RAGChecker's own checks and metrics are not read ({', '.join(fields)}): rageval judges "
        "each claim against the retrieved contexts itself (claim_support, with the file's response_claims where "
        "it has them; claims_recall against its gt_answer_claims); a response without [k] citations has no "
        "citation scores"
    )
    return [note]
