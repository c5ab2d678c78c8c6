"""The typed plan of a run: what to compute, from what, with which parts — built by a front-end, run by the engine.

A front-end (``rageval suite``, ``score``, ``rescore``, ``audit``; :mod:`rageval.suite.plan`,
:mod:`rageval.score.run`, :mod:`rageval.rescoring.run`, :mod:`rageval.audit.run`) resolves its own
configuration into one frozen :class:`Plan`:

* :class:`Origin` — which command built it, the name and hash that own the run
  directory, and the front-end's configuration as JSON (recorded in the manifest);
* :class:`SettingPlan` s in report order, each with its :class:`Setting`, where its
  records come from (its *source*), the diagnostics it scores, the key that
  enters each record's input hash and its :class:`Item` s;
* :class:`~rageval.scoring.ScoringConfig` — the scoring options (judge and its
  threshold, citation rules, attribution, retrieval ``k``, tokenizer), recorded in
  the manifest so that ``rescore`` and ``audit`` score any run the same way
  whatever command wrote it.

Three item sources:

* :class:`CompressRead` — compress the retrieved sources and read the context
  (a suite's compressor settings);
* :class:`Given` — the context units (and, when the file has them, the answer)
  come with each item from a file (``rageval score``, a suite's ``compressor:
  given``); an item without a given answer is read by the setting's reader;
* :class:`Saved` — each item is a saved record (``rageval rescore``): its
  context and answer are scored again, a failed record is kept as it was.

A setting's items are a tuple (a suite's: they are in memory anyway) or an
:class:`ItemStream` (``rageval score``: each item made from its input line,
``rageval rescore``: each from its saved record's line, when the engine
reaches it, so a plan of a million lines holds no item); the engine takes them one by one in their own order (the order they are
computed and cached in) and writes their records in the order ``records.jsonl``
lists them (:meth:`SettingPlan.record_questions`).

Nothing here runs a model; the engine (:mod:`rageval.run.engine`) builds the
parts a plan names, fills the part-dependent fields of each key
(:data:`PART_KEYS`) and hashes every item.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rageval.io import json_text
from rageval.readers.spec import ReaderSpec
from rageval.scoring import ScoringConfig
from rageval.types import Record, Setting, SourceSnippet, Unit

__all__ = [
    "PART_KEYS",
    "CompressRead",
    "Given",
    "GivenOutput",
    "Item",
    "ItemStream",
    "Origin",
    "Plan",
    "Saved",
    "SettingPlan",
    "record_hash",
    "sha",
    "sha_of_items",
]

#: the fields of a setting's key that name a built part; the engine fills them once the part is built:
#: ``compressor`` (its ``config``), ``reader_id`` (the reader's ``info()``), ``judge_id`` (the judge's ``id``)
PART_KEYS = ("compressor", "reader_id", "judge_id")
OriginKind = Literal["suite", "score", "rescore", "audit"]


def sha(obj: Any) -> str:
    """The sha256 of ``obj`` as canonical JSON (sorted keys, UTF-8)."""
    return hashlib.sha256(json_text(obj).encode("utf-8")).hexdigest()


def sha_of_items(items: Iterable[Any]) -> str:
    """``sha(list(items))`` without holding the list: each item encoded as it comes (a JSON array is its items'
    JSON joined by ``", "``).

    >>> sha_of_items(iter([["q1", "Who?"], ["q2", "é"]])) == sha([["q1", "Who?"], ["q2", "é"]])
    True
    """
    h = hashlib.sha256(b"[")
    for i, item in enumerate(items):
        h.update((", " if i else "").encode() + json_text(item).encode("utf-8"))
    h.update(b"]")
    return h.hexdigest()


@dataclass(frozen=True)
class Origin:
    """What built the plan: the command, the run's name and hash (they own the run directory), the config."""

    kind: OriginKind
    name: str
    hash: str
    config: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None  # a suite file, the input files, the run rescored


@dataclass(frozen=True)
class CompressRead:
    """Compress each item's sources with ``compressor`` (``params``) and read the context with ``reader``."""

    compressor: str
    params: Mapping[str, Any]
    reader: ReaderSpec  # reads this setting
    own_reader: bool = False  # the setting's own reader, not the run's (its id is recorded per setting)


@dataclass(frozen=True)
class Given:
    """Each item brings its context (and maybe its answer); items without an answer are read by ``reader``."""

    label: str  # recorded as the setting's compressor, e.g. "given:generic"
    reader: ReaderSpec | None = None  # reads the items without a given answer (None: every item has one)
    own_reader: bool = False


@dataclass(frozen=True)
class Saved:
    """Each item is a saved record: scored again from its context and answer; a failed record is kept.

    ``fixed_recovery``: each record's recovered source ids (its ``extra.attribution.recovery``) are kept, not
    recovered again: grounded citations are judged against the same premises as the record's (the audit's
    fixed mappings; :mod:`rageval.diagnostics.attribution.fixed`).
    """

    fixed_recovery: bool = False


Source = CompressRead | Given | Saved


@dataclass(frozen=True)
class GivenOutput:
    """What a file gives for one item: the units the reader saw and, when the file has it, the answer.

    The engine measures the context of ``units`` (achieved and retrieved tokens with the run's tokenizer, the
    setting's budget recorded) when the item is computed, not for items the record cache already holds.
    """

    units: tuple[Unit, ...] | None
    answer: str | None = None
    input_tokens: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # added to the record's ``extra`` (e.g. file and line)
    error: str | None = None  # the file gives nothing usable for this item: a ``compressor_error`` record


