"""The inputs of an ``evaluate`` module, checked by the pure function's own validation first.

``evaluate`` encodes a module's inputs with ``datasets`` before the pure function
sees them; a malformed input (a unit without ``text``, an unknown key, a dict
where a list is expected) then fails inside ``datasets`` with a ``KeyError`` or a
multi-line Arrow error.  :func:`check_module_inputs` runs first and raises the pure
function's one-line ``TypeError``/``ValueError`` naming the field, the question
and the fix:

* model-free diagnostics (no judge) are cheap: the pure function itself is called
  on the inputs (its result is discarded);
* diagnostics that call a judge get their inputs checked without a judge call
  (:func:`~rageval.diagnostics._attribution_inputs.prepare_inputs`, and the
  token-count lists of ``compression``).

>>> check_module_inputs("answer_f1", {"predictions": ["Paris"], "references": [["Paris"]]})
>>> check_module_inputs("grounded_precision", {"predictions": ["x [1]."], "units": [[{"txt": "x"}]], "sources": [[]]})
Traceback (most recent call last):
...
ValueError: units[0][0] has no 'text'
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from rageval.diagnostics._attribution_inputs import prepare_inputs
from rageval.diagnostics.alce import check_claims_inputs
from rageval.diagnostics.catalog import CATALOG, get

__all__ = ["check_module_inputs"]

_TOKEN_LISTS = ("budget_tokens", "retrieved_tokens", "achieved_tokens", "reader_input_tokens")
#: the per-question data columns of the modules (everything else is an option)
_DATA = ("predictions", "references", "units", "sources", "contexts", "retrieved", "paragraph_of", "claims")


def check_module_inputs(name: str, inputs: Mapping[str, Any]) -> None:
    """Raise the pure function's error for malformed ``inputs`` of module ``name`` (see the module doc)."""

    spec = CATALOG[name]
    if all(inputs.get(k) is None for k in _DATA):
        return  # compute() after add()/add_batch(): the batches were checked as they came
    params = inspect.signature(get(name)).parameters
    if spec.uses_judge and "units" in params:
        questions = prepare_inputs(inputs.get("predictions"), inputs.get("units"), inputs.get("sources"))
        if "claims" in params:  # claim_support's optional per-question claims
            from rageval.diagnostics.claim_support import check_claims

            check_claims(inputs.get("claims"), len(questions))
        if name == "compression":
            from rageval.diagnostics.compression import _opt_list

            for key in _TOKEN_LISTS:
                _opt_list(inputs.get(key), key, len(questions))
        return
    if spec.judged:  # a judge-using scorer over the answers alone (claims_recall): checked without a judge call
        check_claims_inputs(inputs.get("predictions"), inputs.get("references"))
        return
    get(name)(**{k: v for k, v in inputs.items() if k in params})
