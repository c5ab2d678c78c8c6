"""One example schema for every dataset (docs/datasets.md; docs/design.md#data-model,
#source-snippets).

An :class:`Example` is one question with its gold answers, its gold evidence
and its candidate documents, each already segmented into
:class:`~rageval.types.SourceSnippet` objects with stable ids (``d3.s2`` =
document ``d3``, sentence 2).  Every field is immutable and the whole example
round-trips through JSON with ``to_dict``/``from_dict``.

Field meanings (empty = "the dataset gives none"):

* ``answers``: gold answer aliases (any one counts).  ASQA: every short answer of
  every qa_pair; QASPER: one reference string per annotator, built as in the
  official evaluation (extractive spans joined with ``", "``, else the free-form
  answer, else ``"Yes"``/``"No"``, else ``"Unanswerable"``).
* ``qa_pairs``: ASQA only: per disambiguated question, its short answers (the
  ``str_em`` references).
* ``gold_doc_ids``: ids of the gold documents, in the id space of ``documents``
  (or of the corpus for ASQA), for ``retrieval_recall``.
* ``supporting_facts``: gold sentence ids (HotpotQA/2Wiki), e.g. ``("d3.s0",)``.
* ``evidence``: per annotator, the gold evidence paragraph ids (QASPER).
* ``annotator_answers``: QASPER only: per annotator, the short answers its str-EM
  looks for, all of which must appear (the extractive spans, else the yes/no word,
  else the free-form answer); ``()`` for an annotator who marked the question
  unanswerable (docs/design.md#string-exact-match).
* ``reference``: long reference answers (RAGChecker's ``gt_answer``, RAGAS's
  ``reference``, ALCE's ``answer``): answer F1 uses them when no short ``answers``
  are given; answer-in-context and str-EM never do (docs/score.md#semantics).
* ``answer_lists``: list questions (QAMPARI): every gold answer of the list, each as
  its aliases (QAMPARI precision, recall and F1; ALCE's QAMPARI citation sentences).
* ``claims``: ELI5: the gold claims (sub-claims of the reference answer) that
  ``claims_recall`` asks the judge about.
* ``cluster_id``: the unit the cluster bootstrap resamples (QASPER: paper id).
* ``answer_type``: ``"span"``, ``"yes_no"``, ``"unanswerable"``, ``"free_form"``,
  ``"long_form"`` (ASQA) or ``None``.

>>> doc = Document("d0", "Paris is the capital. It is big.", title="Paris",
...                snippets=tuple(passage_to_snippets("Paris is the capital. It is big.", doc_id="d0", title="Paris")))
>>> ex = Example("q1", "What is the capital of France?", answers=("Paris",), documents=(doc,), gold_doc_ids=("d0",))
>>> [s.id for s in ex.snippets]
['d0.s0', 'd0.s1']
>>> ex.paragraph_of["d0.s1"]
'd0'
>>> Example.from_dict(ex.to_dict()) == ex
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval.text.segment import split_sentences
from rageval.types import SourceSnippet

__all__ = ["Document", "Example", "ANSWER_TYPES", "passage_to_snippets"]

ANSWER_TYPES = ("span", "yes_no", "unanswerable", "free_form", "long_form")


def _strs(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError(f"{where} must be a list of strings, got {type(value).__name__}: {value!r}")
    out = tuple(value)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise TypeError(f"{where}[{i}] must be a string, got {type(v).__name__}: {v!r}")
    return out


@dataclass(frozen=True)
class Document:
    """A candidate passage (or paper paragraph): id, title, full text and its sentences.

    ``id`` is the stable document id that prefixes its snippet ids; ``source_key``
    keeps the dataset's own key for it (a HotpotQA title, a MuSiQue ``idx``).
    """

    id: str
    text: str
    title: str | None = None
    snippets: tuple[SourceSnippet, ...] = ()
    source_key: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise TypeError(f"Document.id must be a non-empty string, got {self.id!r}")
        if not isinstance(self.text, str):
            raise TypeError(f"Document[{self.id}].text must be a string, got {type(self.text).__name__}")
        snippets = tuple(self.snippets)
        for s in snippets:
            if not isinstance(s, SourceSnippet):
                raise TypeError(f"Document[{self.id}].snippets must hold SourceSnippet objects, got {type(s).__name__}")
            if s.doc_id != self.id:
                raise ValueError(f"snippet {s.id!r} has doc_id {s.doc_id!r} but sits in Document {self.id!r}")
        object.__setattr__(self, "snippets", snippets)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "text": self.text,
            "source_key": self.source_key,
            "snippets": [s.to_dict() for s in self.snippets],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Document:
        return cls(
            id=d["id"],
            text=d["text"],
            title=d.get("title"),
            snippets=tuple(SourceSnippet.from_dict(s) for s in d.get("snippets", ())),
            source_key=d.get("source_key"),
        )


@dataclass(frozen=True)
class Example:
    """One question of a dataset in rageval's schema (see the module docstring)."""

    id: str
    question: str
    answers: tuple[str, ...] = ()
    qa_pairs: tuple[tuple[str, ...], ...] = ()
    gold_doc_ids: tuple[str, ...] = ()
    supporting_facts: tuple[str, ...] = ()
    evidence: tuple[tuple[str, ...], ...] = ()
    documents: tuple[Document, ...] = ()
    cluster_id: str | None = None
    answer_type: str | None = None
    dataset: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    annotator_answers: tuple[tuple[str, ...], ...] = ()
    reference: tuple[str, ...] = ()
    answer_lists: tuple[tuple[str, ...], ...] = ()
    claims: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise TypeError(f"Example.id must be a non-empty string, got {self.id!r}")
        if not isinstance(self.question, str):
            raise TypeError(f"Example[{self.id}].question must be a string, got {type(self.question).__name__}")
        object.__setattr__(self, "answers", _strs(self.answers, f"Example[{self.id}].answers"))
        object.__setattr__(
            self,
            "qa_pairs",
            tuple(_strs(p, f"Example[{self.id}].qa_pairs[{i}]") for i, p in enumerate(self.qa_pairs)),
        )
        object.__setattr__(self, "gold_doc_ids", _strs(self.gold_doc_ids, f"Example[{self.id}].gold_doc_ids"))
        object.__setattr__(self, "reference", _strs(self.reference, f"Example[{self.id}].reference"))
        object.__setattr__(self, "claims", _strs(self.claims, f"Example[{self.id}].claims"))
        object.__setattr__(
            self,
            "answer_lists",
            tuple(_strs(a, f"Example[{self.id}].answer_lists[{i}]") for i, a in enumerate(self.answer_lists)),
        )
        object.__setattr__(
            self, "supporting_facts", _strs(self.supporting_facts, f"Example[{self.id}].supporting_facts")
        )
        object.__setattr__(
            self,
            "evidence",
            tuple(_strs(e, f"Example[{self.id}].evidence[{i}]") for i, e in enumerate(self.evidence)),
        )
        object.__setattr__(
            self,
            "annotator_answers",
            tuple(_strs(a, f"Example[{self.id}].annotator_answers[{i}]") for i, a in enumerate(self.annotator_answers)),
        )
        docs = tuple(self.documents)
        seen: set[str] = set()
        for d in docs:
            if not isinstance(d, Document):
                raise TypeError(f"Example[{self.id}].documents must hold Document objects, got {type(d).__name__}")
            if d.id in seen:
                raise ValueError(f"Example[{self.id}] has two documents with id {d.id!r}; document ids must be unique")
            seen.add(d.id)
        object.__setattr__(self, "documents", docs)
        if self.answer_type is not None and self.answer_type not in ANSWER_TYPES:
            raise ValueError(
                f"Example[{self.id}].answer_type={self.answer_type!r} is not one of {ANSWER_TYPES} (or None)"
            )
        object.__setattr__(self, "meta", dict(self.meta))

    def __hash__(self) -> int:  # meta is a dict: hash by identity fields
        return hash((self.id, self.question, self.dataset))

    # -- derived views ---------------------------------------------------
    @property
    def snippets(self) -> tuple[SourceSnippet, ...]:
        """All source snippets of the candidate documents, in document order."""
        return tuple(s for d in self.documents for s in d.snippets)

    @property
    def paragraph_of(self) -> dict[str, str]:
        """Source snippet id -> its paragraph (document) id, for ``evidence_f1``."""
        return {s.id: s.doc_id for d in self.documents for s in d.snippets}

    @property
    def str_em_references(self) -> tuple[tuple[str, ...], ...]:
        """``qa_pairs`` when the dataset has them, else one pair holding all ``answers``."""
        if self.qa_pairs:
            return self.qa_pairs
        return (self.answers,) if self.answers else ()

    def document(self, doc_id: str) -> Document:
        for d in self.documents:
            if d.id == doc_id:
                return d
        raise KeyError(f"Example[{self.id}] has no document {doc_id!r}")

    # -- serialisation ---------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "question": self.question,
            "answers": list(self.answers),
            "qa_pairs": [list(p) for p in self.qa_pairs],
            "gold_doc_ids": list(self.gold_doc_ids),
            "supporting_facts": list(self.supporting_facts),
            "evidence": [list(e) for e in self.evidence],
            "documents": [d.to_dict() for d in self.documents],
            "cluster_id": self.cluster_id,
            "answer_type": self.answer_type,
            "dataset": self.dataset,
            "meta": dict(self.meta),
        }
        if self.annotator_answers:  # QASPER only; absent elsewhere, so other datasets' input hashes do not move
            out["annotator_answers"] = [list(a) for a in self.annotator_answers]
        if self.reference:  # absent when empty, so the input hashes of datasets without it do not move
            out["reference"] = list(self.reference)
        if self.answer_lists:  # list questions (QAMPARI) only
            out["answer_lists"] = [list(a) for a in self.answer_lists]
        if self.claims:  # ELI5 only
            out["claims"] = list(self.claims)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Example:
        return cls(
            id=d["id"],
            question=d["question"],
            answers=tuple(d.get("answers", ())),
            qa_pairs=tuple(tuple(p) for p in d.get("qa_pairs", ())),
            gold_doc_ids=tuple(d.get("gold_doc_ids", ())),
            supporting_facts=tuple(d.get("supporting_facts", ())),
            evidence=tuple(tuple(e) for e in d.get("evidence", ())),
            documents=tuple(Document.from_dict(x) for x in d.get("documents", ())),
            cluster_id=d.get("cluster_id"),
            answer_type=d.get("answer_type"),
            dataset=d.get("dataset"),
            meta=d.get("meta", {}),
            annotator_answers=tuple(tuple(a) for a in d.get("annotator_answers", ())),
            reference=tuple(d.get("reference", ())),
            answer_lists=tuple(tuple(a) for a in d.get("answer_lists", ())),
            claims=tuple(d.get("claims", ())),
        )


def passage_to_snippets(
    text: str | Sequence[str],
    *,
    doc_id: str,
    title: str | None = None,
    doc_rank: int = 0,
) -> list[SourceSnippet]:
    """Segment a passage into source snippets with ids ``{doc_id}.s{i}``.

    ``text`` may be one string (segmented with :func:`split_sentences`) or a list of
    sentences already segmented by the dataset (HotpotQA, 2Wiki), kept as given.

    >>> [s.id for s in passage_to_snippets("One. Two.", doc_id="d0")]
    ['d0.s0', 'd0.s1']
    """
    if isinstance(text, str):
        sentences = split_sentences(text)
    else:
        sentences = [s.strip() for s in text]
    out = []
    for i, sent in enumerate(sentences):
        if not sent:
            continue
        out.append(
            SourceSnippet(id=f"{doc_id}.s{i}", text=sent, doc_id=doc_id, title=title, position=i, doc_rank=doc_rank)
        )
    return out
