"""The reader protocol: batched ``generate(requests) -> list[ReaderOutput]``.

A reader turns (question, numbered units) into an answer that cites units as
``[k]``.  Failures are statuses, never scores
(docs/design.md#decision-failures-are-records): ``prompt_overflow`` when
the prompt cannot fit the model's context (detected *before* generation),
``reader_error`` for anything else (a server error, a missing saved answer), each
with a message.  ``input_tokens`` is the reader's input size: the model's own
tokenizer where it has one, otherwise the suite's tokenizer on the rendered prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from rageval.errors import ModelUnavailable
from rageval.io import scrub_surrogates
from rageval.readers.template import PromptTemplate
from rageval.text.tokenize import get_tokenizer
from rageval.types import Unit

if TYPE_CHECKING:  # a backend's module imports pydantic (rageval.readers.spec); this one stays light
    from rageval.readers.spec import ReaderParams

__all__ = [
    "READER_STATUSES",
    "ReaderRequest",
    "ReaderOutput",
    "Reader",
    "ModelUnavailable",
]

READER_STATUSES = ("ok", "prompt_overflow", "reader_error")


@dataclass(frozen=True)
class ReaderRequest:
    """One question to answer from numbered units (``units[k-1]`` is ``[k]``).

    ``setting`` names the operating point; the saved reader looks answers up by it.
    """

    question_id: str
    question: str
    units: tuple[Unit, ...]
    setting: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.question_id, str) or not self.question_id:
            raise TypeError(f"ReaderRequest.question_id must be a non-empty string, got {self.question_id!r}")
        if not isinstance(self.question, str):
            raise TypeError(f"ReaderRequest[{self.question_id}].question must be a string")
        units = tuple(self.units)
        for i, u in enumerate(units):
            if not isinstance(u, Unit):
                raise TypeError(
                    f"ReaderRequest[{self.question_id}].units[{i}] must be a rageval.types.Unit, got {type(u).__name__}"
                )
        object.__setattr__(self, "units", units)


@dataclass(frozen=True)
class ReaderOutput:
    """The reader's answer (or why there is none).  Lone surrogates in ``text`` or ``error`` (valid JSON from a
    server or a file, not Unicode) become U+FFFD, so every answer can be hashed, judged and written.  ``extra``:
    what the reader says about this answer, added to its record's ``extra`` (``truncated``, ``served_model``;
    empty for most answers)."""

    text: str
    status: str = "ok"
    input_tokens: int | None = None
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in READER_STATUSES:
            raise ValueError(f"ReaderOutput.status={self.status!r} is not one of {READER_STATUSES}")
        if not isinstance(self.text, str):
            raise TypeError(f"ReaderOutput.text must be a string, got {type(self.text).__name__}")
        object.__setattr__(self, "text", scrub_surrogates(self.text))
        if isinstance(self.error, str):
            object.__setattr__(self, "error", scrub_surrogates(self.error))

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "status": self.status, "input_tokens": self.input_tokens, "error": self.error}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ReaderOutput:
        return cls(
            text=d.get("text", ""),
            status=d.get("status", "ok"),
            input_tokens=d.get("input_tokens"),
            error=d.get("error"),
        )


class Reader:
    """Base class of every reader backend.

    Subclasses set ``name``, ``needs_model`` and ``Params`` (their options: a
    :class:`~rageval.readers.spec.ReaderParams` model, which ``get_reader`` and the
    suite check) and implement :meth:`generate`.
    :meth:`info` is what identifies the reader in a record's input hash and in the
    run manifest (it never contains secrets).
    """

    name: ClassVar[str] = "reader"
    needs_model: ClassVar[bool] = False
    Params: ClassVar[type[ReaderParams]]

    def __init__(self, *, template: PromptTemplate | Mapping[str, Any] | None = None, tokenizer: Any = "regex"):
        self.template = PromptTemplate.coerce(template)
        self.tokenizer = get_tokenizer(tokenizer)

    def generate(self, requests: Sequence[ReaderRequest]) -> list[ReaderOutput]:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, requests: Sequence[ReaderRequest]) -> list[ReaderOutput]:
        return self.generate(requests)

    def count_prompt_tokens(self, request: ReaderRequest) -> int:
        """The suite tokenizer's count of the rendered prompt (for readers without a tokenizer)."""
        return self.tokenizer.count(self.template.render(request.question, request.units))

    def params(self) -> dict[str, Any]:
        return {}

    def info(self) -> dict[str, Any]:
        return {
            "reader": self.name,
            "params": self.params(),
            "template_hash": self.template.hash,
            "tokenizer": getattr(self.tokenizer, "name", repr(self.tokenizer)),
        }


def check_requests(requests: Sequence[ReaderRequest]) -> list[ReaderRequest]:
    if isinstance(requests, ReaderRequest):
        raise TypeError("generate() takes a list of ReaderRequest; wrap a single request in a list")
    out = list(requests)
    for i, r in enumerate(out):
        if not isinstance(r, ReaderRequest):
            raise TypeError(f"requests[{i}] must be a ReaderRequest, got {type(r).__name__}")
    return out
