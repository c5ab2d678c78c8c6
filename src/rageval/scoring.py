"""The scoring options of a run, in one type: the judge and its threshold, the tokenizer, the citation rules, the
attribution (recovery) options and retrieval ``k`` — what a suite's YAML, ``rageval score``'s options and the
manifest's ``scoring`` section hold, so that ``rescore`` and ``audit`` score any run as it was scored.

Each default is declared here once (the ``DEFAULT_*`` constants; the threshold as :attr:`JudgeConfig.threshold`'s
default, which ``DEFAULT_THRESHOLD`` reads); the diagnostics' pure functions, their ``evaluate`` modules, the
judges' ``decide``, the command-line options and the manifest take theirs from here.

* :class:`JudgeConfig` — ``spec``, ``threshold``, ``params`` (a suite's ``judge:`` section is
  :class:`rageval.judges.spec.JudgeSpec`, this type);
* :class:`CitationConfig` — ``mode`` and ``max_citations``;
* :class:`AttributionConfig` — how units without declared provenance are re-attributed and what an answer
  citing nothing scores (a suite's ``attribution:`` section);
* :class:`ScoringConfig` — all of them, frozen and strict; :meth:`ScoringConfig.to_json` is the manifest's
  ``scoring`` section.

The typed options the diagnostics take are built from it by :func:`rageval.diagnostics.inputs.scoring_options`
(:meth:`rageval.diagnostics.attribution.options.AttributionOptions.of`).

>>> s = ScoringConfig(judge=JudgeConfig(threshold=0.7))
>>> s.judge.threshold, s.citations.max_citations, s.to_json()["attribution"]
(0.7, 3, {})
>>> ScoringConfig.model_validate(s.to_json()) == s
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictInt, field_serializer, field_validator, model_serializer

from rageval.strict import Probability, Strict

__all__ = [
    "DEFAULT_ALCE_COMPAT",
    "DEFAULT_CANDIDATES",
    "DEFAULT_CITATION_MODE",
    "DEFAULT_CLAIM_PREMISE",
    "DEFAULT_GROUNDING",
    "DEFAULT_JUDGE",
    "DEFAULT_MAX_CITATIONS",
    "DEFAULT_MULTI_SNIPPET",
    "DEFAULT_NO_CITATION_PRECISION",
    "DEFAULT_RECOVERY_K",
    "DEFAULT_THRESHOLD",
    "DEFAULT_TOKENIZER",
    "AttributionConfig",
    "CitationConfig",
    "CitationMode",
    "JudgeConfig",
    "ScoringConfig",
]

#: the judge spec when none is given (the model-free lexical judge)
DEFAULT_JUDGE = "lexical"
#: the tokenizer of token counts (:func:`rageval.text.get_tokenizer`)
DEFAULT_TOKENIZER = "regex"
CitationMode = Literal["default", "alce"]
#: the citation rules: rageval's own ("default") or ALCE's eval.py ("alce")
DEFAULT_CITATION_MODE: CitationMode = "default"
#: ``alce_compat`` of the pure functions: whether the citation mode is ALCE's (False: :data:`DEFAULT_CITATION_MODE`)
DEFAULT_ALCE_COMPAT = False
#: citations kept per sentence
DEFAULT_MAX_CITATIONS = 3
#: BM25 (or dense) candidates per unit without provenance
DEFAULT_RECOVERY_K = 10
#: whether re-attribution also tries joined snippet pairs when no single snippet passes
DEFAULT_MULTI_SNIPPET = False
#: how recovery candidates are found
DEFAULT_CANDIDATES: Literal["bm25", "dense"] = "bm25"
#: the precision of an answer that cites nothing: 0 (ALCE) or undefined
DEFAULT_NO_CITATION_PRECISION: Literal["zero", "undefined"] = "zero"
#: claim_support's premises: each unit alone or all units pooled
DEFAULT_CLAIM_PREMISE: Literal["single", "joint"] = "single"
#: claim_support's grounded premise of a unit without declared provenance: the snippets re-attribution recovers,
#: each passing the judge alone ("single", the paper's rule), or the union of its top-``k`` recovery candidates
#: in source order ("union": a refined text that spans several sources); docs/design.md#claim-support
DEFAULT_GROUNDING: Literal["single", "union"] = "single"


class JudgeConfig(Strict):
    """The judge: its spec (``lexical``, a model folder, ...), decision threshold and options."""

    spec: str = DEFAULT_JUDGE
    #: the decision threshold, declared here once: a pair is supported when its probability is at least this
    threshold: float = Field(0.5, ge=0.0, le=1.0)
    params: dict[str, Any] = Field(default_factory=dict)


#: the judge's decision threshold (:attr:`JudgeConfig.threshold`'s default), for keyword defaults elsewhere
DEFAULT_THRESHOLD: float = JudgeConfig.model_fields["threshold"].default


class CitationConfig(Strict):
    """How an answer's citations are read: the rules (``mode``) and the citations kept per sentence."""

    mode: CitationMode = DEFAULT_CITATION_MODE
    max_citations: int | None = Field(DEFAULT_MAX_CITATIONS, ge=1)


