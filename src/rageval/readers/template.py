"""The reader prompt template, as data (part of the suite and of every record's hash).

A template has an ``instruction``, an optional ``system`` message, a ``user``
message with the placeholders ``{instruction}``, ``{question}`` and ``{units}``,
and the format of one unit (``{k}`` = its number, ``{title}``, ``{text}``).  Units
with a title use ``unit``; units without one use ``unit_no_title`` (titles travel
with units: docs/design.md#decision-titles).  ``show_titles=False`` uses ``unit_no_title`` always.

The default follows ALCE's ASQA prompt: its instruction text verbatim (ALCE,
MIT licence, see ``rageval/data/samples/asqa/ALCE_LICENSE.txt``) and
``Document [k] (Title: …): …`` lines, so answers cite ``[k]``.

>>> t = PromptTemplate()
>>> from rageval.types import Unit
>>> print(t.render_units([Unit("Paris is in France.", title="Paris"), Unit("No title here.")]))
Document [1] (Title: Paris): Paris is in France.
Document [2]: No title here.
>>> t.hash == PromptTemplate.from_dict(t.to_dict()).hash
True
>>> PromptTemplate(user="{question}")
Traceback (most recent call last):
...
ValueError: PromptTemplate.user must contain {units}; it is the only place the numbered units go
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from rageval.registry import closest
from rageval.types import Unit

__all__ = ["PromptTemplate", "DEFAULT_TEMPLATE", "DEFAULT_INSTRUCTION", "template_hash"]

DEFAULT_INSTRUCTION = (
    "Write an accurate, engaging, and concise answer for the given question using only the provided search "
    "results (some of which might be irrelevant) and cite them properly. Use an unbiased and journalistic tone. "
    "Always cite for any factual claim. When citing several search results, use [1][2][3]. Cite at least one "
    "document and at most three documents in each sentence. If multiple documents support the sentence, only "
    "cite a minimum sufficient subset of the documents."
)

_ALLOWED = {
    "user": {"instruction", "question", "units"},
    "system": {"instruction"},
    "unit": {"k", "title", "text"},
    "unit_no_title": {"k", "text"},
}


def _placeholders(fmt: str, where: str) -> set[str]:
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(fmt) if f is not None}
    except ValueError as e:
        raise ValueError(
            f"PromptTemplate.{where} is not a valid format string ({e}); write literal braces as {{{{ }}}}"
        ) from None
    for n in names:
        if n not in _ALLOWED[where]:
            raise ValueError(
                f"PromptTemplate.{where} uses the placeholder {{{n}}}; allowed here: "
                + ", ".join("{" + a + "}" for a in sorted(_ALLOWED[where]))
            )
    return names


@dataclass(frozen=True)
class PromptTemplate:
    """How a reader's prompt is built from a question and numbered units."""

    instruction: str = DEFAULT_INSTRUCTION
    user: str = "{instruction}\n\nQuestion: {question}\n\n{units}\n\nAnswer:"
    system: str | None = None
    unit: str = "Document [{k}] (Title: {title}): {text}"
    unit_no_title: str = "Document [{k}]: {text}"
    unit_separator: str = "\n"
    show_titles: bool = True
    name: str = "default"

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "system" and v is None:
                continue
            if f.name == "show_titles":
                if not isinstance(v, bool):
                    raise TypeError(f"PromptTemplate.show_titles must be true or false, got {v!r}")
                continue
            if not isinstance(v, str):
                raise TypeError(f"PromptTemplate.{f.name} must be a string, got {type(v).__name__}")
        if "units" not in _placeholders(self.user, "user"):
            raise ValueError("PromptTemplate.user must contain {units}; it is the only place the numbered units go")
        if "question" not in _placeholders(self.user, "user"):
            raise ValueError("PromptTemplate.user must contain {question}")
        if self.system is not None:
            _placeholders(self.system, "system")
        for where in ("unit", "unit_no_title"):
            names = _placeholders(getattr(self, where), where)
            if not {"k", "text"} <= names:
                raise ValueError(f"PromptTemplate.{where} must contain {{k}} and {{text}} (the unit number and text)")

    # -- rendering ------------------------------------------------------------------
    def render_unit(self, k: int, unit: Unit) -> str:
        if self.show_titles and unit.title:
            return self.unit.format(k=k, title=unit.title, text=unit.text)
        return self.unit_no_title.format(k=k, text=unit.text)

    def render_units(self, units: Sequence[Unit]) -> str:
        return self.unit_separator.join(self.render_unit(k, u) for k, u in enumerate(units, 1))

    def messages(self, question: str, units: Sequence[Unit]) -> list[dict[str, str]]:
        """Chat messages: an optional system message and the user message."""
        user = self.user.format(instruction=self.instruction, question=question, units=self.render_units(units))
        out = []
        if self.system is not None:
            out.append({"role": "system", "content": self.system.format(instruction=self.instruction)})
        out.append({"role": "user", "content": user})
        return out

    def render(self, question: str, units: Sequence[Unit]) -> str:
        """The prompt as plain text (messages joined with a blank line), for models without a chat template."""
        return "\n\n".join(m["content"] for m in self.messages(question, units))

    def evidence_text(self, unit: Unit) -> str:
        """A unit as the reader sees it, without its ``[k]`` label.

        See docs/design.md#decision-the-packed-context.
        """
        if self.show_titles and unit.title:
            return f"{unit.title}\n{unit.text}"
        return unit.text

    # -- identity ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PromptTemplate:
        if not isinstance(d, Mapping):
            raise TypeError(f"a prompt template must be a mapping of fields, got {type(d).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            hints = []
            for u in unknown:
                close = closest(u, sorted(known))
                hints.append(f"{u!r}" + (f" (did you mean {close!r}?)" if close else ""))
            raise ValueError(f"Unknown prompt template field(s) {', '.join(hints)}; known: {sorted(known)}")
        return cls(**dict(d))

    @classmethod
    def coerce(cls, value: PromptTemplate | Mapping[str, Any] | None) -> PromptTemplate:
        if value is None:
            return DEFAULT_TEMPLATE
        if isinstance(value, PromptTemplate):
            return value
        return cls.from_dict(value)

    @property
    def hash(self) -> str:
        """sha256 (first 16 hex digits) of the canonical JSON of every field."""
        blob = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


DEFAULT_TEMPLATE = PromptTemplate()


def template_hash(template: PromptTemplate | Mapping[str, Any] | None = None) -> str:
    """The hash of a template (the default when None); it goes into every record."""
    return PromptTemplate.coerce(template).hash
