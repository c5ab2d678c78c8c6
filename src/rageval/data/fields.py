"""What every dataset builder shares: a record with its location (field access with precise
errors), documents split into snippets, de-duplication and the answer type of short answers.

>>> r = LocatedRecord({"question": 3}, "f.json", 0)
>>> r.get(r.rec, "question", "the question string", "question")
Traceback (most recent call last):
...
rageval.data.errors.DataLoadError: f.json: record 0: field 'question' is int 3; expected the question string
>>> doc = make_doc("d0", ["Paris is big.", "It is old."], "Paris")
>>> doc.text, [s.id for s in doc.snippets]
('Paris is big. It is old.', ['d0.s0', 'd0.s1'])
>>> dedupe(["a", "b", "a"]), answer_type(["Yes", "no"]), answer_type(["Paris"])
(('a', 'b'), 'yes_no', 'span')

Source text never carries a citation marker a reader could echo (docs/datasets.md#source-text):
>>> clean_source("Ledger[a] was born in Perth.[3][4] He acted (film [1953–1987]).", footnotes=True)
('Ledger was born in Perth. He acted (film (1953–1987)).', {'footnotes_removed': 3, 'brackets_rewritten': 1})
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rageval.data.errors import DataLoadError
from rageval.data.schema import Document, passage_to_snippets
from rageval.text.normalize import CITATION_RE, normalize_answer

__all__ = ["LocatedRecord", "answer_type", "clean_source", "dedupe", "make_doc", "marker_meta"]

#: A Wikipedia footnote marker (with the horizontal space before it): ``[3]``, ``[3, 4]``, ``[3–5]``, ``[a]``,
#: ``[note 2]``, ``[nb 1]``, ``[citation needed]``, ``[clarification needed]``; numbers of one to three digits
#: (a bracketed year such as ``[1953–1987]`` is text, see :func:`clean_source`).
FOOTNOTE_RE = re.compile(
    r"[^\S\n]*\[(?:\d{1,3}(?:\s*[-\u2013,]\s*\d{1,3})*|[a-z]|(?:note|nb|n) \d+|citation needed|clarification needed)\]"
)


class LocatedRecord:
    """One record with its location, for error messages."""

    def __init__(self, rec: Any, source: str, index: int):
        self.source, self.index = source, index
        if not isinstance(rec, Mapping):
            raise DataLoadError(source, index, None, f"the record is {type(rec).__name__}; expected a JSON object")
        self.rec = rec

    def err(self, field: str | None, expected: str, got: Any = ...) -> DataLoadError:
        """The :class:`DataLoadError` for ``field`` of this record (``got``: the wrong value, if any)."""
        return DataLoadError(self.source, self.index, field, expected, got)

    def get(
        self,
        obj: Mapping,
        key: str,
        expected: str,
        path: str,
        *,
        types: tuple = (str,),
        optional: bool = False,
        default: Any = None,
    ) -> Any:
        """``obj[key]`` checked against ``types`` (``()``: any), else the error naming ``path``."""
        if not isinstance(obj, Mapping):
            raise self.err(path.rsplit(".", 1)[0] if "." in path else path, "a JSON object", obj)
        if key not in obj or (obj[key] is None and optional):
            if optional:
                return default
            raise self.err(path, expected)
        value = obj[key]
        if types and not isinstance(value, types):
            raise self.err(path, expected, value)
        return value

    def str_list(self, value: Any, path: str, expected: str = "a list of strings") -> list[str]:
        """``value`` as a list of strings, else the error naming ``path`` (or the first non-string)."""
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise self.err(path, expected, value)
        for i, v in enumerate(value):
            if not isinstance(v, str):
                raise self.err(f"{path}[{i}]", "a string", v)
        return list(value)


def dedupe(items: Iterable[str]) -> tuple[str, ...]:
    """``items`` without repeats, first occurrence kept."""
    seen: dict[str, None] = {}
    for x in items:
        if x not in seen:
            seen[x] = None
    return tuple(seen)


def clean_source(text: str, *, footnotes: bool = False) -> tuple[str, dict[str, int]]:
    """``text`` as source text (docs/datasets.md#source-text) and what was changed, counted.

    ``footnotes=True`` (ASQA's Wikipedia passages): footnote markers (:data:`FOOTNOTE_RE`) are removed with
    the space before them (``footnotes_removed``).  Always: any bracket the citation parser would read as a
    citation (:data:`rageval.text.normalize.CITATION_RE`, e.g. HotpotQA's ``[1953–1987]``) keeps its text in
    parentheses (``brackets_rewritten``), so an answer quoting a source never cites a unit by accident.
    """
    removed = 0
    if footnotes:
        text, removed = FOOTNOTE_RE.subn("", text)
    text, rewritten = CITATION_RE.subn(lambda m: "(" + m.group(0)[1:-1] + ")", text)
    return text, {"footnotes_removed": removed, "brackets_rewritten": rewritten}


def marker_meta(tally: Counter) -> dict[str, Any]:
    """``{"source_markers": counts}`` for an example's ``meta`` when :func:`clean_source` changed anything, else {}."""
    counts = {k: v for k, v in tally.items() if v}
    return {"source_markers": dict(sorted(counts.items()))} if counts else {}


def make_doc(
    doc_id: str,
    text: str | Sequence[str],
    title: str | None,
    source_key: str | None = None,
    *,
    footnotes: bool = False,
    tally: Counter | None = None,
) -> Document:
    """A :class:`Document` of a passage (or its sentences, joined with a space where none is), with its snippets.

    The text is cleaned first (:func:`clean_source`; ``footnotes``: remove footnote markers too), each
    sentence on its own when sentences are given; what was changed is added to ``tally``.
    """
    counts: Counter = Counter()
    if isinstance(text, str):
        text, c = clean_source(text, footnotes=footnotes)
        counts.update(c)
    else:
        cleaned = []
        for s in text:
            s, c = clean_source(s, footnotes=footnotes)
            cleaned.append(s)
            counts.update(c)
        text = cleaned
    if tally is not None:
        tally.update(counts)
    if isinstance(text, str):
        full = text
    else:
        parts: list[str] = []
        for i, s in enumerate(text):
            if i and s and not s[0].isspace() and parts and not parts[-1][-1:].isspace():
                parts.append(" ")
            parts.append(s)
        full = "".join(parts).strip()
    snippets = passage_to_snippets(text, doc_id=doc_id, title=title)
    return Document(id=doc_id, text=full, title=title, snippets=tuple(snippets), source_key=source_key)


def answer_type(answers: Sequence[str]) -> str:
    """``"yes_no"`` when every answer is yes or no (normalized), else ``"span"``."""
    if answers and all(normalize_answer(a) in ("yes", "no") for a in answers):
        return "yes_no"
    return "span"