class AttributionConfig(Strict):
    """The attribution options a suite's ``attribution:`` section sets (see docs/suites.md)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)  # candidates may be a callable

    recovery_threshold: Probability | None = Field(
        None, description="judge threshold for recovery candidates (default: the judge threshold)"
    )
    k: StrictInt = Field(DEFAULT_RECOVERY_K, ge=1, description="BM25 candidates per unit without provenance")
    multi_snippet: StrictBool = Field(
        DEFAULT_MULTI_SNIPPET, description="also try joined snippet pairs when no single one passes"
    )
    candidates: Literal["bm25", "dense"] | Callable[..., Any] = Field(
        DEFAULT_CANDIDATES, description="'bm25', 'dense' (MiniLM cosine) or a callable (query, texts, k) -> indices"
    )
    no_citation_precision: Literal["zero", "undefined"] = Field(
        DEFAULT_NO_CITATION_PRECISION, description="precision of an answer that cites nothing: 0 (ALCE) or undefined"
    )
    claim_premise: Literal["single", "joint"] = Field(
        DEFAULT_CLAIM_PREMISE,
        description="claim_support's premises: each unit alone (max over units) or all units pooled (joint)",
    )
    grounding: Literal["single", "union"] = Field(
        DEFAULT_GROUNDING,
        description="claim_support's grounded premise of a unit without provenance: the snippets recovered one by "
        "one (single) or the union of its top-k recovery candidates in source order (union)",
    )

    @model_serializer(mode="wrap")
    def _grounding_when_set(self, handler: Any) -> Any:
        """``grounding`` is written only when it is not the default, so the records, cache keys and manifests
        of runs that do not set it are those of a rageval without the option (they were scored by its rule)."""
        data = handler(self)
        if isinstance(data, dict) and data.get("grounding") == DEFAULT_GROUNDING:
            data.pop("grounding")
        return data


class ScoringConfig(Strict):
    """The scoring options of a run (see the module doc).

    ``attribution`` None: the attribution engine's defaults, not recorded (``rageval score`` sets none; the
    manifest writes ``{}``); a suite records its ``attribution:`` section whole.
    """

    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    tokenizer: str = DEFAULT_TOKENIZER
    citations: CitationConfig = Field(default_factory=CitationConfig)
    attribution: AttributionConfig | None = None
    retrieval_k: int | None = Field(None, ge=1)

    @field_validator("attribution", mode="before")
    @classmethod
    def _unrecorded(cls, value: Any) -> Any:
        return None if isinstance(value, dict) and not value else value  # the manifest's {}: the defaults

    @field_serializer("attribution")
    def _attribution_json(self, value: AttributionConfig | None) -> dict[str, Any]:
        return {} if value is None else value.model_dump()

    def to_json(self) -> dict[str, Any]:
        """The manifest's ``scoring`` section (judge, tokenizer, citations, attribution, retrieval_k)."""
        return self.model_dump(mode="json")
