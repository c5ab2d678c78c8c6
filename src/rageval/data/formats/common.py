"""What the ``rageval score`` formats share: the :class:`ImportedFile` they return, the :class:`LineIndex` planning
keeps of each of its lines, and reading a file's text, JSON and rows with errors that name the file and the line.

>>> import tempfile
>>> p = Path(tempfile.mkdtemp()) / "out.jsonl"
>>> _ = p.write_text('{"question": "q"}\\n\\n{"question": "r"}\\n', encoding="utf-8")
>>> [(where.split()[-2:], line, row) for where, line, row in json_rows(p, read_text(p))]
[(['line', '1'], 1, {'question': 'q'}), (['line', '3'], 3, {'question': 'r'})]
"""

from __future__ import annotations

import hashlib
import re
from abc import abstractmethod
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval.data.formats.layout import ScoreInputError, ScoreItem
from rageval.infiles import JsonLines, iter_json_lines, loads
from rageval.infiles import read_text as _read_text
from rageval.text.tokenize import RegexTokenizer

__all__ = [
    "EMPTY_ANSWER",
    "HF_PREFIX",
    "MARKERS",
    "SCORE_INPUT",
    "SELF_SOURCED",
    "SHORT_GOLD_TOKENS",
    "ImportedFile",
    "LazyItems",
    "LineIndex",
    "SystemId",
    "digest",
    "has_markers",
    "json_lines",
    "json_rows",
    "question_key",
    "read_text",
    "short_gold",
    "short_gold_note",
    "whole_json",
]

#: a source written ``hf:<id>`` is a Hugging Face dataset (read as RAGAS-style columns)
HF_PREFIX = "hf:"

_MARKER = re.compile(r"\[\d+")

#: a line's ``(system, setting)``, each None when not given: with its file, a setting's identity
SystemId = tuple[str | None, str | None]

#: the flags :class:`LineIndex` keeps of a line: each unit its own source, a blank answer, a citation marker
SELF_SOURCED, EMPTY_ANSWER, MARKERS = 1, 2, 4

#: a peer's gold answer (RAGAS's ``reference``/``ground_truth``/``ground_truths``, RAGChecker's ``gt_answer``) of
#: at most this many tokens of rageval's regex tokenizer is also a short answer (``answers``):
#: docs/score.md#peers-short-gold-answers
SHORT_GOLD_TOKENS = 10


def short_gold(reference: str | Sequence[str]) -> list[str]:
    """The gold strings of ``reference`` that are short answers: non-blank and at most :data:`SHORT_GOLD_TOKENS`
    tokens as rageval's regex tokenizer counts them (a run of word characters, or one punctuation mark).

    >>> short_gold("Paris.")  # 2 tokens
    ['Paris.']
    >>> short_gold(["William Shakespeare", "Hamlet was written by William Shakespeare around 1600, in London."])
    ['William Shakespeare']
    """
    refs = [reference] if isinstance(reference, str) else list(reference)
    return [r for r in refs if r.strip() and _WORDS.count(r) <= SHORT_GOLD_TOKENS]


_WORDS = RegexTokenizer()


def short_gold_note(name: str, column: str, n: int, total: int, what: str = "rows") -> list[str]:
    """The note saying in how many rows (``what``) a short gold answer was also read as ``answers`` (none
    when 0)."""
    if not n:
        return []
    note = (
        f"{name}: {column} of at most {SHORT_GOLD_TOKENS} tokens is also read as the short answers (answers: "
        f"answer-in-context, str-EM and answer F1 use it) in {n} of {total} {what}; a longer one stays a reference only"
    )
    return [note]


def has_markers(text: str) -> bool:
    """True when ``text`` carries a citation marker ``[k`` (the pattern ALCE's eval.py reads).

    >>> has_markers("Paris [1]."), has_markers("Paris [1, 2]."), has_markers("Paris [a].")
    (True, True, False)
    """
    return _MARKER.search(text) is not None


def question_key(text: str) -> str:
    """The question text used for matching: whitespace collapsed, case folded."""
    return re.sub(r"\s+", " ", text).strip().casefold()