@dataclass
class Item:
    """One (question, setting): its example, retrieval (``snippets``, ``doc_ids``), input hash, and what a
    :class:`Given` or :class:`Saved` source brings with it."""

    example: Any
    retrieved: Any
    input_hash: str = ""
    given: GivenOutput | None = None
    saved: Record | None = None

    @property
    def sources(self) -> tuple[SourceSnippet, ...]:
        return tuple(self.retrieved.snippets)

    @property
    def question_id(self) -> str:
        """The question its record is of: the saved record's, else the example's id."""
        return self.saved.question_id if self.saved is not None else self.example.id


class ItemStream(ABC):
    """A setting's items made one by one as the engine iterates them, never all held (``rageval score``: each made
    again from its input line; ``rageval rescore``: from its record's line); its length is known without making any (the progress bar's total), and so is
    the order of its records (:meth:`record_questions`)."""

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def __iter__(self) -> Iterator[Item]: ...

    @abstractmethod
    def record_questions(self) -> Iterator[str]:
        """Its items' question ids in the order ``records.jsonl`` lists them: the plan's ``question_order``
        restricted to the setting."""


@dataclass(frozen=True)
class SettingPlan:
    """One setting: its name and record fields, its source, its diagnostics, its key and its items.

    ``key`` is everything of the run and the setting that can change a record; the entries named in
    :data:`PART_KEYS` that it holds are filled by the engine from the built parts.  ``items``: a tuple, or an
    :class:`ItemStream` (made as they are taken).
    """

    setting: Setting
    source: Source
    diagnostics: tuple[str, ...]
    key: Mapping[str, Any]
    items: tuple[Item, ...] | ItemStream
    evidence_text: Callable[[Unit], str] | None = None  # how a unit is shown to the reader (default: the template)
    batch_size: int | None = None  # items per batch (default: the reader's batch_size)
    #: settings with the same label, next to each other in the plan, are scored as one: their items batched
    #: across them (the first one's ``batch_size``), one scoring call per batch, so one judge call sees them all
    #: (the audit scores each mode's whole sample at once); they share their diagnostics.  None: alone.  On Ray
    #: each setting is scored alone (the same values; the judge's calls grouped otherwise)
    joint: str | None = None
    #: the most tokens its context may hold (identity's too): a context over it is ``budget_check``
    #: (:func:`rageval.run.execute.over_limit`); None: no such check
    context_limit: int | None = None
    #: its own retrieval (a suite setting with ``retrieval:``: method, k, corpus, a dense model), recorded with the
    #: manifest's settings; None: the run's
    retrieval: Mapping[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.setting.name

    def record_questions(self, question_order: Sequence[str]) -> Iterable[str]:
        """Its items' question ids in the order ``records.jsonl`` lists them: ``question_order`` restricted to the
        setting (an :class:`ItemStream` knows it without making its items)."""
        if isinstance(self.items, ItemStream):
            return self.items.record_questions()
        mine = {item.question_id for item in self.items}
        return (q for q in question_order if q in mine)


@dataclass(frozen=True)
class Plan:
    """A whole run (see the module doc)."""

    origin: Origin
    settings: tuple[SettingPlan, ...]
    question_order: tuple[str, ...]
    scoring: ScoringConfig
    diagnostics: tuple[str, ...] = ()  # every diagnostic the run selected (the manifest's list)
    seed: int = 0
    contrasts: Any = None
    cluster_key: str | None = None
    #: the manifest's summary of the run: dataset, inputs (hashes), offline notes, the front-end's own section
    summary: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    reader: ReaderSpec | None = None  # the run's reader (None: no setting reads)
    judge_needed: bool = True
    judge_cache: Path | None = None  # the judge's sqlite folder (default: <run dir>/cache/judge)
    #: fsync each part of the record store before its rename (a part at most about once a second: the fsync costs
    #: nothing measurable, docs/suites.md#files); False: the rename only, atomic for a killed process, not for a
    #: power loss
    durable: bool = True
    #: write ``records.jsonl`` (False: the record store alone holds the records, in the run's order; ``rageval
    #: export DIR`` writes the file's bytes; docs/suites.md#the-record-store-and-rageval-export)
    records_file: bool = True
    first_batch: int | None = None  # a smaller first batch (the first record on disk sooner)
    inputs: tuple[Path, ...] = ()  # the local files the run reads (refused inside its run directory)

    @property
    def setting_names(self) -> list[str]:
        return [s.name for s in self.settings]

    def n_items(self) -> int:
        return sum(len(s.items) for s in self.settings)


def record_hash(key: Mapping[str, Any], example: Any, retrieved: Any) -> str:
    """The input hash of one (setting, question) record."""
    return sha(
        {
            **key,
            "question": example.id,
            "q": example.question,
            "gold": example.to_dict() if hasattr(example, "to_dict") else example.id,
            "sources": [[s.id, s.text, s.title] for s in retrieved.snippets],
            "retrieved": None if retrieved.doc_ids is None else list(retrieved.doc_ids),
        }
    )[:32]


def settings_json(settings: Sequence[SettingPlan]) -> list[dict[str, Any]]:
    """The manifest's ``suite.settings``: name, compressor, budget, params (and its own retrieval) per setting."""
    out = []
    for s in settings:
        params = dict(s.source.params) if isinstance(s.source, CompressRead) else {}
        row = {"name": s.name, "compressor": s.setting.compressor, "budget": s.setting.budget, "params": params}
        if s.retrieval is not None:  # only when the setting has its own: other runs' manifests stay the same
            row["retrieval"] = dict(s.retrieval)
        out.append(row)
    return out
