"""claims_recall: ALCE's ELI5 claims recall, the share of gold claims the answer entails (through a judge).

A thin ``evaluate`` wrapper over :func:`rageval.diagnostics.alce.claims_recall`.
"""

from typing import Any

import datasets
import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\
claims_recall is ALCE's ELI5 claims recall (eval.py --claims_nli): for each gold
claim, the judge decides whether the answer (citations removed) entails it
(probability >= threshold); the per-question value is the share of claims
entailed. A claim the judge abstains on counts as not entailed and is counted.
Fractions in [0, 1] (ALCE reports x100).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[str], one answer per question.
    references: list[list[str]]: per question, its gold claims.
    judge: "lexical" (default), a model path / hub id ("nli:...", "seq2seq:..."), a judge object or a
        callable judge(premises, hypotheses) -> list[float]; ALCE uses the TRUE model (t5_xxl_true_nli_mixture).
    threshold: decision threshold on the entailment probability (default 0.5).
    alce_compat (bool, default False): ALCE's eval.py exactly: the answer's first line only, ALCE's
        citation removal.
Returns:
    claims_recall (higher is better), claims_recall_excl_abstain, claims_abstentions (mean per
    question), claims_abstentions_total; n, n_undefined (questions without claims); per_question.
Examples:
    >>> m = evaluate.load("claims_recall")
    >>> r = m.compute(predictions=["Paris is the capital of France [1]."],
    ...               references=[["Paris is the capital.", "Berlin is big."]], judge="lexical")
    >>> r["claims_recall"], r["claims_abstentions_total"]
    (0.5, 0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ClaimsRecall(_am.RagevalMetric):
    NAME = "claims_recall"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION
    REFERENCE_URLS = ("https://github.com/princeton-nlp/ALCE",)

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
        judge: Any = _am.DEFAULT_JUDGE,
        threshold: float = _am.DEFAULT_THRESHOLD,
        alce_compat: bool = False,
    ) -> dict[str, Any]:
        return self._score(locals())
