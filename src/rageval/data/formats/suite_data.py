"""The files ``rageval score`` reads, as a suite's dataset (docs/score.md#suites-that-read-the-same-files).

``dataset: {format: generic, path: outputs.jsonl}`` makes each question of the
file an :class:`~rageval.data.Example`: its sources (else its contexts) become
its documents, split into sentence snippets for the compressors (ids
``{source id}.s{i}``); its gold is the file's; and what each system of the file
gave is kept in ``meta["given"][system]`` — the units, each declaring the
sentences of the sources it names, and the answer — for the ``given``
compressor and the ``saved`` reader with ``format: generic``.  Question ids are
assigned as ``rageval score`` assigns them (:func:`rageval.data.formats.match.match_questions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rageval.data import passage_to_snippets
from rageval.data.formats import read_input
from rageval.data.formats.layout import ScoreItem
from rageval.data.formats.match import assign_settings, match_questions
from rageval.data.schema import Document, Example
from rageval.registry import did_you_mean

__all__ = ["read_examples", "given_answers", "DEFAULT_SYSTEM"]

#: the key of ``meta["given"]`` for lines without a ``system``
DEFAULT_SYSTEM = ""


def _systems(source: str, fmt: str, mapping: Mapping[str, str] | None, split: str | None):
    f = read_input(source, fmt, mapping=mapping, split=split)
    settings = assign_settings([f], [DEFAULT_SYSTEM])
    return settings, match_questions(settings)


def _document(doc_id: str, text: str, title: str | None, rank: int):
    return Document(
        id=doc_id,
        text=text,
        title=title,
        snippets=tuple(passage_to_snippets(text, doc_id=doc_id, title=title, doc_rank=rank)),
    )


def _given(item: ScoreItem, sentences: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    units = []
    for u in item.units:
        ids = None
        if u.source_ids is not None:
            ids = [sid for s in u.source_ids for sid in sentences.get(s, ())] or None
        units.append({"text": u.text, "title": u.title, "source_ids": ids})
    return {"units": units, "answer": item.answer, "input_tokens": item.input_tokens}


def read_examples(source: str, fmt: str = "generic", *, mapping=None, split=None, limit: int | None = None) -> list:
    """One :class:`~rageval.data.Example` per question of ``source`` (see the module doc)."""
    settings, matched = _systems(source, fmt, mapping, split)
    first: dict[str, ScoreItem] = {}
    given: dict[str, dict[str, Any]] = {}
    docs_of: dict[str, tuple] = {}
    for system, items in settings.items():
        for item, qid in zip(items, matched.ids[system]):
            if qid not in first:
                first[qid] = item
                docs_of[qid] = tuple(_document(s.id, s.text, s.title, rank) for rank, s in enumerate(item.sources))
            sentences = {d.id: tuple(s.id for s in d.snippets) for d in docs_of[qid]}
            given.setdefault(qid, {})[system] = _given(item, sentences)
    examples = []
    for qid in matched.order[: limit or None]:
        it = first[qid]
        examples.append(
            Example(
                id=qid,
                **it.example_fields(),
                documents=docs_of[qid],
                dataset=fmt,
                meta={"given": given[qid], "where": it.where},
            )
        )
    return examples


def given_answers(
    source: str, fmt: str = "generic", *, system: str | None = None, mapping=None, split=None
) -> dict[str, tuple[str, int | None, str]]:
    """Question id -> (answer, input tokens, where) of one system of ``source`` (default: its only one)."""
    settings, matched = _systems(source, fmt, mapping, split)
    name = DEFAULT_SYSTEM if system is None else system
    if name not in settings:
        known = [s for s in settings if s != DEFAULT_SYSTEM]
        if system is None:
            raise ValueError(f"{source} holds several systems {known}: name one with `system:`")
        hint = did_you_mean(system, known) or f" Systems: {', '.join(known) or '(none: the lines carry no system)'}."
        raise ValueError(f"{source}: no system {system!r}.{hint}")
    return {qid: (it.answer, it.input_tokens, it.where) for it, qid in zip(settings[name], matched.ids[name])}
