"""The generic layout of ``rageval score`` (docs/score.md): one JSON object per line, validated with pydantic.

A line describes one question answered by one system: the question, the cited
answer, the context the reader saw (``units`` with optional declared
``source_ids``, or plain ``contexts``), optional ``sources``, and the gold.  Every
format (ALCE, RAGChecker, RAGAS: :mod:`rageval.data.formats`) produces the same
:class:`GenericRecord`, so there is one conversion into rageval's types (:func:`to_item`).

Semantics (docs/score.md#semantics):

* ``units`` are numbered ``[1]``, ``[2]``, ... in order; a unit's ``source_ids``
  name ids of ``sources`` (declared provenance); a unit without them declares none
  and is re-attributed against the sources;
* ``contexts`` (strings or ``{text, title}``): with ``sources``, they are units
  without provenance; **without** ``sources``, each context is a unit that is its
  own source, so grounded scores equal emitted ones by construction;
* ``units`` without ``sources``: the same, each unit its own source (a unit that
  declares ``source_ids`` then is an error: there is nothing to declare);
* ``answers`` (short answers, aliases) and ``qa_pairs`` feed answer-in-context,
  str-EM (qa_pairs) and answer F1 (answers); a long ``reference`` feeds ROUGE-Lsum,
  and answer F1 only when no short ``answers`` are given; ``answer_lists`` (a list
  question's answers, each with its aliases) feed QAMPARI precision/recall/F1 and
  ``claims`` claims recall;
* ``answer_claims`` (the answer's claims as the file states them, e.g. RAGChecker's
  ``response_claims``) are what claim support checks instead of the answer's sentences.

>>> rec = GenericRecord.model_validate({"id": "q1", "question": "Capital of France?", "answer": "Paris [1].",
...                                     "contexts": ["Paris is the capital of France."], "answers": ["Paris"]})
>>> item = to_item(rec, "f.jsonl line 1")
>>> [(u.text, u.source_ids) for u in item.units], [s.id for s in item.sources], item.self_sourced
([('Paris is the capital of France.', ('c1',))], ['c1'], True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from rageval.errors import ConfigError
from rageval.limits import check_text_sizes
from rageval.registry import did_you_mean
from rageval.types import SourceSnippet, Unit

__all__ = [
    "FIELDS",
    "ContextIn",
    "GenericRecord",
    "QAPairIn",
    "ScoreInputError",
    "ScoreItem",
    "SourceIn",
    "UnitIn",
    "json_schema",
    "to_item",
    "validate_record",
]


class ScoreInputError(ConfigError):
    """An input file that cannot be scored; the message names the file, the line (or item) and the field.

    A :class:`~rageval.errors.ConfigError`: wherever it is raised (``rageval score``, a suite's
    ``dataset: {format: ...}``, ``calibrate``), the CLI prints it in one line and exits with 2."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UnitIn(_Model):
    """One numbered unit the reader saw: ``[k]`` is the k-th unit."""

    text: StrictStr
    title: StrictStr | None = None
    source_ids: list[StrictStr] | None = Field(
        None, description="ids of `sources` this unit declares it came from; absent or null: declares nothing"
    )

    @field_validator("source_ids")
    @classmethod
    def _non_empty(cls, v):
        if v is not None and not v:
            raise ValueError("source_ids=[] is ambiguous: leave it out (or null) for 'declares nothing'")
        return v


class ContextIn(_Model):
    """A plain context passage (a unit without declared provenance)."""

    text: StrictStr
    title: StrictStr | None = None


class SourceIn(_Model):
    """A source the units stand for (a retrieved passage or sentence)."""

    id: StrictStr | StrictInt
    text: StrictStr
    title: StrictStr | None = None
    paragraph_id: StrictStr | StrictInt | None = Field(
        None, description="the paragraph / document it belongs to (evidence-F1, gold coverage); default: its id"
    )


