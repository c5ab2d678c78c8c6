"""answer_f1: HotpotQA/SQuAD token F1 (and answer_em), max over gold aliases.

A thin ``evaluate`` wrapper over :func:`rageval.diagnostics.answer.answer_f1`.
"""

from typing import Any

import datasets
import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
answer_f1 is the token F1 of the official HotpotQA evaluation script between the
normalized answer (citations removed) and each gold alias, maxed over aliases;
answer_em is normalized exact match.  Yes/no/noanswer follow HotpotQA: such a
prediction or gold scores 0 unless both normalize to the same word.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[str], one answer per question.
    references: list[list[str]], the gold aliases of each question (QASPER: one reference
        string per annotator, as QASPER's official scorer builds it).
    convention (str, default "hotpotqa"): "hotpotqa" (a yes/no/noanswer side scores 0
        unless both are the same word) or "qasper" (QASPER's official scorer: every
        reference, "Yes"/"No"/"Unanswerable" included, compared as a string).
Returns:
    answer_f1, answer_em: means over questions in [0, 1] (higher is better).
    n, n_undefined (questions whose aliases all normalize to nothing); per_question.
Examples:
    >>> m = evaluate.load("answer_f1")
    >>> r = m.compute(predictions=["The Eiffel Tower [2]", "no"], references=[["Eiffel Tower"], ["yes"]])
    >>> r["answer_f1"], r["answer_em"]
    (0.5, 0.5)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AnswerF1(_am.RagevalMetric):
    NAME = "answer_f1"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION
    REFERENCE_URLS = ("https://github.com/hotpotqa/hotpot/blob/master/hotpot_evaluate_v1.py",)

    @staticmethod
    def FEATURES():
        return datasets.Features(
            {"predictions": datasets.Value("string"), "references": datasets.List(datasets.Value("string"))}
        )

    def _compute(
        self, predictions: list[str], references: list[list[str]], *, convention: str = "hotpotqa"
    ) -> dict[str, Any]:
        return self._score(locals())
