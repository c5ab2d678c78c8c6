"""The scoring options of a run: the judge, the tokenizer, the citation rules, the attribution options, retrieval
``k`` — what the manifest records (``scoring``) so that ``rescore`` and ``audit`` score any run as it was scored.

The typed options the diagnostics take are built from it by
:func:`rageval.diagnostics.inputs.scoring_options`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Scoring"]


@dataclass(frozen=True)
class Scoring:
    """The scoring options of a run, as recorded in its manifest (``scoring``) and read back by rescore/audit."""

    judge: Any  # a JudgeSpec (spec, threshold, params)
    tokenizer: str = "regex"
    citations: Mapping[str, Any] = field(default_factory=lambda: {"mode": "default", "max_citations": 3})
    attribution: Mapping[str, Any] = field(default_factory=dict)
    retrieval_k: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge.model_dump(mode="json"),
            "tokenizer": self.tokenizer,
            "citations": dict(self.citations),
            "attribution": dict(self.attribution),
            "retrieval_k": self.retrieval_k,
        }
