"""Settings and question matching for ``rageval score`` (docs/score.md#settings-and-matching).

* Each input file is a setting; a file whose lines carry ``system`` (or
  ``setting``) values gives one setting per value.  Setting names are the file's
  label (its stem, or ``NAME`` of ``NAME=FILE``) and the system values; a system
  name found in two files is qualified as ``label/system``.
* Within one setting a question id (or, for lines without an id, a question
  text) appears once: a repeat is an error naming both lines.
* Across settings questions are matched **by id**, falling back to the
  **question text** (whitespace collapsed); a question text shared by two
  different ids is ambiguous and never used for the fallback.  A line without an
  id that matches nothing gets the id ``#<n>`` (the n-th question of the run).
* A question missing from some settings is **unmatched**: it is kept (its
  records are written) and listed with the settings that lack it; it is outside
  the common cohort, so it enters no comparison.

>>> from rageval.data.formats.layout import GenericRecord, to_item
>>> def it(q, i=None, w="a line 1"):
...     return to_item(GenericRecord(id=i, question=q, answer="x"), w)
>>> m = match_questions({"A": [it("Who?", "q1"), it("Why?", "q2")], "B": [it("who?  ", None, "b line 1")]})
>>> m.ids["B"], m.order, [u.question_id for u in m.unmatched]
(['q1'], ['q1', 'q2'], ['q2'])
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rageval.data.formats import ImportedFile
from rageval.data.formats.layout import ScoreInputError, ScoreItem

__all__ = ["Matched", "Unmatched", "assign_settings", "file_labels", "match_questions", "question_key"]


def question_key(text: str) -> str:
    """The question text used for matching: whitespace collapsed, case folded."""
    return re.sub(r"\s+", " ", text).strip().casefold()


def file_labels(sources: Sequence[str], names: Sequence[str | None]) -> list[str]:
    """A distinct label per input: the given name, else the file stem (``-2``, ``-3`` appended on repeats)."""
    out: list[str] = []
    for src, name in zip(sources, names):
        base = name or (src[3:].rstrip("/").split("/")[-1] if src.startswith("hf:") else Path(src).stem) or "input"
        label, k = base, 2
        while label in out:
            if name:
                raise ScoreInputError(f"two inputs are named {name!r}: give each NAME=FILE a distinct name")
            label, k = f"{base}-{k}", k + 1
        out.append(label)
    return out


def assign_settings(files: Sequence[ImportedFile], labels: Sequence[str]) -> dict[str, list[ScoreItem]]:
    """Setting name -> its items, in input order (see the module doc)."""
    per_file: list[list[tuple[str | None, ScoreItem]]] = [[(it.system, it) for it in f.items] for f in files]
    owners: dict[str, set[int]] = {}
    for fi, pairs in enumerate(per_file):
        for system, _ in pairs:
            if system is not None:
                owners.setdefault(system, set()).add(fi)
    settings: dict[str, list[ScoreItem]] = {}
    for fi, pairs in enumerate(per_file):
        for system, item in pairs:
            if system is None:
                name = labels[fi]
            elif len(owners[system]) > 1 or system in labels:
                name = f"{labels[fi]}/{system}"
            else:
                name = system
            settings.setdefault(name, []).append(item)
        if not pairs:
            raise ScoreInputError(f"{files[fi].path}: holds no question to score")
    return settings


@dataclass(frozen=True)
class Unmatched:
    """A question not present in every setting."""

    question_id: str
    question: str
    present: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass
class Matched:
    """Canonical question ids per setting (aligned with its items), the run's question order, the unmatched."""

    ids: dict[str, list[str]]
    order: list[str]
    questions: dict[str, str]
    unmatched: list[Unmatched] = field(default_factory=list)
    by_text: list[str] = field(default_factory=list)  # "setting: where -> id" for matches made by question text
    conflicts: list[str] = field(default_factory=list)  # one id, different question texts


def _check_unique(name: str, items: Sequence[ScoreItem]) -> None:
    seen: dict[str, ScoreItem] = {}
    for it in items:
        key = f"id {it.id!r}" if it.id is not None else f"question {it.question!r:.80}"
        if key in seen:
            what = "id" if it.id is not None else "question text (no id)"
            raise ScoreInputError(
                f"{it.where}: duplicate {what}: {key} already at {seen[key].where.split(' ', 1)[-1]}"
                f" (setting {name!r}); keep one line per question and system, or add a `system` field"
            )
        seen[key] = it


