"""qampari_f1: ALCE's QAMPARI precision, recall (and top-5) and F1 (and top-5) of a list answer.

A thin ``evaluate`` wrapper over :func:`rageval.diagnostics.alce.qampari_f1`.
"""

from typing import Any

import datasets
import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
qampari_f1 is ALCE's QAMPARI score of a list answer: the answer (citations
removed) is split on ",", each piece normalized (SQuAD/ALCE), empty pieces
dropped. Precision: predicted items equal to an alias of a gold answer / items;
recall: gold answers found / gold answers; recall-top-5: min(5, found) / min(5,
gold answers); F1 and F1-top-5 of precision with each recall. Fractions in
[0, 1] (ALCE reports x100).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[str], one list answer per question ("A, B, C.").
    references: list[list[list[str]]]: per question, its gold answers, each as its aliases.
    alce_compat (bool, default False): ALCE's eval.py exactly: the answer's first line only, ALCE's
        citation removal.
Returns:
    qampari_f1, qampari_precision, qampari_recall, qampari_recall_top5, qampari_f1_top5 (higher is
    better), qampari_num_preds (mean list length); n, n_undefined (questions without gold answers);
    per_question.
Examples:
    >>> m = evaluate.load("qampari_f1")
    >>> r = m.compute(predictions=["Ann [1], Bob [2], Carl."], references=[[["Ann", "Anne"], ["Dora"]]])
    >>> round(r["qampari_precision"], 4), r["qampari_recall"], round(r["qampari_f1"], 4)
    (0.3333, 0.5, 0.4)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class QampariF1(_am.RagevalMetric):
    NAME = "qampari_f1"
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
    ) -> dict[str, Any]:
        return self._score(locals())
