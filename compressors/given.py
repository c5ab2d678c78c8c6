"""``given``: the units a dataset file gives, as its system's reader saw them (docs/score.md).

A suite whose dataset is a file ``rageval score`` reads (``dataset: {format:
generic, path: ...}``) keeps, per question, the units each system of the file
packed (:mod:`rageval.score.suite_data`).  ``given`` returns them unchanged —
each unit declaring the sentences of the sources it names, or nothing — so the
user's own system can sit in a suite beside rageval's compressors, read by the
``saved`` reader with the file's answers.  The budget is recorded, not enforced.

Parameters
----------
system : the ``system`` value of the file's lines to take (default: the only one).
"""

from __future__ import annotations

from typing import Any

from rageval.compressors.base import BaseCompressor, CompressorError, make_context
from rageval.text import get_tokenizer
from rageval.tokens import evidence_tokens
from rageval.types import Unit

__all__ = ["GivenCompressor"]


class GivenCompressor(BaseCompressor):
    name = "given"
    PARAMS = {"system": None}
    ignores_budget = True

    def _check_params(self) -> None:
        s = self.params["system"]
        if s is not None and not isinstance(s, str):
            raise self._param_error("system", "give the `system` value of the file's lines (a string), or leave it out")

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):  # pragma: no cover - never called
        raise CompressorError("given: the units come from the dataset file (compress_example), not from snippets")

    def compress_example(self, example: Any, snippets, budget=None, *, tokenizer=None):
        """The Context of the units ``example.meta["given"]`` holds for this system."""
        given = (getattr(example, "meta", None) or {}).get("given")
        if not given:
            raise CompressorError(
                f"given: question {example.id!r} carries no given units; use it with a dataset read from a file "
                "(dataset: {format: generic, path: ...})"
            )
        system = self.params["system"]
        key = "" if system is None else system
        if key not in given:
            known = sorted(k for k in given if k)
            what = "several systems" if system is None else f"no system {system!r}"
            raise CompressorError(f"given: question {example.id!r} has {what} ({known}); set params: {{system: ...}}")
        tok = get_tokenizer(tokenizer)
        units = [Unit(u["text"], u["source_ids"], u.get("title")) for u in given[key]["units"]]
        return make_context(
            units,
            tokenizer=tok,
            retrieved_tokens=evidence_tokens(list(snippets), tok),
            budget=budget,
            budget_tokens=None,
        )
