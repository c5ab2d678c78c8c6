"""``given``: the units a dataset file gives, as its system's reader saw them (docs/score.md).

A suite whose dataset is a file ``rageval score`` reads (``dataset: {format:
generic, path: ...}``) keeps, per question, the units each system of the file
packed (:mod:`rageval.data.formats.suite_data`).  A setting ``compressor: given`` is
not compressed: the suite's planner makes it a :class:`~rageval.run.plan.Given`
source whose items bring those units unchanged — each unit declaring the
sentences of the sources it names, or nothing — and, when the setting's reader
is the ``saved`` reader of the dataset file itself, its answers (the file is
read once).  So the user's own system sits in a suite beside rageval's
compressors.  The budget is recorded, not enforced.  This class declares the
name and its parameter; it compresses nothing.

Parameters
----------
system : the ``system`` value of the file's lines to take (default: the only one).
"""

from __future__ import annotations

from typing import Any, ClassVar

from rageval.compressors.base import BaseCompressor, CompressorError

__all__ = ["GivenCompressor"]


class GivenCompressor(BaseCompressor):
    name = "given"
    PARAMS: ClassVar[dict[str, Any]] = {"system": None}
    budget_contract = "none"  # the file's units, as its system packed them

    def _check_params(self) -> None:
        s = self.params["system"]
        if s is not None and not isinstance(s, str):
            raise self._param_error("system", "give the `system` value of the file's lines (a string), or leave it out")

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        raise CompressorError(
            "given: the units come from the dataset file, not from snippets; use it in a suite whose dataset is "
            "such a file (dataset: {format: generic, path: ...})"
        )
