"""rageval.audit: the second-evaluator audit of a run (``rageval audit RUN_DIR --judge ...``).

See :mod:`rageval.audit.run` for the two modes (fixed mappings, re-recovery) and
the figures, and docs/statistics.md#second-evaluator-audit.
"""

from __future__ import annotations

from typing import Any

__all__ = ["run_audit", "AuditError", "audit_dir"]


def __getattr__(name: str) -> Any:  # lazy: the CLI lists the command without importing numpy
    if name in __all__:
        from rageval.audit.run import AuditError, audit_dir, run_audit

        return {"run_audit": run_audit, "AuditError": AuditError, "audit_dir": audit_dir}[name]
    raise AttributeError(name)
