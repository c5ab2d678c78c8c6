"""rouge_lsum: ALCE's ROUGE-Lsum against the long references, and the answer's length in words.

A thin ``evaluate`` wrapper over :func:`rageval.diagnostics.alce.rouge_lsum`.
"""

from typing import Any

import datasets
import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
rouge_lsum is ALCE's ROUGE-Lsum: the answer (citations removed) and each long
reference are lowercased and split into sentences with nltk's Punkt, one per
line, and scored with rouge-score's rougeLsum F-measure (Porter stemmer); the
best reference counts (ASQA: two annotators' long answers). answer_length is
the answer's whitespace-separated words (ALCE's length). ROUGE in [0, 1] (ALCE
reports x100).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[str], one answer per question.
    references: list[list[str]]: per question, its long reference answers (the best one counts).
    alce_compat (bool, default False): ALCE's eval.py exactly: the answer's first line only, ALCE's
        citation removal.
Returns:
    rouge_lsum (higher is better; undefined for a question without a non-blank reference),
    answer_length (mean words; every question); n, n_undefined; per_question.
Examples:
    >>> m = evaluate.load("rouge_lsum")
    >>> r = m.compute(predictions=["The cat sat on the mat [1]."], references=[["A cat sat on a mat."]])
    >>> round(r["rouge_lsum"], 4), r["answer_length"]
    (0.6667, 6.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RougeLsum(_am.RagevalMetric):
    NAME = "rouge_lsum"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION
    REFERENCE_URLS = (
        "https://github.com/princeton-nlp/ALCE",
        "https://github.com/google-research/google-research/tree/master/rouge",
    )

    @staticmethod
    def FEATURES():
        return datasets.Features(
            {
                "predictions": datasets.Value("string"),
                "references": datasets.List(datasets.Value("string")),
            }
        )

    def _compute(
        self,
        predictions: list[str],
        references: list[list[str]],
        *,
        alce_compat: bool = False,
    ) -> dict[str, Any]:
        return self._score(locals())
