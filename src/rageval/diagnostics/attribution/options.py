"""The attribution options: one frozen, validated object shared by the engine and the suite.

:class:`AttributionSettings` holds the options a suite sets in its
``attribution:`` section (it is :class:`rageval.scoring.AttributionConfig`, the
run's :class:`~rageval.scoring.ScoringConfig` part, and the suite config uses it);
:class:`AttributionOptions` adds the ones the suite takes from elsewhere (the
judge's decision ``threshold``, the citation ``max_citations`` and
``alce_compat`` mode; :meth:`AttributionOptions.of` takes them from a run's
:class:`~rageval.scoring.ScoringConfig`, and their defaults from
:mod:`rageval.scoring`).  Both are immutable: build a new one with
``options.model_copy(update={...})``.

Which public function uses which option is declared in :data:`USED_BY`: the
pure functions list exactly those options in their signatures, and the evaluate
modules reject option names that no rageval module knows (see
docs/design.md#attribution-options).

>>> o = AttributionOptions(threshold=0.6)
>>> o.recovery_threshold_or_default, o.k
(0.6, 10)
>>> AttributionOptions.build(k=0)
Traceback (most recent call last):
...
ValueError: attribution option k=0: Input should be greater than or equal to 1
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool, StrictInt

from rageval.citations import parse_answer
from rageval.scoring import (
    DEFAULT_ALCE_COMPAT,
    DEFAULT_MAX_CITATIONS,
    DEFAULT_THRESHOLD,
    AttributionConfig,
    ScoringConfig,
)
from rageval.strict import Probability
from rageval.types import Answer

__all__ = ["AttributionSettings", "AttributionOptions", "GATE_OPTIONS", "RECOVERY_OPTIONS", "USED_BY"]

#: options of the citation gate (emitted and grounded precision/recall, verification)
GATE_OPTIONS = ("threshold", "max_citations", "alce_compat")
#: options of re-attribution (recovery of units without declared provenance)
RECOVERY_OPTIONS = ("recovery_threshold", "k", "multi_snippet", "candidates")

#: the options each public pure function takes (besides ``judge``, ``cache_dir`` and ``details``)
USED_BY: dict[str, tuple[str, ...]] = {
    "emitted_precision": GATE_OPTIONS + ("no_citation_precision",),
    "emitted_recall": GATE_OPTIONS,
    "grounded_precision": GATE_OPTIONS + ("no_citation_precision",) + RECOVERY_OPTIONS,
    "grounded_recall": GATE_OPTIONS + RECOVERY_OPTIONS,
    "re_attributability": ("threshold",) + RECOVERY_OPTIONS,
    "verification": GATE_OPTIONS + RECOVERY_OPTIONS,
    "claim_support": GATE_OPTIONS + ("claim_premise", "grounding") + RECOVERY_OPTIONS,
}


#: a suite's ``attribution:`` section: :class:`rageval.scoring.AttributionConfig` itself
AttributionSettings = AttributionConfig


class AttributionOptions(AttributionSettings):
    """Every option of the attribution engine (suite settings + gate options)."""

    threshold: Probability = Field(
        DEFAULT_THRESHOLD, description="decision threshold on the support probability (a number in [0, 1])"
    )
    max_citations: StrictInt | None = Field(
        DEFAULT_MAX_CITATIONS, ge=1, description="citations kept per sentence (None: all)"
    )
    alce_compat: StrictBool = Field(DEFAULT_ALCE_COMPAT, description="reproduce ALCE's eval.py parsing and premises")

    @classmethod
    def of(cls, scoring: ScoringConfig) -> AttributionOptions:
        """A run's options: its attribution section (the defaults when it records none), its judge's
        ``threshold``, its citations' cap and mode (``alce_compat``: the mode is ``"alce"``)."""
        settings = scoring.attribution
        given = {} if settings is None else {k: getattr(settings, k) for k in AttributionConfig.model_fields}
        gate = {
            "threshold": scoring.judge.threshold,
            "max_citations": scoring.citations.max_citations,
            "alce_compat": scoring.citations.mode == "alce",
        }
        return cls.model_validate({**given, **gate})

    @property
    def recovery_threshold_or_default(self) -> float:
        return float(self.threshold if self.recovery_threshold is None else self.recovery_threshold)

    @property
    def citation_mode(self) -> str:
        return "alce" if self.alce_compat else "default"

    def parse(self, prediction: str, n_units: int, list_question: str | None = None) -> Answer:
        """How every attribution score and evidence-F1 read an answer's citations: one parse, one cap.

        :func:`rageval.citations.parse_answer` in :attr:`citation_mode` with ``max_citations``
        (``list_question``: a QAMPARI question, whose ALCE sentences are its comma-split pieces).
        """

        return parse_answer(
            prediction, n_units, mode=self.citation_mode, max_citations=self.max_citations, list_question=list_question
        )

    @classmethod
    def build(cls, **options: Any) -> AttributionOptions:
        """Validate keyword options into an :class:`AttributionOptions`; errors name the option."""
        from pydantic import ValidationError

        try:
            return cls(**options)
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(x) for x in first["loc"]) or "options"
            raise ValueError(f"attribution option {loc}={first.get('input')!r}: {first['msg']}") from None