def digest(text: str) -> bytes:
    """A 16-byte digest of ``text`` (BLAKE2b; a lone surrogate encoded as it is), equal only for equal texts."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class LineIndex:
    """What planning keeps of each line (item) of one file: a few dozen bytes, never its texts.

    Per line: its question id (or None), a code of its ``(system, setting)`` pair, a digest of its question
    (:func:`question_key`'s,
    for matching) and its flags (:data:`SELF_SOURCED`, :data:`EMPTY_ANSWER`, :data:`MARKERS`); per file, the gold
    fields some line gives (which diagnostics apply).  :meth:`release` drops the per-line fields planning no longer
    needs once questions are matched.
    """

    def __init__(self, items: Iterable[ScoreItem] = ()) -> None:
        self.ids: list[str | None] = []
        #: the distinct ``(system, setting)`` pairs, in the order they first come (``(None, None)``: neither given)
        self.system_ids: list[SystemId] = []
        self._codes: dict[SystemId, int] = {}
        self.systems = array("I")
        self.keys = bytearray()  # digest(question_key(question)) per line
        self.flags = bytearray()
        self.gold: set[str] = set()
        for item in items:
            self.add(item)

    def add(self, item: ScoreItem) -> None:
        self.ids.append(item.id)
        pair = (item.system, item.setting)
        code = self._codes.get(pair)
        if code is None:
            code = self._codes[pair] = len(self.system_ids)
            self.system_ids.append(pair)
        self.systems.append(code)
        self.keys += digest(question_key(item.question))
        answer = item.answer
        flags = SELF_SOURCED if item.self_sourced else 0
        flags |= 0 if answer.strip() else EMPTY_ANSWER
        flags |= MARKERS if has_markers(answer) else 0
        self.flags.append(flags)
        self.gold.update(name for name, value in item.gold.items() if value)

    def __len__(self) -> int:
        return len(self.flags)

    def key(self, i: int) -> bytes:
        return bytes(self.keys[16 * i : 16 * i + 16])

    def release(self) -> None:
        """Drop the ids, systems and digests (matching is done); the flags and gold fields stay."""
        self.ids, self.systems, self.keys = [], array("I"), bytearray()


class LazyItems(Sequence[ScoreItem]):
    """A file's items made again from the file when asked for (a streamed JSON Lines file), not held."""

    @abstractmethod
    def where(self, i: int) -> str:
        """How messages name line ``i`` (``"<file> line <n>"``), without reading it."""

    @abstractmethod
    def question(self, i: int) -> str:
        """The question of line ``i``."""

    @abstractmethod
    def read(self, indexes: Iterable[int]) -> Iterator[ScoreItem]:
        """The items of the lines ``indexes``, in that order."""

    @abstractmethod
    def close(self) -> None:
        """Close what reading opened (reading again reopens it)."""


@dataclass
class ImportedFile:
    """One input file: its items (one per line and system), the format it was read as, notes for the summary,
    and the :class:`LineIndex` of its items (made from them unless the reader made it while reading).

    ``items`` is a list, or for a file read line by line a :class:`LazyItems`: each item made again from its line
    when read (:meth:`read`)."""

    path: str
    format: str
    items: Sequence[ScoreItem]
    notes: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    index: LineIndex = field(default=None, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.index is None:
            self.index = LineIndex(self.items)

    def where(self, i: int) -> str:
        items = self.items
        return items.where(i) if isinstance(items, LazyItems) else items[i].where

    def question(self, i: int) -> str:
        items = self.items
        return items.question(i) if isinstance(items, LazyItems) else items[i].question

    def read(self, indexes: Iterable[int]) -> Iterator[ScoreItem]:
        """The items at ``indexes``, in that order."""
        items = self.items
        return items.read(indexes) if isinstance(items, LazyItems) else (items[i] for i in indexes)

    def close(self) -> None:
        if isinstance(self.items, LazyItems):
            self.items.close()


#: how the messages of the input readers name a ``rageval score`` input
SCORE_INPUT = "the score input"


def read_text(path: Path) -> str:
    """The text of the regular file ``path`` (:mod:`rageval.infiles`: size limit, UTF-8); a
    :class:`ScoreInputError` otherwise."""
    return _read_text(path, what=SCORE_INPUT, error=ScoreInputError)


def json_lines(path: Path) -> JsonLines:
    """The file ``path`` read line by line (:class:`~rageval.infiles.JsonLines`), a :class:`ScoreInputError` for
    what it refuses."""
    return JsonLines(path, what=SCORE_INPUT, error=ScoreInputError)


def _json_lines(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    return iter_json_lines(text, str(path), error=ScoreInputError)


def whole_json(path: Path, text: str) -> Any:
    """``text`` as one JSON document; a :class:`ScoreInputError` naming the line otherwise."""
    return loads(text, str(path), error=ScoreInputError, line_of_doc=True)


def json_rows(path: Path, text: str) -> Iterator[tuple[str, int | str, Any]]:
    """``(where, line, row)`` of a JSONL file or of a JSON array file."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        data = whole_json(path, text)
        for i, row in enumerate(data):
            yield f"{path} item [{i}]", f"[{i}]", row
        return
    for lineno, row in _json_lines(path, text):
        yield f"{path} line {lineno}", lineno, row
