"""retrieval_recall: fraction of gold documents in the top-k retrieved (and all_gold).

A thin ``evaluate`` wrapper over :func:`rageval.diagnostics.retrieval_recall.retrieval_recall`.
"""

from typing import Any

import datasets
import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
retrieval_recall@k = |gold ∩ top-k retrieved| / |gold| per question; all_gold is
1 when every gold document is in the top k.  Kept beside answer_in_context so
the two can be compared: under a token budget, recall measures the retriever,
not what survives into the context.
"""

_KWARGS_DESCRIPTION = """
Args:
    retrieved: list[list[str]], retrieved document ids per question in rank order.
    references: list[list[str]], gold document ids per question.
    k (int, optional): cut-off; all retrieved ids when omitted.
Returns:
    retrieval_recall, all_gold: means in [0, 1] (higher is better); k;
    n, n_undefined (questions without gold documents); per_question.
Examples:
    >>> m = evaluate.load("retrieval_recall")
    >>> r = m.compute(retrieved=[["d1", "d7", "d2"]], references=[["d2", "d3"]], k=3)
    >>> r["retrieval_recall"], r["all_gold"]
    (0.5, 0.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RetrievalRecall(_am.RagevalMetric):
    NAME = "retrieval_recall"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION
    REFERENCE_URLS = ()

    @staticmethod
    def FEATURES():
        return datasets.Features(
            {
                "retrieved": datasets.List(datasets.Value("string")),
                "references": datasets.List(datasets.Value("string")),
            }
        )

    def _compute(
        self, retrieved: list[list[str]], references: list[list[str]], *, k: int | None = None
    ) -> dict[str, Any]:
        return self._score(locals())
