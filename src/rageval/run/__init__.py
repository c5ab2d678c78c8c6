"""The run engine: one typed plan, one loop, one run directory, behind every command (docs/architecture.md).

* :mod:`rageval.run.plan` — :class:`~rageval.run.plan.Plan`: settings, items and their sources
  (compress and read, given by a file, saved records), diagnostics, scoring options, what built it;
* :mod:`rageval.run.parts` — building and closing the judge, readers, compressors;
* :mod:`rageval.run.engine` — :func:`~rageval.run.engine.execute`: the one loop;
* :mod:`rageval.run.execute` — one batch: compress, read, score through the catalog;
* :mod:`rageval.run.cache` — the per-record cache (``records.jsonl`` itself: :mod:`rageval.rundir.records`);
* :mod:`rageval.run.scale` — the same loop on Ray.

The run directory it writes — manifest, records, columns, lock, claim rules — is :mod:`rageval.rundir`, below the
engine, which the report, ``rescore`` and ``audit`` read without the engine's internals.  The front-ends (``rageval.suite``, ``rageval.score``, ``rageval rescore``, ``rageval.audit``) build a plan and read
a run directory; nothing here imports them.  Names are imported on first use (``rageval --help`` stays fast).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Plan", "RunResult", "execute"]

_WHERE = {
    "Plan": "rageval.run.plan",
    "RunResult": "rageval.run.engine",
    "execute": "rageval.run.engine",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'rageval.run' has no attribute {name!r}")
