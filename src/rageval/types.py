"""The data model (see docs/design.md): source snippets, units, contexts, answers, records.

Every class is an immutable (frozen) dataclass with ``to_dict``/``from_dict`` that
round-trip through JSON exactly.  Provenance is explicit: ``Unit.source_ids is
None`` means "declares nothing"; an empty list is rejected, because it would be
ambiguous between "declares nothing" and "declares the empty set".

>>> u = Unit("Paris is the capital of France.", source_ids=("d1.s0",), title="Paris")
>>> Unit.from_dict(u.to_dict()) == u
True
>>> Unit("x", source_ids=[])
Traceback (most recent call last):
...
ValueError: Unit.source_ids=[] is ambiguous: use None for 'declares no provenance' or list the source ids
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rageval import token_counts as _tokens

__all__ = [
    "SourceSnippet",
    "Unit",
    "Context",
    "CitedSentence",
    "Answer",
    "Setting",
    "Record",
    "STATUSES",
    "join_texts",
]

#: Record statuses. ``ok`` is scored; every other status is a counted failure.
STATUSES = (
    "ok",
    "budget_check",
    "prompt_overflow",
    "reader_error",
    "judge_error",
    "compressor_error",
    "unavailable",
)


def join_texts(texts: Iterable[str]) -> str:
    """How a unit joins the texts of several source snippets: each stripped, empty ones left out, one space between.

    The compressors build their units with it, and grounded premises write declared snippets with it, so a unit
    whose text is the join of its declared snippets has a grounded premise equal to its emitted one
    (docs/design.md#premises).

    >>> join_texts(["Paris is the capital. ", "", " It has museums."])
    'Paris is the capital. It has museums.'
    """
    return " ".join(t.strip() for t in texts if t.strip())


def _tuple_of_str(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError(f"{where} must be a list of strings, got {type(value).__name__}: {value!r}")
    out = tuple(value)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise TypeError(f"{where}[{i}] must be a string, got {type(v).__name__}: {v!r}")
    return out


def _check_str(value: Any, where: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise TypeError(f"{where} must be a string, got {type(value).__name__}: {value!r}")


@dataclass(frozen=True)
class SourceSnippet:
    """One sentence of source text with a stable id such as ``d3.s2``.

    ``doc_id`` is the parent document (or paragraph) id, ``position`` the sentence's
    index inside it, ``doc_rank`` the document's retrieval rank (0-based; source
    order = ``(doc_rank, position)``).
    """

    id: str
    text: str
    doc_id: str
    title: str | None = None
    position: int = 0
    doc_rank: int = 0

    def __post_init__(self) -> None:
        _check_str(self.id, "SourceSnippet.id")
        if not self.id:
            raise ValueError("SourceSnippet.id must be a non-empty string")
        _check_str(self.text, f"SourceSnippet[{self.id}].text")
        _check_str(self.doc_id, f"SourceSnippet[{self.id}].doc_id")
        _check_str(self.title, f"SourceSnippet[{self.id}].title", optional=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "doc_id": self.doc_id,
            "title": self.title,
            "position": self.position,
            "doc_rank": self.doc_rank,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SourceSnippet:
        return cls(
            id=d["id"],
            text=d["text"],
            doc_id=d.get("doc_id", d["id"].split(".")[0]),
            title=d.get("title"),
            position=int(d.get("position", 0)),
            doc_rank=int(d.get("doc_rank", 0)),
        )


@dataclass(frozen=True)
class Unit:
    """What the reader sees as ``[k]``: text plus the source ids it declares (or None)."""

    text: str
    source_ids: tuple[str, ...] | None = None
    title: str | None = None

    def __post_init__(self) -> None:
        _check_str(self.text, "Unit.text")
        _check_str(self.title, "Unit.title", optional=True)
        if self.source_ids is not None:
            ids = _tuple_of_str(self.source_ids, "Unit.source_ids")
            if not ids:
                raise ValueError(
                    "Unit.source_ids=[] is ambiguous: use None for 'declares no provenance' or list the source ids"
                )
            object.__setattr__(self, "source_ids", ids)

    @property
    def declares_provenance(self) -> bool:
        return self.source_ids is not None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "text": self.text,
            "source_ids": list(self.source_ids) if self.source_ids is not None else None,
        }
        if self.title is not None:
            d["title"] = self.title
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Unit:
        return cls(text=d["text"], source_ids=d.get("source_ids"), title=d.get("title"))


@dataclass(frozen=True)
class Context:
    """The ordered units a compressor produced for one question.

    ``budget_tokens`` is the nominal budget in tokens (None = unbounded, e.g.
    identity), ``budget`` the budget as the suite wrote it (``0.25`` = fraction of
    the retrieved tokens, ``160`` = absolute).  ``achieved_tokens`` (the units'
    text), ``retrieved_tokens`` (all the question's snippet texts) and
    ``achieved_ratio`` = achieved / retrieved (None when nothing was retrieved)
    follow the one definition in :mod:`rageval.token_counts`: titles count in neither.
    :meth:`measure` builds a Context with its counts made that way.
    """

    units: tuple[Unit, ...]
    achieved_tokens: int
    retrieved_tokens: int
    budget_tokens: int | None = None
    budget: float | int | None = None

    def __post_init__(self) -> None:
        units = tuple(self.units)
        for i, u in enumerate(units):
            if not isinstance(u, Unit):
                raise TypeError(f"Context.units[{i}] must be a Unit, got {type(u).__name__}")
        object.__setattr__(self, "units", units)

    @classmethod
    def measure(
        cls,
        units: Iterable[Unit],
        *,
        tokenizer: Any,
        retrieved_tokens: int,
        budget_tokens: int | None = None,
        budget: float | None = None,
    ) -> Context:
        """A Context whose ``achieved_tokens`` is counted from ``units`` (:func:`rageval.token_counts.evidence_tokens`)."""
        ctx = cls(
            units=tuple(units),
            achieved_tokens=0,
            retrieved_tokens=retrieved_tokens,
            budget_tokens=budget_tokens,
            budget=budget,
        )  # checks the units first
        object.__setattr__(ctx, "achieved_tokens", _tokens.evidence_tokens(ctx.units, tokenizer))
        return ctx

    @property
    def achieved_ratio(self) -> float | None:
        return _tokens.achieved_ratio(self.achieved_tokens, self.retrieved_tokens)

    @property
    def declares_any_provenance(self) -> bool:
        return any(u.source_ids is not None for u in self.units)

    def to_dict(self) -> dict[str, Any]:
        return {
            "units": [u.to_dict() for u in self.units],
            "budget": self.budget,
            "budget_tokens": self.budget_tokens,
            "achieved_tokens": self.achieved_tokens,
            "retrieved_tokens": self.retrieved_tokens,
            "achieved_ratio": self.achieved_ratio,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Context:
        return cls(
            units=tuple(Unit.from_dict(u) for u in d["units"]),
            achieved_tokens=int(d["achieved_tokens"]),
            retrieved_tokens=int(d["retrieved_tokens"]),
            budget_tokens=d.get("budget_tokens"),
            budget=d.get("budget"),
        )


@dataclass(frozen=True)
class CitedSentence:
    """One claim of an answer.

    ``text`` is the hypothesis (all citation markers removed); ``raw`` the sentence
    as written; ``citations`` the valid unit numbers (1-based) kept after de-duplication
    and the cap; ``invalid`` the out-of-range or ``[0]`` numbers as written;
    ``capped`` the valid numbers dropped by the cap.
    """

    text: str
    raw: str
    citations: tuple[int, ...] = ()
    invalid: tuple[str, ...] = ()
    capped: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "raw": self.raw,
            "citations": list(self.citations),
            "invalid": list(self.invalid),
            "capped": list(self.capped),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CitedSentence:
        return cls(
            text=d["text"],
            raw=d["raw"],
            citations=tuple(d.get("citations", ())),
            invalid=tuple(d.get("invalid", ())),
            capped=tuple(d.get("capped", ())),
        )


@dataclass(frozen=True)
class Answer:
    """Generated text with its sentences (claims) and parsed citations."""

    text: str
    sentences: tuple[CitedSentence, ...] = ()
    mode: str = "default"

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "mode": self.mode,
            "sentences": [s.to_dict() for s in self.sentences],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Answer:
        return cls(
            text=d["text"],
            sentences=tuple(CitedSentence.from_dict(s) for s in d.get("sentences", ())),
            mode=d.get("mode", "default"),
        )


@dataclass(frozen=True)
class Setting:
    """One operating point: a compressor at a budget, read by a reader."""

    name: str
    compressor: str
    budget: float | int | None = None
    reader: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "compressor": self.compressor, "budget": self.budget, "reader": self.reader}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Setting:
        return cls(name=d["name"], compressor=d["compressor"], budget=d.get("budget"), reader=d.get("reader"))


def _clean_metric(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


@dataclass(frozen=True)
class Record:
    """One question x one setting, as written to ``records.jsonl``."""

    question_id: str
    setting: Setting
    status: str
    context: Context | None = None
    sources: tuple[SourceSnippet, ...] = ()
    answer: Answer | None = None
    metrics: Mapping[str, Any] = field(default_factory=dict)
    input_hash: str | None = None
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"Record.status={self.status!r} is not one of {STATUSES}")
        object.__setattr__(self, "sources", tuple(self.sources))
        object.__setattr__(self, "metrics", {k: _clean_metric(v) for k, v in dict(self.metrics).items()})
        object.__setattr__(self, "extra", dict(self.extra))

    def to_dict(self) -> dict[str, Any]:
        return {
            "question_id": self.question_id,
            "setting": self.setting.to_dict(),
            "status": self.status,
            "error": self.error,
            "input_hash": self.input_hash,
            "context": self.context.to_dict() if self.context is not None else None,
            "sources": [s.to_dict() for s in self.sources],
            "answer": self.answer.to_dict() if self.answer is not None else None,
            "metrics": dict(self.metrics),
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Record:
        return cls(
            question_id=d["question_id"],
            setting=Setting.from_dict(d["setting"]),
            status=d["status"],
            context=Context.from_dict(d["context"]) if d.get("context") is not None else None,
            sources=tuple(SourceSnippet.from_dict(s) for s in d.get("sources", ())),
            answer=Answer.from_dict(d["answer"]) if d.get("answer") is not None else None,
            metrics=d.get("metrics", {}),
            input_hash=d.get("input_hash"),
            error=d.get("error"),
            extra=d.get("extra", {}),
        )
