"""str_em: ALCE's string exact match for ASQA (and str_hit).

A thin ``evaluate`` wrapper over :func:`rageval.diagnostics.answer.str_em`.
"""

from typing import Any

import datasets
import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
str_em is ALCE's STR-EM: for each ASQA qa_pair, 1 if any of its short answers,
normalized (SQuAD/ALCE), is a substring of the normalized answer with its
citations removed; the per-question value is the mean over qa_pairs, and
str_hit is 1 when every qa_pair matched.  Fractions in [0, 1] (ALCE reports x100).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[str], one answer per question (citations are removed).
    references: list[list[list[str]]]: per question, per qa_pair, its short answers.
    alce_compat (bool, default False): ALCE's eval.py exactly: first line of the
        answer only, ALCE's citation removal, and a short answer that normalizes to
        nothing counts as present (by default such short answers are skipped).
    convention (str, default "asqa"): "asqa" (ALCE's str-EM, above) or "qasper":
        references are, per question, per annotator, the short answers that must all
        appear (extractive spans, the yes/no word (a whole word), or the free-form
        answer; [] for an annotator who marked it unanswerable, left out); str_em is
        the max over annotators of that hit.
Returns:
    str_em, str_hit: means over questions with at least one scorable qa_pair (higher is better).
    n, n_undefined; per_question: [{"str_em", "str_hit"}, ...].
Examples:
    >>> m = evaluate.load("str_em")
    >>> r = m.compute(predictions=["Paris [1], not Lyon."], references=[[["Paris"], ["Marseille"]]])
    >>> r["str_em"], r["str_hit"]
    (0.5, 0.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class StrEM(_am.RagevalMetric):
    NAME = "str_em"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION
    REFERENCE_URLS = ("https://github.com/princeton-nlp/ALCE",)

    @staticmethod
    def FEATURES():
        return datasets.Features(
            {
                "predictions": datasets.Value("string"),
                "references": datasets.List(datasets.List(datasets.Value("string"))),
            }
        )

    def _compute(
        self,
        predictions: list[str],
        references: list[list[list[str]]],
        *,
        alce_compat: bool = False,
        convention: str = "asqa",
    ) -> dict[str, Any]:
        return self._score(locals())
