"""The typed input of per-record scoring, built once per record.

:class:`ScoringInput` carries what the diagnostics read from one scored record
(question id, the context units and the text the reader was shown for each,
the source snippets, the answer, the gold, retrieved ids, reader tokens);
:class:`ScoringOptions` the resolved options (attribution options, retrieval
``k``).  The suite runner builds them from a fresh record
(:meth:`ScoringInput.build`), ``rageval rescore`` from a saved one
(:meth:`ScoringInput.from_record`); :func:`rageval.diagnostics.dispatch.score`
scores both the same way.  The suite object never travels into scoring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rageval.diagnostics.attribution.options import AttributionOptions
from rageval.scoring import ScoringConfig
from rageval.types import Record, SourceSnippet, Unit

__all__ = ["Gold", "ScoringInput", "ScoringOptions", "scoring_options"]


@dataclass(frozen=True)
class Gold:
    """The gold of one question: short answers, ASQA qa-pairs, gold documents, evidence per annotator,
    QASPER's short answers per annotator."""

    answers: tuple[str, ...] = ()
    qa_pairs: tuple[tuple[str, ...], ...] = ()
    gold_doc_ids: tuple[str, ...] = ()
    evidence: tuple[tuple[str, ...], ...] = ()
    annotator_answers: tuple[tuple[str, ...], ...] = ()
    reference: tuple[str, ...] = ()  # long reference answers: answer F1 (when no short answers) and ROUGE-Lsum
    answer_lists: tuple[tuple[str, ...], ...] = ()  # list questions (QAMPARI): each gold answer's aliases
    claims: tuple[str, ...] = ()  # ELI5's gold claims (claims recall)

    @classmethod
    def of(cls, example: Any) -> Gold:
        """From a :class:`rageval.data.Example` (or anything with the same attributes)."""
        return cls(
            answers=tuple(example.answers),
            qa_pairs=tuple(tuple(p) for p in example.qa_pairs),
            gold_doc_ids=tuple(example.gold_doc_ids),
            evidence=tuple(tuple(e) for e in example.evidence),
            annotator_answers=tuple(tuple(a) for a in getattr(example, "annotator_answers", ())),
            reference=tuple(getattr(example, "reference", ())),
            answer_lists=tuple(tuple(a) for a in getattr(example, "answer_lists", ())),
            claims=tuple(getattr(example, "claims", ())),
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Gold:
        return cls(
            answers=tuple(d.get("answers", ())),
            qa_pairs=tuple(tuple(p) for p in d.get("qa_pairs", ())),
            gold_doc_ids=tuple(d.get("gold_doc_ids", ())),
            evidence=tuple(tuple(e) for e in d.get("evidence", ())),
            annotator_answers=tuple(tuple(a) for a in d.get("annotator_answers", ())),
            reference=tuple(d.get("reference", ())),
            answer_lists=tuple(tuple(a) for a in d.get("answer_lists", ())),
            claims=tuple(d.get("claims", ())),
        )

    def to_dict(self) -> dict[str, Any]:
        out = {
            "answers": list(self.answers),
            "qa_pairs": [list(p) for p in self.qa_pairs],
            "gold_doc_ids": list(self.gold_doc_ids),
            "evidence": [list(e) for e in self.evidence],
        }
        if self.annotator_answers:  # QASPER only
            out["annotator_answers"] = [list(a) for a in self.annotator_answers]
        if self.reference:  # long references (rageval score's inputs) only
            out["reference"] = list(self.reference)
        if self.answer_lists:  # list questions (QAMPARI) only
            out["answer_lists"] = [list(a) for a in self.answer_lists]
        if self.claims:  # ELI5 only
            out["claims"] = list(self.claims)
        return out

    def has(self, name: str) -> bool:
        return bool(getattr(self, name))

    @property
    def aliases(self) -> list[list[str]] | list[str]:
        """Answer-in-context's gold: the qa-pairs' short answers, else the answers as one alias group."""
        return [list(p) for p in self.qa_pairs] if self.qa_pairs else list(self.answers)

    @property
    def f1_aliases(self) -> list[str]:
        """Answer F1's gold: the short answers, else the long references (docs/score.md#semantics)."""
        return list(self.answers or self.reference)


@dataclass(frozen=True)
class ScoringOptions:
    """Resolved scoring options (from a suite, or given directly)."""

    attribution: AttributionOptions = field(default_factory=AttributionOptions)
    retrieval_k: int | None = None

    @property
    def alce_compat(self) -> bool:
        return self.attribution.alce_compat

    @property
    def max_citations(self) -> int | None:
        return self.attribution.max_citations


@dataclass(frozen=True)
class ScoringInput:
    """What the diagnostics read from one record (see the module doc)."""

    question_id: str
    answer: str
    units: tuple[Unit, ...]
    shown: tuple[str, ...]  # each unit as the reader's prompt showed it
    sources: tuple[SourceSnippet, ...]
    gold: Gold
    #: the ranked retrieved document ids; None: the input says nothing about retrieval (recall, coverage undefined)
    retrieved_ids: tuple[str, ...] | None = ()
    #: each unit is its own source (plain contexts): the units' provenance names no document (coverage undefined)
    self_sourced: bool = False
    reader_input_tokens: int | None = None
    budget_tokens: int | None = None
    achieved_tokens: int | None = None
    retrieved_tokens: int | None = None
    question: str = ""  # the question's text (a list question's ALCE citation sentences start with it)
    #: the claims of the answer its file supplies (RAGChecker's ``response_claims``); None: its sentences
    answer_claims: tuple[str, ...] | None = None
    #: fixed mappings: each unit's (0-based) recovered source ids, kept from a saved record instead of recovering
    #: them again (the audit's fixed mode; :mod:`rageval.diagnostics.attribution.fixed`); None: recovered as usual
    recovered: Mapping[int, tuple[str, ...]] | None = None
    #: what the reader's prompt puts between two shown units (its template's ``unit_separator``)
    unit_separator: str = "\n"

    @property
    def list_question(self) -> str | None:
        """The question of a list question (gold ``answer_lists``: QAMPARI), else None: in ALCE mode its
        citation sentences are ALCE's QAMPARI ones (the comma-split answer, each piece after the question)."""
        return self.question if self.gold.answer_lists else None

    @classmethod
    def build(
        cls,
        *,
        question_id: str,
        answer: str,
        context: Any,
        sources: Sequence[SourceSnippet],
        gold: Gold,
        evidence_text: Callable[[Unit], str],
        retrieved_ids: Sequence[str] | None = (),
        self_sourced: bool = False,
        reader_input_tokens: int | None = None,
        question: str = "",
        answer_claims: Sequence[str] | None = None,
    ) -> ScoringInput:
        """From a context and an answer; ``evidence_text`` renders a unit as the reader's template shows it."""
        return cls(
            question_id=question_id,
            answer=answer,
            units=tuple(context.units),
            shown=tuple(evidence_text(u) for u in context.units),
            sources=tuple(sources),
            gold=gold,
            retrieved_ids=None if retrieved_ids is None else tuple(retrieved_ids),
            self_sourced=self_sourced,
            reader_input_tokens=reader_input_tokens,
            budget_tokens=context.budget_tokens,
            achieved_tokens=context.achieved_tokens,
            retrieved_tokens=context.retrieved_tokens,
            question=question,
            answer_claims=None if answer_claims is None else tuple(answer_claims),
            unit_separator=_separator_of(evidence_text),
        )

    @classmethod
    def from_record(
        cls, record: Record, evidence_text: Callable[[Unit], str], *, fixed_recovery: bool = False
    ) -> ScoringInput:
        """From a saved ``ok`` record (``rageval rescore``); ``fixed_recovery``: with the recovered source ids the
        record saved (its ``extra.attribution.recovery``), kept instead of recovered again (the audit's fixed
        mappings)."""
        if record.context is None:
            raise ValueError(f"record {record.question_id!r} ({record.setting.name}) has no context to score")
        extra = record.extra or {}
        built = cls.build(
            question_id=record.question_id,
            answer=record.answer.text if record.answer else "",
            context=record.context,
            sources=record.sources,
            gold=Gold.from_dict(extra.get("gold") or {}),
            evidence_text=evidence_text,
            retrieved_ids=extra.get("retrieved_doc_ids", ()),
            self_sourced=bool(extra.get("self_sourced")),
            reader_input_tokens=extra.get("reader_input_tokens"),
            question=extra.get("question", ""),
            answer_claims=extra.get("answer_claims"),
        )
        if not fixed_recovery:
            return built
        from rageval.diagnostics.attribution.fixed import saved_recovery

        return replace(built, recovered=saved_recovery(extra))

    def unit_dicts(self) -> list[dict[str, Any]]:
        return [u.to_dict() for u in self.units]

    def source_dicts(self) -> list[dict[str, Any]]:
        """The sources as the attribution functions take them (``doc_id``: grounded premises group by document)."""
        return [{"id": s.id, "text": s.text, "title": s.title, "doc_id": s.doc_id} for s in self.sources]

    def doc_of(self) -> dict[str, str]:
        """Source id -> its document (paragraph) id."""
        return {s.id: s.doc_id for s in self.sources}


def scoring_options(scoring: ScoringConfig) -> ScoringOptions:
    """The typed, validated :class:`ScoringOptions` of a run's :class:`~rageval.scoring.ScoringConfig`."""
    return ScoringOptions(attribution=AttributionOptions.of(scoring), retrieval_k=scoring.retrieval_k)


def _separator_of(evidence_text: Callable[[Unit], str]) -> str:
    """The ``unit_separator`` of the prompt template whose ``evidence_text`` this is (a bound
    :meth:`PromptTemplate.evidence_text <rageval.readers.template.PromptTemplate.evidence_text>`); the default
    template's ``"\\n"`` for any other callable."""
    separator = getattr(getattr(evidence_text, "__self__", None), "unit_separator", "\n")
    return separator if isinstance(separator, str) else "\n"
