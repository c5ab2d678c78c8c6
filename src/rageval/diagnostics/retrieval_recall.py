"""Retrieval recall@k and all-gold@k (docs/design.md#retrieval-recall).

``retrieval_recall@k`` = |gold ∩ top-k retrieved| / |gold|; ``all_gold`` = 1 when
every gold document is in the top k.  Kept so the argument of *What Survives Into
Context* (recall is the wrong target under a budget; answer-in-context is the right
one) can be checked (docs/design.md#decision-coverage-and-recall).

>>> r = retrieval_recall([["d1", "d7", "d2"]], [["d2", "d3"]], k=3)
>>> r["retrieval_recall"], r["all_gold"]
(0.5, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rageval.diagnostics._common import check_list, check_same_length, check_str_list, summarize

__all__ = ["retrieval_recall"]


def retrieval_recall(
    retrieved: Sequence[Sequence[str] | None], references: Sequence[Sequence[str]], *, k: int | None = None
) -> dict[str, Any]:
    """Fraction of gold document ids among the top-``k`` retrieved ids (all when ``k`` is None).

    Undefined for a question with no gold documents, and for one whose ``retrieved`` is None (nothing is known
    about what was retrieved: not the empty ranking ``[]``, which scores 0).  Repeated ids count once.

    >>> retrieval_recall([None, []], [["d1"], ["d1"]])["per_question"]
    [{'retrieval_recall': None, 'all_gold': None}, {'retrieval_recall': 0.0, 'all_gold': 0.0}]
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ValueError(f"k must be a positive integer or None, got {k!r}")
    retrieved = check_list(retrieved, "retrieved")
    references = check_list(references, "references")
    check_same_length(retrieved=retrieved, references=references)
    per_question: list[dict[str, Any]] = []
    for q, (ret, gold) in enumerate(zip(retrieved, references)):
        ret = None if ret is None else check_str_list(ret, "retrieved", q)
        gold_set = set(check_str_list(gold, "references", q))
        if not gold_set or ret is None:
            per_question.append({"retrieval_recall": None, "all_gold": None})
            continue
        top = set(ret[:k] if k is not None else ret)
        found = len(gold_set & top)
        per_question.append(
            {"retrieval_recall": found / len(gold_set), "all_gold": 1.0 if found == len(gold_set) else 0.0}
        )
    out = summarize(per_question, "retrieval_recall", extra=("all_gold",))
    out["k"] = k
    return out


def score_retrieval_recall(inputs, options) -> dict[str, Any]:
    """The catalog's scorer: the record's retrieved ids against its gold documents, top ``retrieval_k``."""
    return retrieval_recall(
        [None if x.retrieved_ids is None else list(x.retrieved_ids) for x in inputs],
        [list(x.gold.gold_doc_ids) for x in inputs],
        k=options.retrieval_k,
    )