class QAPairIn(BaseModel):
    """An ASQA-style qa_pair: its short answers (other keys such as `question` or `context` are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    short_answers: list[StrictStr]


#: top-level fields of the generic layout (for did-you-mean hints)
FIELDS = (
    "id",
    "question",
    "answer",
    "units",
    "contexts",
    "sources",
    "answers",
    "qa_pairs",
    "reference",
    "answer_lists",
    "claims",
    "answer_claims",
    "gold_docs",
    "evidence",
    "retrieved",
    "system",
    "setting",
    "input_tokens",
    "meta",
)


class GenericRecord(_Model):
    """One question answered by one system (docs/score.md#the-generic-layout)."""

    id: StrictStr | StrictInt | None = Field(
        None, description="question id; questions are matched across files by id, else by question text"
    )
    question: StrictStr
    answer: StrictStr = Field(description="the answer, with [k] citation markers (unit k)")
    units: list[UnitIn] | None = Field(None, description="the context the reader saw, unit k is [k]")
    contexts: list[StrictStr | ContextIn] | None = Field(
        None, description="plain contexts instead of units (each one unit)"
    )
    sources: list[SourceIn] | None = Field(None, description="source texts the units stand for")
    answers: list[StrictStr] | None = Field(None, description="short gold answers (aliases: any one counts)")
    qa_pairs: list[list[StrictStr] | QAPairIn] | None = Field(
        None, description="ASQA-style: per disambiguated question, its short answers"
    )
    reference: StrictStr | list[StrictStr] | None = Field(
        None,
        description="a long reference answer, or several (ROUGE-Lsum; answer F1 when no short answers are given)",
    )
    answer_lists: list[list[StrictStr]] | None = Field(
        None,
        description="a list question's gold answers (QAMPARI), each as its aliases: QAMPARI precision/recall/F1",
    )
    claims: list[StrictStr] | None = Field(
        None, description="gold claims the answer should entail (ALCE's ELI5 claims): claims recall, through the judge"
    )
    answer_claims: list[StrictStr] | None = Field(
        None,
        description="the answer's own claims (RAGChecker's response_claims): claim support checks these instead "
        "of the answer's sentences",
    )
    gold_docs: list[StrictStr] | None = Field(None, description="ids of gold documents or sources")
    evidence: list[list[StrictStr]] | None = Field(None, description="per annotator, gold evidence paragraph ids")
    retrieved: list[StrictStr] | None = Field(None, description="ranked retrieved ids (default: the sources' ids)")
    system: StrictStr | None = Field(None, description="the system that answered (one setting per system)")
    setting: StrictStr | None = Field(None, description="the system's configuration (joined to system)")
    input_tokens: NonNegativeInt | None = Field(None, description="the reader's input tokens, when known")
    meta: dict[str, Any] | None = Field(None, description="anything else; kept out of scoring")

    @field_validator("answers", mode="before")
    @classmethod
    def _one_answer(cls, v):
        return [v] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _consistent(self):
        if self.units is not None and self.contexts is not None:
            raise ValueError("give `units` or `contexts`, not both")
        if not self.question.strip():
            raise ValueError("field 'question' is empty")
        ids = [str(s.id) for s in self.sources or ()]
        seen: set[str] = set()
        for i, sid in enumerate(ids):
            if sid in seen:
                raise ValueError(f"sources[{i}].id {sid!r} appears twice: source ids must be unique per question")
            seen.add(sid)
        for k, u in enumerate(self.units or (), 1):
            if u.source_ids is None:
                continue
            if self.sources is None:
                raise ValueError(
                    f"units[{k - 1}] declares source_ids {u.source_ids} but the line has no `sources`: "
                    "add the sources, or leave source_ids out"
                )
            for sid in u.source_ids:
                if sid not in seen:
                    hint = did_you_mean(sid, seen)
                    raise ValueError(f"units[{k - 1}].source_ids names {sid!r}, which is not in `sources`.{hint}")
        return self


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one line of the generic layout."""
    return GenericRecord.model_json_schema()


def _loc(loc: tuple) -> str:
    out = ""
    for p in loc:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def validate_record(obj: Any, where: str, *, known: tuple[str, ...] = FIELDS) -> GenericRecord:
    """``obj`` as a :class:`GenericRecord`, else a :class:`ScoreInputError` naming ``where`` and the field."""
    if not isinstance(obj, dict):
        raise ScoreInputError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    check_text_sizes(obj, where, error=ScoreInputError)  # a text over the limit costs minutes downstream
    try:
        return GenericRecord.model_validate(obj)
    except ValidationError as err:
        raise ScoreInputError(format_validation(err, where, known)) from None


def format_validation(err: ValidationError, where: str, known: tuple[str, ...] = FIELDS) -> str:
    """One line per problem (at most 5): ``where: field 'x': what (fix)``."""
    lines = []
    for e in err.errors()[:5]:
        loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p in ("str", "int", "list[str]")))
        name = _loc(loc)
        if e["type"] == "extra_forbidden":
            hint = did_you_mean(loc[-1], known) if len(loc) == 1 else ""
            lines.append(f"{where}: unknown field {name!r}.{hint or ' Put extra data under `meta`.'}")
        elif e["type"] == "missing":
            lines.append(f"{where}: missing required field {name!r}")
        elif e["type"] == "value_error":
            msg = str(e["msg"]).removeprefix("Value error, ")
            lines.append(f"{where}: {f'field {name!r}: ' if name else ''}{msg}")
        else:
            got = e.get("input")
            lines.append(f"{where}: field {name!r}: {e['msg']} (got {type(got).__name__}: {got!r:.60})")
    more = len(err.errors()) - 5
    if more > 0:
        lines.append(f"{where}: ... and {more} more problem(s)")
    return "\n".join(lines)


@dataclass(frozen=True)
class ScoreItem:
    """One line of an input file in rageval's types: what one system answered to one question.

    ``units`` are what the reader saw (unit k is ``[k]``), ``sources`` the source
    texts (one :class:`~rageval.types.SourceSnippet` each, kept whole),
    ``self_sourced`` is True when each unit is its own source (contexts only).
    ``gold`` holds ``answers``, ``qa_pairs``, ``reference``, ``gold_doc_ids`` and
    ``evidence``; ``retrieved`` the ranked retrieved ids, None when the line says nothing about retrieval
    (neither ``retrieved`` nor ``sources``: retrieval recall and gold coverage are then undefined, never 0);
    ``where`` names the file and line for messages; ``answer_claims`` the answer's own claims when the line
    gives them (claim support), else None.  ``system`` and ``setting`` are the line's own values, kept apart: the
    pair (with the file) is the setting's identity, never a name joined from them
    (:func:`rageval.data.formats.match.assign_settings`).
    """

    where: str
    question: str
    answer: str
    units: tuple[Unit, ...]
    sources: tuple[SourceSnippet, ...]
    gold: dict[str, Any]
    retrieved: tuple[str, ...] | None
    id: str | None = None
    system: str | None = None
    setting: str | None = None
    self_sourced: bool = False
    input_tokens: int | None = None
    file_line: tuple[str, int | str] = ("", 0)
    meta: dict[str, Any] = field(default_factory=dict)
    answer_claims: tuple[str, ...] | None = None

    def example_fields(self) -> dict[str, Any]:
        """The question and the gold as :class:`~rageval.data.schema.Example` keywords (the gold's keys are
        Example's field names), for every reader that turns a line into an example."""
        return {"question": self.question, **self.gold}


def _contexts(rec: GenericRecord) -> list[tuple[str, str | None]]:
    """``(text, title)`` of each unit or context."""
    if rec.units is not None:
        return [(u.text, u.title) for u in rec.units]
    return [(c, None) if isinstance(c, str) else (c.text, c.title) for c in rec.contexts or ()]


def _sources_and_units(rec: GenericRecord) -> tuple[tuple[SourceSnippet, ...], tuple[Unit, ...], bool]:
    """``(sources, units, self_sourced)``: the line's sources and its units (which declare what they
    declare), or, without sources, each unit (context) its own source."""
    if rec.sources is not None:
        sources = tuple(
            SourceSnippet(
                id=str(s.id),
                text=s.text,
                doc_id=str(s.paragraph_id) if s.paragraph_id is not None else str(s.id),
                title=s.title,
                position=0,
                doc_rank=i,
            )
            for i, s in enumerate(rec.sources)
        )
        if rec.units is not None:
            units = tuple(Unit(u.text, tuple(u.source_ids) if u.source_ids else None, u.title) for u in rec.units)
        else:
            units = tuple(Unit(text, None, title) for text, title in _contexts(rec))
        return sources, units, False
    ctxs = _contexts(rec)
    sources = tuple(
        SourceSnippet(id=f"c{k}", text=text, doc_id=f"c{k}", title=title, position=0, doc_rank=k - 1)
        for k, (text, title) in enumerate(ctxs, 1)
    )
    units = tuple(Unit(text, (f"c{k}",), title) for k, (text, title) in enumerate(ctxs, 1))
    return sources, units, bool(ctxs)


def _retrieved(rec: GenericRecord, sources: tuple[SourceSnippet, ...]) -> tuple[str, ...] | None:
    """The given ranking, else the sources' documents in order; None when the line says nothing about what was
    retrieved (plain contexts, each its own source)."""
    if rec.retrieved is not None:
        return tuple(rec.retrieved)
    return tuple(dict.fromkeys(s.doc_id for s in sources)) if rec.sources is not None else None


def _gold(rec: GenericRecord) -> dict[str, Any]:
    """``answers``, ``qa_pairs`` (short answers per pair), non-blank ``reference`` s, ``gold_doc_ids``, ``evidence``."""
    qa_pairs = tuple(tuple(p.short_answers if isinstance(p, QAPairIn) else p) for p in rec.qa_pairs or ())
    return {
        "answers": tuple(rec.answers or ()),
        "qa_pairs": qa_pairs,
        "reference": tuple(
            r for r in ([rec.reference] if isinstance(rec.reference, str) else rec.reference or ()) if r.strip()
        ),
        "answer_lists": tuple(tuple(a) for a in rec.answer_lists or ()),
        "claims": tuple(rec.claims or ()),
        "gold_doc_ids": tuple(rec.gold_docs or ()),
        "evidence": tuple(tuple(e) for e in rec.evidence or ()),
    }


def to_item(rec: GenericRecord, where: str, *, file_line: tuple[str, int | str] = ("", 0)) -> ScoreItem:
    """The :class:`ScoreItem` of a validated line (semantics in the module doc)."""
    sources, units, self_sourced = _sources_and_units(rec)
    return ScoreItem(
        where=where,
        question=rec.question,
        answer=rec.answer,
        units=units,
        sources=sources,
        gold=_gold(rec),
        retrieved=_retrieved(rec, sources),
        id=None if rec.id is None else str(rec.id),
        system=rec.system,
        setting=rec.setting,
        self_sourced=self_sourced,
        input_tokens=rec.input_tokens,
        file_line=file_line,
        answer_claims=None if rec.answer_claims is None else tuple(rec.answer_claims),
    )
