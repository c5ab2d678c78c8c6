"""gold_coverage: a thin ``evaluate`` wrapper over :func:`rageval.diagnostics.coverage.gold_coverage`.

The card (README.md beside this file) gives the definition and degenerate cases.
"""

from typing import Any

import datasets
import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
gold_coverage is the fraction of a question's gold documents with at least one context unit that
*declares* one of their sentences (source_ids).  It reads declared provenance only, never unit text:
it measures what the compressor claims to have packed.
"""

_KWARGS_DESCRIPTION = """
Args:
    units: list (per question) of lists of {"text": str, "source_ids": list[str] | None, "title": str (optional)}.
    references: list[list[str]], the gold document ids of each question.
    doc_of: optional, per question a dict source id -> document id (default: the source id up to its last ".").
Returns:
    gold_coverage: mean in [0, 1] (higher is better) or None; n, n_undefined;
    per_question: [{"gold_coverage", "gold_covered", ...}].
Examples:
    >>> m = evaluate.load("gold_coverage")
    >>> m.compute(units=[[{"text": "x", "source_ids": ["d0.s1"]}, {"text": "y", "source_ids": ["d4.s0"]}]], references=[["d0", "d2"]])["gold_coverage"]
    0.5
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class GoldCoverage(_am.RagevalMetric):
    NAME = "gold_coverage"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION
    REFERENCE_URLS = ()

    @staticmethod
    def FEATURES():
        return datasets.Features(
            {"units": datasets.List(_am.unit_feature()), "references": datasets.List(datasets.Value("string"))}
        )

    def _prepare(self, kwargs, predictions):
        if "units" in kwargs:
            kwargs["units"] = _am._fill(kwargs["units"], {"source_ids": None, "title": None})
        return kwargs

    def _compute(
        self,
        units: list[list[dict[str, Any]]],
        references: list[list[str]],
        *,
        doc_of: list[dict[str, str]] | None = None,
    ) -> dict[str, Any]:
        return self._score(locals())
