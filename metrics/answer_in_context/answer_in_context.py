"""answer_in_context: does the gold answer survive into the packed context?

A thin ``evaluate`` wrapper over :func:`rageval.diagnostics.answer.answer_in_context`.
"""

from typing import Any

import datasets
import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
answer_in_context is 1 for a question when some normalized gold answer (any alias)
appears as a contiguous token subsequence of the normalized packed context (the
evidence exactly as the reader receives it: the units in order, titles included
where the prompt shows them, joined as the prompt joins them, without the [k]
labels), else 0: the definition of What Survives Into Context (the packing
paper).  answer_in_context_unit: a match inside one unit.  Normalization is
SQuAD/ALCE's: lowercase, strip punctuation, drop a/an/the, collapse whitespace.
Yes/no gold answers are undefined (None, counted).  For ASQA the per-question
value is the mean over qa_pairs.  The aggregate is the question-weighted mean.
"""

_KWARGS_DESCRIPTION = """
Args:
    contexts: list with one entry per question: the packed context as one string,
        or a list of unit strings (a match may cross a unit boundary; inside one unit: answer_in_context_unit).
    references: list with one entry per question: the gold aliases (list[str]),
        or for ASQA the qa_pairs' short answers (list[list[str]]).
    separator: what the reader's prompt puts between two units (default "\\n").
Returns:
    answer_in_context: mean over questions where defined, in [0, 1] (higher is better), or None.
    n: questions scored.  n_undefined: questions left undefined (yes/no gold).
    answer_in_context_unit: the same with a match inside one unit.
    per_question: [{"answer_in_context": 1.0 | 0.0 | None, "answer_in_context_unit": ...}, ...] aligned with the
        inputs.
Examples:
    >>> aic = evaluate.load("answer_in_context")
    >>> r = aic.compute(contexts=["Paris is the capital of France.", "It rains."],
    ...                 references=[["Paris"], ["yes"]])
    >>> r["answer_in_context"], r["n"], r["n_undefined"]
    (1.0, 1, 1)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AnswerInContext(_am.RagevalMetric):
    NAME = "answer_in_context"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION
    REFERENCE_URLS = ()

    @staticmethod
    def FEATURES():
        return [
            datasets.Features(
                {
                    "contexts": datasets.Value("string"),
                    "references": datasets.List(datasets.List(datasets.Value("string"))),
                }
            ),
            datasets.Features(
                {
                    "contexts": datasets.List(datasets.Value("string")),
                    "references": datasets.List(datasets.List(datasets.Value("string"))),
                }
            ),
            datasets.Features(
                {"contexts": datasets.Value("string"), "references": datasets.List(datasets.Value("string"))}
            ),
            datasets.Features(
                {
                    "contexts": datasets.List(datasets.Value("string")),
                    "references": datasets.List(datasets.Value("string")),
                }
            ),
        ]

    def _compute(self, contexts: list[Any], references: list[Any], *, separator: str = "\n") -> dict[str, Any]:
        return self._score(locals())
