"""Validation of the attribution modules' inputs (docs/design.md#module-interface).

``predictions[q]``: the answer with ``[k]`` citations.
``units[q]``: list of ``{"text": str, "source_ids": list[str] | None, "title": str (optional)}``;
unit ``k`` of the prompt is ``units[q][k-1]``.
``sources[q]``: list of ``{"id": str, "text": str, "title": str (optional), "doc_id": str (optional)}``;
a source's document is its ``doc_id``, else its id up to the last ``.`` (``d3.s2`` -> ``d3``), else its id.
A :class:`~rageval.types.Unit` or :class:`~rageval.types.SourceSnippet` (checked when made) stands for its dict.

Errors name the field, the question index and what was expected.  A declared
source id missing from that question's sources is an error (never a silently
empty premise).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval.diagnostics._common import check_keys, check_list, check_same_length, check_str
from rageval.types import SourceSnippet, Unit

__all__ = ["PreparedUnit", "PreparedSource", "PreparedQuestion", "prepare_inputs", "UNIT_KEYS", "SOURCE_KEYS"]

#: the keys a unit dict may have; any other is an error naming it (a typo must not pass as "no provenance")
UNIT_KEYS = ("text", "source_ids", "title")
#: the keys a source dict may have (``position`` and ``doc_rank``, as in a record's sources, are not used)
SOURCE_KEYS = ("id", "text", "title", "doc_id", "position", "doc_rank")


@dataclass(frozen=True)
class PreparedUnit:
    text: str
    source_ids: tuple[str, ...] | None
    title: str | None


@dataclass(frozen=True)
class PreparedSource:
    id: str
    text: str
    title: str | None
    doc: str = ""  # its document (grounded premises write one document's snippets together)


@dataclass
class PreparedQuestion:
    index: int
    prediction: str
    units: list[PreparedUnit]
    sources: list[PreparedSource]
    by_id: dict[str, PreparedSource]
    position: dict[str, int] = field(default_factory=dict)  # source id -> index in ``sources`` (source order)
    list_question: str | None = None  # a list question (QAMPARI): ALCE's citation sentences are its pieces

    def parse(self, opts: Any):
        """This question's answer parsed with the options' citation rules (one parse for every part)."""
        return opts.parse(self.prediction, len(self.units), self.list_question)

    def declares_any(self) -> bool:
        return any(u.source_ids is not None for u in self.units)


def _opt_str(d: Mapping, key: str, where: str) -> str | None:
    v = d.get(key)
    if v is None:
        return None
    if not isinstance(v, str):
        raise TypeError(f"{where}.{key} must be a string or absent, got {type(v).__name__}: {v!r:.80}")
    return v


def _unit(u: Any, q: int, k: int) -> PreparedUnit:
    if isinstance(u, Unit):  # checked when it was made (the runner's own units)
        return PreparedUnit(text=u.text, source_ids=u.source_ids, title=u.title)
    where = f"units[{q}][{k}]"
    if isinstance(u, str):
        raise TypeError(f"{where} must be a dict {{'text': str, 'source_ids': list[str] | None}}, got a string")
    if not isinstance(u, Mapping):
        raise TypeError(
            f"{where} must be a dict {{'text': str, 'source_ids': list[str] | None}}, got {type(u).__name__}"
        )
    if "text" not in u:
        raise ValueError(f"{where} has no 'text'")
    check_keys(u, UNIT_KEYS, where)
    text = check_str(u["text"], f"{where}.text")
    ids = u.get("source_ids")
    if ids is not None:
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
            raise TypeError(
                f"{where}.source_ids must be a list of source ids or None, got {type(ids).__name__}: {ids!r:.80}"
            )
        ids = tuple(ids)
        if not ids:
            raise ValueError(
                f"{where}.source_ids=[] is ambiguous: use None for 'declares no provenance' or list the source ids"
            )
        for j, x in enumerate(ids):
            if not isinstance(x, str):
                raise TypeError(f"{where}.source_ids[{j}] must be a string, got {type(x).__name__}: {x!r:.80}")
    return PreparedUnit(text=text, source_ids=ids, title=_opt_str(u, "title", where))


def _source(s: Any, q: int, j: int) -> PreparedSource:
    if isinstance(s, SourceSnippet):  # checked when it was made (the runner's own sources)
        return PreparedSource(id=s.id, text=s.text, title=s.title, doc=s.doc_id or s.id.rpartition(".")[0] or s.id)
    where = f"sources[{q}][{j}]"
    if not isinstance(s, Mapping):
        raise TypeError(f"{where} must be a dict {{'id': str, 'text': str}}, got {type(s).__name__}")
    for key in ("id", "text"):
        if key not in s:
            raise ValueError(f"{where} has no {key!r}")
    check_keys(s, SOURCE_KEYS, where)
    sid = check_str(s["id"], f"{where}.id")
    if not sid:
        raise ValueError(f"{where}.id is empty")
    doc = _opt_str(s, "doc_id", where) or sid.rpartition(".")[0] or sid
    return PreparedSource(
        id=sid, text=check_str(s["text"], f"{where}.text"), title=_opt_str(s, "title", where), doc=doc
    )


def prepare_inputs(
    predictions: Any, units: Any, sources: Any, list_questions: Sequence[str | None] | None = None
) -> list[PreparedQuestion]:
    """Check the three aligned lists and return one :class:`PreparedQuestion` per question.

    ``list_questions``: per question, its text when it is a list question (QAMPARI; ALCE's citation sentences
    are then the answer's comma-split pieces, in ALCE mode), else None; None: no list question."""
    predictions = check_list(predictions, "predictions")
    units = check_list(units, "units")
    sources = check_list(sources, "sources")
    check_same_length(predictions=predictions, units=units, sources=sources)
    if list_questions is not None:
        check_same_length(predictions=predictions, list_questions=list(list_questions))
    out = []
    for q, (pred, us, ss) in enumerate(zip(predictions, units, sources)):
        pred = check_str(pred, "predictions", q)
        if isinstance(us, (str, bytes, Mapping)) or not isinstance(us, Sequence):
            raise TypeError(f"units[{q}] must be a list of unit dicts, got {type(us).__name__}")
        if isinstance(ss, (str, bytes, Mapping)) or not isinstance(ss, Sequence):
            raise TypeError(f"sources[{q}] must be a list of source dicts, got {type(ss).__name__}")
        pu = [_unit(u, q, k) for k, u in enumerate(us)]
        ps = [_source(s, q, j) for j, s in enumerate(ss)]
        by_id: dict[str, PreparedSource] = {}
        for j, s in enumerate(ps):
            if s.id in by_id:
                raise ValueError(f"sources[{q}][{j}].id={s.id!r} is duplicated: source ids must be unique per question")
            by_id[s.id] = s
        for k, u in enumerate(pu):
            for sid in u.source_ids or ():
                if sid not in by_id:
                    raise ValueError(
                        f"units[{q}][{k}].source_ids names {sid!r}, which is not among the {len(ps)} ids of "
                        f"sources[{q}]; pass the question's source snippets (or None if the unit declares nothing)"
                    )
        out.append(
            PreparedQuestion(
                index=q,
                prediction=pred,
                units=pu,
                sources=ps,
                by_id=by_id,
                position={s.id: j for j, s in enumerate(ps)},
                list_question=None if list_questions is None else list_questions[q],
            )
        )
    return out