def _ambiguous_texts(settings: Mapping[str, Sequence[ScoreItem]]) -> set[str]:
    """The question texts (:func:`question_key`) that lines with two different ids share."""
    texts: dict[str, set[str]] = {}  # question text -> the given ids it has
    for items in settings.values():
        for it in items:
            if it.id is not None:
                texts.setdefault(question_key(it.question), set()).add(it.id)
    return {t for t, ids in texts.items() if len(ids) > 1}


@dataclass
class _Canonical:
    """Assigns each line its canonical question id, in input order (the module doc's rules)."""

    given_ids: set[str]
    ambiguous: set[str]
    order: list[str] = field(default_factory=list)
    questions: dict[str, str] = field(default_factory=dict)
    by_text: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    id_of_given: dict[str, str] = field(default_factory=dict)
    id_of_text: dict[str, str] = field(default_factory=dict)
    counter: int = 0

    def _next_free(self) -> str:
        """``#<n>``: the next number no given id already is."""
        self.counter += 1
        canon = f"#{self.counter}"
        while canon in self.given_ids:
            self.counter += 1
            canon = f"#{self.counter}"
        return canon

    def of(self, name: str, it: ScoreItem) -> str:
        """The canonical id of line ``it`` of setting ``name``: its id seen before, else a question text seen
        before (unless ambiguous), else a new question (its id, or ``#<n>``)."""
        qk = question_key(it.question)
        if it.id is not None and it.id in self.id_of_given:
            canon = self.id_of_given[it.id]
            if question_key(self.questions[canon]) != qk:
                self.conflicts.append(f"{it.where}: id {it.id!r} has another question text than elsewhere")
        elif qk in self.id_of_text and qk not in self.ambiguous:
            canon = self.id_of_text[qk]
            self.by_text.append(f"{name}: {it.where} -> {canon!r}")
        else:
            canon = it.id if it.id is not None else self._next_free()
            self.order.append(canon)
            self.questions[canon] = it.question
        if it.id is not None:
            self.id_of_given.setdefault(it.id, canon)
        if qk not in self.ambiguous:
            self.id_of_text.setdefault(qk, canon)
        return canon


def _check_matched_once(settings: Mapping[str, Sequence[ScoreItem]], ids: Mapping[str, list[str]]) -> None:
    """Two lines of one setting matched as the same question: an error naming both."""
    for name, got in ids.items():
        dupes = {q for q in got if got.count(q) > 1} if len(set(got)) != len(got) else set()
        if dupes:
            q = min(dupes)
            lines = [it.where for it, c in zip(settings[name], got) if c == q]
            raise ScoreInputError(
                f"{lines[1]}: the same question as {lines[0]} (matched as {q!r}) in setting {name!r}; "
                "keep one line per question and system"
            )


def _unmatched(
    settings: Mapping[str, Sequence[ScoreItem]], ids: Mapping[str, list[str]], canon: _Canonical
) -> list[Unmatched]:
    """The questions, in run order, that some setting lacks."""
    present = {name: set(got) for name, got in ids.items()}
    unmatched = []
    for q in canon.order:
        have = tuple(n for n in settings if q in present[n])
        lack = tuple(n for n in settings if q not in present[n])
        if lack:
            unmatched.append(Unmatched(q, canon.questions[q], have, lack))
    return unmatched


def match_questions(settings: Mapping[str, Sequence[ScoreItem]]) -> Matched:
    """Canonical ids (module doc); raises :class:`ScoreInputError` for a repeated question within a setting."""
    for name, items in settings.items():
        _check_unique(name, items)
    given_ids = {it.id for items in settings.values() for it in items if it.id is not None}
    canon = _Canonical(given_ids, _ambiguous_texts(settings))
    ids = {name: [canon.of(name, it) for it in items] for name, items in settings.items()}
    _check_matched_once(settings, ids)
    return Matched(ids, canon.order, canon.questions, _unmatched(settings, ids, canon), canon.by_text, canon.conflicts)
