"""Settings and question matching for ``rageval score`` (docs/score.md#settings-and-matching).

* Each input file is a setting; a file whose lines carry ``system`` and/or
  ``setting`` values gives one setting per distinct ``(system, setting)`` pair.
  A setting **is** its file and that pair (:data:`Identity`), never its name:
  two identities are two settings, whatever they are called.
* Its name (what records, tables and ``--baseline`` show) is made from the
  identity: the file's label (its stem, or ``NAME`` of ``NAME=FILE``) for lines
  with neither, else ``system/setting`` (or the one given); a name found in two
  files, or equal to a label, is qualified as ``label/name``.  Two identities
  that would still show one name (file A's literal system ``B/s`` and file B's
  system ``s`` qualified to ``B/s``; ``system: "a/b"`` and ``system: "a",
  setting: "b"``) keep it for the first in input order; each later one gets
  `` (2)``, `` (3)``, ... (the first such name no other setting has), and a note
  says so (:func:`renamed_notes`).
* Within one setting a question id (or, for lines without an id, a question
  text) appears once: a repeat is an error naming both lines.
* Across settings questions are matched **by id**, falling back to the
  **question text** (whitespace collapsed); a question text shared by two
  different ids is ambiguous and never used for the fallback.  A line without an
  id that matches nothing gets the id ``#<n>`` (the n-th question of the run).
* A question missing from some settings is **unmatched**: it is kept (its
  records are written) and listed with the settings that lack it; it is outside
  the common cohort, so it enters no comparison.

Matching reads only each file's :class:`~rageval.data.formats.common.LineIndex` (ids, digests of the question
texts, systems), never the items: a setting is a :class:`SettingLines` (which lines of which file), a question its
position in the run's order, so a million lines cost tens of megabytes.  A question text is read again (from the
file, for a streamed one) only where it is shown: an unmatched question, an error.

>>> from rageval.data.formats.layout import GenericRecord, to_item
>>> def it(q, i=None, w="a line 1"):
...     return to_item(GenericRecord(id=i, question=q, answer="x"), w)
>>> a = ImportedFile("a", "generic", [it("Who?", "q1"), it("Why?", "q2")])
>>> b = ImportedFile("b", "generic", [it("who?  ", None, "b line 1")])
>>> m = match_questions(assign_settings([a, b], ["A", "B"]))
>>> m.ids["B"], m.order, [u.question_id for u in m.unmatched]
(['q1'], ['q1', 'q2'], ['q2'])
>>> from dataclasses import replace
>>> def line(s, t=None, w="c line 1"):
...     return replace(it("Who?", "q1", w), system=s, setting=t)
>>> c = ImportedFile("c.jsonl", "generic", [line("a/b"), line("a", "b", "c line 2")])
>>> settings = assign_settings([c], ["c"])
>>> list(settings), [s.identity for s in settings.values()]
(['a/b', 'a/b (2)'], [(0, 'a/b', None), (0, 'a', 'b')])
>>> renamed_notes(settings)  # doctest: +NORMALIZE_WHITESPACE
["setting 'a/b (2)' (c.jsonl: system 'a', setting 'b') is not setting 'a/b' (c.jsonl: system 'a/b'):
  the two would show one name; a setting is its file and its (system, setting), never its name"]
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rageval.data.formats.common import ImportedFile, SystemId, digest, question_key
from rageval.data.formats.layout import ScoreInputError, ScoreItem
from rageval.escape import csv_text
from rageval.io import printable, write_text_atomic

__all__ = [
    "Identity",
    "Matched",
    "SettingLines",
    "Unmatched",
    "assign_settings",
    "file_labels",
    "match_questions",
    "question_key",
    "renamed_notes",
    "shown_name",
]

#: how many matches by question text and id conflicts :class:`Matched` spells out (the notes show that many)
SHOWN = 5


def file_labels(sources: Sequence[str], names: Sequence[str | None]) -> list[str]:
    """A distinct label per input: the given name, else the file stem (``-2``, ``-3`` appended on repeats); a byte
    of it that is not UTF-8 is written as an escape (:func:`~rageval.io.printable`: ``run\\xff``)."""
    out: list[str] = []
    for src, name in zip(sources, names):
        base = name or (src[3:].rstrip("/").split("/")[-1] if src.startswith("hf:") else Path(src).stem) or "input"
        base = printable(base)
        label, k = base, 2
        while label in out:
            if name:
                raise ScoreInputError(f"two inputs are named {name!r}: give each NAME=FILE a distinct name")
            label, k = f"{base}-{k}", k + 1
        out.append(label)
    return out


#: what a setting of ``rageval score`` is: its file (the index among the inputs) and its lines' ``(system,
#: setting)``, each None when not given; names are made from it and never stand for it
Identity = tuple[int, str | None, str | None]


def shown_name(system: str | None, setting: str | None) -> str | None:
    """The name a ``(system, setting)`` pair shows before qualification: ``system/setting``, or the one given,
    else None (the file's label is shown).

    >>> shown_name("a", "b"), shown_name("a/b", None), shown_name(None, "b"), shown_name(None, None)
    ('a/b', 'a/b', 'b', None)
    """
    if system is not None and setting is not None:
        return f"{system}/{setting}"
    return system if system is not None else setting


class SettingLines(Sequence[ScoreItem]):
    """The lines of one setting, in input order: ``parts``, each a file and the indexes of its lines (one part: a
    setting's lines are one file's).  A sequence of its items, each made when asked for (a streamed file's from its
    line).  ``identity`` is what the setting is (:data:`Identity`); ``name`` what it shows, ``wanted`` the name
    it would show had no other setting that name first (the two differ only for a renamed setting)."""

    def __init__(self, name: str, identity: Identity | None = None, wanted: str | None = None) -> None:
        self.name = name
        self.identity = identity
        self.wanted = name if wanted is None else wanted
        self.where_from = ""  # the identity in words, for notes
        self.parts: list[tuple[ImportedFile, array]] = []

    def add(self, file: ImportedFile, i: int) -> None:
        if not self.parts or self.parts[-1][0] is not file:
            self.parts.append((file, array("I")))
        self.parts[-1][1].append(i)

    def __len__(self) -> int:
        return sum(len(ix) for _, ix in self.parts)

    def refs(self) -> Iterator[tuple[ImportedFile, int]]:
        """``(file, line index)`` of each line, in order."""
        for f, ix in self.parts:
            for i in ix:
                yield f, i

    def ref(self, k: int) -> tuple[ImportedFile, int]:
        """``(file, line index)`` of the setting's ``k``-th line."""
        for f, ix in self.parts:
            if k < len(ix):
                return f, ix[k]
            k -= len(ix)
        raise IndexError(k)

    def read(self, ks: Iterable[int]) -> Iterator[ScoreItem]:
        """The items of the setting's lines ``ks``, in that order."""
        if len(self.parts) == 1:
            f, ix = self.parts[0]
            return f.read(ix[k] for k in ks)
        return (next(f.read([i])) for f, i in map(self.ref, ks))

    def __getitem__(self, k: Any) -> Any:
        ks = range(len(self))[k]
        return list(self.read(ks)) if isinstance(k, slice) else next(self.read([ks]))

    def __iter__(self) -> Iterator[ScoreItem]:
        return self.read(range(len(self)))

    def where(self, k: int) -> str:
        f, i = self.ref(k)
        return f.where(i)

    def question(self, k: int) -> str:
        f, i = self.ref(k)
        return f.question(i)

    def flags(self) -> Iterator[int]:
        """Each line's :class:`~rageval.data.formats.common.LineIndex` flags, in order."""
        for f, ix in self.parts:
            flags = f.index.flags
            for i in ix:
                yield flags[i]


def _in_words(path: str, pair: SystemId) -> str:
    system, setting = pair
    parts = [f"system {system!r}"] * (system is not None) + [f"setting {setting!r}"] * (setting is not None)
    return f"{path}: {', '.join(parts) or 'lines without system or setting'}"


def assign_settings(files: Sequence[ImportedFile], labels: Sequence[str]) -> dict[str, SettingLines]:
    """Setting name -> its lines, in input order (see the module doc): one setting per :data:`Identity`, each
    name distinct."""
    shown: dict[Identity, str | None] = {}
    owners: dict[str, set[int]] = {}
    for fi, f in enumerate(files):
        for system, setting in f.index.system_ids:
            base = shown_name(system, setting)
            # a lone surrogate (undecodable bytes) is shown as an escape; a clash is renamed like any other
            base = shown[(fi, system, setting)] = None if base is None else printable(base)
            if base is not None:
                owners.setdefault(base, set()).add(fi)
    wanted: dict[Identity, str] = {}
    for (fi, system, setting), base in shown.items():
        if base is None:
            wanted[(fi, system, setting)] = labels[fi]
        elif len(owners[base]) > 1 or base in labels:
            wanted[(fi, system, setting)] = f"{labels[fi]}/{base}"
        else:
            wanted[(fi, system, setting)] = base
    taken = set(wanted.values())  # a renamed setting never takes the name another one wants
    by_identity: dict[Identity, SettingLines] = {}
    settings: dict[str, SettingLines] = {}
    for identity, want in wanted.items():  # in input order: files, then each file's pairs as they first come
        name, k = want, 2
        while name in settings or (name != want and name in taken):
            name, k = f"{want} ({k})", k + 1
        taken.add(name)
        lines = by_identity[identity] = settings[name] = SettingLines(name, identity, want)
        lines.where_from = _in_words(files[identity[0]].path, identity[1:])
    for fi, f in enumerate(files):
        if not len(f.index):
            raise ScoreInputError(f"{f.path}: holds no question to score")
        mine = [by_identity[(fi, system, setting)] for system, setting in f.index.system_ids]
        for i, code in enumerate(f.index.systems):
            mine[code].add(f, i)
    return settings


def renamed_notes(settings: Mapping[str, SettingLines]) -> list[str]:
    """One note per setting shown under another name than it would have (module doc), naming both settings."""
    first = {s.name: s for s in settings.values()}
    return [
        f"setting {s.name!r} ({s.where_from}) is not setting {s.wanted!r} ({first[s.wanted].where_from}): the two "
        "would show one name; a setting is its file and its (system, setting), never its name"
        for s in settings.values()
        if s.name != s.wanted
    ]


@dataclass(frozen=True)
class Unmatched:
    """A question not present in every setting."""

    question_id: str
    question: str
    present: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass
class Matched:
    """The run's questions (``order``: canonical ids), each setting's line -> question (``positions``: an index of
    ``order`` per line, aligned with its items), the unmatched questions, and what matching noted: the matches made
    by question text (``n_by_text``; the first :data:`SHOWN` spelled out in ``by_text``) and the first
    :data:`SHOWN` ids given with two question texts (``conflicts``)."""

    order: list[str]
    positions: dict[str, array]
    unmatched: list[Unmatched] = field(default_factory=list)
    by_text: list[str] = field(default_factory=list)  # "setting: where -> id" for matches made by question text
    n_by_text: int = 0
    conflicts: list[str] = field(default_factory=list)  # one id, different question texts
    settings: Mapping[str, SettingLines] = field(default_factory=dict, repr=False)
    #: per question, the setting (its index) and the line of that setting that brought it first
    creators: tuple[array, array] = field(default_factory=lambda: (array("I"), array("I")), repr=False)

    @property
    def ids(self) -> dict[str, list[str]]:
        """Setting -> the canonical id of each of its lines (aligned with its items)."""
        return {name: [self.order[p] for p in pos] for name, pos in self.positions.items()}

    def question(self, p: int) -> str:
        """The text of question ``p`` (its first line's; read again from a streamed file)."""
        names = list(self.settings)
        return self.settings[names[self.creators[0][p]]].question(self.creators[1][p])

    def questions(self) -> Iterator[list[str]]:
        """``[id, text]`` of each question in run order (each text read again from a streamed file)."""
        lines = list(self.settings.values())
        for q, s, k in zip(self.order, *self.creators):
            yield [q, lines[s].question(k)]

    def record_order(self, name: str) -> Sequence[int]:
        """The setting's line indexes in the run's question order (the order of its records)."""
        pos = np.frombuffer(self.positions[name], dtype=np.uint32)
        if bool(np.all(pos[1:] > pos[:-1])):
            return range(len(pos))
        out = array("I")
        out.frombytes(np.argsort(pos, kind="stable").astype(np.uint32).tobytes())
        return out

    def write_unmatched(self, out: Path) -> None:
        """``out/unmatched.csv``: the questions not in every setting (removed when there is none)."""
        path = out / "unmatched.csv"
        if not self.unmatched:
            if path.exists():
                path.unlink()
            return
        head = ["question_id", "question", "present_in", "missing_in"]
        rows = [[u.question_id, u.question, ";".join(u.present), ";".join(u.missing)] for u in self.unmatched]
        write_text_atomic(path, csv_text([head, *rows], str))


def _key(f: ImportedFile, i: int) -> str | bytes:
    """What may appear once per setting: the id, or (no id) the question text (its digest; read again from a
    streamed file)."""
    qid = f.index.ids[i]
    return qid if qid is not None else digest(f.question(i))


def _check_unique(name: str, lines: SettingLines) -> None:
    seen: set[str | bytes] = set()
    for k, (f, i) in enumerate(lines.refs()):
        key = _key(f, i)
        if key in seen:
            first = next(j for j, (g, m) in enumerate(lines.refs()) if _key(g, m) == key)
            qid = f.index.ids[i]
            if qid is not None:
                what, shown = "id", f"id {qid!r}"
            else:
                what, shown = "question text (no id)", f"question {f.question(i)!r:.80}"
            raise ScoreInputError(
                f"{f.where(i)}: duplicate {what}: {shown} already at {lines.where(first).split(' ', 1)[-1]}"
                f" (setting {name!r}); keep one line per question and system, or add a `system` field"
            )
        seen.add(key)


def _ambiguous_texts(settings: Mapping[str, SettingLines]) -> set[bytes]:
    """The question texts (:func:`question_key` digests) that lines with two different ids share."""
    first: dict[bytes, str] = {}  # question text -> the first given id it has
    out: set[bytes] = set()
    for lines in settings.values():
        for f, i in lines.refs():
            qid = f.index.ids[i]
            if qid is not None:
                qk = f.index.key(i)
                if first.setdefault(qk, qid) != qid:
                    out.add(qk)
    return out


@dataclass
class _Canonical:
    """Assigns each line its question (a position in ``order``), in input order (the module doc's rules).

    ``text_matching`` False (every line has an id) leaves out the question-text fallback, which then never
    applies: a line whose id is new and whose text an earlier line has got that text from a line with another id,
    so the text is ambiguous."""

    given_ids: set[str]
    ambiguous: set[bytes]
    text_matching: bool
    lines: list[SettingLines]
    order: list[str] = field(default_factory=list)
    creators: tuple[array, array] = field(default_factory=lambda: (array("I"), array("I")))
    by_text: list[str] = field(default_factory=list)
    n_by_text: int = 0
    conflicts: list[str] = field(default_factory=list)
    id_of_given: dict[str, int] = field(default_factory=dict)
    id_of_text: dict[bytes, int] = field(default_factory=dict)
    counter: int = 0

    def _next_free(self) -> str:
        """``#<n>``: the next number no given id already is."""
        self.counter += 1
        canon = f"#{self.counter}"
        while canon in self.given_ids:
            self.counter += 1
            canon = f"#{self.counter}"
        return canon

    def _key(self, pos: int) -> bytes:
        """The question_key digest of question ``pos`` (of the line that brought it)."""
        f, i = self.lines[self.creators[0][pos]].ref(self.creators[1][pos])
        return f.index.key(i)

    def of(self, s: int, lines: SettingLines, k: int, f: ImportedFile, i: int) -> int:
        """The question of line ``i`` of ``f``, the ``k``-th of setting ``lines`` (the ``s``-th): its id seen
        before, else a question text seen before (unless ambiguous), else a new question (its id, or ``#<n>``)."""
        qid, qk = f.index.ids[i], f.index.key(i)
        textual = self.text_matching and qk not in self.ambiguous
        pos = self.id_of_given.get(qid) if qid is not None else None
        if pos is not None:
            if len(self.conflicts) < SHOWN and self._key(pos) != qk:
                self.conflicts.append(f"{f.where(i)}: id {qid!r} has another question text than elsewhere")
        elif textual and (pos := self.id_of_text.get(qk)) is not None:
            self.n_by_text += 1
            if len(self.by_text) < SHOWN:
                self.by_text.append(f"{lines.name}: {f.where(i)} -> {self.order[pos]!r}")
        else:
            pos = len(self.order)
            self.order.append(qid if qid is not None else self._next_free())
            self.creators[0].append(s)
            self.creators[1].append(k)
        if qid is not None:
            self.id_of_given.setdefault(qid, pos)
        if textual:
            self.id_of_text.setdefault(qk, pos)
        return pos


def _check_matched_once(settings: Mapping[str, SettingLines], positions: Mapping[str, array], order: list[str]):
    """Two lines of one setting matched as the same question: an error naming both."""
    for name, got in positions.items():
        pos = np.frombuffer(got, dtype=np.uint32)
        ranked = np.sort(pos)
        dupes = np.unique(ranked[1:][ranked[1:] == ranked[:-1]])
        if len(dupes):
            q = min(order[int(p)] for p in dupes)
            first, second = np.flatnonzero(pos == order.index(q))[:2]
            lines = settings[name]
            raise ScoreInputError(
                f"{lines.where(int(second))}: the same question as {lines.where(int(first))} (matched as {q!r}) in "
                f"setting {name!r}; keep one line per question and system"
            )


def _unmatched(matched: Matched) -> list[Unmatched]:
    """The questions, in run order, that some setting lacks."""
    names = list(matched.positions)
    n = len(matched.order)
    counts = np.zeros(n, dtype=np.uint32)
    for got in matched.positions.values():
        counts[np.frombuffer(got, dtype=np.uint32)] += 1  # a question at most once per setting
    lacking = np.flatnonzero(counts < len(names))
    if not len(lacking):
        return []
    present = np.zeros((len(names), len(lacking)), dtype=bool)
    for s, got in enumerate(matched.positions.values()):
        has = np.zeros(n, dtype=bool)
        has[np.frombuffer(got, dtype=np.uint32)] = True
        present[s] = has[lacking]
    out = []
    for j, p in enumerate(lacking.tolist()):
        have = tuple(m for m, here in zip(names, present[:, j]) if here)
        lack = tuple(m for m, here in zip(names, present[:, j]) if not here)
        out.append(Unmatched(matched.order[p], matched.question(p), have, lack))
    return out


def match_questions(settings: Mapping[str, SettingLines]) -> Matched:
    """Canonical ids (module doc); raises :class:`ScoreInputError` for a repeated question within a setting."""
    for name, lines in settings.items():
        _check_unique(name, lines)
    text_matching = any(f.index.ids[i] is None for lines in settings.values() for f, i in lines.refs())
    given_ids: set[str] = set()
    if text_matching:
        given_ids = {f.index.ids[i] for lines in settings.values() for f, i in lines.refs()} - {None}  # type: ignore[assignment]
    ambiguous = _ambiguous_texts(settings) if text_matching else set()
    canon = _Canonical(given_ids, ambiguous, text_matching, list(settings.values()))
    positions = {
        name: array("I", (canon.of(s, lines, k, f, i) for k, (f, i) in enumerate(lines.refs())))
        for s, (name, lines) in enumerate(settings.items())
    }
    _check_matched_once(settings, positions, canon.order)
    matched = Matched(
        canon.order,
        positions,
        by_text=canon.by_text,
        n_by_text=canon.n_by_text,
        conflicts=canon.conflicts,
        settings=settings,
        creators=canon.creators,
    )
    matched.unmatched = _unmatched(matched)
    return matched
