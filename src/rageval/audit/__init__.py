"""rageval.audit: the second-evaluator audit of a run (``rageval audit RUN_DIR --judge ...``).

See :mod:`rageval.audit.core` for the two modes (fixed mappings, re-recovery) and
the figures, and docs/statistics.md#second-evaluator-audit.
"""

from __future__ import annotations

from typing import Any

__all__ = ["run_audit", "AuditError", "audit_dir"]


def __getattr__(name: str) -> Any:  # lazy: the CLI lists the command without importing numpy
    if name in __all__:
        from rageval.audit import core

        return getattr(core, name)
    raise AttributeError(name)
