"""The diagnostics: pure metric functions, their catalog and the one scoring path.

* :mod:`rageval.diagnostics.catalog` — one :class:`DiagnosticSpec` per
  diagnostic (static data: listing it imports no metric code);
  :func:`get(name) <rageval.diagnostics.catalog.get>` imports and returns the
  pure function.
* :mod:`rageval.diagnostics.inputs` — the typed per-record scoring input.
* :mod:`rageval.diagnostics.dispatch` — :func:`score`, used by the suite runner
  and ``rageval rescore``.

The evaluate modules live outside this package (:mod:`rageval.evaluate_support`
and ``metrics/``), so importing a diagnostic never imports ``evaluate``.
"""

from __future__ import annotations

from rageval.diagnostics.catalog import (
    CATALOG,
    DERIVED,
    Catalog,
    DiagnosticSpec,
    Output,
    applicable,
    contrasted_by_default,
    direction_of,
    get,
    names,
    output_owner,
    spec,
    unknown_name_error,
)

__all__ = [
    "CATALOG",
    "Catalog",
    "DERIVED",
    "DiagnosticSpec",
    "Output",
    "applicable",
    "contrasted_by_default",
    "direction_of",
    "get",
    "names",
    "output_owner",
    "spec",
    "unknown_name_error",
]
